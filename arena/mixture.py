"""Agents that play a mixture of policies one member per game (PSRO's meta-strategies, SPPO's
averaged iterate): the member is drawn from the game's own random stream at its first decision,
so results depend on the match seed only, and each decision goes to the member its game drew."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.agent import Agent, Observation
from arena.errors import ArenaError


class PerGameMixture(Agent):
    """One member per game; a subclass says how many members there are (:meth:`size`), which one a
    uniform picks (:meth:`draw`) and how a member acts (:meth:`act_member`). ``member_info``, when
    set, names the info key that records each decision's member."""

    member_info: str | None = None

    def __init__(self, name: str = "mixture") -> None:
        self.name = name
        self._chosen: dict[int, tuple[Any, int]] = {}

    def size(self) -> int:
        raise NotImplementedError

    def draw(self, u: float) -> int:
        raise NotImplementedError

    def act_member(self, k: int, observations: Sequence[Observation]) -> tuple[list, list[dict[str, Any]]]:
        raise NotImplementedError

    def member_for(self, obs: Observation) -> int:
        gen = obs.rng  # one generator object per game: the key of this game's draw
        hit = self._chosen.get(id(gen))
        if hit is None:
            hit = self._chosen[id(gen)] = (gen, self.draw(obs.uniform()))
        return hit[1]

    def act_batch_info(self, observations: Sequence[Observation]) -> tuple[list, list[dict[str, Any]]]:
        groups: dict[int, list[int]] = {}
        for i, o in enumerate(observations):
            groups.setdefault(self.member_for(o), []).append(i)
        actions: list[Any] = [None] * len(observations)
        infos: list[dict[str, Any]] = [{} for _ in observations]
        for k, idx in groups.items():
            acts, inf = self.act_member(k, [observations[i] for i in idx])
            for i, a, f in zip(idx, acts, inf):
                actions[i], infos[i] = a, f if self.member_info is None else {**f, self.member_info: k}
        return actions, infos

    def act_batch(self, observations: Sequence[Observation]) -> list:
        return self.act_batch_info(observations)[0]

    def game_finished(
        self, game_index: int, player: int, returns: Sequence[float], final: Observation | None = None
    ) -> None:
        if final is not None:
            self._chosen.pop(id(final.rng), None)


class MixtureAgent(PerGameMixture):
    """Plays member ``k`` with probability ``weights[k]`` for a whole game (negative weights, a
    solver's rounding, count as 0)."""

    def __init__(self, members: Sequence[Agent], weights: Sequence[float], name: str = "mixture") -> None:
        w = np.clip(np.asarray(weights, dtype=float), 0.0, None)
        if len(members) != len(w) or not len(w) or w.sum() <= 0:
            raise ArenaError("a mixture needs one non-negative weight per member, not all zero")
        super().__init__(name)
        self.members = list(members)
        self.cdf = np.cumsum(w / w.sum())

    def size(self) -> int:
        return len(self.members)

    def draw(self, u: float) -> int:
        return min(int(np.searchsorted(self.cdf, u, side="right")), self.size() - 1)

    def act_member(self, k: int, observations: Sequence[Observation]) -> tuple[list, list[dict[str, Any]]]:
        return self.members[k].act_batch_info(observations)
