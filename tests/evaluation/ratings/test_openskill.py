"""OpenSkill (Weng–Lin, "A Bayesian Approximation Method for Online Ranking", JMLR 2011)
against oracle numbers recomputed with the ``openskill`` package, and the closed-form 1v1 update
against ``model.rate`` bit for bit."""

import pytest

from arena.evaluation.ratings.openskill import fast_plackett_luce, openskill, plackett_luce_1v1
from arena.evaluation.ratings.state import RatingState
from support.records import record as rec


def test_openskill_1v1_ffa_and_teams():
    r = openskill([rec(["w", "l"], [1, -1])])
    assert r["w"] == pytest.approx((27.6354, 8.0659), abs=1e-4)
    assert r["l"] == pytest.approx((22.3646, 8.0659), abs=1e-4)
    assert r["w"][0] - 3 * r["w"][1] == pytest.approx(3.4377, abs=1e-4)
    ffa = openskill([rec(["a", "b", "c", "d"], [3, 2, 1, 0])])
    assert [round(ffa[x][0], 3) for x in "abcd"] == [27.795, 26.553, 24.689, 20.962]
    # 3-v-2 team game reported through GameResult.info (Werewolf style): team 0 wins
    teams = openskill(
        [rec(["v1", "v2", "v3", "w1", "w2"], [0, 0, 0, 0, 0], {"teams": [[0, 1, 2], [3, 4]], "winner": 0})]
    )
    assert teams["v1"][0] == pytest.approx(25.7736, abs=1e-4)
    assert teams["w2"][0] == pytest.approx(24.2264, abs=1e-4)
    # without a winner key the team with the larger summed return ranks first
    t2 = openskill([rec(["v1", "v2", "v3", "w1", "w2"], [1, 1, 1, -1, -1], {"teams": [[0, 1, 2], [3, 4]]})])
    assert t2["v1"][0] == pytest.approx(25.7736, abs=1e-4)


def test_closed_form_plackett_luce_1v1_is_openskills_rate_bit_for_bit():
    """The tournament's 1v1 OpenSkill update (no rate() call) against openskill itself on random
    win/draw/loss sequences among a few players: every mu and sigma identical, not just close."""
    import random

    import openskill.models as om

    model = om.PlackettLuce()
    assert fast_plackett_luce(model)
    assert not fast_plackett_luce(om.PlackettLuce(limit_sigma=True))
    assert not fast_plackett_luce(om.BradleyTerryFull())
    rng = random.Random(0)
    for _ in range(40):
        names = [f"p{i}" for i in range(rng.randint(2, 5))]
        slow = {n: model.rating(name=n) for n in names}
        fast = {n: model.rating(name=n) for n in names}
        for _ in range(rng.randint(1, 120)):
            a, b = rng.sample(names, 2)
            ra, rb = rng.choice([(1, -1), (-1, 1), (0, 0), (2.5, -2.5)])
            new = model.rate([[slow[a]], [slow[b]]], ranks=[int(ra < rb), int(rb < ra)])
            slow[a], slow[b] = new[0][0], new[1][0]
            plackett_luce_1v1(model, fast[a], fast[b], ra < rb, rb < ra)
            for n in (a, b):
                assert (fast[n].mu, fast[n].sigma) == (slow[n].mu, slow[n].sigma)
    # and through RatingState (fast path) against the batch function (rate() path)
    recs = [rec(["x", "y"] if i % 2 else ["y", "x"], rng.choice([(1, -1), (-1, 1), (0, 0)]), i=i) for i in range(300)]
    assert RatingState(["x", "y"]).add_all(recs).openskill_ratings() == openskill(recs, names=["x", "y"])
