"""The subgame-perfect ultimatum/dictator agent against backward induction done here by hand:
the proposer offers the least its partner accepts, the responder accepts exactly the offers at
or above its threshold, the dictator gives 0, and SPE against SPE earns the known payoffs."""

from __future__ import annotations

import pytest

from arena.agent import Observation
from arena.errors import ArenaError
from arena.loading import load_agent, load_game
from arena.playing.match import play_games
from arena.testing import check_agent


def answers(agent, game):
    """The responder's answer to every offer: True = accept."""
    out = {}
    for x in range(game.pie + 1):
        s = game.new_initial_state()
        s.apply_action(x)
        out[x] = agent.act(Observation(s, 1)) == game.accept
    return out


def best_offers(game, accepts):
    """Backward induction's last step: the proposer's best offers against this responder."""
    value = {x: (game.pie - x if accepts[x] else 0) for x in accepts}
    top = max(value.values())
    return [x for x, v in value.items() if v == top]


@pytest.mark.parametrize("threshold", [0, 1, 3])
def test_threshold_responder_accepts_exactly_the_offers_at_or_above_it(threshold):
    g = load_game("ultimatum")
    agent = load_agent(f"subgame_perfect:threshold={threshold}", g)
    assert answers(agent, g) == {x: x >= threshold for x in range(11)}


@pytest.mark.parametrize("threshold,payoffs", [(1, [9.0, 1.0]), (0, [10.0, 0.0])])
def test_spe_against_spe_gives_the_equilibrium_payoffs(threshold, payoffs):
    g = load_game("ultimatum")
    spec = f"subgame_perfect:threshold={threshold}"
    proposer, responder = load_agent(spec, g), load_agent(spec, g)
    offer = proposer.act(Observation(g.new_initial_state(), 0))
    # the offer is the minimum the equilibrium responder accepts, and the proposer's best reply to it
    accepts = answers(responder, g)
    assert offer == min(x for x, ok in accepts.items() if ok) == threshold
    assert best_offers(g, accepts) == [threshold]
    # the responder's rule is sequentially rational: accepting any positive offer beats 0
    assert all(accepts[x] for x in range(1, 11))
    results = play_games(g, [proposer, responder], num_games=4, seed=3)
    assert [r.returns for r in results] == [payoffs] * 4


def test_repeated_ultimatum_plays_the_stage_equilibrium_every_round():
    g = load_game("ultimatum(pie=8,rounds=4)")
    spe = load_agent("subgame_perfect", g)
    (r,) = play_games(g, [spe, spe], num_games=1, seed=0, record=True)
    assert r.returns == [28.0, 4.0] and r.info["acceptance"] == 1.0
    assert [s.action for s in r.trajectory.steps if s.player == 0] == [1, 1, 1, 1]


def test_spe_responder_rejects_a_low_offer_from_another_proposer():
    g = load_game("ultimatum")
    s = g.new_initial_state()
    s.apply_action(0)
    assert load_agent("subgame_perfect", g).act(Observation(s, 1)) == g.reject
    assert load_agent("subgame_perfect:threshold=0", g).act(Observation(s, 1)) == g.accept


@pytest.mark.parametrize("name", ["dictator", "dictator(pie=100,rounds=3)"])
def test_dictator_gives_nothing(name):
    g = load_game(name)
    spe = load_agent("subgame_perfect", g)
    (r,) = play_games(g, [spe, load_agent("random", g)], num_games=1, seed=0)
    assert r.returns == [float(g.pie * g.rounds), 0.0] and r.info["offer_share"] == 0.0


def test_conformance_and_bad_use():
    check_agent("subgame_perfect", "ultimatum(rounds=2)", games=8)
    check_agent("subgame_perfect", "dictator", games=4)
    with pytest.raises(ArenaError, match="plays ultimatum and dictator"):
        load_agent("subgame_perfect", load_game("ipd"))
    with pytest.raises(ArenaError, match="'threshold' must be an integer 0..10"):
        load_agent("subgame_perfect:threshold=11", load_game("ultimatum"))


@pytest.mark.parametrize("threshold", [0, 1, 5])
def test_every_threshold_profile_is_a_nash_equilibrium_but_only_0_and_1_are_subgame_perfect(threshold):
    """Exact NashConv (arena.exact) on the tree: (offer t, accept >= t) is a Nash equilibrium for
    every t (no unilateral deviation pays on the path), but for t > 1 the responder's rejection
    of the offers 1..t-1 is not a best reply in those subgames: the threat is not credible."""
    from arena.exact.exploitability import nash_conv

    g = load_game("ultimatum")
    agent = load_agent(f"subgame_perfect:threshold={threshold}", g)
    assert nash_conv(g, agent) == pytest.approx(0.0)
    accepts = answers(agent, g)
    not_credible = [x for x in range(1, 11) if not accepts[x]]  # rejecting x > 0 forgoes x
    assert (not not_credible) == (threshold <= 1)
