"""Tree compiler: sizes against independent counts, layout invariants, a pure-Python game,
and clear refusals."""

import numpy as np
import pytest

import arena
from arena.errors import ArenaError
from arena.exact.tree import backward, compile_tree, edge_factors, get_tree
from arena.game import TERMINAL, Game, GameSpec, State


def count_histories(state) -> int:
    if state.is_terminal():
        return 1
    actions = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
    return 1 + sum(count_histories(state.child(a)) for a in actions)


@pytest.mark.parametrize("name,infosets", [("kuhn_poker", 12), ("kuhn_poker(players=3)", 48), ("leduc_poker", 936)])
def test_sizes_match_openspiel(name, infosets):
    game = arena.load_game(name)
    tree = compile_tree(game)
    assert tree.num_nodes == count_histories(game.pyspiel_game.new_initial_state())
    assert tree.num_infosets == infosets
    assert tree.num_slots == int(tree.info_size.sum())
    report = tree.size_report()
    assert report["histories"] == tree.num_nodes and report["infosets"] == infosets


def test_layout_invariants():
    tree = compile_tree(arena.load_game("leduc_poker"))
    depth = np.empty(tree.num_nodes, dtype=int)
    for d, (s, e) in enumerate(tree.levels):
        depth[s:e] = d
    nonroot = tree.parent >= 0
    assert (depth[tree.parent[nonroot]] == depth[nonroot] - 1).all()  # parents one level up
    for s, e in tree.levels[1:]:
        assert (np.diff(tree.parent[s:e]) >= 0).all()  # siblings contiguous
    for p, (s0, s1) in enumerate(tree.player_slots):  # slots grouped by player
        assert (tree.info_player[tree.slot_info[s0:s1]] == p).all()
    assert (tree.utility[:, tree.player != TERMINAL] == 0).all()
    assert np.allclose(tree.utility.sum(axis=0), 0)  # zero-sum terminals
    for i in range(0, tree.num_infosets, 97):  # keys are OpenSpiel's
        state = tree.state_of(i, arena.load_game("leduc_poker"))
        assert state.pyspiel_state.information_state_string(int(tree.info_player[i])) == tree.info_keys[i]


def test_uniform_value_matches_openspiel():
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import expected_game_score

    game = arena.load_game("kuhn_poker(players=3)")
    tree = get_tree(game)
    values = [backward(tree, edge_factors(tree, tree.uniform_policy()), tree.utility[p].copy())[0] for p in range(3)]
    pg = game.pyspiel_game
    expected = expected_game_score.policy_value(pg.new_initial_state(), [os_policy.UniformRandomPolicy(pg)] * 3)
    assert np.allclose(values, expected, atol=1e-12)


class _PenniesState(State):
    """Turn-based matching pennies in pure Python: player 1 does not see player 0's coin."""

    def __init__(self, moves=(), leak_actions=False):
        self.moves = tuple(moves)
        self.leak = leak_actions

    def current_player(self):
        return len(self.moves) if len(self.moves) < 2 else TERMINAL

    def legal_actions(self, player=None):
        if self.leak and len(self.moves) == 1 and self.moves[0] == 1:
            return [0, 1, 2]  # same key, different actions: not a valid info state
        return [0, 1]

    def apply_action(self, action):
        self.moves += (int(action),)

    def returns(self):
        r = 1.0 if self.moves[0] == self.moves[1] else -1.0
        return [r, -r]

    def clone(self):
        return _PenniesState(self.moves, self.leak)

    def information_state_key(self, player):
        return f"p{player}"

    def num_players(self):
        return 2


class Pennies(Game):
    def __init__(self, tree=True, leak_actions=False):
        self.leak = leak_actions
        self.spec = GameSpec("pennies", 2, 3, (0,), -1.0, 1.0, True, 2, tree=tree)

    def new_initial_state(self, seed=None):
        return _PenniesState(leak_actions=self.leak)


def test_pure_python_game_compiles_and_solves():
    from arena.exact.exploitability import nash_conv

    game = Pennies()
    tree = compile_tree(game)
    assert (tree.num_nodes, tree.num_infosets, tree.num_slots) == (7, 2, 4)
    assert nash_conv(game, lambda state, player: {0: 0.5, 1: 0.5}) == pytest.approx(0.0, abs=1e-12)
    assert nash_conv(game, lambda state, player: {0: 1.0}) == pytest.approx(2.0)


def test_refusals_are_clear():
    with pytest.raises(ArenaError, match="no tree view"):
        compile_tree(Pennies(tree=False))
    with pytest.raises(ArenaError, match="perfect-recall"):
        compile_tree(Pennies(leak_actions=True))
    with pytest.raises(ArenaError, match=r"more than 1,000 histories.*os-mccfr or es-mccfr"):
        compile_tree(arena.load_game("liars_dice"), max_nodes=1000)


def test_get_tree_compiles_once():
    game = arena.load_game("kuhn_poker")
    assert get_tree(game) is get_tree(game)
