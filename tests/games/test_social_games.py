"""Social dilemmas: payoffs, rules and renderings checked against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

import arena
from arena.agent import Observation
from arena.errors import ArenaError
from arena.game import CHANCE, SIMULTANEOUS, TERMINAL

C, D = 0, 1


def test_ipd_payoffs_and_observation_states():
    game = arena.load_game("ipd", horizon=3)
    s = game.new_initial_state()
    assert s.current_player() == SIMULTANEOUS and s.legal_actions(0) == [C, D]
    assert s.observation_tensor(0).tolist() == [[1, 0, 0, 0, 0]]  # start
    s.apply_actions([C, D])
    assert s.returns() == [-3.0, 0.0]
    assert np.argmax(s.observation_tensor(0)) == 2 and np.argmax(s.observation_tensor(1)) == 3  # CD / DC
    s.apply_actions([D, D])
    s.apply_actions([C, C])
    assert s.is_terminal() and s.returns() == [-6.0, -3.0]
    assert s.outcome_info()["cooperation"] == pytest.approx([2 / 3, 1 / 3])
    text = s.observation_text(0)
    assert "cooperate" in text and "Totals: you -6" in text


def test_ipd_brief_text_states_only_the_co_players_moves():
    game = arena.load_game("ipd(horizon=3,text=brief,memory=2)")
    assert game.spec.full_name == "ipd(horizon=3,memory=2,text=brief)"
    s = game.new_initial_state()
    assert s.observation_text(0) == "First round."
    s.apply_actions([C, D])
    assert s.observation_text(0) == "The other player's last move: defect."
    assert s.observation_text(1) == "The other player's last move: cooperate."
    s.apply_actions([D, C])
    assert s.observation_text(0) == "The other player's last 2 moves, oldest first: defect, cooperate."
    s.apply_actions([C, C])
    assert s.observation_text(0) == "Game over."
    with pytest.raises(ArenaError, match="text must be 'full' or 'brief'"):
        arena.load_game("ipd(text=short)")


def test_presets_and_payoff_parameter():
    sh = arena.load_game("stag_hunt")
    s = sh.new_initial_state()
    s.apply_actions([0, 1])
    assert s.returns() == [0.0, 3.0] and s.action_label(0, 0) == "stag"
    ax = arena.load_game("ipd(payoffs=[3,0,5,1])")
    s = ax.new_initial_state()
    s.apply_actions([D, C])
    assert s.returns() == [5.0, 0.0]
    assert arena.load_game(ax.spec.full_name).payoffs == (3.0, 0.0, 5.0, 1.0)  # full name round-trips
    with pytest.raises(ArenaError, match="four numbers"):
        arena.load_game("ipd(payoffs=[1,2])")
    with pytest.raises(ArenaError, match="discount must be in"):
        arena.load_game("ipd(discount=1.5)")


def test_discount_is_a_continuation_chance_node():
    game = arena.load_game("ipd", discount=0.75, horizon=50)
    s = game.new_initial_state()
    s.apply_actions([C, C])
    assert s.current_player() == CHANCE and s.chance_outcomes() == [(0, 0.75), (1, 0.25)]
    s.apply_action(1)
    assert s.current_player() == TERMINAL
    lengths = [r.info["rounds"] for r in arena.play(game, [arena.load_agent("random", game)] * 2, games=400, seed=0)]
    assert np.mean(lengths) == pytest.approx(4.0, rel=0.15)  # geometric with mean 1 / (1 - 0.75)


def test_scripted_ipd_agents():
    game = arena.load_game("ipd", horizon=10)
    tft, ad, ac = (arena.load_agent(k, game) for k in ("tit_for_tat", "always_defect", "always_cooperate"))
    r = arena.play(game, [tft, ad], games=1)[0]
    assert r.returns == [-3.0 + 9 * -2.0, 0.0 + 9 * -2.0]
    r = arena.play(game, [tft, ac], games=1)[0]
    assert r.returns == [-10.0, -10.0]
    with pytest.raises(ArenaError, match="does not support game 'kuhn_poker'"):
        arena.load_agent("tit_for_tat", arena.load_game("kuhn_poker"))


def _coin(pos, coin, colour):
    game = arena.load_game("coin_game")
    s = game.new_initial_state(seed=0)
    s.pos, s.coin, s.coin_colour = [tuple(p) for p in pos], tuple(coin), colour
    return s


def test_coin_game_rules():
    # red (0) at (0,0) steps right onto blue's coin at (0,1): red +1, blue -2
    s = _coin([(0, 0), (2, 2)], (0, 1), 1)
    s.apply_actions([3, 0])
    assert s.returns() == [1.0, -2.0]
    assert s.coin_colour == 0 and s.coin not in s.pos  # respawned, colour flipped, not under an agent
    # both arrive at once on red's coin: both +1, and blue's pick costs red 2
    s = _coin([(0, 0), (0, 2)], (0, 1), 0)
    s.apply_actions([3, 2])
    assert s.returns() == [-1.0, 1.0]
    assert s.outcome_info()["own_coin_rate"] == [1.0, 0.0]
    # moves wrap around the torus
    s = _coin([(0, 0), (1, 1)], (2, 2), 0)
    s.apply_actions([0, 2])
    assert s.pos == [(2, 0), (1, 0)]


def test_coin_game_observation_is_egocentric_and_seeded():
    s = _coin([(0, 0), (1, 2)], (2, 2), 1)
    x0, x1 = s.observation_tensor(0), s.observation_tensor(1)
    assert x0.shape == (4, 3, 3) and x0[0, 1, 1] == 1 and x1[0, 1, 1] == 1  # each sees itself at the centre
    assert x0[3].sum() == 1 and x1[2].sum() == 1  # blue coin: the other's for red, own for blue
    game = arena.load_game("coin_game")
    a, b = game.new_initial_state(seed=5), game.new_initial_state(seed=5)
    assert a.pos == b.pos and a.coin == b.coin
    assert "R" in a.observation_text(0) and "B" in a.observation_text(0)


def test_take_every_coin_beats_cooperator():
    game = arena.load_game("coin_game", horizon=30)
    res = arena.play(
        game,
        [arena.load_agent("take_every_coin", game), arena.load_agent("always_cooperate", game)],
        games=40,
        seed=0,
        rotate_seats=True,
    )
    mean = np.mean([r.returns[r.seats.index("take_every_coin")] for r in res])
    coop = np.mean([r.returns[r.seats.index("always_cooperate")] for r in res])
    assert mean > 5 and coop < 0
    own = [r.info["own_coin_rate"][r.seats.index("always_cooperate")] for r in res]
    assert np.nanmean(own) == 1.0


def test_public_goods_payoff_formula():
    game = arena.load_game("public_goods", players=4, endowment=20, multiplier=1.6, horizon=1)
    s = game.new_initial_state()
    s.apply_actions([20, 0, 10, 10])
    pot = 1.6 / 4 * 40
    assert s.returns() == pytest.approx([0 + pot, 20 + pot, 10 + pot, 10 + pot])
    assert game.spec.min_utility == pytest.approx(8.0) and game.spec.max_utility == pytest.approx(20 + 0.4 * 60)
    x = s.observation_tensor(1)
    assert x.tolist() == pytest.approx([0.0, 0.5, 0.5, 1.0, 0.0])  # own first, then seats after me


def test_trust_split_rules():
    game = arena.load_game("trust_split", horizon=2)
    s = game.new_initial_state()
    assert s.current_player() == CHANCE and len(s.chance_outcomes()) == 6
    s.apply_action(3 * 1 + 0)  # paper vs rock: player 0 holds the upper hand
    assert s.observation_tensor(0)[6] == 1 and s.observation_tensor(1)[6] == 0
    s.apply_actions([10, 0])  # cooperative: welfare 100
    assert s.returns() == [100.0, 0.0]
    s.apply_action(3 * 0 + 1)  # rock vs paper: player 1 upper
    s.apply_actions([10, 10])  # both grab: 5 coins each
    assert s.returns() == [105.0, 50.0]
    assert s.is_terminal()
    info = s.outcome_info()
    assert info["joint_return"] == 155.0 and info["cooperation"] == [0.0, 1.0]


def test_trust_split_talk_mode_plays_with_text():
    game = arena.load_game("trust_split(talk=true)", horizon=3)
    assert game.spec.text_decisions and not game.public_hands
    s = game.new_initial_state()
    s.apply_action(3 * 2 + 1)
    assert s.current_player() == 0 and s.decision_kind(0) == "text"
    s.apply_action("I have scissors, the upper hand.")
    assert s.current_player() == 1
    s.apply_action("ok")
    assert s.current_player() == SIMULTANEOUS
    assert "I have scissors" in s.observation_text(1) and "hidden" in s.observation_text(1)
    agents = [arena.load_agent("greedy_splitter", game), arena.load_agent("always_cooperate", game)]
    res = arena.play(game, agents, games=20, seed=0, record=True)
    assert all(r.forfeit is None for r in res)
    assert any("said" not in t and "claim" in t for t in res[0].transcript)


def test_social_games_are_conformant_with_non_default_parameters():
    from pettingzoo.test import api_test

    for name in ("ipd(memory=3,discount=0.9)", "coin_game(size=4)", "public_goods(players=3)"):
        api_test(arena.make_env(name), num_cycles=100)


def test_scripted_observation_decoding_in_public_goods_and_trust_split():
    pg = arena.load_game("public_goods", players=3, endowment=4)
    s = pg.new_initial_state()
    tft = arena.load_agent("tit_for_tat", pg)
    assert tft.act(Observation(s, 0)) == 4
    s.apply_actions([4, 0, 2])
    assert tft.act(Observation(s, 0)) == 1  # others gave (0 + 2) / 2 on average
    ts = arena.load_game("trust_split")
    s = ts.new_initial_state()
    s.apply_action(3 * 0 + 2)  # rock beats scissors: player 0 upper
    tft = arena.load_agent("tit_for_tat", ts)
    assert tft.act(Observation(s, 0)) == 10 and tft.act(Observation(s, 1)) == 0
    s.apply_actions([10, 10])  # player 1 grabbed with the lower hand
    s.apply_action(3 * 2 + 0)  # now player 0 is lower
    assert tft.act(Observation(s, 0)) == 10  # retaliates


def test_ipd_probe_reaches_every_memory_state_also_with_a_continuation_chance():
    from arena.agent import PolicyAgent

    class TitForTatPolicy(PolicyAgent):
        def policy(self, obs):
            last = int(np.argmax(np.asarray(obs.tensor).reshape(-1, 5)[-1]))  # start, CC, CD, DC, DD
            return {C: 0.0, D: 1.0} if last in (2, 4) else {C: 1.0, D: 0.0}

    want = {
        "probe/P(C|start)": 1.0,
        "probe/P(C|CC)": 1.0,
        "probe/P(C|CD)": 0.0,
        "probe/P(C|DC)": 1.0,
        "probe/P(C|DD)": 0.0,
    }
    for name in ("ipd", "ipd(discount=0.9)", "ipd(discount=0.9,memory=2)"):
        assert arena.load_game(name).agent_metrics(TitForTatPolicy()) == want, name


def test_trust_split_brief_text_shows_last_round_reputation_hand_and_talk():
    game = arena.load_game("trust_split(talk=true,text=brief)", horizon=3)
    assert game.spec.params == {"horizon": 3, "talk": True, "text": "brief"}
    s = game.new_initial_state()
    s.apply_action(3 * 1 + 0)  # paper vs rock: player 0 upper
    assert s.observation_text(0) == "Now: you paper."
    s.apply_action("paper")
    assert s.observation_text(1) == "Now: you rock. Other said 'paper'."
    s.apply_action("rock")
    s.apply_actions([10, 2])  # the lower hand claimed 2
    s.apply_action(3 * 2 + 0)  # scissors vs rock: player 1 upper
    assert s.observation_text(0) == (
        "Last: you paper, other said 'rock', you upper, claims 10/2. Other lower claimed 2. Now: you scissors."
    )
    assert s.observation_text(1) == "Last: you rock, other said 'paper', you lower, claims 2/10. Now: you rock."
    with pytest.raises(ArenaError, match="text must be"):
        arena.load_game("trust_split(text=short)")


def test_trust_split_hinted_text_says_what_a_named_hand_would_mean():
    game = arena.load_game("trust_split(talk=true,text=hinted)", horizon=3)
    s = game.new_initial_state()
    s.apply_action(3 * 1 + 0)  # paper vs rock: player 0 upper
    s.apply_action("Paper.")
    assert s.observation_text(1) == "Now: you rock. Other said 'Paper.' (if true, you lower)."
    s.apply_action("paper")  # a lie: player 1 holds rock
    assert s.observation_text(0) == "Now: you paper. You said 'Paper.'. Other said 'paper' (if true, a lie)."
    t = game.new_initial_state()
    t.apply_action(3 * 1 + 0)
    t.apply_action("I hold paper")  # not a hand's name: no hint
    assert t.observation_text(1) == "Now: you rock. Other said 'I hold paper'."
    t.apply_action("scissors")
    assert t.observation_text(0).endswith("Other said 'scissors' (if true, you lower).")


def test_hand_teller_names_its_hand_and_claims_uniformly():
    game = arena.load_game("trust_split(talk=true,text=brief)")
    agents = [arena.load_agent("hand_teller", game), arena.load_agent("greedy_splitter", game)]
    res = arena.play(game, agents, games=40, seed=0, record=True)
    claims, told = [], 0
    for r in res:
        assert r.forfeit is None
        me = r.seats.index("hand_teller")
        for step in r.trajectory.steps:
            if step.player != me:
                continue
            if step.observation.decision == "text":
                told += 1
                assert f"Now: you {step.action}." in step.observation.text
            else:
                claims.append(step.action)
    assert told == 400 and len(claims) == 400 and set(claims) == set(range(11))
    assert abs(np.mean(claims) - 5.0) < 0.5
