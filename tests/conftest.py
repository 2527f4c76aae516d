"""Shared fixtures: a fresh registry per test that installs or registers plugins."""

from __future__ import annotations

import os

import pytest

# Ray fixes a process's authentication mode when it is first imported and initialised, and a new
# local cluster turns token mode on. The suite runs every Ray session (local clusters, the
# two-node cluster, their drivers and workers) in token mode from the start, so one process can
# host a local cluster and then join another (tests/playing/test_ray_executor.py).
os.environ.setdefault("RAY_AUTH_MODE", "token")


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
