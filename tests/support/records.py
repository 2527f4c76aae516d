"""Match records built by hand, for tests of ratings and leaderboards."""

from __future__ import annotations

from typing import Any, Sequence

from arena.evaluation.store import MatchRecord


def record(
    seats: Sequence[str], returns: Sequence[float], info: dict[str, Any] | None = None, i: int = 0
) -> MatchRecord:
    """Game ``i`` (its own deal) with these seats and returns; the pairing is the seats joined by ``|``."""
    return MatchRecord(
        id=f"m{i}",
        pairing="|".join(seats),
        seed=0,
        game_index=i,
        game="g",
        seats=list(seats),
        returns=list(returns),
        plan_seq=i,
        info=info or {},
    )
