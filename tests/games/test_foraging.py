"""Level-based foraging: lb-foraging's rules on hand-placed states (joint loading, level-weighted
rewards, the failed-load penalty, simultaneous moves and collisions), spawning constraints and
bad parameters."""

from __future__ import annotations

import numpy as np
import pytest

import arena
from arena.errors import ArenaError

NONE, NORTH, SOUTH, WEST, EAST, LOAD = range(6)


def placed(spec: str, agents, levels, food, food_levels):
    s = arena.load_game(spec).new_initial_state(0)
    s.pos, s.levels = list(agents), list(levels)
    s.food, s.food_level, s.eaten = list(food), list(food_levels), [False] * len(food)
    s.total_level = float(sum(food_levels))
    return s


def test_a_level_two_item_needs_both_level_one_agents():
    s = placed("foraging(coop=true,max_level=1)", [(2, 1), (2, 3)], [1, 1], [(2, 2)], [2])
    s.apply_actions([LOAD, NONE])  # alone: level 1 < 2, nothing
    assert s.returns() == [0.0, 0.0] and not s.is_terminal()
    s.apply_actions([LOAD, LOAD])  # together: collected, 1/2 each, and the only item is gone
    assert s.returns() == [0.5, 0.5] and s.is_terminal()
    assert s.outcome_info() == {"eaten": 1, "food": 1, "steps": 2, "loads": [1, 1]}


def test_rewards_are_level_weighted_and_failed_loads_pay_the_penalty():
    s = placed("foraging(food=2,penalty=0.1)", [(1, 2), (0, 1)], [2, 1], [(1, 1), (3, 3)], [3, 1])
    s.apply_actions([LOAD, NONE])  # agent 0 (level 2) alone on the level-3 item: fails
    assert s.returns() == pytest.approx([-0.1, 0.0])
    s.apply_actions([LOAD, LOAD])  # both adjacent to (1,1): 2*3/(3*4) and 1*3/(3*4)
    assert s.returns() == pytest.approx([-0.1 + 0.5, 0.25])
    assert not s.is_terminal() and s.observation_tensor(0)[:3].tolist() == [-1, -1, 0]


def test_moves_are_simultaneous_with_lb_foragings_collisions():
    s = placed("foraging", [(0, 0), (0, 2)], [1, 1], [(2, 2)], [1])
    s.apply_actions([EAST, WEST])  # both want (0, 1): neither moves
    assert s.pos == [(0, 0), (0, 2)]
    s.apply_actions([NORTH, NONE])  # off the grid: stays
    assert s.pos == [(0, 0), (0, 2)]
    s.apply_actions([NONE, SOUTH])
    s.apply_actions([NONE, SOUTH])  # onto the item at (2, 2): stays at (1, 2)
    assert s.pos == [(0, 0), (1, 2)]
    s.apply_actions([EAST, NONE])
    s.apply_actions([NONE, NORTH])  # (0, 2) is free: moves
    s.apply_actions([EAST, NONE])  # into a standing agent's cell: stays
    assert s.pos == [(0, 1), (0, 2)]
    s.apply_actions([EAST, WEST])  # a swap is two distinct targets: both move
    assert s.pos == [(0, 2), (0, 1)]


def test_the_episode_ends_at_the_horizon_and_observations_put_the_observer_first():
    g = arena.load_game("foraging(horizon=3)")
    s = g.new_initial_state(5)
    for _ in range(3):
        s.apply_actions([NONE, NONE])
    assert s.is_terminal() and s.returns() == [0.0, 0.0]
    t0, t1 = s.observation_tensor(0), s.observation_tensor(1)
    assert t0.shape == g.spec.observation_shape == (9,)
    assert t0[3:6].tolist() == t1[6:9].tolist() and t0[6:9].tolist() == t1[3:6].tolist()


def test_spawning_keeps_items_inside_and_apart_and_coop_levels_at_the_sum():
    g = arena.load_game("foraging(size=7,food=3,coop=true,max_level=3)")
    for seed in range(40):
        s = g.new_initial_state(seed)
        assert all(1 <= r <= 5 and 1 <= c <= 5 for r, c in s.food)
        assert all(max(abs(a[0] - b[0]), abs(a[1] - b[1])) > 1 for i, a in enumerate(s.food) for b in s.food[i + 1 :])
        assert s.food_level == [sum(s.levels)] * 3 and all(1 <= x <= 3 for x in s.levels)
        assert s.pos[0] != s.pos[1] and not set(s.pos) & set(s.food)
    levels = {tuple(arena.load_game("foraging").new_initial_state(k).food_level) for k in range(60)}
    assert len(levels) > 1  # without coop the item level varies
    assert np.isclose(g.spec.max_utility, 1.0)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("foraging(size=2)", "size must be an integer >= 3"),
        ("foraging(food=5)", "5 food items do not fit apart"),
        ("foraging(penalty=-1)", "penalty must be >= 0"),
        ("foraging(horizon=0)", "horizon must be a positive integer"),
    ],
)
def test_bad_parameters_are_one_error(spec, message):
    with pytest.raises(ArenaError, match=message):
        arena.load_game(spec)
