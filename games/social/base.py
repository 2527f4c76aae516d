"""Shared machinery for the social dilemmas: repeated simultaneous rounds.

Every social game here is a sequence of rounds in which all players move at once. The state
keeps running totals so ``returns()`` is meaningful mid-game (the match runner and the AEC face
pay per-step rewards as the change in returns). ``discount`` < 1 turns the fixed horizon into a
random one: after each round a chance node stops the game with probability ``1 - discount``
(the OpenSpiel IPD convention), so expected returns equal discounted ones.
"""

from __future__ import annotations

import copy
from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import (
    CHANCE,
    SIMULTANEOUS,
    TERMINAL,
    Action,
    Game,
    GameSpec,
    IllegalActionError,
    State,
    decision_struct,
)

CONTINUE, STOP = 0, 1


class RoundState(State):
    """Simultaneous rounds up to ``game.horizon``; subclasses implement ``_play(joint)``."""

    def __init__(self, game: "RoundGame") -> None:
        self.game = game
        self.round = 0
        self.totals = np.zeros(game.spec.num_players)
        self.history: list[tuple[int, ...]] = []
        self._chance = False
        self._stopped = False

    # -- subclass API ----------------------------------------------------------------------------
    def _play(self, joint: Sequence[int]) -> Sequence[float]:
        """Resolve one round; return each player's reward."""
        raise NotImplementedError

    def _num_actions(self, player: int) -> int:
        return self.game.spec.num_distinct_actions

    # -- contract --------------------------------------------------------------------------------
    def num_players(self) -> int:
        return self.game.spec.num_players

    def current_player(self) -> int:
        if self._stopped or self.round >= self.game.horizon:
            return TERMINAL
        return CHANCE if self._chance else SIMULTANEOUS

    def legal_actions(self, player: int | None = None) -> list[int]:
        if self.current_player() != SIMULTANEOUS or player is None or player < 0:
            return []
        return list(range(self._num_actions(player)))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if not self._chance:
            return []
        d = float(self.game.discount)
        return [(CONTINUE, d), (STOP, 1.0 - d)]

    def apply_action(self, action: Action) -> None:
        if not self._chance:
            raise IllegalActionError(f"{self.game.spec.name}: moves are simultaneous; use apply_actions")
        if action not in (CONTINUE, STOP):
            raise IllegalActionError(f"chance outcome {action!r} is not continue(0)/stop(1)")
        self._chance = False
        self._stopped = action == STOP

    def apply_actions(self, actions: Sequence[Action]) -> None:
        if self.current_player() != SIMULTANEOUS:
            raise IllegalActionError(f"{self.game.spec.name}: no joint move expected now")
        joint = tuple(int(a) for a in actions)
        for p, a in enumerate(joint):
            if a not in self.legal_actions(p):
                raise IllegalActionError(f"{self.game.spec.name}: illegal action {a} for player {p}")
        rewards = self._play(joint)
        self.totals += np.asarray(rewards, dtype=float)
        self.history.append(joint)
        self.round += 1
        if self.game.discount < 1.0 and self.round < self.game.horizon:
            self._chance = True

    def returns(self) -> list[float]:
        return [float(x) for x in self.totals]

    def clone(self) -> "RoundState":
        return copy.deepcopy(self)

    def information_state_key(self, player: int) -> str:
        moves = ";".join(",".join(map(str, j)) for j in self.history)
        return f"p{player} r{self.round} [{moves}]"

    def round_struct(self, player: int) -> dict[str, Any]:
        """The facts every round game shows: the round, the horizon, the running totals (the
        co-players' too: payoffs follow from the public moves) and the player's own decision."""
        out = decision_struct(self, player)
        out.update(
            game=self.game.spec.name,
            players=self.num_players(),
            round=min(self.round + 1, self.game.horizon),
            horizon=self.game.horizon,
            totals=[float(x) for x in self.totals],
        )
        return out

    def summary(self) -> str:
        return f"{self.round} rounds, returns " + ", ".join(f"{x:+g}" for x in self.returns())


class RoundGame(Game):
    """Factory base: subclasses build ``spec`` and set ``horizon``/``discount``."""

    state_class: type[RoundState] = RoundState
    horizon: int = 1
    discount: float = 1.0

    def new_initial_state(self, seed: int | None = None) -> RoundState:
        return self.state_class(self)

    def scripted_action(self, kind: str, obs: Any) -> int:
        """The move of scripted baseline ``kind`` (always_cooperate, tit_for_tat, ...)."""
        raise ArenaError(f"scripted agent '{kind}' does not know how to play {self.spec.name}")

    def scripted_kinds(self) -> tuple[str, ...]:
        return ()


def check_horizon(name: str, horizon: Any, discount: Any) -> tuple[int, float]:
    """Validate the two knobs every social game shares (one clear error line)."""
    if not isinstance(horizon, int) or isinstance(horizon, bool) or horizon < 1:
        raise ArenaError(f"game '{name}': horizon must be a positive integer, got {horizon!r}")
    try:
        d = float(discount)
    except (TypeError, ValueError):
        raise ArenaError(f"game '{name}': discount must be a number in (0, 1], got {discount!r}") from None
    if not 0.0 < d <= 1.0:
        raise ArenaError(f"game '{name}': discount must be in (0, 1], got {discount!r}")
    return horizon, d


def make_spec(
    name: str,
    players: int,
    actions: int,
    shape: tuple[int, ...],
    lo: float,
    hi: float,
    horizon: int,
    params: dict[str, Any],
    description: str,
    text: bool = False,
) -> GameSpec:
    return GameSpec(
        name=name,
        num_players=players,
        num_distinct_actions=actions,
        observation_shape=shape,
        min_utility=lo,
        max_utility=hi,
        zero_sum=False,
        max_game_length=horizon * players,
        tree=False,
        text_decisions=text,
        simultaneous=not text,
        params=params,
        description=description,
    )
