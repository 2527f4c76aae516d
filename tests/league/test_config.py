"""``arena.league.config``: the fingerprint decides whether a run directory is resumed."""

from __future__ import annotations

import sqlite3
from dataclasses import asdict

import pytest

from arena.config import load_config
from arena.errors import ArenaError
from arena.evaluation.store import RunStore, fingerprint
from arena.league import LeagueConfig, run_league
from arena.league.config import fingerprint_of
from support.league import ppo_kuhn_league


def _earlier_fingerprint(cfg: LeagueConfig) -> str:
    """The fingerprint an arena that derived seeds by arithmetic gave this config."""
    d = asdict(cfg)
    for k in ("steps", "out", "executor", "tensorboard", "plots", "progress", "keep_checkpoints", "torch_threads"):
        d.pop(k, None)
    d.pop("max_staleness", None)
    return fingerprint(d)


def test_a_run_begun_under_the_earlier_seed_arithmetic_is_refused_and_kept(tmp_path):
    out = tmp_path / "run"
    cfg = load_config(LeagueConfig, base=ppo_kuhn_league(out, seed=0, steps=1, games_per_step=4))
    old = _earlier_fingerprint(cfg)
    assert old != fingerprint_of(cfg)
    RunStore.open(out, old, None, kind="league").close()
    with pytest.raises(ArenaError, match="different config or an earlier arena"):
        run_league(cfg, quiet=True)
    with sqlite3.connect(out / "arena.sqlite") as c:  # the earlier run's store is left as it was
        assert dict(c.execute("SELECT key, value FROM meta"))["fingerprint"] == old
