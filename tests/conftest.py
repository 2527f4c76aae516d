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
