"""The array face of OpenSpiel's tic-tac-toe and connect four against the State face."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

import arena
from arena.arrays import ArrayRandom
from arena.testing import ConformanceError, check_array_face
from support.array_faces import both_paths, debug_match_path, shallow_policy


@pytest.mark.parametrize("name", ["openspiel:tic_tac_toe", "openspiel:connect_four"])
def test_ten_thousand_random_games_agree_decision_by_decision(name):
    """Player to move, legal moves, info-state key (the move history) and observation tensor at
    every decision, the streams' draws, and the returns: 10,000 games."""
    check_array_face(name, games=10_000, seed=7)


@pytest.mark.parametrize(
    "name", ["openspiel:connect_four(rows=4,columns=5,x_in_row=3)", "openspiel:connect_four(rows=7,columns=3)"]
)
def test_other_boards(name):
    check_array_face(name, games=1000, seed=1)


def test_a_missed_diagonal_is_caught(monkeypatch):
    game = arena.load_game("openspiel:connect_four")
    face = game.array_face()
    monkeypatch.setattr(face, "steps", face.steps[:3])  # one diagonal direction forgotten
    with pytest.raises(ConformanceError, match="player to move|returns differ"):
        check_array_face(game, games=500)


@pytest.mark.parametrize(
    "name, moves, returns",
    [
        ("tic_tac_toe", [4, 1, 0, 2, 8], [1.0, -1.0]),  # x: the diagonal 0-4-8
        ("tic_tac_toe", [0, 4, 1, 2, 8, 6], [-1.0, 1.0]),  # o: the diagonal 2-4-6
        ("tic_tac_toe", [0, 4, 8, 1, 7, 6, 2, 5, 3], [0.0, 0.0]),  # a full board, no line
        ("connect_four", [0, 0, 1, 1, 2, 2, 3], [1.0, -1.0]),  # x: the bottom row 0-3
        ("connect_four", [0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3], [1.0, -1.0]),  # x: the diagonal up from 0
        ("connect_four", [0, 6, 1, 6, 0, 6, 1, 6], [-1.0, 1.0]),  # o: column 6
    ],
)
def test_known_games(name, moves, returns):
    """Known lines, as OpenSpiel scores them too; the key is the move history."""
    games = arena.load_game(f"openspiel:{name}").array_face().reset(ArrayRandom(0, range(1)))
    state = pyspiel.load_game(name).new_initial_state()
    row = np.array([0])
    for a in moves:
        assert games.player[0] == state.current_player() >= 0
        games.step(row, np.array([a]))
        state.apply_action(a)
    assert games.player[0] < 0 and state.is_terminal()
    assert games.returns()[0].tolist() == returns == state.returns()


def test_egocentric_connect_four_has_no_face():
    assert arena.load_game("openspiel:connect_four(egocentric_obs_tensor=true)").array_face() is None
    assert arena.load_game("openspiel:connect_four(rows=10,columns=7)").array_face() is None  # 77 bits
    assert arena.load_game("openspiel:leduc_poker(players=3)").array_face() is None  # nobody registered one


@pytest.mark.parametrize("name, depth", [("tic_tac_toe", 3), ("connect_four", 3)])
def test_ten_thousand_games_identical_through_the_runners_two_paths(name, depth, caplog):
    from arena.plugins.agents.basic import FixedPolicyAgent, RandomAgent

    game = arena.load_game(f"openspiel:{name}")
    policy = shallow_policy(name, name, depth=depth)

    fast, slow = both_paths(game, lambda: [FixedPolicyAgent(policy), RandomAgent()], 10_000, 5, caplog)
    assert fast == slow
    assert len({r[2][0] for r in fast}) == 3  # wins, losses and draws (or the board's only outcomes)


@pytest.mark.parametrize("name", ["openspiel:tic_tac_toe", "openspiel:connect_four"])
def test_arena_match_takes_the_array_path(name, capsys):
    assert f"{name}: array path (every agent decides from arrays)" in debug_match_path(name, capsys)


@pytest.mark.parametrize("name", ["tic_tac_toe", "connect_four"])
def test_trajectories_recorded_on_the_face_are_the_state_paths(name, caplog):
    import logging

    from arena.playing.match import play_games
    from arena.plugins.agents.basic import FixedPolicyAgent, RandomAgent

    game = arena.load_game(f"openspiel:{name}")
    policy = shallow_policy(name, name, depth=2)

    def recorded(results):
        return [
            (r.index, r.seats, r.returns, r.length, r.transcript, r.trajectory.seats, r.trajectory.returns)
            + tuple(
                (s.player, s.action, s.reward, s.observation.info_state, s.observation.text) for s in r.trajectory.steps
            )
            + tuple(s.observation.tensor.tolist() for s in r.trajectory.steps)
            for r in results
        ]

    with caplog.at_level(logging.DEBUG, logger="arena"):
        fast = play_games(game, [FixedPolicyAgent(policy), RandomAgent()], 500, seed=3, rotate_seats=True, record=True)
    assert "array path" in caplog.text
    slow_agents = [FixedPolicyAgent(policy), RandomAgent()]
    for a in slow_agents:
        a.array_native = False
    slow = play_games(game, slow_agents, 500, seed=3, rotate_seats=True, record=True)
    assert recorded(fast) == recorded(slow)
    assert sum(s.reward != 0 for r in fast for s in r.trajectory.steps) >= 500
