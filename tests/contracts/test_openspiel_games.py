"""arena's games as OpenSpiel Python games: OpenSpiel's own exploitability / NashConv of a policy
on an arena game equals arena's exact one to 1e-9, and OpenSpiel's CFR runs on an arena game,
reaching exactly the exploitability arena's own CFR reaches in as many iterations."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import cfr as os_cfr  # noqa: E402
from open_spiel.python.algorithms import exploitability as os_exploitability  # noqa: E402

from arena.adapters.openspiel_games import register  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.exact.exploitability import exploitability, nash_conv  # noqa: E402
from arena.loading import load_game  # noqa: E402
from arena.policy import TabularPolicy  # noqa: E402

TALK = "table_talk(game=kuhn_poker,messages=2)"  # Kuhn with two latent table-talk messages before each move
TALK3 = "table_talk(game=kuhn_poker(players=3),messages=1)"


def _table(policy) -> dict[str, dict[int, float]]:
    """An OpenSpiel tabular policy as arena's table (OpenSpiel keys by information-state string)."""
    return {
        key: {
            int(a): float(policy.action_probability_array[i][a]) for a in np.flatnonzero(policy.legal_actions_mask[i])
        }
        for key, i in policy.state_lookup.items()
    }


def _random_policy(game, seed: int):
    policy = os_policy.TabularPolicy(game)
    rng = np.random.default_rng(seed)
    for i, legal in enumerate(policy.legal_actions_mask):
        w = rng.random(len(legal)) * legal
        policy.action_probability_array[i] = w / w.sum()
    return policy


@pytest.mark.parametrize("name", [TALK, TALK3])
def test_openspiel_measures_arena_policies_as_arena_does(name):
    game = pyspiel.load_game(register(name))
    assert game.get_type().short_name.startswith("arena_table_talk") and game.num_players() in (2, 3)
    ours = load_game(name)
    policies = [os_policy.TabularPolicy(game), _random_policy(game, 0)]  # uniform, random
    for policy in policies if game.num_players() == 2 else policies[1:]:  # (a 3-player NashConv is slow in OpenSpiel)
        table = TabularPolicy(name, _table(policy))
        if game.num_players() == 2:
            assert abs(os_exploitability.exploitability(game, policy) - exploitability(ours, table)) < 1e-9
        else:  # OpenSpiel's exploitability is two-player only; NashConv is n-player
            assert abs(os_exploitability.nash_conv(game, policy) - nash_conv(ours, table)) < 1e-9


def test_openspiel_cfr_runs_on_an_arena_game_and_matches_arena_cfr():
    from arena.plugins.agents.cfr.run import make_solve, run_solve

    game, ours = pyspiel.load_game(register(TALK)), load_game(TALK)
    solver = os_cfr.CFRSolver(game)  # alternating updates, uniform averaging: vanilla CFR
    for _ in range(10):
        solver.evaluate_and_update_policy()
    average = solver.average_policy()
    theirs = os_exploitability.exploitability(game, average)
    assert abs(theirs - exploitability(ours, TabularPolicy(TALK, _table(average)))) < 1e-9
    arena_cfr = make_solve(ours, "cfr", updates="alternating")
    run_solve(arena_cfr, 10)
    assert abs(theirs - exploitability(ours, arena_cfr.policy())) < 1e-9
    assert theirs < exploitability(ours, TabularPolicy(TALK, {}))  # below uniform play


def test_games_without_a_tree_view_are_refused():
    with pytest.raises(ArenaError, match="no tree view"):
        register("werewolf")
