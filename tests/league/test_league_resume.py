"""A league killed with SIGKILL mid-step and restarted with the same command continues from its
last committed step: the finished store equals an uninterrupted run's game for game, snapshots
are intact, TensorBoard has exactly one point per step."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from arena.config import load_config
from arena.league import LeagueConfig, run_league
from arena.reporting import read_scalars
from support.league import kill_when, ppo_kuhn_league, read_only, rows

STEPS = 6
GAMES = 32


def league_yaml(out: Path) -> dict:
    return ppo_kuhn_league(
        out,
        seed=3,
        steps=STEPS,
        games_per_step=GAMES,
        eval_every=3,
        before=[{"label": "psro", "agent": "psro:iterations=0,meta_solver=uniform", "role": "solver", "budget": 1}],
        learner={"weighting": "var"},
        tensorboard=True,  # the resumed run's scalars are read back
        plots=True,
    )


def train_rounds(db: Path) -> set[int]:
    try:
        with read_only(db) as c:
            return {r[0] for r in c.execute("SELECT DISTINCT round FROM matches")}
    except sqlite3.Error:
        return set()


@pytest.mark.slow
def test_sigkill_mid_step_then_resume_equals_clean_run(tmp_path):
    clean_dir, crash_dir = tmp_path / "clean", tmp_path / "crash"
    cfg_file = tmp_path / "league.yaml"
    cfg_file.write_text(yaml.safe_dump(league_yaml(crash_dir)))
    cmd = [sys.executable, "-m", "arena.cli", "league", str(cfg_file), "--quiet"]
    env = dict(os.environ, PYTHONHASHSEED="0")
    killed_at = kill_when(  # games of step c+1 are in the store, the step is not committed
        cmd,
        crash_dir / "arena.sqlite",
        lambda c: c >= 2 and (c + 1) in train_rounds(crash_dir / "train" / "arena.sqlite"),
        env=env,
    )
    assert killed_at < STEPS
    partial = rows(crash_dir / "train" / "arena.sqlite")
    assert any(r[2] == killed_at + 1 for r in partial.values())

    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]

    cfg = load_config(LeagueConfig, None, base=league_yaml(clean_dir))
    run_league(cfg, quiet=True)

    # no game lost or counted twice: the same ids, the same outcomes as the uninterrupted run
    for sub in ("train", "."):
        a, b = rows(clean_dir / sub / "arena.sqlite"), rows(crash_dir / sub / "arena.sqlite")
        assert set(a) == set(b)
        assert a == b
    assert len(rows(crash_dir / "train" / "arena.sqlite")) == STEPS * GAMES

    # snapshots intact: every one loads and holds the same weights as the clean run's
    import torch

    snaps = sorted(p.name for p in (clean_dir / "snapshots").iterdir())
    assert snaps == sorted(p.name for p in (crash_dir / "snapshots").iterdir())
    assert {"ppo@2", "ppo@4", "ppo@6", "psro@3", "psro@6"} <= set(snaps)
    for name in snaps:
        if name.startswith("ppo@"):
            wa = torch.load(clean_dir / "snapshots" / name / "weights.pt", weights_only=True)
            wb = torch.load(crash_dir / "snapshots" / name / "weights.pt", weights_only=True)
            assert all(torch.equal(wa[k], wb[k]) for k in wa)

    # TensorBoard: one point per step, values equal to the clean run's
    sa, sb = read_scalars(clean_dir / "tb"), read_scalars(crash_dir / "tb")
    for tag in ("train/ppo/return", "solver/psro/exploitability", "league/step_seconds"):
        steps = [s for s, _ in sb[tag]]
        assert steps == list(range(1, STEPS + 1)), (tag, steps)
    assert [v for _, v in sa["train/ppo/return"]] == pytest.approx([v for _, v in sb["train/ppo/return"]])
    assert (crash_dir / "leaderboard.md").exists() and (crash_dir / "ratings.png").exists()


def test_a_second_process_on_a_running_league_stops_and_writes_nothing(tmp_path):
    """One writer per run directory (:class:`arena.evaluation.store.RunLock`): while another process holds
    the run, starting it again is one message naming the directory and the holder's pid, and the
    run gets nothing from the refused start; the holder killed with SIGKILL leaves no stale lock.
    A directory that is not a run is refused as before, with no lock file left in it."""
    from arena.errors import ArenaError

    out = tmp_path / "run"
    cfg = load_config(LeagueConfig, base=ppo_kuhn_league(out, seed=0, steps=1, games_per_step=8))
    hold = "import sys, time; from arena.evaluation.store import RunLock; lock = RunLock.acquire(sys.argv[1]); print('held', flush=True); time.sleep(120)"
    holder = subprocess.Popen([sys.executable, "-c", hold, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ArenaError, match=rf"run directory {out} is in use by another process \(pid {holder.pid}\)"):
            run_league(cfg, quiet=True)
        assert not (out / "arena.sqlite").exists()
    finally:
        holder.kill()
        holder.wait()
    assert run_league(cfg, quiet=True).steps_run == 1  # the killed holder's lock went with it
    stray = tmp_path / "notes"
    stray.mkdir()
    (stray / "todo.txt").write_text("mine")
    cfg = load_config(LeagueConfig, base=ppo_kuhn_league(stray, seed=0, steps=1, games_per_step=8))
    with pytest.raises(ArenaError, match="non-empty directory without an arena store"):
        run_league(cfg, quiet=True)
    assert sorted(p.name for p in stray.iterdir()) == ["todo.txt"]
