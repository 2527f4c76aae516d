"""Cooperative 3x3 matrix games where independent learners are known to miss the optimum:
the climbing game and the penalty game (Claus & Boutilier, *The Dynamics of Reinforcement
Learning in Cooperative Multiagent Systems*, AAAI 1998).

Both players get the same payoff (row = player 0's action):

```
climbing    a    b    c          penalty    a    b    c
   a       11  -30    0             a      10    0    k
   b      -30    7    6             b       0    2    0
   c        0    0    5             c       k    0   10      (k <= 0, default -10)
```

Why learners fail: against a uniform partner the climbing game's action values are a -6.33,
b -5.67, c +1.67, the best response to c is b and to b is b, so independent hill-climbing
settles on (b,b) = 7 instead of (a,a) = 11; in the penalty game the safe (b,b) = 2 wins against
a uniform partner whenever k < -8. The games are one simultaneous round (``horizon`` repeats it);
the observation is the last joint move, one-hot over (start, 9 joint moves).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import GameEntry
from arena.games.social.base import RoundGame, RoundState, check_horizon, make_spec
from arena.hookspecs import hookimpl

LABELS = ("a", "b", "c")
CLIMBING = ((11.0, -30.0, 0.0), (-30.0, 7.0, 6.0), (0.0, 0.0, 5.0))


def penalty_matrix(k: float) -> tuple[tuple[float, ...], ...]:
    return ((10.0, 0.0, k), (0.0, 2.0, 0.0), (k, 0.0, 10.0))


class CoordinationState(RoundState):
    game: "CoordinationGame"

    def _play(self, joint: Sequence[int]) -> list[float]:
        r = self.game.matrix[joint[0]][joint[1]]
        return [r, r]

    def observation_tensor(self, player: int) -> np.ndarray:
        out = np.zeros(10, dtype=np.float32)
        if self.history:
            a, b = self.history[-1] if player == 0 else self.history[-1][::-1]
            out[1 + 3 * a + b] = 1.0
        else:
            out[0] = 1.0
        return out

    def action_label(self, player: int, action: int) -> str:
        return LABELS[action]

    def observation_text(self, player: int) -> str:
        g = self.game
        rows = "; ".join(f"{LABELS[i]}: " + " ".join(f"{v:g}" for v in row) for i, row in enumerate(g.matrix))
        lines = [f"{g.title}, round {min(self.round + 1, g.horizon)} of {g.horizon}. Both players get the same payoff."]
        lines.append(f"Payoffs (your move, then the other's a b c): {rows}.")
        if self.history:
            a, b = self.history[-1] if player == 0 else self.history[-1][::-1]
            lines.append(f"Last round you played {LABELS[a]}, the other player {LABELS[b]}.")
        lines.append("Game over." if self.is_terminal() else "Legal: a, b, c.")
        return " ".join(lines)

    def observation_struct(self, player: int) -> dict[str, Any]:
        out = self.round_struct(player)
        out.update(moves=list(LABELS), payoffs=[list(r) for r in self.game.matrix])
        return out


class CoordinationGame(RoundGame):
    """The climbing game (``kind="climbing"``) or the penalty game (``kind="penalty"``, ``k``)."""

    state_class = CoordinationState

    def __init__(self, kind: str, k: float = -10.0, horizon: int = 1) -> None:
        if kind == "climbing":
            self.matrix, self.title = CLIMBING, "Climbing game"
            params: dict[str, Any] = {}
        elif kind == "penalty":
            try:
                k = float(k)
            except (TypeError, ValueError):
                raise ArenaError(f"game 'penalty': k must be a number <= 0, got {k!r}") from None
            if k > 0:
                raise ArenaError(f"game 'penalty': k must be <= 0, got {k:g}")
            self.matrix, self.title = penalty_matrix(k), "Penalty game"
            params = {"k": k} if k != -10.0 else {}
        else:
            raise ArenaError(f"unknown coordination game {kind!r}: climbing or penalty")
        self.horizon, self.discount = check_horizon(kind, horizon, 1.0)
        if horizon != 1:
            params["horizon"] = horizon
        flat = [v for row in self.matrix for v in row]
        self.optimum = max(flat)
        self.spec = make_spec(
            kind, 2, 3, (10,), min(flat) * self.horizon, self.optimum * self.horizon, self.horizon, params,
            f"{self.title} (Claus & Boutilier 1998): common payoff, optimum {self.optimum:g}",
        )  # fmt: skip

    def joint_rate(self, joints: Sequence[Sequence[int]]) -> float:
        """Share of joint moves that earn the optimum."""
        hits = [self.matrix[a][b] >= self.optimum for a, b in joints]
        return float(np.mean(hits)) if hits else 0.0


def climbing(horizon: int = 1) -> CoordinationGame:
    return CoordinationGame("climbing", horizon=horizon)


def penalty(k: float = -10.0, horizon: int = 1) -> CoordinationGame:
    return CoordinationGame("penalty", k=k, horizon=horizon)


@hookimpl
def arena_games() -> list[GameEntry]:
    return [
        GameEntry("climbing", climbing, "climbing game: cooperative 3x3, optimum (a,a)=11 next to -30", {"horizon": 1}),
        GameEntry("penalty", penalty, "penalty game: cooperative 3x3, optima (a,a)=(c,c)=10, miscoordination k", {"k": -10.0, "horizon": 1}),
    ]  # fmt: skip
