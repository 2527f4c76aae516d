"""A PPO league's training games on Kuhn poker take the array path by themselves, and play the
same games as on the ``State`` path: the same exploitability after each evaluation."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("torch")

from arena.tools.bench.ppo_league import QUICKSTART, league_run, ppo_league  # noqa: E402

TINY = """
game: kuhn_poker
seed: 0
steps: 2
out: unused
population:
  - label: random
    agent: random
  - label: always_bet
    agent: {name: fixed, path: %s}
  - label: psro
    agent: "psro:iterations=0,meta_solver=nash"
    role: solver
    budget: 1
  - label: ppo
    agent: "neural:hidden=8,seed=0"
    role: learner
    trainer: {name: ppo, params: {lr: 0.01, epochs: 2, gamma: 1.0, lam: 0.95}}
    matchmaking: pfsp
    self_play: 0.2
    games_per_step: 96
    snapshot_every: 1
evaluation:
  every: 1
  games: 4
"""


@pytest.fixture
def tiny(tmp_path):
    policy = QUICKSTART.parent / "league" / "policies" / "kuhn_always_bet.json"
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY % policy)
    return path


def test_training_games_take_the_array_path_and_learn_the_same(tiny, caplog):
    with caplog.at_level(logging.DEBUG, logger="arena.playing"):
        fast = league_run(3, True, 2, tiny)
    paths = [r.getMessage() for r in caplog.records if "path (" in r.getMessage()]
    assert paths and all("array path" in m for m in paths)
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="arena.playing"):
        slow = league_run(3, False, 2, tiny)
    told = [r.getMessage() for r in caplog.records if "State path" in r.getMessage()]
    assert len(told) >= 4 and all("need a State" in m for m in told)  # every training task had the learner
    assert fast["train_games"] == slow["train_games"] == 2 * 96
    assert sorted(fast["exploitability"]) == [0, 1, 2]
    assert fast["exploitability"] == slow["exploitability"]
    assert fast["exploitability"][2] != fast["exploitability"][0]  # the learner changed


def test_the_benchmark_rows(tiny):
    out = ppo_league(1, 1, tiny)
    (row,) = out["ppo_league_seeds"]
    assert row["train_games"] == 96 and set(row["exploitability_by_step"]) == {"0", "1"}
    assert row["array_train_games_per_second"] > 0 and row["state_train_games_per_second"] > 0
    assert out["ppo_league_array_vs_state_train"] == row["array_vs_state_train"] > 0
