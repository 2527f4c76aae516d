"""The small Kuhn-poker league the training-loop tests share, and readers of a running league's store."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Callable


def ppo_kuhn_league(
    out: Path,
    *,
    seed: int,
    steps: int,
    games_per_step: int,
    matchmaking: str = "pfsp",
    self_play: float = 0.25,
    snapshot_every: int = 2,
    eval_every: int = 2,
    learner: dict | None = None,
    before: list | None = None,
    **top,
) -> dict:
    """The small league the training-loop tests share: a PPO learner (16 hidden units) on Kuhn
    poker beside a random agent; each test sets what it checks (seed, steps, executor, staleness,
    matchmaking) and ``before`` adds members ahead of the learner, ``learner`` extra learner keys."""
    return {
        "game": "kuhn_poker",
        "seed": seed,
        "steps": steps,
        "out": str(out),
        "progress": False,
        "tensorboard": False,
        "plots": False,
        **top,
        "population": [
            {"label": "random", "agent": "random"},
            *(before or []),
            {
                "label": "ppo",
                "agent": "neural:hidden=16,seed=1",
                "role": "learner",
                "trainer": {"name": "ppo", "params": {"lr": 0.01, "epochs": 2}},
                "matchmaking": matchmaking,
                **(learner or {}),
                "self_play": self_play,
                "games_per_step": games_per_step,
                "snapshot_every": snapshot_every,
            },
        ],
        "evaluation": {"every": eval_every, "games": 4, "ratings": {"bootstrap": 0}},
    }


def rows(db: Path) -> dict[str, tuple]:
    with sqlite3.connect(db) as c:
        return {r[0]: (r[1], r[2], r[3]) for r in c.execute("SELECT id, seats, returns, round FROM matches")}


def read_only(db: Path) -> sqlite3.Connection:
    """Poll a running store without creating it (a plain connect makes an empty file)."""
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)


def committed(db: Path) -> int:
    try:
        with read_only(db) as c:
            r = c.execute("SELECT value FROM meta WHERE key='league_step'").fetchone()
            return int(r[0]) if r else 0
    except sqlite3.Error:
        return 0


def kill_when(
    cmd: list[str],
    db: Path,
    ready: Callable[[int], bool],
    *,
    env: dict | None = None,
    settle: float = 0.0,
    timeout: float = 240.0,
) -> int:
    """Start ``cmd`` (a run writing the store ``db``), SIGKILL it ``settle`` seconds after
    ``ready(committed steps)`` first holds, and return that step count; fails with the run's
    stderr when it ended, or was still short of ``ready``, before it could be killed."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    killed, deadline = None, time.time() + timeout
    try:
        while time.time() < deadline and proc.poll() is None:
            steps = committed(db)
            if ready(steps):
                time.sleep(settle)
                os.kill(proc.pid, signal.SIGKILL)
                killed = steps
                break
            time.sleep(0.02)
    finally:
        if proc.poll() is None and killed is None:
            proc.kill()
        proc.wait(timeout=60)
    assert killed is not None and proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()[-2000:]
    return killed
