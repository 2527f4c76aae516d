"""The run's files come from what the league records itself: ``training.png`` without TensorBoard."""

from __future__ import annotations

import json

import pytest

from arena.config import load_config
from arena.league import LeagueConfig, run_league
from support.league import ppo_kuhn_league

torch = pytest.importorskip("torch")


def test_training_plot_is_drawn_from_the_league_state_without_tensorboard(tmp_path):
    torch.set_num_threads(1)
    base = ppo_kuhn_league(tmp_path / "run", seed=0, steps=2, games_per_step=8, tensorboard=False, plots=True)
    run_league(load_config(LeagueConfig, base=base), quiet=True)
    run = tmp_path / "run"
    assert not (run / "tb").exists()
    assert (run / "training.png").stat().st_size > 1000
    state = json.loads((run / "checkpoints" / "step-000002" / "state.json").read_text())
    assert [r["step"] for r in state["training"]] == [1, 2]
    assert all(set(r) == {"step", "train/ppo/return"} for r in state["training"])
