"""Shared fixtures: a fresh registry per test that installs or registers plugins."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

# Ray fixes a process's authentication mode when it is first imported and initialised, and a new
# local cluster turns token mode on. The suite runs every Ray session (local clusters, the
# two-node cluster, their drivers and workers) in token mode from the start, so one process can
# host a local cluster and then join another (tests/test_ray_cluster.py).
os.environ.setdefault("RAY_AUTH_MODE", "token")


def arena_cmd() -> list[str]:
    """The installed ``arena`` console script of this interpreter's environment."""
    exe = BIN / "arena"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "arena.cli"]


@pytest.fixture
def fresh_registry():
    from arena.registry import reset_registry

    reset_registry()
    yield
    reset_registry()


@pytest.fixture
def subprocess_env():
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    env["COLUMNS"] = "200"
    return env


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
