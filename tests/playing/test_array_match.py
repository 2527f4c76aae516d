"""The runner's array path: the same results as the State path, forfeits, and visible fallbacks."""

from __future__ import annotations

import logging

import numpy as np
import pyspiel
import pytest

import arena
from arena.agent import Agent
from arena.playing.array_match import array_face_for
from arena.playing.match import play_games
from arena.policy import TabularPolicy


def outcomes(results):
    return [
        (r.index, r.seats, r.returns, r.length, r.forfeit and (r.forfeit.player, r.forfeit.reason)) for r in results
    ]


def state_path(agents):
    for a in agents:
        a.array_native = False  # the switch acts_on_arrays reads: these agents now need a State
    return agents


def some_policy(name, keep=0.8, seed=0):
    """A tabular policy over most of the game's info states (the rest fall back to uniform)."""
    rng = np.random.default_rng(seed)
    table = {}

    def walk(s):
        if s.is_terminal():
            return
        if not s.is_chance_node() and rng.random() < keep:
            legal = s.legal_actions()
            w = rng.random(len(legal)) ** 3
            table[s.information_state_string()] = dict(zip(legal, (w / w.sum()).tolist()))
        for a in s.legal_actions():
            walk(s.child(a))

    walk(pyspiel.load_game(name).new_initial_state())
    return TabularPolicy(name, table)


@pytest.mark.parametrize("name", ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker"])
def test_ten_thousand_games_identical_through_both_faces(name, caplog):
    game = arena.load_game(name)
    n = game.spec.num_players
    from arena.plugins.agents.basic import FixedPolicyAgent, RandomAgent

    def agents():
        return [FixedPolicyAgent(some_policy(name))] + [RandomAgent() for _ in range(n - 1)]

    with caplog.at_level(logging.DEBUG, logger="arena"):
        fast = play_games(game, agents(), 10_000, seed=5, rotate_seats=True)
    assert "array path" in caplog.text
    slow = play_games(game, state_path(agents()), 10_000, seed=5, rotate_seats=True)
    assert outcomes(fast) == outcomes(slow)
    assert len({tuple(r.returns) for r in fast}) > 3


def test_results_do_not_depend_on_the_batch_size():
    game = arena.load_game("leduc_poker")
    agents = [arena.load_agent("random", game), arena.load_agent("random", game, label="b")]
    a = play_games(game, agents, 1000, seed=2, batch_size=7, first_index=100)
    b = play_games(game, agents, 1000, seed=2, first_index=100)
    assert outcomes(a) == outcomes(b)
    assert [r.index for r in a] == list(range(100, 1100))


class Stubborn(Agent):
    """Bets (Kuhn action 1) or plays the non-existent action 5 in odd games; raises when told to."""

    name = "stubborn"

    def __init__(self, crash=False):
        self.crash = crash

    def act_batch(self, observations):
        if self.crash:
            raise RuntimeError("boom")
        return [5 if o.state.history()[0] % 2 else 1 for o in observations]

    def act_arrays(self, games, rows):
        if self.crash:
            raise RuntimeError("boom")
        return np.where(games.cards[rows, 0] % 2 == 1, 5, 1)


class Talker(Agent):
    """Bets on the face and off it, and says so in its decision info (a log-prob, as learners do)."""

    name = "talker"

    def act_batch_info(self, observations):
        return [1] * len(observations), [{"log_prob": -0.5} for _ in observations]

    def act_batch(self, observations):
        return self.act_batch_info(observations)[0]

    def act_arrays(self, games, rows, player=None):
        return np.ones(len(rows), dtype=np.int64)


STEP_VIEW = ("player", "game_name", "decision", "legal_actions", "max_text_length", "action_labels", "text")


def recorded(results):
    """Everything a recorded result holds: its outcome, transcript, trajectory and every step's
    fields, the observation's frozen renderings (info state, tensor) included."""
    out = []
    for r in results:
        t = r.trajectory
        steps = [
            (s.player, s.action, s.log_prob, s.reward, s.extra, s.observation.info_state, s.observation.tensor.tolist())
            + tuple(getattr(s.observation, f) for f in STEP_VIEW)
            for s in t.steps
        ]
        out.append((r.index, r.seats, r.returns, r.length, r.forfeit, r.transcript, r.info))
        out.append((t.game_index, t.seed, t.seats, t.returns, t.staleness, steps))
    return out


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)"])
def test_trajectories_recorded_on_the_face_are_the_state_paths(name, caplog):
    game = arena.load_game(name)
    n = game.spec.num_players
    from arena.plugins.agents.basic import FixedPolicyAgent, RandomAgent

    def agents():
        second = Stubborn() if name == "kuhn_poker" else RandomAgent()  # Stubborn: forfeits too
        return [FixedPolicyAgent(some_policy(name)), second] + [RandomAgent() for _ in range(n - 2)]

    with caplog.at_level(logging.DEBUG, logger="arena"):
        fast = play_games(game, agents(), 2000, seed=11, rotate_seats=True, record=True, batch_size=700)
    assert "array path" in caplog.text
    slow = play_games(game, state_path(agents()), 2000, seed=11, rotate_seats=True, record=True)
    assert recorded(fast) == recorded(slow)
    steps = [s for r in fast for s in r.trajectory.steps]
    assert len(steps) > 2000 * 1.5
    assert len({s.observation.info_state for s in steps}) > 10 and any(s.reward != 0 for s in steps)
    if name == "kuhn_poker":
        assert sum(r.forfeit is not None for r in fast) > 300


@pytest.mark.parametrize("crash", [False, True])
def test_forfeits_as_on_the_state_path(crash):
    game = arena.load_game("kuhn_poker")
    from arena.plugins.agents.basic import RandomAgent

    fast = play_games(game, [Stubborn(crash), RandomAgent()], 500, seed=1, rotate_seats=True)
    slow = play_games(game, state_path([Stubborn(crash), RandomAgent()]), 500, seed=1, rotate_seats=True)
    assert outcomes(fast) == outcomes(slow)
    assert sum(r.forfeit is not None for r in fast) > 100


def test_the_state_path_runs_when_something_needs_a_state(caplog, tmp_path):
    game = arena.load_game("kuhn_poker")
    some_policy("kuhn_poker").save(tmp_path / "policy.json")
    rand = [arena.load_agent("random", game), arena.load_agent("random", game, label="b")]
    mixed = [rand[0], arena.load_agent("fixed", game, path=str(tmp_path / "policy.json"), strict=True)]
    assert array_face_for(game, rand, False, None)[0] is not None
    assert "need a State" in array_face_for(game, mixed, False, None)[1]
    assert array_face_for(game, rand, True, None)[0] is not None  # recorded on the face
    talker = Talker()
    assert "report decision info" in array_face_for(game, [rand[0], talker], True, None)[1]
    assert array_face_for(game, [rand[0], talker], False, None)[0] is not None  # unrecorded: nothing dropped
    ipd = arena.load_game("ipd(horizon=3)")
    assert "cannot record" in array_face_for(ipd, rand, True, None)[1]
    assert "timeout" in array_face_for(game, rand, False, 3.0)[1]
    assert "no array face" in array_face_for(arena.load_game("leduc_poker(players=3)"), rand, False, None)[1]
    with caplog.at_level(logging.DEBUG, logger="arena"):
        res = play_games(game, [rand[0], talker], 20, seed=0, record=True)
    assert "State path (trajectories are recorded and agent(s) talker report decision info)" in caplog.text
    assert all(r.trajectory is not None for r in res)
    assert {s.log_prob for r in res for s in r.trajectory.steps if s.player == r.seats.index("talker")} == {-0.5}


def test_debug_flag_says_which_path_ran(capsys):
    from arena.cli import main

    logger = logging.getLogger("arena")
    handlers, level = list(logger.handlers), logger.level
    try:
        assert (
            main(
                ["--debug", "match", "--game", "kuhn_poker", "--agents", "random", "random", "--games", "50", "--json"]
            )
            == 0
        )
        err = capsys.readouterr().err
        assert "kuhn_poker: array path (every agent decides from arrays)" in err
    finally:
        logger.handlers[:] = handlers
        logger.setLevel(level)


def test_a_new_table_is_played_at_once():
    """A solver agent's ``improve`` replaces its table; the array path must not play the old one."""
    game = arena.load_game("leduc_poker")
    from arena.plugins.agents.basic import FixedPolicyAgent, RandomAgent

    fast, slow = (
        FixedPolicyAgent(some_policy("leduc_poker", seed=1)),
        FixedPolicyAgent(some_policy("leduc_poker", seed=1)),
    )
    play_games(game, [fast, RandomAgent()], 300, seed=0)
    fast.table = slow.table = some_policy("leduc_poker", seed=2)
    a = play_games(game, [fast, RandomAgent()], 2000, seed=4)
    b = play_games(game, state_path([slow, RandomAgent()]), 2000, seed=4)
    assert outcomes(a) == outcomes(b)


def test_a_face_without_tables_records_by_key(monkeypatch):
    """A face that numbers no info states: each step's view is worked out from its key's game, none kept."""
    from arena.playing import array_match

    game = arena.load_game("leduc_poker")
    monkeypatch.setattr(game.array_face(), "tabled", False)
    rand = [arena.load_agent("random", game), arena.load_agent("random", game, label="b")]
    fast = play_games(game, rand, 300, seed=2, record=True)
    assert not array_match._VIEWS.get(game.array_face())
    slow = play_games(game, state_path(rand), 300, seed=2, record=True)
    assert recorded(fast) == recorded(slow)
