"""What one game says about each pair of agents in it, and which games are independent draws."""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

from arena.errors import ArenaError


def margin_scale(game: Any, outcome: str) -> float | None:
    """The utility range used by margin scores, or None for win/draw/loss scores."""
    if outcome not in ("margin", "win"):
        raise ArenaError(f"ratings.outcome must be 'margin' or 'win', got '{outcome}'")
    span = float(game.spec.max_utility) - float(game.spec.min_utility)
    return span if outcome == "margin" and math.isfinite(span) and span > 0 else None


def pair_score(ra: float, rb: float, scale: float | None = None) -> float:
    """a's score against b in one game, in [0, 1].

    Without ``scale``: 1 for the higher return, 0.5 on equal returns, 0 otherwise. With
    ``scale`` (the game's utility range ``max − min``): the *margin* score
    ``1/2 + (ra − rb)/(2·scale)``, whose expectation is monotone in the expected payoff — the
    right notion for poker-like games where winning many small pots loses to winning big
    ones. For win/draw/loss games (returns ±1, 0) both agree."""
    if scale:
        return min(1.0, max(0.0, 0.5 + (ra - rb) / (2.0 * scale)))
    return 1.0 if ra > rb else 0.5 if ra == rb else 0.0


def comparisons(record: Any) -> Iterable[tuple[int, int]]:
    """Seat pairs of one game that compare two different agents (not self-play, not teammates)."""
    seats = record.seats
    team = {s: t for t, members in enumerate((getattr(record, "info", None) or {}).get("teams") or []) for s in members}
    for i in range(len(seats)):
        for j in range(i + 1, len(seats)):
            if seats[i] != seats[j] and (i not in team or team.get(i) != team.get(j)):
                yield i, j


def pairwise_outcomes(records: Iterable[Any], scale: float | None = None) -> list[tuple[str, str, float]]:
    """Every pair of seats held by different agents in every game: ``(a, b, score of a)``
    (see :func:`pair_score`).

    A 2-player game gives one comparison; a free-for-all of n gives n(n−1)/2. Seats of the
    same agent (self-play) are not compared, nor teammates when the game reports
    ``info["teams"]``."""
    return [
        (r.seats[i], r.seats[j], pair_score(r.returns[i], r.returns[j], scale))
        for r in records
        for i, j in comparisons(r)
    ]


def winner_rows(records: Iterable[Any]) -> Iterable[tuple[str, str, str]]:
    """:func:`pairwise_outcomes` in LMArena's pair format, ``(model_a, model_b, winner)`` with
    ``winner`` one of ``model_a``, ``model_b``, ``tie``: the higher return wins, equal returns
    tie (the win/draw/loss scores; a margin-scored board has no such rows)."""
    for r in records:
        for i, j in comparisons(r):
            s = pair_score(r.returns[i], r.returns[j])
            yield r.seats[i], r.seats[j], "model_a" if s == 1.0 else "model_b" if s == 0.0 else "tie"


def outcome_units(records: Iterable[Any]) -> tuple[list[Any], list[Any]]:
    """The independent unit and the stratum of every outcome of :func:`pairwise_outcomes`.

    Why: games of one deal are not independent draws — the seat-swapped games of a duplicate
    deal share its cards, so their outcomes are (negatively) correlated. The bootstrap must
    resample whole deals, the units that *are* independent: a unit is ``(pairing, seed,
    deal)``, its stratum the pairing (resampled within, so every pairing keeps its count, as
    the design fixed it)."""
    units, strata = [], []
    for r in records:
        unit = deal_unit(r)
        for _ in comparisons(r):
            units.append(unit)
            strata.append(unit[0])
    return units, strata


def deal_unit(record: Any) -> tuple[Any, Any, Any]:
    """The bootstrap unit of one game: ``(pairing, seed, deal)`` (records without a pairing: the
    agents' sorted names; without a deal number: the game's id)."""
    try:
        pairing, seed, deal = record.pairing, record.seed, record.game_index
    except AttributeError:
        pairing, seed = getattr(record, "pairing", None), getattr(record, "seed", 0)
        deal = getattr(record, "game_index", getattr(record, "id", None))
    return (pairing or "|".join(sorted(set(record.seats))), seed, deal)


def deal_units(records: Sequence[Any]) -> list[tuple[Any, Any, Any]]:
    """:func:`deal_unit` of every record, in one pass where the records carry every field (a
    tournament's run of games)."""
    try:
        return [(r.pairing or deal_unit(r)[0], r.seed, r.game_index) for r in records]
    except AttributeError:
        return [deal_unit(r) for r in records]
