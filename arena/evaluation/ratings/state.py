"""Every rating a leaderboard shows, kept as sufficient statistics and updated game by game."""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Sequence

import numpy as np

from arena.evaluation.ratings.bradley_terry import BTFit, UnitHistogram, bt_fit, bt_theta, elo_scale
from arena.evaluation.ratings.elo import elo_duels, elo_update
from arena.evaluation.ratings.openskill import fast_plackett_luce, openskill_model, plackett_luce_duels, rate_game
from arena.evaluation.ratings.outcomes import comparisons, deal_unit, deal_units, pair_score

Outcome = tuple[str, str, float]


class RatingState:
    """Every rating and tally a leaderboard shows, updated one game at a time in plan order.

    Why: recomputing ratings from every stored game at every snapshot made a tournament's cost
    quadratic in its games. This state keeps sufficient statistics instead — the pairwise win
    and game matrices (Bradley–Terry), the online Elo and OpenSkill ratings, the W/D/L tallies,
    the payoff sums and the bootstrap's unit histogram — so a snapshot costs the same at game
    10⁶ as at game 10³, and the leaderboard of a store is one streamed pass over its records.
    Fed the same records in the same order it gives exactly what the batch functions
    (``bradley_terry_records``, ``elo``, ``openskill``) give.

    A bootstrap unit (a deal, :func:`~arena.evaluation.ratings.outcomes.outcome_units`) is
    complete once it holds as many games as the game has seats (one per seat rotation);
    complete units move into the histogram, the few open ones wait in a dict."""

    def __init__(
        self,
        names: Sequence[str] = (),
        scale: float | None = None,
        elo_k: float = 32.0,
        openskill_model: str = "PlackettLuce",
        initial_elo: float = 1500.0,
    ) -> None:
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.scale, self.elo_k, self.initial_elo = scale, elo_k, initial_elo
        self.records = 0
        self.W: list[list[float]] = []
        self.N: list[list[float]] = []
        self.elo: dict[str, float] = {}
        self._osk_model_name = openskill_model
        self._osk: Any = None
        self._osk_fast = False
        self.openskill: dict[str, Any] = {}
        self.tally: dict[str, dict[str, float]] = {}
        self.S: list[list[float]] = []
        self.C: list[list[float]] = []
        self.two_player = True
        self.hist = UnitHistogram()
        self.open_units: dict[Any, tuple[Any, int, list[Outcome]]] = {}
        self.ensure(names)

    def ensure(self, names: Iterable[str]) -> None:
        """Add agents (in this order) that the state does not know yet."""
        for a in names:
            if a in self.index:
                continue
            self.index[a] = len(self.names)
            self.names.append(a)
            for M in (self.W, self.N, self.S, self.C):
                for row in M:
                    row.append(0.0)
                M.append([0.0] * len(self.names))
            self.elo[a] = self.initial_elo
            self.openskill[a] = self.model().rating(name=a)
            self.tally[a] = {"games": 0, "wins": 0, "draws": 0, "losses": 0, "points": 0.0, "ret": 0.0, "forfeits": 0}

    def model(self) -> Any:
        if self._osk is None:
            self._osk = openskill_model(self._osk_model_name)
            self._osk_fast = fast_plackett_luce(self._osk)
        return self._osk

    def add(self, r: Any) -> None:
        """One game (in plan order)."""
        self.add_all((r,))

    def add_all(self, records: Iterable[Any]) -> "RatingState":
        """Games in plan order. Runs of duels between the same two agents (no teams, the default
        OpenSkill model) go through :meth:`_add_duels`, one system at a time over the whole run
        — a tournament's rating cost per game; every other game through :meth:`_add_one`."""
        run: list[Any] = []
        p: Any = None  # the pair of the current run
        q: Any = None
        self.model()
        fast = self._osk_fast
        for r in records:
            seats = r.seats
            if fast and len(seats) == 2:
                info = getattr(r, "info", None)
                if not (info and info.get("teams")):
                    a, b = seats
                    if (a == p and b == q) or (a == q and b == p):
                        run.append(r)
                        continue
                    if a != b:
                        if run:
                            self._add_duels(p, q, run)
                        run, p, q = [r], a, b
                        continue
            if run:
                self._add_duels(p, q, run)
                run, p, q = [], None, None
            self._add_one(r)
        if run:
            self._add_duels(p, q, run)
        return self

    # -- any game ---------------------------------------------------------------------------------
    def _add_one(self, r: Any) -> None:
        """Any game: teams, self-play, more than two seats (and the plain path for duels)."""
        seats, returns = r.seats, r.returns
        self.ensure(seats)
        self.records += 1
        outs = [(seats[i], seats[j], pair_score(returns[i], returns[j], self.scale)) for i, j in comparisons(r)]
        idx, W, N = self.index, self.W, self.N
        for a, b, sc in outs:  # Bradley–Terry sufficient statistics, then online Elo
            i, j = idx[a], idx[b]
            W[i][j] += sc
            W[j][i] += 1.0 - sc
            N[i][j] += 1
            N[j][i] += 1
            self.elo[a], self.elo[b] = elo_update(self.elo[a], self.elo[b], sc, self.elo_k)
        if outs:
            self._add_to_unit(deal_unit(r), outs, len(seats))
        rate_game(self.model(), self.openskill, r)
        self._add_tallies(r)
        if len(seats) != 2:
            self.two_player = False
        elif seats[0] != seats[1]:
            i, j = idx[seats[0]], idx[seats[1]]
            self.S[i][j] += returns[0]
            self.S[j][i] += returns[1]
            self.C[i][j] += 1
            self.C[j][i] += 1

    def _add_to_unit(self, unit: tuple[Any, Any, Any], outs: list[Outcome], games: int) -> None:
        """One game's outcomes into its bootstrap unit, which completes at ``games`` games."""
        st, seen, acc = self.open_units.get(unit, (unit[0], 0, []))
        acc.extend(outs)
        if seen + 1 >= games:
            self.open_units.pop(unit, None)
            self.hist.add(st, acc)
        else:
            self.open_units[unit] = (st, seen + 1, acc)

    def _add_tallies(self, r: Any) -> None:
        """Games, wins/draws/losses by rank of returns, points, summed return, forfeits."""
        returns = r.returns
        best = max(returns)
        top = sum(1 for x in returns if x == best)
        for seat, a in enumerate(r.seats):
            t = self.tally[a]
            t["games"] += 1
            t["ret"] += returns[seat]
            if returns[seat] == best:
                t["wins" if top == 1 else "draws"] += 1
                t["points"] += 1.0 if top == 1 else 0.5
            else:
                t["losses"] += 1
            if r.forfeit_player == seat:
                t["forfeits"] += 1

    # -- runs of duels ----------------------------------------------------------------------------
    def _add_duels(self, p: str, q: str, records: Sequence[Any]) -> None:
        """:meth:`_add_one` for consecutive games between agents ``p`` and ``q`` (either seating),
        no teams, the default OpenSkill model: the same updates in the same floating-point order,
        one system at a time over the run's columns (who sat first, returns, seat 0's score).
        Every sum that depends on its order (scores, returns, Elo, OpenSkill) is accumulated
        game by game from the table's value; counts (games, wins, the ``N``/``C`` matrices) and
        points (multiples of ½, exact in any order) are added once
        (tests/evaluation/ratings/test_state.py checks it all against :meth:`_add_one`)."""
        self.ensure((p, q))
        p_first = [r.seats[0] == p for r in records]
        returns = [r.returns for r in records]
        scores = seat0_scores(returns, self.scale)
        wins_p, wins_q, draws = self._add_duel_sums(p, q, p_first, returns, scores)
        self._add_duel_counts(p, q, records, p_first, (wins_p, wins_q), draws)
        self.elo[p], self.elo[q] = elo_duels(self.elo[p], self.elo[q], p_first, scores, self.elo_k)
        plackett_luce_duels(self._osk, self.openskill[p], self.openskill[q], p_first, returns)
        self._add_duel_units(p, q, records, p_first, scores)

    def _add_duel_sums(
        self, p: str, q: str, p_first: list[bool], returns: list[Any], scores: list[float]
    ) -> tuple[int, int, int]:
        """Bradley–Terry's points (``W``), the payoff sums (``S``) and the agents' summed returns,
        each accumulated in game order; returns the run's ``(wins of p, wins of q, draws)``."""
        i, j = self.index[p], self.index[q]
        W, S, t_p, t_q = self.W, self.S, self.tally[p], self.tally[q]
        w_pq, w_qp, s_pq, s_qp, ret_p, ret_q = W[i][j], W[j][i], S[i][j], S[j][i], t_p["ret"], t_q["ret"]
        wins_p = wins_q = draws = 0
        for first, sc, (r0, r1) in zip(p_first, scores, returns):
            if first:
                w_pq += sc
                w_qp += 1.0 - sc
                s_pq += r0
                s_qp += r1
                ret_p += r0
                ret_q += r1
            else:
                w_qp += sc
                w_pq += 1.0 - sc
                s_qp += r0
                s_pq += r1
                ret_q += r0
                ret_p += r1
            if r1 > r0:  # seat 1 won
                wins_p += not first
                wins_q += first
            elif r0 == r1:
                draws += 1
            elif r0 == r0:  # seat 0 won (a nan return wins nothing)
                wins_p += first
                wins_q += not first
        W[i][j], W[j][i], S[i][j], S[j][i], t_p["ret"], t_q["ret"] = w_pq, w_qp, s_pq, s_qp, ret_p, ret_q
        return wins_p, wins_q, draws

    def _add_duel_counts(
        self, p: str, q: str, records: Sequence[Any], p_first: list[bool], wins: tuple[int, int], draws: int
    ) -> None:
        """Games (``N``, ``C`` and the tallies), wins/draws/losses, points and forfeits of a run
        of duels: counts, so added once."""
        n = len(records)
        self.records += n
        i, j = self.index[p], self.index[q]
        for M in (self.N, self.C):
            M[i][j] += n
            M[j][i] += n
        forfeits = [0, 0]
        for first, r in zip(p_first, records):
            seat = r.forfeit_player
            if seat is not None and seat in (0, 1):
                forfeits[(seat == 0) != first] += 1
        for a, won, forfeited in zip((p, q), wins, forfeits):
            t = self.tally[a]
            t["games"] += n
            t["wins"] += won
            t["draws"] += draws
            t["losses"] += n - won - draws
            t["points"] += won + 0.5 * draws
            t["forfeits"] += forfeited

    def _add_duel_units(self, p: str, q: str, records: Sequence[Any], p_first: list[bool], scores: list[float]) -> None:
        """The bootstrap units of a run of duels. A deal's two games are usually adjacent, so its
        unit completes without the open-units table, and completed units are counted per
        signature before they enter the histogram."""
        open_units, hist = self.open_units, self.hist
        completed: list[tuple[Any, Outcome, Outcome]] = []
        pending: Any = None
        pending_out: Any = None
        for unit, first, sc in zip(deal_units(records), p_first, scores):
            out = (p, q, sc) if first else (q, p, sc)
            if unit == pending:  # the seat-swapped game right after: the deal is complete
                completed.append((unit[0], pending_out, out))
                pending = None
                continue
            held = open_units.pop(unit, None) if open_units else None
            if held is not None:
                held[2].append(out)
                hist.add(held[0], held[2])
                continue
            if pending is not None:
                open_units[pending] = (pending[0], 1, [pending_out])
            pending, pending_out = unit, out
        if pending is not None:
            open_units[pending] = (pending[0], 1, [pending_out])
        for (stratum, first_out, second_out), count in Counter(completed).items():
            hist.add(stratum, (first_out, second_out), count)

    # -- views ------------------------------------------------------------------------------------
    def matrices(self, names: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(W, N)`` of ``win_matrix`` over ``names`` (default: every agent seen)."""
        W, N = (
            np.array(self.W, dtype=float).reshape(len(self.names), -1),
            np.array(self.N, dtype=float).reshape(len(self.names), -1),
        )
        if names is None or list(names) == self.names:
            return W, N
        sel = [self.index[a] for a in names]
        return W[np.ix_(sel, sel)], N[np.ix_(sel, sel)]

    def bradley_terry(
        self, names: Sequence[str] | None = None, bootstrap: int = 0, seed: int = 0, ridge: float = 1e-3
    ) -> BTFit:
        """The BT fit of every game so far (the bootstrap also counts the still open units)."""
        names = list(self.names if names is None else names)
        self.ensure(names)
        W, N = self.matrices(names)
        hist = self.hist
        if bootstrap > 0 and self.open_units:
            hist = hist.copy()
            for st, _, acc in self.open_units.values():
                hist.add(st, acc)
        return bt_fit(W, N, names, hist, bootstrap=bootstrap, seed=seed, ridge=ridge)

    def bt_ratings(self, names: Sequence[str] | None = None, ridge: float = 1e-3) -> np.ndarray:
        """The ratings of :meth:`bradley_terry` alone (no bootstrap, no covariance): what a
        rating snapshot records, every ``snapshot_every`` games."""
        names = list(self.names if names is None else names)
        self.ensure(names)
        return elo_scale(bt_theta(*self.matrices(names), ridge))

    def games(self) -> dict[str, int]:
        return {a: int(t["games"]) for a, t in self.tally.items()}

    def openskill_ratings(self) -> dict[str, tuple[float, float]]:
        return {a: (float(x.mu), float(x.sigma)) for a, x in self.openskill.items()}

    def payoff(self) -> tuple[np.ndarray, np.ndarray]:
        """``payoff_matrix`` of the games so far."""
        S, C = np.array(self.S, dtype=float), np.array(self.C, dtype=float)
        if not self.names:
            return np.zeros((0, 0)), np.zeros((0, 0))
        return np.divide(S, C, out=np.zeros_like(S), where=C > 0), C


def seat0_scores(returns: Iterable[Sequence[float]], scale: float | None) -> list[float]:
    """Seat 0's :func:`~arena.evaluation.ratings.outcomes.pair_score` in each 2-player game,
    written out for a run of games."""
    if scale:
        two_scale = 2.0 * scale
        return [
            x if 0.0 < (x := 0.5 + (r0 - r1) / two_scale) < 1.0 else (1.0 if x >= 1.0 else 0.0) for r0, r1 in returns
        ]
    return [1.0 if r0 > r1 else 0.5 if r0 == r1 else 0.0 for r0, r1 in returns]
