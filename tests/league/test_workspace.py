"""What every phase of a league shares: named seed streams that never meet, and the typed run
context every event carries."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import arena
from arena.config import load_config
from arena.hookspecs import RunContext
from arena.league import LeagueConfig, run_league
from arena.league.workspace import Workspace
from support.league import ppo_kuhn_league

torch = pytest.importorskip("torch")


def _two_units(out: Path, **top) -> LeagueConfig:
    """A main learner and a league exploiter (two training units, resets) beside a random agent,
    with metrics games: every stream a league derives is used."""
    exploiter = {
        "label": "exploiter",
        "agent": "neural:hidden=16,seed=2",
        "role": "learner",
        "trainer": {"name": "ppo", "params": {"lr": 0.01, "epochs": 2}},
        "matchmaking": "league_exploiter",
        "games_per_step": 8,
        "snapshot_every": 1,
    }
    base = ppo_kuhn_league(
        out, seed=5, steps=2, games_per_step=8, matchmaking="main", before=[exploiter], snapshot_every=1, **top
    )
    base["evaluation"]["metrics"] = {"games": 4}
    return load_config(LeagueConfig, base=base)


def _store_seeds(db: Path) -> set[int]:
    with sqlite3.connect(db) as c:
        return {r[0] for r in c.execute("SELECT seed FROM matches")}


def test_every_seed_of_a_run_comes_from_its_own_named_stream(tmp_path, monkeypatch):
    calls: list[tuple[tuple, int]] = []
    derive = Workspace.seed

    def recorded(self, *key):
        calls.append((key, derive(self, *key)))
        return calls[-1][1]

    monkeypatch.setattr(Workspace, "seed", recorded)
    torch.set_num_threads(1)
    run_league(_two_units(tmp_path / "run"), quiet=True)
    streams = dict(calls)
    assert {k[0] for k in streams} == {"train", "matchmaking", "reset", "evaluation", "metrics", "bootstrap"}
    assert {k for k in streams if k[0] == "train"} == {("train", s, u) for s in (1, 2) for u in ("exploiter", "ppo")}
    assert len(set(streams.values())) == len(streams)  # no two streams share a seed
    for db in ("arena.sqlite", "train/arena.sqlite", "metrics/arena.sqlite"):
        used = _store_seeds(tmp_path / "run" / db)
        assert used and used <= set(streams.values()), db  # every stored game was seeded by a named stream


class Contexts:
    def __init__(self):
        self.seen: list[tuple[str, object]] = []

    @arena.hookimpl
    def arena_run_started(self, run):
        self.seen.append(("started", run))

    @arena.hookimpl
    def arena_league_step(self, step, metrics, context):
        self.seen.append(("step", context))

    @arena.hookimpl
    def arena_checkpoint_written(self, path, agent, context):
        self.seen.append(("checkpoint", context))

    @arena.hookimpl
    def arena_run_finished(self, run, summary):
        self.seen.append(("finished", run))


def test_league_events_carry_a_run_context(tmp_path, fresh_registry):
    from arena.registry import get_registry

    contexts = Contexts()
    get_registry().register(contexts, "test_contexts")
    torch.set_num_threads(1)
    cfg = load_config(LeagueConfig, base=ppo_kuhn_league(tmp_path / "run", seed=0, steps=2, games_per_step=8))
    run_league(cfg, quiet=True, kind="train")
    assert [e for e, _ in contexts.seen] == ["started", "step", "checkpoint", "step", "checkpoint", "finished"]
    for _, ctx in contexts.seen:
        assert isinstance(ctx, RunContext)
        assert (ctx.kind, ctx.unit, ctx.total, ctx.tensorboard) == ("train", "steps", 2, False)
        assert ctx.run_dir == str(tmp_path / "run")
    assert (contexts.seen[0][1].resume_step, contexts.seen[0][1].done) == (0, 0)
    assert [c["step"] for e, c in contexts.seen if e == "checkpoint"] == [1, 2]
