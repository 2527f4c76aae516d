"""The one training loop: training rollouts give the same
trajectories and weights on every executor; observers hear of every stored game; ``arena
train`` resumes after SIGKILL to the same final numbers."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest

import arena
from support import REPO, arena_cmd
from support.league import kill_when, ppo_kuhn_league, rows

torch = pytest.importorskip("torch")


def _league(out: Path, kind: str) -> dict:
    return ppo_kuhn_league(
        out,
        seed=2,
        steps=3,
        games_per_step=48,
        matchmaking="uniform",
        self_play=0.5,
        snapshot_every=3,
        eval_every=3,
        executor={"kind": kind, "workers": 2, "chunk": 16},
    )


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["process", "ray"])
def test_training_rollouts_identical_on_every_executor(tmp_path, kind):
    """PPO on Kuhn (league) and AA on the IPD (``arena train``): byte-identical stores and weights."""
    if kind == "ray":
        pytest.importorskip("ray")
    from arena.config import load_config
    from arena.league import LeagueConfig, run_league
    from arena.plugins.trainers.train_command import TrainConfig, train

    torch.set_num_threads(1)
    for ex in ("inprocess", kind):
        run_league(load_config(LeagueConfig, None, base=_league(tmp_path / f"ppo-{ex}", ex)), quiet=True)
        cfg = load_config(
            TrainConfig,
            REPO / "configs/social/ipd_aa.yaml",
            overrides=[
                "iterations=3",
                "games_per_iter=32",
                "eval_every=3",
                "eval_games=16",
                "quiet=true",
                f"out={tmp_path / f'aa-{ex}'}",
                f"executor.kind={ex}",
                "executor.workers=2",
                "executor.chunk=16",
            ],
        )
        train(cfg)
    for run, learners in (("ppo", ["ppo"]), ("aa", ["learner_0", "learner_1"])):
        a, b = tmp_path / f"{run}-inprocess", tmp_path / f"{run}-{kind}"
        assert rows(a / "train" / "arena.sqlite") == rows(b / "train" / "arena.sqlite")
        step = sorted(p.name for p in (a / "checkpoints").glob("step-*"))[-1]
        for lbl in learners:
            wa = torch.load(a / "checkpoints" / step / "learners" / lbl / "weights.pt", weights_only=True)
            wb = torch.load(b / "checkpoints" / step / "learners" / lbl / "weights.pt", weights_only=True)
            assert all(torch.equal(wa[k], wb[k]) for k in wa), (run, lbl)
    assert json.loads((tmp_path / "aa-inprocess" / "results.json").read_text())["final"] == pytest.approx(
        {
            k: v
            for k, v in json.loads((tmp_path / f"aa-{kind}" / "results.json").read_text())["final"].items()
            if k != "seconds"
        }
        | {"seconds": json.loads((tmp_path / "aa-inprocess" / "results.json").read_text())["final"]["seconds"]}
    )


class Counter:
    """A third-party observer: counts what every run tells it."""

    def __init__(self):
        self.games: dict[str, int] = {}
        self.steps: dict[str, int] = {}
        self.started: list[str] = []
        self.finished: list[str] = []

    @arena.hookimpl
    def arena_run_started(self, run):
        self.started.append(run["kind"])

    @arena.hookimpl
    def arena_match_finished(self, result, context):
        self.games[context["kind"]] = self.games.get(context["kind"], 0) + 1

    @arena.hookimpl
    def arena_league_step(self, step, metrics, context):
        self.steps[context["kind"]] = self.steps.get(context["kind"], 0) + 1

    @arena.hookimpl
    def arena_run_finished(self, run, summary):
        self.finished.append(run["kind"])


def _count(db: Path) -> int:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT COUNT(*) FROM matches").fetchone()[0]


def test_observer_plugin_hears_every_stored_game(tmp_path, fresh_registry, capsys):
    from arena.cli import main
    from arena.config import load_config
    from arena.evaluation.tournament import TournamentConfig, run_tournament
    from arena.league import LeagueConfig, run_league
    from arena.plugins.trainers.train_command import TrainConfig, train
    from arena.registry import get_registry

    counter = Counter()
    get_registry().register(counter, "test_counter")

    assert main(["match", "--game", "kuhn_poker", "--agents", "random", "random", "--games", "30", "--json"]) == 0
    assert counter.games["match"] == 30
    run_tournament(
        load_config(
            TournamentConfig,
            None,
            base={
                "game": "kuhn_poker",
                "agents": ["random", "cfr:iterations=20"],
                "format": {"kind": "round_robin", "games": 5},
                "out": str(tmp_path / "t"),
                "progress": False,
                "plots": False,
            },
        ),
        quiet=True,
    )
    assert counter.games["tournament"] == _count(tmp_path / "t" / "arena.sqlite") == 10
    run_league(load_config(LeagueConfig, None, base=_league(tmp_path / "l", "inprocess")), quiet=True)
    stored = sum(_count(tmp_path / "l" / s / "arena.sqlite") for s in (".", "train", "metrics"))
    assert counter.games["league"] == stored and counter.steps["league"] == 3
    train(
        load_config(
            TrainConfig,
            REPO / "configs/social/ipd_reinforce.yaml",
            overrides=[
                "iterations=2",
                "games_per_iter=8",
                "eval_every=2",
                "eval_games=4",
                "quiet=true",
                f"out={tmp_path / 'tr'}",
            ],
        )
    )
    stored = sum(_count(tmp_path / "tr" / s / "arena.sqlite") for s in (".", "train", "metrics"))
    assert counter.games["train"] == stored == 2 * 8 + 2 * 4 * 4 and counter.steps["train"] == 2
    env = json.loads((tmp_path / "tr" / "results.json").read_text())["environment"]  # what it ran with
    assert env["libraries"]["arena-rl"] == arena.__version__ and env["libraries"]["numpy"] == np.__version__
    from arena.plugins.trainers.llm.driver import LLMTrainConfig
    from arena.plugins.trainers.llm.driver import train as llm_train
    from arena.tools.tiny_model import tiny_model_dir

    llm_train(
        load_config(
            LLMTrainConfig,
            None,
            base={
                "game": "kuhn_poker",
                "model": {"dir": str(tiny_model_dir(1))},
                "agent": {"temperature": 16},
                "iterations": 2,
                "games_per_iter": 8,
                "eval_every": 2,
                "out": str(tmp_path / "llm"),
            },
        )
    )
    stored = sum(
        _count(tmp_path / "llm" / s / "arena.sqlite")
        for s in (".", "train", "metrics")
        if (tmp_path / "llm" / s / "arena.sqlite").exists()
    )
    assert counter.games["llm-train"] == stored >= 2 * 8 and counter.steps["llm-train"] == 2

    from arena.tools.host.client import JoinClient
    from support.host import InProcessHost, kuhn

    host = InProcessHost(kuhn(tmp_path, games=2, move_time=0.2, default_action="first"))
    list(JoinClient(host.url, host.tokens[0]).open().events(timeout=30))  # the clock plays the person's moves
    host.join()
    assert counter.games["host"] == _count(tmp_path / "run" / "arena.sqlite") == 2
    assert counter.finished == counter.started == ["match", "tournament", "league", "train", "llm-train", "host"]


def _clean_and_killed_runs(tmp_path: Path, args: list[str], env: dict, kill_at: int, steps: int) -> dict:
    """Run ``arena ARGS`` to the end (``clean``), and again (``crash``) killed with SIGKILL once
    ``kill_at`` steps are committed, then rerun; returns both final metric rows (time removed)."""
    clean = subprocess.run(
        arena_cmd() + args + [f"out={tmp_path / 'clean'}"], capture_output=True, text=True, env=env, timeout=300
    )
    assert clean.returncode == 0, clean.stderr[-2000:]
    crash = arena_cmd() + args + [f"out={tmp_path / 'crash'}"]
    assert kill_when(crash, tmp_path / "crash" / "arena.sqlite", lambda c: c >= kill_at, env=env) < steps
    again = subprocess.run(crash, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    finals = {}
    for name in ("clean", "crash"):
        finals[name] = json.loads((tmp_path / name / "results.json").read_text())["final"]
        finals[name].pop("seconds")
    assert rows(tmp_path / "clean/train/arena.sqlite") == rows(tmp_path / "crash/train/arena.sqlite")
    return finals


@pytest.mark.slow
def test_arena_train_killed_with_sigkill_resumes_to_the_same_numbers(tmp_path, subprocess_env):
    args = ["train", str(REPO / "configs/social/ipd_aa.yaml"), "iterations=6", "games_per_iter=32", "eval_every=3",
            "eval_games=16", "quiet=true"]  # fmt: skip
    finals = _clean_and_killed_runs(tmp_path, args, subprocess_env, kill_at=2, steps=6)
    assert finals["clean"] == finals["crash"]
    for lbl in ("learner_0", "learner_1"):
        wa = torch.load(tmp_path / "clean/checkpoints/step-000006/learners" / lbl / "weights.pt", weights_only=True)
        wb = torch.load(tmp_path / "crash/checkpoints/step-000006/learners" / lbl / "weights.pt", weights_only=True)
        assert all(torch.equal(wa[k], wb[k]) for k in wa)


def test_malicious_trainer_state_is_refused(tmp_path):
    """Resuming never unpickles arbitrary objects from a run directory."""
    import pickle

    from arena.errors import ArenaError
    from arena.trainer import Trainer, load_trainer_state

    class Boom:
        def __reduce__(self):
            return (os.system, (f"touch {tmp_path / 'pwned'}",))

    path = tmp_path / "state.pt"
    with open(path, "wb") as f:
        pickle.dump({"x": Boom()}, f)
    with pytest.raises(ArenaError, match="refusing to load trainer state"):
        load_trainer_state(Trainer(), path)
    assert not (tmp_path / "pwned").exists()


@pytest.mark.slow
def test_arena_llm_train_killed_with_sigkill_resumes_to_the_same_numbers(tmp_path, subprocess_env):
    pytest.importorskip("transformers")
    from arena.tools.tiny_model import tiny_model_dir

    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        f"game: kuhn_poker\nmodel: {{dir: {tiny_model_dir(1)}}}\nagent: {{temperature: 16}}\n"
        "iterations: 3\ngames_per_iter: 8\neval_every: 3\n"
    )
    finals = _clean_and_killed_runs(tmp_path, ["llm-train", str(cfg)], subprocess_env, kill_at=1, steps=3)
    assert finals["clean"] == finals["crash"]
    weights = "checkpoints/step-000003/learners/learner/model.safetensors"
    assert (tmp_path / "clean" / weights).read_bytes() == (tmp_path / "crash" / weights).read_bytes()
