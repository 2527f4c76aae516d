"""The array face of Liar's dice against OpenSpiel through the State face."""

from __future__ import annotations

import numpy as np
import pytest

import arena
from arena.arrays import ArrayRandom
from arena.testing import ConformanceError, check_array_face
from support.array_faces import both_paths, debug_match_path, shallow_policy


def test_ten_thousand_random_games_agree_decision_by_decision():
    """Player to move, legal bids, info-state key and tensor at every decision, the streams'
    draws, and the returns: 10,000 games of the default game (one die each, six sides)."""
    check_array_face("liars_dice", games=10_000, seed=7)


@pytest.mark.parametrize(
    "name",
    [
        "liars_dice(numdice=2)",
        "liars_dice(dice_sides=3)",
        "liars_dice(numdice=3,dice_sides=4)",
        "openspiel:liars_dice",
        "openspiel:liars_dice(bidding_rule=reset-quantity,numdice=2)",
    ],
)
def test_other_dice_and_the_other_bidding_rule(name):
    check_array_face(name, games=1000, seed=1)


def test_a_wrong_rule_is_caught(monkeypatch):
    from arena.games.dice_arrays import LiarsDiceGames

    resolve = LiarsDiceGames._resolve

    def nothing_wild(self, rows):  # the highest face counts only for itself
        dice = self.dice[rows]
        self.dice[rows] = np.where(dice == self.face.sides, 0, dice)
        resolve(self, rows)
        self.dice[rows] = dice

    monkeypatch.setattr(LiarsDiceGames, "_resolve", nothing_wild)
    with pytest.raises(ConformanceError, match="returns differ"):
        check_array_face("liars_dice", games=300)


def test_a_known_game():
    """Dice 3 (player 0) and 6 (player 1, wild): "2-3" is true, so calling liar on it loses."""
    face = arena.load_game("liars_dice").array_face()
    rng = ArrayRandom(0, range(400))
    games = face.reset(rng)
    dice = games.dice[:, :, 0]
    b = int(np.flatnonzero((dice[:, 0] == 3) & (dice[:, 1] == 6))[0])
    rows = np.array([b])
    assert np.flatnonzero(games.legal_mask(rows)[0]).tolist() == list(range(12))  # no liar at the start
    games.step(rows, np.array([7]))  # player 0 bids 2-2 (action 6 + face 2 - 1)
    games.step(rows, np.array([8]))  # player 1 bids 2-3
    assert games.info_state_keys(rows) == ["3 2-2 2-3"]
    assert np.flatnonzero(games.legal_mask(rows)[0]).tolist() == [9, 10, 11, 12]
    games.step(rows, np.array([12]))  # player 0 calls liar: 3 and a wild 6 make two 3s
    assert games.player[b] < 0 and games.returns()[b].tolist() == [-1.0, 1.0]


def test_the_face_covers_two_players_only_within_its_codes():
    assert arena.load_game("liars_dice(numdice=2,dice_sides=6)").array_face() is not None
    assert arena.load_game("liars_dice(numdice=5,dice_sides=6)").array_face() is None  # 60 bits of bids


def test_ten_thousand_games_identical_through_the_runners_two_paths(caplog):
    from arena.plugins.agents.basic import FixedPolicyAgent, RandomAgent

    game = arena.load_game("liars_dice")
    policy = shallow_policy("liars_dice", "liars_dice", depth=3)

    fast, slow = both_paths(game, lambda: [FixedPolicyAgent(policy), RandomAgent()], 10_000, 5, caplog)
    assert fast == slow
    assert {r[3] for r in fast} >= {2, 5}  # short and long bidding wars


def test_arena_match_takes_the_array_path(capsys):
    assert "liars_dice: array path (every agent decides from arrays)" in debug_match_path("liars_dice", capsys)


def test_trajectories_recorded_on_the_face_are_the_state_paths(caplog):
    import logging

    from arena.playing.match import play_games
    from arena.plugins.agents.basic import FixedPolicyAgent, RandomAgent

    game = arena.load_game("liars_dice(numdice=2)")
    policy = shallow_policy("liars_dice", "liars_dice(numdice=2)", depth=1)

    def recorded(results):
        return [
            (r.index, r.seats, r.returns, r.length, r.transcript, r.trajectory.seats, r.trajectory.returns)
            + tuple((s.player, s.action, s.reward, s.observation.info_state) for s in r.trajectory.steps)
            + tuple(s.observation.tensor.tolist() for s in r.trajectory.steps)
            for r in results
        ]

    with caplog.at_level(logging.DEBUG, logger="arena"):
        fast = play_games(game, [FixedPolicyAgent(policy), RandomAgent()], 1000, seed=3, rotate_seats=True, record=True)
    assert "array path" in caplog.text
    slow_agents = [FixedPolicyAgent(policy), RandomAgent()]
    for a in slow_agents:
        a.array_native = False
    slow = play_games(game, slow_agents, 1000, seed=3, rotate_seats=True, record=True)
    assert recorded(fast) == recorded(slow)
    assert sum(s.reward != 0 for r in fast for s in r.trajectory.steps) >= 1000
