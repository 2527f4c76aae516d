"""League matchmaking maths: opponent pools, AlphaStar's PFSP weightings, the decayed payoff table
and the one-round "newcomers against everyone" evaluation format.

The maths can be used and tested without the runner; it imports nothing from the rest of
:mod:`arena.league`.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Sequence

import numpy as np

from arena.evaluation.formats import Pairing


def pfsp_weights(win_rates: Sequence[float], weighting: str = "hard") -> np.ndarray:
    """AlphaStar's prioritized fictitious self-play: P(B) ∝ f(P[A beats B]), uniform if all 0."""
    x = np.asarray(win_rates, dtype=float)
    f = {
        "hard": (1 - x) ** 2,
        "squared": (1 - x) ** 2,
        "var": x * (1 - x),
        "linear": 1 - x,
        "linear_capped": np.minimum(0.5, 1 - x),
    }[weighting]
    s = f.sum()
    return f / s if s > 1e-12 else np.full(len(x), 1.0 / max(1, len(x)))


class PayoffTable:
    """Decayed win/draw/loss counts per ordered pair (AlphaStar's payoff): every update first
    multiplies the pair's counts by ``decay``; an unplayed pair reads 0.5."""

    def __init__(self, decay: float = 0.99) -> None:
        self.decay = decay
        self.table: dict[str, list[float]] = {}  # "a|b" -> [wins, draws, losses, games]

    def update(self, a: str, b: str, ra: float, rb: float) -> None:
        for x, y, s in ((a, b, np.sign(ra - rb)), (b, a, np.sign(rb - ra))):
            row = self.table.setdefault(f"{x}|{y}", [0.0, 0.0, 0.0, 0.0])
            row[:] = [v * self.decay for v in row]
            row[0 if s > 0 else 1 if s == 0 else 2] += 1.0
            row[3] += 1.0

    def win_rate(self, a: str, b: str) -> float:
        row = self.table.get(f"{a}|{b}")
        if not row or row[3] <= 0:
            return 0.5
        return (row[0] + 0.5 * row[1]) / row[3]


def newcomer_round(names: Sequence[str], new: Sequence[str], games: int, num_players: int) -> Any:
    """A one-round tournament format: every group of ``num_players`` with at least one newcomer,
    ``games`` games per seat rotation — a round robin that never replays what is already rated."""
    yield [Pairing(g, games * num_players) for g in combinations(names, num_players) if set(g) & set(new)]
    return []
