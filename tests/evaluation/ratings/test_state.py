"""RatingState's fast path for runs of duels gives exactly what the plain per-game path gives."""

import random

import pytest

from arena.evaluation.ratings.state import RatingState
from arena.evaluation.store import MatchRecord


def _games(rng: random.Random, n: int) -> list[MatchRecord]:
    """Runs of duels among four agents (both seatings, seat-swapped deals mostly adjacent, some
    split across runs, some never completed), draws, forfeits, big margins, and now and then a
    game the fast path does not take (self-play, three seats, teams) between them."""
    agents = ["a", "b", "c", "d"]
    games, deal = [], 0
    while len(games) < n:
        p, q = rng.sample(agents, 2)
        for _ in range(rng.randint(1, 12)):
            r0 = rng.choice([1.0, -1.0, 2.0, -2.0, 0.0, 7.5, -7.5])
            seats = [[p, q], [q, p]]
            order = [0, 1] if rng.random() < 0.8 else [1, 0]
            for k in order[: rng.choice([1, 2, 2, 2])]:  # sometimes a deal's second game never comes
                forfeit = rng.choice([None] * 8 + [0, 1])
                games.append(_rec(len(games), seats[k], [r0, -r0] if k == 0 else [-r0, r0], deal, forfeit))
            deal += 1
        odd = rng.random()
        if odd < 0.1:
            games.append(_rec(len(games), [p, p], [1.0, -1.0], deal))
        elif odd < 0.2:
            games.append(_rec(len(games), [p, q, "e"], [1.0, 0.0, -1.0], deal))
        elif odd < 0.3:
            games.append(_rec(len(games), [p, q], [1.0, -1.0], deal, info={"teams": [[0], [1]]}))
        deal += 1
    return games


def _rec(k, seats, returns, deal, forfeit=None, info=None):
    return MatchRecord(
        id=f"m{k}",
        pairing="|".join(sorted(set(seats))),
        seed=0,
        game_index=deal,
        game="g",
        seats=list(seats),
        returns=list(returns),
        plan_seq=k,
        forfeit_player=forfeit,
        info=info or {},
    )


def _everything(s: RatingState) -> dict:
    return {
        "records": s.records,
        "names": s.names,
        "W": s.W,
        "N": s.N,
        "S": s.S,
        "C": s.C,
        "elo": s.elo,
        "openskill": s.openskill_ratings(),
        "tally": s.tally,
        "strata": s.hist.strata,
        "units": s.hist.units,
        "open_units": s.open_units,
        "two_player": s.two_player,
    }


@pytest.mark.parametrize("scale", [None, 4.0, 10.0])
def test_runs_of_duels_equal_the_plain_per_game_path(scale):
    games = _games(random.Random(int(scale or 0)), 3000)
    fast = RatingState(scale=scale)
    for i in range(0, len(games), 257):  # slices cut runs (and deals) anywhere
        fast.add_all(games[i : i + 257])
    plain = RatingState(scale=scale)
    for g in games:
        plain._add_one(g)
    assert _everything(fast) == _everything(plain)  # every float bit for bit, not just close
    assert fast.hist.units > 1000 and fast.open_units and fast.tally["a"]["forfeits"] > 0


def test_the_fast_path_takes_runs_of_duels():
    """Guards the test above: were every game to go through the plain path it would prove nothing."""
    calls = []
    state = RatingState()
    state._add_duels = lambda p, q, run: calls.append((p, q, len(run)))  # type: ignore[method-assign]
    state.add_all(_games(random.Random(1), 200))
    assert sum(n for _, _, n in calls) > 150
