"""Asynchronous training without Ray (fast): the decoupled PPO weight on stale games, a league
with ``max_staleness: 1`` that stops right after a commit (rollouts of the next step already
started) resumes to the same games and weights as an uninterrupted run, and bad values are one
line. Ray actors and a two-node cluster: tests/playing/test_ray_executor.py."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from arena.config import load_config  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.league import LeagueConfig, run_league  # noqa: E402
from support.league import ppo_kuhn_league  # noqa: E402


def kuhn(out: Path, stale: int, steps: int = 4) -> LeagueConfig:
    return load_config(
        LeagueConfig,
        base=ppo_kuhn_league(
            out,
            seed=4,
            steps=steps,
            games_per_step=32,
            max_staleness=stale,
            executor={"kind": "inprocess", "chunk": 16},
        ),
    )


def state(run: Path) -> tuple[dict, str]:
    with sqlite3.connect(run / "train" / "arena.sqlite") as c:
        games = {r[0]: (r[1], r[2]) for r in c.execute("SELECT id, seats, returns FROM matches")}
    ck = sorted((run / "checkpoints").glob("step-*"))[-1] / "learners" / "ppo" / "weights.pt"
    return games, hashlib.sha256(ck.read_bytes()).hexdigest()


def test_decoupled_weight_only_on_stale_games():
    from arena.loading import load_game
    from arena.plugins.agents.neural import NeuralAgent
    from arena.plugins.trainers.ppo import PPOTrainer, Segment

    game = load_game("kuhn_poker")
    agent = NeuralAgent(game, hidden=8, seed=0)
    agent.name = "a"
    trainer = PPOTrainer(game, [agent], is_cap=2.0)
    seg = lambda stale: Segment(
        0,
        0,
        np.zeros((2, 1)),
        np.ones((2, 2), bool),
        np.zeros(2, int),  # noqa: E731
        np.zeros(2),
        np.zeros(2),
        0,
        staleness=stale,
    )
    current = torch.log(torch.tensor([0.5, 0.5, 0.5, 0.5]))
    behaviour = torch.log(torch.tensor([0.1, 0.4, 0.1, 0.4]))  # pi_prox / pi_behaviour = 5, 1.25 (both segments)
    adv = torch.ones(4)
    prox, shaped, stats = trainer._decoupled([seg(0), seg(1)], behaviour, current, adv)
    assert torch.allclose(prox, torch.cat([behaviour[:2], current[2:]]))  # fresh: clip around behaviour, as before
    assert torch.allclose(shaped, torch.tensor([1.0, 1.0, 2.0, 1.25]))  # stale: min(w, is_cap)
    assert stats["is_capped_frac"] == 0.5 and stats["is_weight_max"] == pytest.approx(5.0)


def test_async_league_resumes_after_a_stop_with_rollouts_in_flight(tmp_path, monkeypatch):
    from arena.league.runner import League

    torch.set_num_threads(1)
    run_league(kuhn(tmp_path / "whole", 1), quiet=True)
    commit = League.commit

    def stop_after_two(self, step):
        commit(self, step)
        if step == 2:
            assert self.state.pending and self.state.pending[0]["step"] == 3  # step 3's games already started
            raise KeyboardInterrupt

    monkeypatch.setattr(League, "commit", stop_after_two)
    with pytest.raises(KeyboardInterrupt):
        run_league(kuhn(tmp_path / "split", 1), quiet=True)
    saved = json.loads((tmp_path / "split" / "checkpoints" / "step-000002" / "state.json").read_text())
    assert saved["pending"][0]["refs"]["ppo"]["version"] == 1  # played by the learner before update 2
    monkeypatch.setattr(League, "commit", commit)
    run_league(kuhn(tmp_path / "split", 1), quiet=True)
    assert state(tmp_path / "split") == state(tmp_path / "whole")
    run_league(kuhn(tmp_path / "sync", 0), quiet=True)
    assert state(tmp_path / "sync")[1] != state(tmp_path / "whole")[1]  # staleness changes what is learned
    # old versions pruned; kept: the current one, the in-flight rollouts' and the last commit's (k + 2 at most)
    assert len(list((tmp_path / "whole" / "live" / "ppo").iterdir())) <= 3


def test_async_resume_after_a_crash_between_a_step_and_its_commit(tmp_path, monkeypatch):
    """Killed after step 3's update (old live versions pruned) but before its commit: the run
    resumes from step 2, whose started rollouts still name the version they were started with."""
    from arena.league.runner import League

    torch.set_num_threads(1)
    run_league(kuhn(tmp_path / "whole", 1), quiet=True)
    commit = League.commit

    def crash_before_three(self, step):
        if step == 3:
            raise KeyboardInterrupt
        commit(self, step)

    monkeypatch.setattr(League, "commit", crash_before_three)
    with pytest.raises(KeyboardInterrupt):
        run_league(kuhn(tmp_path / "split", 1), quiet=True)
    monkeypatch.setattr(League, "commit", commit)
    run_league(kuhn(tmp_path / "split", 1), quiet=True)
    assert state(tmp_path / "split") == state(tmp_path / "whole")


def test_negative_staleness_is_one_line(tmp_path):
    with pytest.raises(ArenaError, match="max_staleness must be at least 0"):
        run_league(kuhn(tmp_path / "x", -1), quiet=True)
    assert not (tmp_path / "x").exists()
