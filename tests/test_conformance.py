"""Every registered game, with default parameters, is a correct PettingZoo AEC env (PettingZoo's
own ``api_test`` and ``seed_test``; ``parallel_api_test`` and ``parallel_seed_test`` on the
parallel env of every simultaneous-move game) and plays 200 random games through the match
runner."""
from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

import arena
from arena.registry import get_registry

GAMES = get_registry().names("game")


def test_registry_has_the_card_games():
    assert {"kuhn_poker", "leduc_poker", "liars_dice"} <= set(GAMES)


SIMULTANEOUS = [n for n in GAMES if arena.load_game(n).spec.simultaneous] + ["openspiel:goofspiel(num_cards=4)"]


def test_simultaneous_games_are_marked():
    assert {"ipd", "chicken", "stag_hunt", "coin_game", "public_goods", "trust_split"} <= set(SIMULTANEOUS)
    assert not {"kuhn_poker", "leduc_poker", "werewolf", "deal_or_no_deal"} & set(SIMULTANEOUS)
    assert not arena.load_game("trust_split(talk=true)").spec.simultaneous  # the talk phase is turn-based


@pytest.mark.parametrize("name", GAMES)
def test_pettingzoo_api(name):
    env = arena.make_env(name)
    api_test(env, num_cycles=300)
    seed_test(lambda: arena.make_env(name), num_cycles=300)


@pytest.mark.parametrize("name", SIMULTANEOUS)
def test_pettingzoo_parallel_api(name):
    parallel_api_test(arena.make_parallel_env(name), num_cycles=300)
    parallel_seed_test(lambda: arena.make_parallel_env(name), num_cycles=300)


def test_parallel_env_plays_joint_moves():
    """One parallel step is one round of the matrix game: both rewards at once, from the game's
    payoff table (IPD: mutual defection costs each player 2)."""
    env = arena.make_parallel_env("ipd")
    obs, infos = env.reset(seed=0)
    assert set(obs) == {"player_0", "player_1"} and obs["player_0"]["action_mask"].tolist() == [1, 1]
    game = arena.load_game("ipd")
    state = game.new_initial_state()
    state.apply_actions([1, 1])
    _, rewards, terms, truncs, _ = env.step({"player_0": 1, "player_1": 1})
    assert [rewards["player_0"], rewards["player_1"]] == state.returns()
    assert not any(terms.values()) and env.agents == ["player_0", "player_1"]
    with pytest.raises(arena.ArenaError, match="turn-based decisions.*arena.make_env"):
        arena.make_parallel_env("kuhn_poker")


def test_step_before_reset_is_pettingzoo_order_error():
    env = arena.make_env("kuhn_poker")
    with pytest.raises(AssertionError, match="reset\\(\\) needs to be called before step"):
        env.step(0)
    with pytest.raises(AttributeError, match="before reset"):
        env.agent_selection


def test_reset_without_seed_continues_the_stream():
    """Gymnasium convention: reset(seed) seeds, a later reset() draws the next episode from the
    same stream — so two envs seeded alike replay the same sequence of episodes."""
    def episodes(env, n):
        out = []
        for k in range(n):
            env.reset(seed=5 if k == 0 else None)
            rng = np.random.default_rng(k)
            trace = []
            for agent in env.agent_iter():
                obs, rew, term, trunc, _ = env.last()
                trace.append((agent, obs["observation"].tolist(), rew))
                env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            out.append(trace)
        return out

    a, b = episodes(arena.make_env("leduc_poker"), 6), episodes(arena.make_env("leduc_poker"), 6)
    assert a == b
    assert len({str(t[:2]) for t in a}) > 1  # later episodes are new deals, not replays


@pytest.mark.parametrize("name", GAMES)
def test_200_random_games(name):
    game = arena.load_game(name)
    agents = [arena.load_agent("random", game) for _ in range(game.spec.num_players)]
    results = arena.play(game, agents, games=200, seed=7, rotate_seats=True)
    assert len(results) == 200
    assert all(r.forfeit is None for r in results), [r.forfeit for r in results if r.forfeit][:3]
    for r in results:
        assert len(r.returns) == game.spec.num_players
        assert all(game.spec.min_utility - 1e-9 <= x <= game.spec.max_utility + 1e-9 for x in r.returns)
        if game.spec.zero_sum:
            assert abs(sum(r.returns)) < 1e-9


@pytest.mark.parametrize("name", ["kuhn_poker(players=3)", "openspiel:tic_tac_toe", "openspiel:goofspiel(num_cards=4)"])
def test_parametrized_and_imported_games(name):
    env = arena.make_env(name)
    api_test(env, num_cycles=200)
    game = arena.load_game(name)
    results = arena.play(game, [arena.load_agent("random", game) for _ in range(game.spec.num_players)], games=50, seed=1)
    assert all(r.forfeit is None for r in results)


def test_env_seeding_is_reproducible():
    def rollout(seed):
        env = arena.make_env("leduc_poker")
        env.reset(seed=seed)
        rng = np.random.default_rng(0)
        trace = []
        for agent in env.agent_iter():
            obs, rew, term, trunc, _ = env.last()
            trace.append((agent, obs["observation"].tolist(), rew))
            action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
        return trace

    assert rollout(3) == rollout(3)
    assert rollout(3) != rollout(4)


def test_card_games_use_openspiel_info_state_keys():
    import pyspiel

    game = arena.load_game("leduc_poker")
    state = game.new_initial_state()
    ref = pyspiel.load_game("leduc_poker").new_initial_state()
    for a in (0, 3, 1, 2):
        state.apply_action(a)
        ref.apply_action(a)
    assert state.information_state_key(0) == ref.information_state_string(0)
    assert state.information_state_key(1) == ref.information_state_string(1)


def test_readable_renderings():
    game = arena.load_game("kuhn_poker")
    s = game.new_initial_state()
    s.apply_action(2)  # player 0: King
    s.apply_action(0)  # player 1: Jack
    s.apply_action(1)  # player 0 bets
    text = s.observation_text(1)
    assert "You hold the Jack" in text and "bets" in text and "Legal: fold, call" in text
    assert [s.action_label(1, a) for a in s.legal_actions()] == ["fold", "call"]
    assert "King" not in text  # the opponent's card is private


def test_pettingzoo_adapter_roundtrip():
    """arena → AEC → arena: an arena env wrapped back as a game plays like the original."""
    from arena.adapters.pettingzoo import from_pettingzoo

    game = from_pettingzoo(lambda: arena.make_env("kuhn_poker"), name="kuhn-via-aec", min_utility=-2, max_utility=2, zero_sum=True)
    assert game.spec.num_players == 2 and game.spec.num_distinct_actions == 2 and not game.spec.tree
    results = arena.play(game, [arena.load_agent("random", game)] * 2, games=100, seed=0)
    assert all(r.forfeit is None and r.returns[0] == -r.returns[1] and abs(r.returns[0]) in (1, 2) for r in results)


def test_kuhn_final_view_hides_folded_cards():
    game = arena.load_game("kuhn_poker")
    for moves, revealed in (([1, 0], False), ([1, 1], True), ([0, 0], True), ([0, 1, 0], False)):
        s = game.new_initial_state()
        for a in [2, 0] + moves:  # player 0 holds the King, player 1 the Jack
            s.apply_action(a)
        assert s.is_terminal()
        assert ("King" in s.observation_text(1)) == revealed, (moves, s.observation_text(1))
