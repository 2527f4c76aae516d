"""Elo: online and order-dependent, so it is replayed in plan order (a resumed run equals a clean one)."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from arena.evaluation.ratings.outcomes import pairwise_outcomes


def elo_expected(ra: float, rb: float) -> float:
    return 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0))


def elo_update(ra: float, rb: float, score_a: float, k: float = 32.0) -> tuple[float, float]:
    """One game: ``R' = R + K(S − E)``, zero-sum between the two players."""
    delta = k * (score_a - elo_expected(ra, rb))
    return ra + delta, rb - delta


def elo(
    records: Iterable[Any],
    k: float = 32.0,
    initial: float = 1500.0,
    names: Sequence[str] = (),
    scale: float | None = None,
) -> dict[str, float]:
    """Online Elo over the records in the order given (the store gives plan order)."""
    ratings = {n: initial for n in names}
    for a, b, s in pairwise_outcomes(records, scale):
        ra, rb = ratings.setdefault(a, initial), ratings.setdefault(b, initial)
        ratings[a], ratings[b] = elo_update(ra, rb, s, k)
    return ratings


def elo_duels(ra: float, rb: float, a_first: Iterable[bool], scores: Iterable[float], k: float) -> tuple[float, float]:
    """``(ra, rb)`` after consecutive games between the same two agents a and b: ``a_first``
    says whether a held seat 0, ``scores`` are seat 0's scores. :func:`elo_update` game by
    game, written out on two floats (a tournament's Elo cost per game)."""
    for first, sc in zip(a_first, scores):
        if first:
            delta = k * (sc - 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0)))
            ra, rb = ra + delta, rb - delta
        else:
            delta = k * (sc - 1.0 / (1.0 + 10.0 ** ((ra - rb) / 400.0)))
            rb, ra = rb + delta, ra - delta
    return ra, rb
