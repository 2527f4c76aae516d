"""AlphaZero: PUCT search with exact terminal values, the trainer's targets and buffer, a league
run resumed from its committed state (and one killed with SIGKILL mid-step, then rerun) equal to
an uninterrupted one, refusals."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from arena.agent import Observation
from arena.config import load_config
from arena.errors import ArenaError
from arena.league import LeagueConfig, run_league
from arena.loading import load_agent, load_game
from arena.playing.match import play_games
from arena.plugins.trainers.alphazero import AlphaZeroTrainer
from support.league import kill_when, rows

TTT = "openspiel:tic_tac_toe"


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_search_finds_a_win_in_one_with_an_untrained_network():
    game = load_game(TTT)
    s = game.new_initial_state()
    for m in (0, 3, 1, 4):  # X: 0 1 _ ; O: 3 4 -> X wins at 2
        s.apply_action(m)
    agent = load_agent("alphazero:simulations=200,greedy=true", game)
    visits = agent.search_batch([Observation(s, 0, np.random.default_rng(0), TTT)])[0]
    assert max(visits, key=lambda a: visits[a]) == 2


LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


@functools.lru_cache(maxsize=None)
def negamax(board: tuple[int, ...]) -> int:
    """Exact tic-tac-toe value for the player to move (cells: 0 empty, 1 X, 2 O; X moves first)."""
    mover = 1 if board.count(1) == board.count(2) else 2
    if any(board[a] == board[b] == board[c] == 3 - mover for a, b, c in LINES):
        return -1  # the player who just moved has won
    if 0 not in board:
        return 0
    return max(-negamax(board[:i] + (mover,) + board[i + 1 :]) for i in range(9) if board[i] == 0)


def oracle_critic(x: torch.Tensor) -> torch.Tensor:
    """The exact value for the mover from the observation planes (empty, O, X)."""
    planes = x.reshape(-1, 3, 9)
    boards = [tuple(int(2 * o + 1 * c) for o, c in zip(p[1], p[2])) for p in planes.tolist()]
    return torch.tensor([float(negamax(b)) for b in boards])


def test_search_with_an_exact_critic_blocks_and_values_the_opponent_with_the_opposite_sign():
    game = load_game(TTT)
    s = game.new_initial_state()
    for m in (0, 4, 1):  # X: 0 1 _ ; O: 4, to move -> must block at 2 (every other move loses)
        s.apply_action(m)
    agent = load_agent("alphazero:simulations=40,greedy=true", game)
    agent.net.value = oracle_critic
    child = s.clone()
    child.apply_action(8)  # O does not block: X to move, a win for X
    _, value = agent.evaluate([child])[0]
    assert value.tolist() == [1.0, -1.0]  # the mover (X) wins, the opponent (O) loses
    visits = agent.search_batch([Observation(s, 1, np.random.default_rng(0), TTT)])[0]
    assert max(visits, key=lambda a: visits[a]) == 2


def test_trainer_targets_are_the_visit_distribution_and_the_outcome():
    game = load_game(TTT)
    agent = load_agent("alphazero:simulations=8", game)
    agent.name = "az"
    trainer = AlphaZeroTrainer(game, [agent], buffer=20, steps=2, batch=8)
    res = play_games(game, [agent, agent], num_games=4, seed=0, record=True)
    pos = trainer.positions([r.trajectory for r in res])
    assert len(pos["z"]) == sum(len(r.trajectory.steps) for r in res)
    assert np.allclose(pos["pi"].sum(axis=1), 1.0) and not (pos["pi"] * ~pos["mask"]).any()
    first = res[0].trajectory
    assert pos["z"][0] == first.returns[first.steps[0].player]
    trainer.update([r.trajectory for r in res])
    assert len(trainer.buffer["z"]) == 20  # FIFO: the newest positions


def league(out, steps):
    return {
        "game": TTT,
        "seed": 1,
        "steps": steps,
        "out": str(out),
        "progress": False,
        "tensorboard": False,
        "plots": False,
        "population": [
            {"label": "random", "agent": "random"},
            {
                "label": "az",
                "agent": "alphazero:simulations=4,hidden=16",
                "role": "learner",
                "trainer": {"name": "alphazero", "params": {"steps": 2, "batch": 16, "buffer": 64}},
                "matchmaking": "self_play",
                "games_per_step": 4,
                "snapshot_every": 2,
            },
        ],
        "evaluation": {"every": 2, "games": 2, "ratings": {"bootstrap": 0}},
    }


def test_a_resumed_league_plays_the_same_games_as_an_uninterrupted_one(tmp_path):
    run_league(load_config(LeagueConfig, None, base=league(tmp_path / "resumed", 2)), quiet=True)
    run_league(load_config(LeagueConfig, None, base=league(tmp_path / "resumed", 4)), quiet=True)
    run_league(load_config(LeagueConfig, None, base=league(tmp_path / "clean", 4)), quiet=True)
    for sub in ("train", "."):
        a, b = rows(tmp_path / "clean" / sub / "arena.sqlite"), rows(tmp_path / "resumed" / sub / "arena.sqlite")
        assert a == b and len(a) > 0


def test_a_league_killed_with_sigkill_and_rerun_stores_the_same_games(tmp_path):
    """The replay buffer is trainer state: a learner killed mid-step resumes with the buffer and
    weights of its last committed step, so the rerun stores exactly the uninterrupted run's games."""
    steps = 6
    crash, clean = tmp_path / "crash", tmp_path / "clean"
    cfg = league(crash, steps)
    cfg["population"][1]["games_per_step"] = 12
    cfg_file = tmp_path / "league.yaml"
    cfg_file.write_text(json.dumps(cfg))
    cmd = [sys.executable, "-m", "arena.cli", "league", str(cfg_file), "--quiet"]
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1")
    assert kill_when(cmd, crash / "arena.sqlite", lambda c: c >= 2, env=env) < steps
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    clean_cfg = league(clean, steps)
    clean_cfg["population"][1]["games_per_step"] = 12
    run_league(load_config(LeagueConfig, None, base=clean_cfg), quiet=True)
    for sub in ("train", "."):
        a, b = rows(clean / sub / "arena.sqlite"), rows(crash / sub / "arena.sqlite")
        assert a == b and len(a) > 0


def test_refusals():
    with pytest.raises(ArenaError, match="perfect-information turn-based"):
        load_agent("alphazero", load_game("leduc_poker"))
    with pytest.raises(ArenaError, match="two-player zero-sum"):
        load_agent("alphazero", load_game("openspiel:quoridor(players=3)"))
    with pytest.raises(ArenaError, match="has no parameter"):
        load_agent("alphazero:temperature=1", load_game(TTT))
    game = load_game(TTT)
    with pytest.raises(ArenaError, match="trains one alphazero agent"):
        AlphaZeroTrainer(game, [load_agent("random", game)])
