"""All three LLM trainers inside ``arena league``: LLM learners next to a CFR solver and scripted
agents on Kuhn poker (selfplay_rlvr, sppo) and the IPD (llm_advantage_alignment); snapshots are
model directories the league loads back and rates."""

from __future__ import annotations

import json

import pytest
import yaml

pytest.importorskip("transformers")

from arena.cli import main  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402


def _llm(label, trainer, params):
    return {
        "label": label,
        "agent": {"name": "llm", "model": str(tiny_model_dir(1)), "temperature": 16},
        "role": "learner",
        "trainer": {"name": trainer, "params": {"torch_threads": 1, **params}},
        "matchmaking": "pfsp",
        "self_play": 0.5,
        "games_per_step": 12,
        "snapshot_every": 1,
    }


def _run(tmp_path, game, population):
    cfg = {
        "game": game,
        "steps": 2,
        "seed": 0,
        "out": str(tmp_path / "run"),
        "population": population,
        "evaluation": {"every": 2, "games": 4},
        "tensorboard": False,
        "plots": False,
        "progress": False,
    }
    path = tmp_path / "league.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert main(["league", str(path)]) == 0
    return json.loads((tmp_path / "run" / "leaderboard.json").read_text())


def test_kuhn_league_with_rlvr_and_sppo_learners_cfr_and_scripted(tmp_path):
    board = _run(
        tmp_path,
        "kuhn_poker",
        [
            {"label": "random", "agent": "random"},
            {"label": "cfr", "agent": "cfr:algo=cfr+,iterations=10", "role": "solver", "budget": 10},
            _llm("rlvr", "selfplay_rlvr", {"lr": 0.002}),
            _llm("sppo", "sppo", {"rollouts": 2, "epochs": 2}),
        ],
    )
    names = {r["agent"] for r in board["rows"]}
    assert {"rlvr@2", "sppo@2", "cfr@2", "random"} <= names  # the rated pool: newest snapshots
    for label in ("rlvr@1", "rlvr@2", "sppo@1", "sppo@2"):
        snap = tmp_path / "run" / "snapshots" / label
        assert (snap / "config.json").exists() and (snap / "model.safetensors").exists()


def test_ipd_league_with_llm_advantage_alignment(tmp_path):
    board = _run(
        tmp_path,
        "ipd(horizon=3)",
        [
            {"label": "always_defect", "agent": "always_defect"},
            {"label": "tit_for_tat", "agent": "tit_for_tat"},
            _llm("aa", "llm_advantage_alignment", {"beta": 1.0}),
        ],
    )
    assert {"aa@2", "always_defect", "tit_for_tat"} <= {r["agent"] for r in board["rows"]}
    assert (tmp_path / "run" / "snapshots" / "aa@1" / "model.safetensors").exists()
