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

from arena.playing.match import HARNESS_KEYS, GameResult

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
