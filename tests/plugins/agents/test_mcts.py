"""The mcts agent: conformance, tactics and draws against perfect tic-tac-toe, information-set
search that never reads hidden cards, batched leaf evaluation, exact evaluation, refusals.
(100-game figures: ``arena bench mcts``, docs/results/mcts.md.)"""

from __future__ import annotations

import numpy as np
import pytest

from arena.agent import Observation
from arena.errors import ArenaError
from arena.exact.exploitability import exploitability
from arena.loading import load_agent, load_game
from arena.testing import check_agent
from arena.tools.bench.mcts import PerfectPlayer, seat_returns

TTT = "openspiel:tic_tac_toe"


def ttt_after(moves):
    game = load_game(TTT)
    s = game.new_initial_state()
    for m in moves:
        s.apply_action(m)
    return game, s


@pytest.mark.parametrize("game", [TTT, "leduc_poker", "kuhn_poker(players=3)"])
def test_mcts_passes_the_agent_conformance_kit(game):
    check_agent("mcts:simulations=30", game, games=3)


@pytest.mark.parametrize(
    "moves,best",
    [
        ([0, 3, 1, 4], 2),  # X: 0 1 _ / O: 3 4 -> X completes the top row
        ([0, 4, 8, 2], 6),  # O threatens 2-4-6: X must block at 6
    ],
)
def test_mcts_wins_and_blocks(moves, best):
    game, s = ttt_after(moves)
    agent = load_agent("mcts:simulations=400", game)
    obs = Observation(s, s.current_player(), np.random.default_rng(0), game.spec.full_name)
    assert agent.policy(obs)[best] == 1.0


def test_mcts_draws_every_game_against_perfect_play():
    game = load_game(TTT)
    perfect = PerfectPlayer(game)
    assert perfect.value(game.new_initial_state()) == 0.0
    assert len(perfect.values) == 4520  # non-terminal positions of the 5,478
    returns = seat_returns(game, load_agent("mcts:simulations=1000", game), perfect, 8, seed=3)
    assert np.all(returns == 0.0), returns


def test_information_set_search_does_not_read_the_opponents_card():
    """Two Leduc deals that differ only in the opponent's card look the same to player 0: the
    search (same seed) must give the same visit counts."""
    game = load_game("leduc_poker")
    agent = load_agent("mcts:simulations=200,temperature=1", game)
    policies = []
    for other in (1, 5):  # player 0 holds card 2; player 1 holds 1 or 5
        s = game.new_initial_state()
        s.apply_action(2)
        s.apply_action(other)
        policies.append(agent.policy(Observation(s, 0, np.random.default_rng(7), game.spec.full_name)))
    assert policies[0] == policies[1]
    assert sum(policies[0].values()) == pytest.approx(1.0)


def test_leaves_of_a_decision_batch_are_valued_together(tmp_path):
    from arena.plugins.agents.neural import NeuralAgent

    game = load_game(TTT)
    NeuralAgent(game, hidden=16, seed=0).save(tmp_path / "net")
    agent = load_agent(f"mcts:simulations=6,value={tmp_path / 'net'}", game)
    calls = []
    inner = agent.evaluate
    agent.evaluate = lambda states, rngs: calls.append(len(states)) or inner(states, rngs)
    observations = []
    for k in range(4):
        _, s = ttt_after([k])
        observations.append(Observation(s, 1, np.random.default_rng(k), TTT))
    actions, infos = agent.act_batch_info(observations)
    assert len(calls) <= 6 and max(calls) == 4  # one network pass per round for the whole batch
    assert all(a in o.legal_actions for a, o in zip(actions, observations))
    assert all(sum(i["visits"].values()) == 6 for i in infos)


def test_visit_counts_are_an_exact_policy_on_kuhn():
    game = load_game("kuhn_poker")
    e = exploitability(game, load_agent("mcts:simulations=50,temperature=1", game))
    assert 0.0 <= e < 1.0


def test_refusals_are_one_line():
    with pytest.raises(ArenaError, match="needs a tree view"):
        load_agent("mcts", load_game("chicken"))
    with pytest.raises(ArenaError, match="simulations and rollouts must be >= 1"):
        load_agent("mcts:simulations=0", load_game(TTT))
