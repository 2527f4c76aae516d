"""Cost linear in the work: batched commits that stay exactly-once under SIGKILL, streamed
records, incremental rating state equal to a recomputation from every record, a planner whose
memory does not grow with the games."""

import json
import signal
import subprocess
import sys

import numpy as np
import pytest

from arena.config import load_config
from arena.evaluation.formats import Pairing
from arena.evaluation.leaderboard import compute
from arena.evaluation.ratings.bradley_terry import bradley_terry, bradley_terry_records, unit_histogram
from arena.evaluation.ratings.elo import elo
from arena.evaluation.ratings.openskill import openskill
from arena.evaluation.ratings.outcomes import pairwise_outcomes
from arena.evaluation.ratings.state import RatingState
from arena.evaluation.schedule import Planner
from arena.evaluation.store import MatchRecord, RunStore, match_id
from arena.evaluation.tournament import TournamentConfig, run_tournament
from support import REPO

ALWAYS_BET = str(REPO / "tests/data/kuhn_always_bet.json")


def _rec(k, seats=("a", "b"), returns=(1.0, -1.0)):
    return MatchRecord(
        id=match_id("fp", "a|b", 0, k),
        pairing="a|b",
        seed=0,
        game_index=k // 2,
        game="g",
        seats=list(seats),
        returns=list(returns),
        plan_seq=k,
    )


def test_batch_commits_in_groups_flushes_on_error_and_drops_stored(tmp_path):
    commits = []
    with RunStore.open(tmp_path / "run", "fp") as s:
        assert s.record_match(_rec(0))  # outside a batch: committed now
        with pytest.raises(RuntimeError):
            with s.batch(3, on_commit=lambda recs: commits.append([r.plan_seq for r in recs])):
                for k in range(6):
                    s.record_match(_rec(k))  # k = 0 is stored already: dropped at commit
                    assert s.count() == (1 if k < 2 else 3 if k < 5 else 6)
                assert s.record_match(_rec(6))
                assert not s.record_match(_rec(6))  # staged twice: refused
                raise RuntimeError("a crash after game 6 finished")
        assert commits == [[1, 2], [3, 4, 5], [6]]  # the crash still committed finished games
        assert [r.plan_seq for r in s.matches()] == list(range(7))
        assert [r.plan_seq for r in s.iter_matches(2, 5, page=2)] == [2, 3, 4]  # pages, bounds
        assert [r.plan_seq for r in s.iter_matches(5, page=1)] == [5, 6]
        assert s.existing_ids([_rec(3).id, "nope"]) == {_rec(3).id}


_WRITER = """
import os, signal, sys
from arena.evaluation.store import MatchRecord, RunStore, match_id
run, log, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
with RunStore.open(run, "fp") as s, open(log, "a") as out:
    def announce(recs):
        for r in recs:
            out.write(r.id + "\\n")
        out.flush()
    have = s.existing_ids([match_id("fp", "p", 0, k) for k in range(1000)])
    with s.batch(100, on_commit=announce):
        for k in range(1000):
            mid = match_id("fp", "p", 0, k)
            if mid in have:
                continue
            if k == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            s.record_match(MatchRecord(id=mid, pairing="p", seed=0, game_index=k, game="g", seats=["a", "b"],
                                       returns=[float(k % 3 - 1), float(1 - k % 3)], plan_seq=k))
"""


def test_sigkill_mid_batch_loses_only_uncommitted_games_and_announces_each_once(tmp_path):
    run, log = tmp_path / "run", tmp_path / "announced.txt"
    killed = subprocess.run([sys.executable, "-c", _WRITER, str(run), str(log), "350"], cwd=REPO)
    assert killed.returncode == -signal.SIGKILL
    with RunStore.open_existing(run) as s:
        assert s.count() == 300  # three committed batches; 50 staged games lost
    assert len(log.read_text().split()) == 300
    subprocess.run([sys.executable, "-c", _WRITER, str(run), str(log), "-1"], cwd=REPO, check=True)  # resume
    announced = log.read_text().split()
    with RunStore.open_existing(run) as s:
        stored = [r.id for r in s.matches()]
    assert len(stored) == 1000 and sorted(announced) == sorted(stored)  # every stored game announced exactly once
    assert [r.returns for r in RunStore.open_existing(run).matches()][:3] == [[-1.0, 1.0], [0.0, 0.0], [1.0, -1.0]]


def _cfg(tmp_path, name, **kw):
    base = {
        "game": "kuhn_poker",
        "out": str(tmp_path / name),
        "progress": False,
        "plots": False,
        "tensorboard": False,
        "agents": [
            "random",
            {"name": "fixed", "path": ALWAYS_BET, "label": "always_bet"},
            {"name": "random", "label": "random2"},
        ],
    }
    base.update(kw)
    return load_config(TournamentConfig, None, base=base)


@pytest.mark.parametrize(
    "fmt",
    [
        {"kind": "round_robin", "games": 90},
        {"kind": "swiss", "games": 25, "rounds": 2},
        {"kind": "adaptive", "batch_games": 3, "budget": 120},
    ],
)
def test_incremental_ratings_equal_recomputing_from_every_record(tmp_path, monkeypatch, fmt):
    import arena.evaluation.tournament as T

    monkeypatch.setattr(T, "PLAN_SLICE", 64)  # several slices per round
    res = run_tournament(_cfg(tmp_path, "t", format=fmt, ratings={"snapshot_every": 50, "bootstrap": 60}), quiet=True)
    with RunStore.open_existing(res.run_dir) as s:
        recs, snaps, scale = s.matches(), s.snapshots("bt"), s.margin_scale()
    assert len(recs) == res.total and [r.plan_seq for r in recs] == list(range(res.total))
    for step, row in snaps.items():  # every snapshot = BT of the first `step` games
        fit = bradley_terry(pairwise_outcomes(recs[:step], scale), res.names, bootstrap=0)
        assert [row[a][0] for a in res.names] == list(fit.rating)
        assert [row[a][3] for a in res.names] == [sum(r.seats.count(a) for r in recs[:step]) for a in res.names]
    assert set(range(50, res.total + 1, 50)) <= set(snaps)
    again = compute(recs, res.names, scale=scale, bootstrap=60, seed=0)  # batch recomputation from the records
    assert [vars(r) for r in again["rows"]] == [vars(r) for r in res.board["rows"]]
    state = RatingState(res.names, scale=scale).add_all(recs)
    assert state.elo == elo(recs, names=res.names, scale=scale)
    assert state.openskill_ratings() == openskill(recs, names=res.names)
    per_game = bradley_terry_records(recs, res.names, scale, bootstrap=60)
    assert np.array_equal(per_game.lo, state.bradley_terry(res.names, bootstrap=60).lo)


def test_unit_histogram_bootstrap_is_the_per_unit_bootstrap_in_distribution():
    """Resampling signature counts = resampling units: the interval of a pool where every deal
    is distinct (continuous scores) and of the same pool with scores rounded agree in law."""
    rng = np.random.default_rng(0)
    outcomes, units = [], []
    for d in range(400):
        s = float(rng.random() < 0.7)
        outcomes += [("a", "b", s), ("b", "a", 1 - s)]
        units += [d, d]
    fit = bradley_terry(outcomes, ["a", "b"], bootstrap=400, units=units, strata=["x"] * len(units))
    hist = unit_histogram(outcomes, units, ["x"] * len(units))
    assert hist.units == 400 and len(hist.strata["x"]) == 2  # 400 deals, 2 distinct signatures
    width = fit.hi[0] - fit.lo[0]
    se = 400 / np.log(10) * np.sqrt(1 / (400 * 0.7 * 0.3 * 2 * 2)) * 2  # rough normal-theory width/2 scale
    assert 0.5 * se < width < 4 * se


def test_planner_deals_match_a_per_deal_table():
    """The planner keeps one (deal index, deal) per group, yet numbers deals exactly as a table of
    every (group, k div n) would, for pairings planned in any slices and rounds."""
    rng = np.random.default_rng(1)
    p, table, counters = Planner("r", 0), {}, {}
    groups = [("a", "b"), ("b", "c"), ("a", "c")]
    for rnd in range(30):
        g = groups[rng.integers(3)]
        games = int(rng.integers(1, 6))
        planned = p.plan(rnd, [Pairing(g, games)])[0]
        for k, game in zip(range(counters.get(g, 0), counters.get(g, 0) + games), planned):
            assert game.deal == table.setdefault((g, k // 2), len(table))
        counters[g] = counters.get(g, 0) + games
    assert len(p.last_deal) == 3


def test_bench_tournament_scale_runs_and_checks_its_output():
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli", "bench", "tournament-scale", "--sizes", "200,400", "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [r["games"] for r in out["curve"]] == [200, 400]
    assert out["machine_load_at_start"] and out["baseline"].startswith("a whole `arena match`")
    assert all(r["ratio"] > 0 and r["tournament_peak_rss_mib"] > 0 for r in out["curve"])
    assert "ratio" in proc.stderr  # the curve as it is measured (figures are not asserted: timed tests prove nothing)
