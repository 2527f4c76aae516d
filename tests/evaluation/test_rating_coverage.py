"""Rating intervals you can trust — a simulation study with known strengths.

Games are decided by their deal (the deal's random stream against Elo odds, seats swapped on the
same deal), the setting where deals reused across pairings made every pairing's errors move
together and the game-level bootstrap missed the truth (3 to 9 of 12 agents covered). The full
study is ``arena bench rating-coverage`` (200 tournaments per format; docs/results/evaluation.md)."""

import pytest

from arena.evaluation.formats import Pairing
from arena.evaluation.schedule import Planner
from arena.tools.bench.rating import coverage_study

STRENGTHS = {f"a{i}": 100.0 * i for i in range(8)}


@pytest.mark.parametrize("kind,knob", [("round_robin", 4), ("swiss", 16), ("elimination", 16), ("adaptive", 300)])
def test_intervals_cover_the_truth_90_to_98_percent(kind, knob):
    """50 tournaments per format (200 in all), 8 agents 100 Elo apart: 400 intervals per format."""
    r = coverage_study(kind, knob, STRENGTHS, range(50), model="deal", bootstrap=100, baseline=False)
    assert 0.90 <= r["coverage"] <= 0.98, r


def test_no_deal_is_shared_between_pairings():
    planner = Planner("run", 0)
    names = list(STRENGTHS)
    pairings = [Pairing((a, b), 6) for i, a in enumerate(names) for b in names[i + 1 :]]
    deals: dict[int, set[str]] = {}
    for games in planner.plan(0, pairings) + planner.plan(1, pairings[:3]):
        for g in games:
            deals.setdefault(g.deal, set()).add(g.pairing)
    assert all(len(p) == 1 for p in deals.values())
    assert len(deals) == (len(pairings) * 6 + 3 * 6) // 2  # two seat-swapped games per deal
