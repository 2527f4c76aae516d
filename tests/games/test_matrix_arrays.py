"""The array face of the iterated matrix games against their State face, and the runner's
array path at simultaneous nodes."""

from __future__ import annotations

import pytest

import arena
from arena.playing.array_match import array_face_for
from arena.playing.match import play_games
from arena.policy import TabularPolicy
from arena.testing import check_array_face


@pytest.mark.parametrize(
    "name",
    ["ipd", "ipd(discount=0.9)", "stag_hunt(memory=2,horizon=5)", "chicken(horizon=3,discount=0.5)", "ipd(horizon=28)"],
)
def test_face_agrees_with_the_state_face(name):
    check_array_face(name, games=300, seed=1)


def test_long_horizons_have_no_face():
    assert arena.load_game("ipd(horizon=29)").array_face() is None
    assert arena.load_game("ipd(horizon=28)").array_face() is not None


def tit_for_tat_table():
    """A tabular tit-for-tat with a lean to cooperate, over every history of up to 3 rounds."""
    table = {}
    for p in (0, 1):
        table[f"p{p} r0 []"] = {0: 0.9, 1: 0.1}
        hist = [[]]
        for r in range(1, 4):
            hist = [h + [(a, b)] for h in hist for a in (0, 1) for b in (0, 1)]
            for h in hist:
                moves = ";".join(f"{a},{b}" for a, b in h)
                other = h[-1][1 - p]
                table[f"p{p} r{r} [{moves}]"] = {0: 0.8, 1: 0.2} if other == 0 else {0: 0.1, 1: 0.9}
    return TabularPolicy("ipd", table)


def outcomes(results):
    return [(r.index, r.seats, r.returns, r.length, r.info, r.forfeit) for r in results]


def test_ten_thousand_games_identical_through_both_faces():
    from arena.plugins.agents.basic import FixedPolicyAgent, RandomAgent

    game = arena.load_game("ipd(discount=0.9,horizon=6)")

    def agents(array):
        out = [FixedPolicyAgent(tit_for_tat_table()), RandomAgent()]
        for a in out:
            a.array_native = array
        return out

    assert array_face_for(game, agents(True), False, None)[0] is not None
    fast = play_games(game, agents(True), 10_000, seed=3, rotate_seats=True)
    slow = play_games(game, agents(False), 10_000, seed=3, rotate_seats=True)
    assert outcomes(fast) == outcomes(slow)
    assert {r.length for r in fast} >= {2, 12}
    seat = [r.seats.index(agents(True)[0].name) for r in fast]  # the table's lean to cooperate shows
    assert sum(r.info["cooperation"][k] for r, k in zip(fast, seat)) / len(fast) > 0.55  # random: 0.5


def test_scripted_agents_stay_on_the_state_path():
    game = arena.load_game("ipd")
    agents = [arena.load_agent("random", game), arena.load_agent("tit_for_tat", game)]
    assert "need a State" in array_face_for(game, agents, False, None)[1]
