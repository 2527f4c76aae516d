"""The Coin Game's array face against its State face: the hidden start cells and respawns drawn
by the face's copy of each game's ``default_rng``, decisions, returns, trajectories, the neural
agent's games and the CLI on the array path."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import arena
from arena.arrays import ArrayRandom
from arena.game import SIMULTANEOUS, TERMINAL
from arena.playing.array_match import array_face_for
from arena.playing.match import play_games
from arena.testing import check_array_face

RIGHT, DOWN, UP, LEFT = 3, 1, 0, 2
STEP_VIEW = ("player", "game_name", "decision", "legal_actions", "action_labels", "text")


@pytest.mark.parametrize(
    "name, games",
    [
        ("coin_game", 2000),
        ("coin_game(memory=3)", 500),
        ("coin_game(size=5,horizon=9,discount=0.8,memory=2)", 500),
        ("coin_game(size=2,memory=1)", 500),  # agents share cells; the respawn has 2 or 3 free cells
        ("coin_game(size=4,horizon=5)", 500),  # an even size: the observer's centre is off the middle
    ],
)
def test_face_agrees_with_the_state_face(name, games):
    """Decision by decision: player to move, legal moves, info-state key, observation tensor, the
    streams' draws; then returns and outcome facts (NaN own-coin rates where nobody took a coin)."""
    check_array_face(name, games=games, seed=1)


def test_a_round_by_hand():
    """Both players reach red's coin at once: red +1 (its own) -2 (blue took it), blue +1; the
    memory planes count it from each side; the new coin is blue, on a free cell."""
    face = arena.load_game("coin_game(memory=2)").array_face()
    g = face.reset(ArrayRandom(0, range(3)))
    g.pos[:] = [[0, 0], [0, 2]]
    g.coin[:], g.colour[:] = [0, 1], 0
    rows = np.arange(3)
    g.step(rows, np.array([[RIGHT, LEFT], [DOWN, UP], [RIGHT, UP]]))
    assert g.returns().tolist() == [[-1.0, 1.0], [0.0, 0.0], [1.0, 0.0]]
    assert g.picks[:, :, 0].tolist() == [[1, 0], [0, 0], [1, 0]] and g.picks[:, :, 1].tolist() == [
        [0, 1],
        [0, 0],
        [0, 0],
    ]
    assert g.colour.tolist() == [1, 0, 1] and (g.coin[1] == [0, 1]).all()
    assert not (g.coin[:, None, :] == g.pos).all(axis=2).any()  # respawned off the players
    mem = g.observations(rows, 0)[:, 4:, 0, 0].tolist()
    assert mem == [[1, 0, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0]]
    assert g.observations(rows[:1], 1)[0, 4:, 0, 0].tolist() == [0, 1, 1, 0]
    assert g.player.tolist() == [SIMULTANEOUS] * 3


def outcomes(results):
    """What each game came to; ``repr`` so NaN own-coin rates compare equal."""
    return repr([(r.index, r.seats, r.returns, r.length, r.info, r.forfeit) for r in results])


def state_path(agents):
    for a in agents:
        a.array_native = False
    return agents


def test_ten_thousand_random_games_identical_through_both_paths(caplog):
    game = arena.load_game("coin_game(memory=2,discount=0.95)")
    agents = lambda: [arena.load_agent("random", game), arena.load_agent("random", game, label="b")]  # noqa: E731
    with caplog.at_level(logging.DEBUG, logger="arena"):
        fast = play_games(game, agents(), 10_000, seed=3, rotate_seats=True)
    assert "coin_game(discount=0.95,memory=2): array path" in caplog.text
    slow = play_games(game, state_path(agents()), 10_000, seed=3, rotate_seats=True)
    assert outcomes(fast) == outcomes(slow)
    lengths = {r.length for r in fast}
    assert min(lengths) == 2 and max(lengths) == 32  # stopped after one round .. the full horizon
    picks = np.array([r.info["own_picks"] + r.info["other_picks"] for r in fast])
    assert picks.sum() > 10_000 and (picks.sum(axis=1) == 0).sum() > 100  # respawns, and games with none


def recorded(results):
    out = []
    for r in results:
        t = r.trajectory
        steps = [
            (s.player, s.action, s.log_prob, s.reward, s.observation.info_state, s.observation.tensor.tolist())
            + tuple(getattr(s.observation, f) for f in STEP_VIEW)
            for s in t.steps
        ]
        out.append((r.index, r.seats, r.returns, r.length, r.forfeit, r.transcript, r.info, t.seats, t.returns, steps))
    return repr(out)


def test_trajectories_recorded_on_the_face_are_the_state_paths():
    game = arena.load_game("coin_game(memory=2,discount=0.95)")
    agents = lambda: [arena.load_agent("random", game), arena.load_agent("random", game, label="b")]  # noqa: E731
    assert array_face_for(game, agents(), True, None)[0] is not None
    fast = play_games(game, agents(), 600, seed=2, record=True, batch_size=250)
    slow = play_games(game, state_path(agents()), 600, seed=2, record=True)
    assert recorded(fast) == recorded(slow)
    steps = [s for r in fast for s in r.trajectory.steps]
    assert len(steps) > 600 * 10 and sum(s.reward != 0 for s in steps) > 500


@pytest.mark.parametrize("name", ["coin_game", "coin_game(size=4,memory=3,discount=0.9)"])
def test_the_neural_agent_plays_the_same_games_on_both_paths(name):
    pytest.importorskip("torch")
    game = arena.load_game(name)

    def agents():
        return [arena.load_agent("neural", game, seed=1), arena.load_agent("random", game)]

    assert array_face_for(game, agents(), True, None)[0] is not None
    fast = play_games(game, agents(), 300, seed=5, rotate_seats=True, record=True)
    slow = play_games(game, state_path(agents()), 300, seed=5, rotate_seats=True, record=True)
    assert recorded(fast) == recorded(slow)
    log_probs = {s.log_prob for r in fast for s in r.trajectory.steps if s.log_prob is not None}
    assert len(log_probs) > 200  # the network's probabilities per observation, not a uniform 4-way choice


def test_arena_match_runs_on_the_array_path(capsys):
    from arena.cli import main

    logger = logging.getLogger("arena")
    handlers, level = list(logger.handlers), logger.level
    try:
        argv = ["--debug", "match", "--game", "coin_game(memory=1)", "--agents", "random", "random"]
        assert main(argv + ["--games", "200", "--json"]) == 0
        err = capsys.readouterr().err
        assert "coin_game(memory=1): array path (every agent decides from arrays)" in err
    finally:
        logger.handlers[:] = handlers
        logger.setLevel(level)


def test_a_numpy_that_draws_otherwise_gets_the_state_path(monkeypatch):
    from arena.games.social import pcg64_arrays

    monkeypatch.setattr(pcg64_arrays, "matches_numpy", lambda: False)
    game = arena.load_game("coin_game(horizon=3)")
    assert game.array_face() is None
    rand = [arena.load_agent("random", game), arena.load_agent("random", game, label="b")]
    assert "has no array face" in array_face_for(game, rand, False, None)[1]
    assert len(play_games(game, rand, 10, seed=0)) == 10


def test_games_end_at_the_horizon_or_the_stop():
    face = arena.load_game("coin_game(horizon=4,discount=0.5)").array_face()
    g = face.reset(ArrayRandom(9, range(4000)))
    while (live := np.flatnonzero(g.player == SIMULTANEOUS)).size:
        g.step(live, np.zeros((len(live), 2), dtype=np.int64))
    assert (g.player == TERMINAL).all()
    counts = np.bincount(g.rounds, minlength=5)[1:]  # P(stop after round k) = 0.5^k, the last all that is left
    assert np.allclose(counts / 4000, [0.5, 0.25, 0.125, 0.125], atol=0.03)
