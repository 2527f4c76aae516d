"""League matchmaking maths: opponent pools, AlphaStar's PFSP weightings, the decayed payoff table
and the one-round "newcomers against everyone" evaluation format, and the meta-solver opponent
distributions (Nash, CE, CCE, RAE) over the meta-game the payoff table's mean returns make.

Meta-solver matchmaking (JPSRO: Marris, Muller, Lanctot, Tuyls, Graepel, *Multi-Agent Training
beyond Zero-Sum with Correlated Equilibrium Meta-Solvers*, arXiv 2106.09435): the members a
learner may face and the learner itself form a symmetric two-player meta-game, ``U0[i, j]`` the
mean return of member i against member j and ``U1 = U0.T``. Its opponent distribution is, for

- ``cce``: the opponents' marginal of the (C)CE joint distribution (what JPSRO(CCE) best-responds to);
- ``ce``: the conditional of the joint given that the learner is recommended (JPSRO(CE)'s
  best-response target for that recommendation), or the marginal where the joint gives the
  learner no mass;
- ``nash``: the maximum-entropy symmetric Nash mixture of a zero-sum meta-game;
- ``rae``: the opponent's mixture of the risk-averse equilibrium (Slumbers et al., arXiv 2205.15434).

The maths can be used and tested without the runner; it imports nothing from the rest of
:mod:`arena.league`.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.evaluation.formats import Pairing
from arena.evaluation.ratings.game_theory import nash_averaging
from arena.exact import equilibria

META_SOLVERS = ("nash", "ce", "cce", "rae")
CRITERIA = ("max_entropy", "max_welfare")


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
    multiplies the pair's counts by ``decay``; an unplayed pair reads 0.5. Alongside, the decayed
    mean return of each ordered pair (what the meta-solvers' meta-game is made of), fed by the
    training games and by the evaluation gauntlet's games (:meth:`record`)."""

    def __init__(self, decay: float = 0.99) -> None:
        self.decay = decay
        self.table: dict[str, list[float]] = {}  # "a|b" -> [wins, draws, losses, games]
        self.returns: dict[str, list[float]] = {}  # "a|b" -> [a's returns against b, games], decayed

    def update(self, a: str, b: str, ra: float, rb: float) -> None:
        for x, y, s in ((a, b, np.sign(ra - rb)), (b, a, np.sign(rb - ra))):
            row = self.table.setdefault(f"{x}|{y}", [0.0, 0.0, 0.0, 0.0])
            row[:] = [v * self.decay for v in row]
            row[0 if s > 0 else 1 if s == 0 else 2] += 1.0
            row[3] += 1.0
        self.record(a, b, ra, rb)

    def record(self, a: str, b: str, ra: float, rb: float) -> None:
        """One game's returns into the mean returns only (the win/draw/loss counts PFSP weighs stay);
        a game against itself counts once, at the mean of its seats' returns."""
        for x, y, r in ((a, b, ra), (b, a, rb)) if a != b else ((a, a, (ra + rb) / 2),):
            row = self.returns.setdefault(f"{x}|{y}", [0.0, 0.0])
            row[0] = row[0] * self.decay + float(r)
            row[1] = row[1] * self.decay + 1.0

    def mean_return(self, a: str, b: str) -> float | None:
        """a's decayed mean return against b, None if they never met."""
        row = self.returns.get(f"{a}|{b}")
        return row[0] / row[1] if row and row[1] > 0 else None

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


def meta_game(labels: Sequence[str], table: PayoffTable) -> list[np.ndarray]:
    """The symmetric two-player meta-game of ``labels``: ``U0[i, j]`` = mean return of labels[i]
    against labels[j], ``U1 = U0.T``. A pair that never met reads the mean of the known entries
    (0 in a zero-sum game, where that is an even game, as PFSP reads an unplayed pair as 0.5)."""
    k = len(labels)
    U = np.full((k, k), np.nan)
    for i, a in enumerate(labels):
        for j, b in enumerate(labels):
            r = table.mean_return(a, b)
            if r is not None:
                U[i, j] = r
    known = U[~np.isnan(U)]
    U[np.isnan(U)] = float(known.mean()) if known.size else 0.0
    return [U, U.T.copy()]


def meta_distribution(
    payoffs: Sequence[np.ndarray],
    me: int,
    solver: str,
    criterion: str = "max_entropy",
    risk: float = 0.1,
    iterations: int = 300,
) -> np.ndarray:
    """The distribution over the meta-game's members that the member at index ``me`` draws its
    opponents from (see the module docstring for each solver); one ArenaError line on bad input."""
    if solver not in META_SOLVERS:
        raise ArenaError(f"matchmaking solver must be one of {', '.join(META_SOLVERS)}, not {solver!r}")
    if criterion not in CRITERIA:
        raise ArenaError(f"matchmaking criterion must be one of {', '.join(CRITERIA)}, not {criterion!r}")
    tables = equilibria.check_payoffs(payoffs, f"matchmaking '{solver}'")
    if len(tables) != 2 or tables[0].shape[0] != tables[0].shape[1] or not np.allclose(tables[1], tables[0].T):
        raise ArenaError(
            f"matchmaking '{solver}': needs a symmetric two-player meta-game (U1 = U0.T), got "
            f"{len(tables)} tensors of shape {tables[0].shape}"
        )
    if not 0 <= me < tables[0].shape[0]:
        raise ArenaError(f"matchmaking '{solver}': member index {me} is outside the meta-game ({tables[0].shape[0]})")
    if solver == "nash":
        if not equilibria.is_two_player_zero_sum(tables, tol=1e-9 * (1.0 + np.abs(tables[0]).max())):
            worst = float(np.abs(tables[0] + tables[1]).max())
            raise ArenaError(
                f"matchmaking 'nash': the meta-game is not zero-sum (returns of a pair sum to up to "
                f"{worst:.3g}); Nash is selected here for zero-sum meta-games only: use ce, cce or rae"
            )
        return _normalized(nash_averaging(tables[0])[0])
    if solver == "rae":
        return _normalized(equilibria.risk_averse_equilibrium(tables, risk, iterations)[1])
    select = equilibria.max_entropy if criterion == "max_entropy" else equilibria.max_welfare
    joint = select(tables, solver)
    marginal = joint.sum(axis=0)
    if solver == "ce" and joint[me].sum() > 1e-9:
        return _normalized(joint[me])
    return _normalized(marginal)


def _normalized(x: np.ndarray) -> np.ndarray:
    x = np.clip(np.asarray(x, dtype=float), 0.0, None)
    return x / x.sum()
