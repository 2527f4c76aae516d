"""Real tournaments on Kuhn poker through the CLI and the Python API: the CFR acceptance
ranking, n-player seating, and durability (crash, SIGKILL, resume)."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.config import load_config
from arena.errors import ArenaError
from arena.evaluation.tournament import TournamentConfig, run_tournament
from support import REPO

ALWAYS_BET = str(REPO / "tests/data/kuhn_always_bet.json")


def cli(*argv, check=True):
    p = subprocess.run([sys.executable, "-m", "arena.cli", *argv], capture_output=True, text=True, cwd=REPO)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def cfg(tmp_path, name, **over):
    base = {
        "game": "kuhn_poker",
        "out": str(tmp_path / name),
        "plots": False,
        "tensorboard": False,
        "progress": False,
        "agents": ["random", {"name": "fixed", "path": ALWAYS_BET, "label": "always_bet"}],
        "format": {"kind": "round_robin", "games": 20},
        "ratings": {"bootstrap": 20},
    }
    base.update(over)
    return load_config(TournamentConfig, base=base)


def test_kuhn_cfr_ranks_first(tmp_path):
    out = tmp_path / "kuhn"
    p = cli("tournament", "configs/tournament/kuhn_cfr.yaml", f"out={out}", "format.games=400", "plots=false", "--json")
    board = json.loads(p.stdout)
    assert [r["agent"] for r in board["rows"]][0] == "cfr"
    assert board["ranked_by"] == "nash" and board["games"] == 2400
    rows = {r["agent"]: r for r in board["rows"]}
    # CFR beats both head to head; always-bet exploits random hardest (so a transitive rating
    # alone would put it first: the Nash average does not)
    M, names = board["payoff"], board["agents"]
    c, b, r = names.index("cfr"), names.index("always_bet"), names.index("random")
    assert M[c][b] > 0.05 and M[c][r] > 0.05 and M[b][r] > 0.2
    assert rows["cfr"]["alpha_rank"] > 0.99 and rows["cfr"]["nash"] == pytest.approx(0, abs=1e-6)
    # the leaderboard command recomputes the same table from the store
    again = json.loads(cli("leaderboard", str(out), "--json").stdout)
    assert again["rows"] == board["rows"]


def test_three_player_kuhn_rotates_seats(tmp_path):
    agents = [
        "random",
        {"name": "random", "label": "r2"},
        {"name": "random", "label": "r3"},
        {"name": "cfr", "iterations": 20, "label": "cfr"},
    ]
    res = run_tournament(
        cfg(tmp_path, "k3", game="kuhn_poker(players=3)", agents=agents, format={"kind": "round_robin", "games": 4}),
        quiet=True,
    )
    from arena.evaluation.store import RunStore

    with RunStore.open_existing(res.run_dir) as s:
        recs = s.matches()
    assert len(recs) == 4 * 3 * 4  # C(4,3) groups × 3 rotations × 4 games
    for name in res.names:
        seats = [r.seats.index(name) for r in recs if name in r.seats]
        assert sorted(set(seats)) == [0, 1, 2] and len(seats) == 36
        assert seats.count(0) == seats.count(1) == seats.count(2)
    assert res.board["ranked_by"] == "bt" and res.board["payoff"] is None
    assert all(abs(r.openskill) > 1e-3 for r in res.board["rows"])  # free-for-all OpenSkill updated everyone


def test_resume_after_crash_equals_clean_run(tmp_path, monkeypatch):
    """A crash in the middle of a multi-round (Swiss) run, then a rerun: same store as a clean run."""
    import arena.evaluation.store as store_mod

    agents = [
        "random",
        {"name": "fixed", "path": ALWAYS_BET, "label": "always_bet"},
        {"name": "random", "label": "random2"},
        {"name": "random", "label": "random3"},
    ]
    fmt = {"kind": "swiss", "games": 30, "rounds": 3}
    clean = run_tournament(cfg(tmp_path, "clean", agents=agents, format=fmt), quiet=True)
    real = store_mod.RunStore.record_match
    calls = {"n": 0}

    def flaky(self, rec, transcript=None):
        calls["n"] += 1
        if calls["n"] == 75:  # in round two
            raise RuntimeError("simulated crash")
        return real(self, rec, transcript)

    monkeypatch.setattr(store_mod.RunStore, "record_match", flaky)
    with pytest.raises(RuntimeError):
        run_tournament(cfg(tmp_path, "crashy", agents=agents, format=fmt), quiet=True)
    monkeypatch.setattr(store_mod.RunStore, "record_match", real)
    resumed = run_tournament(cfg(tmp_path, "crashy", agents=agents, format=fmt), quiet=True)
    assert resumed.played == clean.total - 74 and resumed.total == clean.total == 3 * 2 * 30
    assert resumed.format_ranking == clean.format_ranking
    assert [vars(r) for r in resumed.board["rows"]] == [vars(r) for r in clean.board["rows"]]
    again = run_tournament(cfg(tmp_path, "crashy", agents=agents, format=fmt), quiet=True)
    assert again.played == 0
    with pytest.raises(ArenaError, match="different config"):
        run_tournament(cfg(tmp_path, "crashy", agents=agents, format=fmt, seed=1), quiet=True)


def _count(db):
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _rows(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT id, seats, returns, plan_seq FROM matches ORDER BY id").fetchall()
    finally:
        con.close()


def test_sigkill_then_rerun_equals_clean_run(tmp_path):
    conf = tmp_path / "t.yaml"
    conf.write_text(f"""
game: kuhn_poker
agents: [random, {{name: random, label: random2}}, {{name: fixed, path: {ALWAYS_BET}, label: always_bet}}]
format: {{kind: round_robin, games: 6000}}
executor: {{kind: inprocess, chunk: 25}}
ratings: {{bootstrap: 50}}
plots: false
""")
    total = 6 * 6000
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    argv = [sys.executable, "-m", "arena.cli", "tournament", str(conf)]
    proc = subprocess.Popen(argv + [f"out={killed}"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    db = killed / "arena.sqlite"
    deadline = time.time() + 120
    while time.time() < deadline and _count(db) < 300 and proc.poll() is None:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    at_kill = _count(db)
    assert 0 < at_kill < total, f"kill did not land mid-run ({at_kill} games stored)"
    cli("tournament", str(conf), f"out={killed}", "--quiet")
    cli("tournament", str(conf), f"out={clean}", "--quiet")
    rows_killed, rows_clean = _rows(db), _rows(clean / "arena.sqlite")
    assert len(rows_killed) == total and len({r[0] for r in rows_killed}) == total
    assert rows_killed == rows_clean  # same ids, seats, returns, plan order
    lb_k = json.loads((killed / "leaderboard.json").read_text())
    lb_c = json.loads((clean / "leaderboard.json").read_text())
    assert lb_k["rows"] == lb_c["rows"]  # identical ratings (BT, Elo, OpenSkill, ...)


def test_a_second_process_on_a_running_tournament_stops_and_writes_nothing(tmp_path):
    """The tournament takes the run's writer lock as the league does: while another process holds
    it, the tournament is one message naming the holder's pid and stores nothing; after the
    holder dies, and after a finished run (its ``close`` releases the lock), it runs."""
    c = cfg(tmp_path, "t")
    hold = "import sys, time; from arena.evaluation.store import RunLock; lock = RunLock.acquire(sys.argv[1]); print('held', flush=True); time.sleep(120)"
    holder = subprocess.Popen([sys.executable, "-c", hold, c.out], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ArenaError, match=rf"in use by another process \(pid {holder.pid}\)"):
            run_tournament(c)
        assert not (Path(c.out) / "arena.sqlite").exists()
    finally:
        holder.kill()
        holder.wait()
    assert run_tournament(c).played == 40
    assert run_tournament(c).played == 0  # the first call released the lock; the resume plays nothing new
