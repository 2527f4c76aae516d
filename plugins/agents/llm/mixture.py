"""A saved mixture of LLM policies, played one member per game.

``sppo`` with ``average: mixture`` keeps its averaged iterate as a uniform mixture of snapshots
(SPPO's guarantee, arXiv 2405.00675, is for that average); a snapshot directory holds the
members in ``mixture/``: ``member-NNNN`` (each a model or adapter directory, as the learner saves
itself) and ``mixture.json`` (``members``: their paths and iterations, ``weights``). ``llm:model=
DIR/mixture`` loads it as :class:`SampledMixture`: every member an ``llm`` agent with the spec's
other parameters, member k playing a whole game with probability ``weights[k]``, drawn from the
game's own random stream at its first decision (results depend on the match seed only).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from arena.agent import Agent, Observation
from arena.errors import ArenaError

MIXTURE = "mixture.json"


def is_mixture_dir(path: Any) -> bool:
    return path is not None and (Path(str(path)) / MIXTURE).is_file()


class SampledMixture(Agent):
    """Plays member k with probability ``weights[k]`` for a whole game (one draw per game)."""

    def __init__(self, members: Sequence[Agent], weights: Sequence[float], name: str = "mixture") -> None:
        w = np.asarray(weights, dtype=float)
        if len(w) != len(members) or (len(w) and (w.min() < 0 or w.sum() <= 0)):
            raise ArenaError("llm agent: a mixture needs one non-negative weight per member, not all zero")
        self.members = list(members)
        self.cdf = np.cumsum(w / w.sum()) if len(w) else np.ones(0)
        self.name = name
        self._chosen: dict[int, tuple[Any, int]] = {}

    def size(self) -> int:
        return len(self.members)

    def draw(self, u: float) -> int:
        """The member a uniform ``u`` picks."""
        return int(min(np.searchsorted(self.cdf, u, side="right"), self.size() - 1))

    def member_for(self, obs: Observation) -> int:
        gen = obs.rng  # one generator object per game: the key of this game's draw
        hit = self._chosen.get(id(gen))
        if hit is None:
            hit = self._chosen[id(gen)] = (gen, self.draw(obs.uniform()))
        return hit[1]

    def act_member(self, k: int, observations: Sequence[Observation]) -> tuple[list, list[dict[str, Any]]]:
        return self.members[k].act_batch_info(observations)

    def act_batch_info(self, observations: Sequence[Observation]) -> tuple[list, list[dict[str, Any]]]:
        groups: dict[int, list[int]] = {}
        for i, o in enumerate(observations):
            groups.setdefault(self.member_for(o), []).append(i)
        actions: list[Any] = [None] * len(observations)
        infos: list[dict[str, Any]] = [{} for _ in observations]
        for k, idx in sorted(groups.items()):
            acts, inf = self.act_member(k, [observations[i] for i in idx])
            for i, a, f in zip(idx, acts, inf):
                actions[i], infos[i] = a, {**f, "mixture_member": k}
        return actions, infos

    def act_batch(self, observations: Sequence[Observation]) -> list:
        return self.act_batch_info(observations)[0]

    def game_finished(
        self, game_index: int, player: int, returns: Sequence[float], final: Observation | None = None
    ) -> None:
        if final is not None:
            self._chosen.pop(id(final.rng), None)

    def close(self) -> None:
        for m in self.members:
            m.close()


def load_mixture(directory: Any, member: Callable[[str], Agent]) -> SampledMixture:
    """The mixture saved in ``directory``; ``member(path)`` builds the agent of one member."""
    root = Path(str(directory))
    try:
        manifest = json.loads((root / MIXTURE).read_text())
        paths = [str(root / m["path"]) for m in manifest["members"]]
        weights = [float(w) for w in manifest["weights"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ArenaError(f"llm agent: {root / MIXTURE} is not a mixture manifest ({exc})") from None
    if not paths:
        raise ArenaError(f"llm agent: the mixture in {root} has no members")
    return SampledMixture([member(p) for p in paths], weights, name="llm")
