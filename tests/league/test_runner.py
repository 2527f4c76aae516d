"""League: matchmaking oracles from the AlphaStar pseudocode, config errors before any game, an
end-to-end run from the CLI with its leaderboard and plots."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import yaml

from arena.cli import main
from arena.league.matchmaking import PayoffTable, pfsp_weights


def test_pfsp_weightings_match_the_note():
    assert np.allclose(pfsp_weights([0.2, 0.5, 0.8], "var"), np.array([0.16, 0.25, 0.16]) / 0.57)
    assert np.allclose(pfsp_weights([0.2, 0.5, 0.8], "squared"), np.array([0.64, 0.25, 0.04]) / 0.93)
    assert np.allclose(pfsp_weights([0.2, 0.5, 0.8], "linear"), np.array([0.8, 0.5, 0.2]) / 1.5)
    assert np.allclose(pfsp_weights([0.2, 0.6, 0.8], "linear_capped"), np.array([0.5, 0.4, 0.2]) / 1.1)
    assert np.allclose(pfsp_weights([1.0, 1.0], "hard"), [0.5, 0.5])  # all zero: uniform


def test_payoff_table_win_rates_and_decay():
    t = PayoffTable(0.99)
    assert t.win_rate("a", "b") == 0.5
    t.update("a", "b", 1.0, -1.0)
    assert t.win_rate("a", "b") == 1.0 and t.win_rate("b", "a") == 0.0
    t.update("a", "b", -1.0, 1.0)  # the older win is decayed by 0.99
    assert t.win_rate("a", "b") == pytest.approx(0.99 / 1.99)
    t.update("a", "b", 0.0, 0.0)
    assert t.win_rate("b", "a") == pytest.approx((0.99 + 0.5) / (0.99 * 1.99 + 1))


def _write(tmp_path, population, **extra):
    cfg = {"game": "kuhn_poker", "steps": 2, "out": str(tmp_path / "run"), "population": population, **extra}
    path = tmp_path / "league.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


LEARNER = {
    "label": "ppo",
    "agent": "neural:hidden=8",
    "role": "learner",
    "trainer": {"name": "ppo"},
    "games_per_step": 8,
}


@pytest.mark.parametrize(
    "population, message",
    [
        ([{"label": "x", "agent": "no_such_agent"}, LEARNER], "unknown agent 'no_such_agent'"),
        (
            [{"label": "r", "agent": "random", "trainer": {"name": "ppo"}}, LEARNER],
            "population[0] 'r': a trainer is attached but the role is 'fixed'",
        ),
        (
            [{"label": "r", "agent": "random"}, dict(LEARNER, opponents=[])],
            "population[1] 'ppo': missing opponent pool",
        ),
        (
            [{"label": "r", "agent": "random"}, dict(LEARNER, opponents=["ghost"])],
            "opponents ['ghost'] are not population labels",
        ),
        (
            [{"label": "r", "agent": "random"}, dict(LEARNER, trainer={"name": "no_such_trainer"})],
            "unknown trainer 'no_such_trainer'",
        ),
        ([{"label": "r", "agent": "random"}, dict(LEARNER, trainer=None)], "role 'learner' needs a trainer"),
        (
            [{"label": "r", "agent": "random"}, dict(LEARNER, matchmaking="main_exploiter")],
            "needs a learner with matchmaking 'main'",
        ),
        ([{"label": "r", "agent": "random"}, {"label": "r", "agent": "random"}], "labels must be unique"),
        (
            [{"label": "r", "agent": "random"}, dict(LEARNER, agent="cfr:iterations=1")],
            "trainer 'ppo' trains neural agents; 'ppo' is not one",
        ),
    ],
)
def test_broken_config_is_one_line_before_any_game(tmp_path, capsys, population, message):
    path = _write(tmp_path, population)
    assert main(["league", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err, err
    assert not (tmp_path / "run").exists()  # nothing was created, let alone played


def test_unknown_key_and_bad_override_are_config_errors(tmp_path, capsys):
    path = _write(tmp_path, [{"label": "r", "agent": "random"}, LEARNER])
    assert main(["league", str(path), "stepz=3"]) == 2
    assert "unknown key 'stepz'" in capsys.readouterr().err
    assert main(["league", str(tmp_path / "missing.yaml")]) == 2
    assert "config file not found" in capsys.readouterr().err


def test_league_from_the_cli_ends_with_leaderboard_and_plots(tmp_path, capsys):
    population = [
        {"label": "random", "agent": "random"},
        {"label": "psro", "agent": "psro:iterations=0", "role": "solver", "budget": 2},
        {
            "label": "main",
            "agent": "neural:hidden=8",
            "role": "learner",
            "trainer": {"name": "ppo"},
            "matchmaking": "main",
            "games_per_step": 24,
            "snapshot_every": 1,
        },
        {
            "label": "exploiter",
            "agent": "neural:hidden=8,seed=2",
            "role": "learner",
            "trainer": {"name": "ppo"},
            "matchmaking": "main_exploiter",
            "games_per_step": 24,
            "snapshot_every": 2,
        },
    ]
    path = _write(tmp_path, population, steps=2, evaluation={"every": 2, "games": 4, "ratings": {"bootstrap": 0}})
    out = subprocess.run(
        [sys.executable, "-m", "arena.cli", "league", str(path), "--json"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    run = tmp_path / "run"
    agents = {r["agent"] for r in report["rows"]}
    assert agents == {"random", "psro@2", "main@2", "exploiter@2"}
    assert report["train_games"] == 2 * 2 * 24
    # 4 members, every pair, 4 games per seat order
    assert report["eval_games"] == 6 * 2 * 4 == report["games"]
    for f in ("leaderboard.md", "leaderboard.csv", "payoff.png", "ratings.png", "training.png", "config.yaml"):
        assert (run / f).exists(), f
    assert (run / "snapshots" / "main@1" / "weights.pt").exists()
    # the main exploiter restarted from its initial weights at its snapshot (AlphaStar)
    import torch

    init = torch.load(run / "checkpoints" / "initial" / "exploiter" / "weights.pt", weights_only=True)
    now = torch.load(run / "checkpoints" / "step-000002" / "learners" / "exploiter" / "weights.pt", weights_only=True)
    assert all(torch.equal(init[k], now[k]) for k in init)
    # a rerun of the finished league plays nothing new and shows the same board
    capsys.readouterr()
    assert main(["league", str(path), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["steps_run"] == 0 and again["eval_games"] == report["eval_games"]
    # the run directory works with `arena leaderboard`
    assert main(["leaderboard", str(run), "--json", "--bootstrap", "0"]) == 0
