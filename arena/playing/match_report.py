"""What ``arena match`` reports, built while games finish rather than from a list at the end.

A million-game match used to keep every :class:`~arena.playing.match.GameResult`, summarize them, then
build and pretty-print one JSON document (17.6 MB for 100k Kuhn games, most of the command's
time). Here each batch of finished games is folded into a :class:`MatchSummary` and its records
are streamed as one line each; nothing per game outlives its batch.

The document keeps its shape — ``{"game", "games", "seed", "results": [...], "agents": {...}}``
— so ``json.load`` readers are unchanged, and ``grep``/``head`` work on the one-line records.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Sequence

import numpy as np

from arena.playing.array_match import ArrayResults
from arena.playing.match import HARNESS_KEYS, GameResult, array_result
from arena.rng import _mix

_TALLY = ("games", "wins", "draws", "losses", "forfeits")


class MatchSummary:
    """Per agent: games, mean return, wins/draws/losses, forfeits. A game is won by the team
    (``result.info["teams"]``, else each seat alone) with the highest mean return; teams tied
    for the top draw. Games are folded in index order, so totals are summed as before.

    A one-seat game (blackjack) has no opponent to beat, so it counts no win, draw or loss: an
    agent that played only such games is reported by its mean return and that mean's 95%
    interval (``return_ci95``, the half-width 1.96·s/√n) instead."""

    def __init__(self, names: Sequence[str]) -> None:
        # name -> [games, total return, wins, draws, losses, forfeits, one-seat games, their sum of squares]
        self._tally: dict[str, list[Any]] = {n: [0, 0.0, 0, 0, 0, 0, 0, 0.0] for n in names}
        # name -> [invalid attempts, retries, substitutions]: what the harness did for the agent
        self._harness: dict[str, list[int]] = {n: [0, 0, 0] for n in names}
        self.forfeits: list[GameResult] = []
        """Forfeited games (kept: they are few, and the table lists them)."""

    def add(self, r: GameResult) -> None:
        returns, tally = r.returns, self._tally
        teams = r.info.get("teams") if r.info else None
        if len(returns) == 1:  # alone at the table: a return, no outcome
            x = returns[0]
            t = tally.get(r.seats[0]) or tally.setdefault(r.seats[0], [0, 0.0, 0, 0, 0, 0, 0, 0.0])
            t[0] += 1
            t[1] += x
            t[6] += 1
            t[7] += x * x
        elif not teams:  # each seat alone: the common case, without the team arithmetic
            best = max(returns)
            won = 2 if sum(x == best for x in returns) == 1 else 3  # not list.count: nan is not nan's equal
            for seat, name in enumerate(r.seats):
                t = tally.get(name) or tally.setdefault(name, [0, 0.0, 0, 0, 0, 0, 0, 0.0])
                x = returns[seat]
                t[0] += 1
                t[1] += x
                t[won if x == best else 4] += 1
        else:
            score = [sum(returns[s] for s in team) / len(team) for team in teams]
            best = max(score)
            top = [i for i, x in enumerate(score) if x == best]
            outcome = {}
            for i, team in enumerate(teams):
                word = (2 if len(top) == 1 else 3) if i in top else 4
                outcome.update({seat: word for seat in team})
            for seat, name in enumerate(r.seats):
                t = tally.get(name) or tally.setdefault(name, [0, 0.0, 0, 0, 0, 0, 0, 0.0])
                t[0] += 1
                t[1] += returns[seat]
                t[outcome.get(seat, 4)] += 1
        if r.forfeit is not None:
            self.forfeits.append(r)
            tally[r.seats[r.forfeit.player]][5] += 1
        harness = r.info.get("harness") if r.info else None
        if harness:
            for seat, name in enumerate(r.seats):
                h = self._harness.setdefault(name, [0, 0, 0])
                for j, key in enumerate(HARNESS_KEYS):
                    h[j] += int(harness[key][seat])

    def add_columns(self, cols: ArrayResults) -> None:
        """:meth:`add` for each game of an array-path batch, in game order, from its columns:
        the same counts, and each agent's total return summed in the same order (a sequential
        ``add.accumulate``, not numpy's pairwise sum), so the summary is the same to the bit."""
        returns, tally = cols.returns, self._tally
        if not len(returns):
            return
        n = returns.shape[1]
        seen = np.unique(cols.seating, return_index=True)[1]  # seatings in order of first appearance
        order = [int(cols.seating[b]) for b in sorted(seen.tolist())] + list(range(len(cols.names)))
        names = list(dict.fromkeys(x for s in order for x in cols.names[s]))
        who = np.array([[names.index(x) for x in seats] for seats in cols.names], dtype=np.int64)[cols.seating]
        codes = _outcome_codes(cols) if n > 1 else None
        for k, name in enumerate(names):
            mine = who == k
            count = int(np.count_nonzero(mine))
            if not count:
                continue
            t = tally.get(name) or tally.setdefault(name, [0, 0.0, 0, 0, 0, 0, 0, 0.0])
            values = returns[mine]  # game by game, seat by seat within a game: add's order
            t[0] += count
            t[1] = _fold(t[1], values)
            if codes is None:
                t[6] += count
                t[7] = _fold(t[7], values * values)
            else:
                got = np.bincount(codes[mine], minlength=5)
                t[2], t[3], t[4] = t[2] + int(got[2]), t[3] + int(got[3]), t[4] + int(got[4])
        if cols.forfeits or cols.info:
            self._add_rare(cols)

    def _add_rare(self, cols: ArrayResults) -> None:
        """Forfeits (kept as results) and harness counts of an array-path batch."""
        for b, f in cols.forfeits.items():
            self.forfeits.append(array_result(cols, b))
            self._tally[cols.names[int(cols.seating[b])][f[0]]][5] += 1
        for b, info in cols.info.items():
            if harness := info.get("harness"):
                for seat, name in enumerate(cols.names[int(cols.seating[b])]):
                    h = self._harness.setdefault(name, [0, 0, 0])
                    for j, key in enumerate(HARNESS_KEYS):
                        h[j] += int(harness[key][seat])

    @property
    def one_seat(self) -> bool:
        """Whether every game so far was a one-seat game (and there was at least one)."""
        return all(t[0] == t[6] for t in self._tally.values()) and any(t[0] for t in self._tally.values())

    def as_dict(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for name, (games, total, wins, draws, losses, forfeits, solo, squares) in self._tally.items():
            if solo and solo == games:
                mean = total / games
                var = max(0.0, squares / games - mean * mean) * games / max(1, games - 1)
                ci = 1.96 * math.sqrt(var / games) if games > 1 else math.inf
                out[name] = {"games": games, "forfeits": forfeits, "mean_return": mean, "return_ci95": ci}
                out[name].update(
                    zip(("invalid_attempts", "retries", "substitutions"), self._harness.get(name, [0, 0, 0]))
                )
                continue
            out[name] = {
                "games": games,
                "wins": wins,
                "draws": draws,
                "losses": losses,
                "forfeits": forfeits,
                "mean_return": total / max(1, games),
                **dict(zip(("invalid_attempts", "retries", "substitutions"), self._harness.get(name, [0, 0, 0]))),
            }
        return out


def _distinct_rows(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first row of each distinct row of ``int64 [B, k]`` and each row's distinct-row number
    (``np.unique(axis=0)``'s answer, 10x faster): one hash per row and one 1-D ``unique``, checked
    row by row; on a collision, one ``unique`` per column instead."""
    with np.errstate(over="ignore"):
        h = np.zeros(len(key), dtype=np.uint64)
        for col in key.T:
            h = _mix(h ^ col.astype(np.uint64))  # SplitMix64's finaliser: every bit of the row counts
    _, first, which = np.unique(h, return_index=True, return_inverse=True)
    which = which.ravel()
    if np.array_equal(key[first][which], key):
        return first, which
    code = np.zeros(len(key), dtype=np.int64)
    size = 1
    for col in key.T:
        _, inv = np.unique(col, return_inverse=True)
        width = int(inv.max()) + 1
        if size * width >= 2**62:  # would overflow: renumber what there is so far
            _, code = np.unique(code, return_inverse=True)
            size = int(code.max()) + 1
        code, size = code * width + inv.ravel(), size * width
    _, first, which = np.unique(code, return_index=True, return_inverse=True)
    return first, which.ravel()


def _fold(total: float, values: np.ndarray) -> float:
    """``total + values[0] + values[1] + ...`` left to right, as repeated ``+=`` would sum it."""
    return float(np.add.accumulate(np.concatenate(([total], values)))[-1])


def _outcome_codes(cols: ArrayResults) -> np.ndarray:
    """``[B, n]`` tally column of each seat's outcome (2 win, 3 draw, 4 loss), as :meth:`MatchSummary.add`
    decides it: numpy for the games without teams or NaN returns, ``add``'s own rule for those."""
    returns = cols.returns
    columns = returns.T  # seat by seat: numpy reduces a long axis much faster than a short one
    best, total = columns[0].copy(), columns[0].copy()
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, which only sends the row to add's rule
        for x in columns[1:]:
            np.maximum(best, x, out=best)
            total += x
    top = returns == best[:, None]
    tops = top[:, 0].astype(np.int64)
    for t in top.T[1:]:
        tops += t
    codes = np.where(top, np.where(tops == 1, 2, 3)[:, None], 4)
    odd = set(np.flatnonzero(np.isnan(total)).tolist())  # a NaN return (or inf - inf): add's own rule
    odd.update(b for b, info in cols.info.items() if info.get("teams"))
    for b in sorted(odd):
        codes[b] = _row_codes(returns[b].tolist(), cols.info.get(b, {}).get("teams"))
    return codes


def _row_codes(returns: list[float], teams: list[list[int]] | None) -> list[int]:
    """One game's outcome per seat, by :meth:`MatchSummary.add`'s rule (teams, or each seat alone)."""
    if not teams:
        best = max(returns)
        won = 2 if sum(x == best for x in returns) == 1 else 3
        return [won if x == best else 4 for x in returns]
    score = [sum(returns[s] for s in team) / len(team) for team in teams]
    top = [i for i, x in enumerate(score) if x == max(score)]
    outcome = {seat: ((2 if len(top) == 1 else 3) if i in top else 4) for i, team in enumerate(teams) for seat in team}
    return [outcome.get(seat, 4) for seat in range(len(returns))]


def summarize(results: Sequence[GameResult], names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The summary of a list of results (see :class:`MatchSummary`)."""
    summary = MatchSummary(names)
    for r in results:
        summary.add(r)
    return summary.as_dict()


def result_record(r: GameResult, seats_json: dict[tuple[str, ...], str]) -> str:
    """One result as a compact JSON object, ``{"index", "seats", "returns", "forfeit"}``.
    Finished games (float returns) take a formatting shortcut equal to ``json.dumps``."""
    if r.forfeit is None:
        key = tuple(r.seats)
        seats = seats_json.get(key) or seats_json.setdefault(key, json.dumps(r.seats))
        values = ", ".join(map(float.__repr__, r.returns))
        if "n" not in values:  # finite (inf and nan need JSON's spelling)
            return f'{{"index": {r.index}, "seats": {seats}, "returns": [{values}], "forfeit": null}}'
    return json.dumps(
        {
            "index": r.index,
            "seats": r.seats,
            "returns": r.returns,
            "forfeit": r.forfeit.__dict__ if r.forfeit else None,
        },
        default=str,
    )


class ReportWriter:
    """Streams the report document to stdout and/or a file (the file appears whole or not at
    all: it is written beside its target and renamed by :meth:`close`)."""

    def __init__(self, head: dict[str, Any], stream: IO[str] | None = None, path: str | None = None) -> None:
        self.sinks: list[IO[str]] = [stream] if stream is not None else []
        self._target = Path(path) if path else None
        self._tmp: str | None = None
        if self._target is not None:
            self._target.parent.mkdir(parents=True, exist_ok=True)
            fd, self._tmp = tempfile.mkstemp(dir=self._target.parent, prefix=f".{self._target.name}.")
            self.sinks.append(os.fdopen(fd, "w"))
        self._seats: dict[tuple[str, ...], str] = {}
        self._first = True
        self._write(json.dumps(head, default=str)[:-1] + ', "results": [')

    def _write(self, text: str) -> None:
        for sink in self.sinks:
            sink.write(text)

    def add(self, results: Sequence[GameResult]) -> None:
        if not results:
            return
        seats = self._seats
        body = ",\n".join(result_record(r, seats) for r in results)
        self._write(("\n" if self._first else ",\n") + body)
        self._first = False

    def add_columns(self, cols: ArrayResults) -> None:
        """:meth:`add` for an array-path batch, from its columns: one string per distinct (seating,
        returns) row made once per batch, then each game's line from its index and that string;
        the text is what :func:`result_record` writes for each game."""
        if not len(cols):
            return
        returns = cols.returns
        first, which = _distinct_rows(np.column_stack([cols.seating, returns.view(np.int64)]))  # bits: -0.0 ≠ 0.0
        tails = []
        for b in first.tolist():
            seats = json.dumps(cols.names[int(cols.seating[b])])
            values = ", ".join(map(float.__repr__, returns[b].tolist()))
            tails.append(f', "seats": {seats}, "returns": [{values}], "forfeit": null}}')
        index = cols.indices.tolist()
        parts: list[Any] = [None] * (2 * len(index))  # each game's index, then the rest of its line
        parts[::2] = index
        parts[1::2] = map(tails.__getitem__, which.tolist())
        odd = set(cols.forfeits) | set(np.flatnonzero(~np.isfinite(returns).all(axis=1)).tolist())
        for b in odd:  # forfeits, inf and nan: the general record (it begins with its index too)
            parts[2 * b + 1] = result_record(array_result(cols, b), self._seats)[len(f'{{"index": {index[b]}') :]
        text = ('{"index": %d%s,\n' * len(index))[:-2] % tuple(parts)  # one format for the batch
        self._write(("\n" if self._first else ",\n") + text)
        self._first = False

    def close(self, summary: dict[str, Any]) -> None:
        self._write(
            ("" if self._first else "\n") + '], "agents": ' + json.dumps(summary, indent=2, default=str) + "}\n"
        )
        if self._target is not None and self._tmp is not None:
            fh = self.sinks.pop()
            fh.close()
            os.replace(self._tmp, self._target)
            self._tmp = None

    def abort(self) -> None:
        """Drop the partial file (an error or interrupt mid-match)."""
        if self._tmp is not None:
            self.sinks[-1].close()
            Path(self._tmp).unlink(missing_ok=True)
            self._tmp = None
