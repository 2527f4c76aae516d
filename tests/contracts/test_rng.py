"""``arena.rng.derive_seed``: one named stream per key, and why keys and not arithmetic."""

from __future__ import annotations

import itertools

import numpy as np

from arena.rng import derive_seed


def test_derive_seed_is_deterministic_and_below_two_to_the_63():
    keys = [("train", 3, "ppo"), ("evaluation", 7), ("metrics",), (), ("x", -1, 2**70)]
    for seed in (0, 1, -5, 2**64 + 3, 123456789):
        for key in keys:
            s = derive_seed(seed, *key)
            assert s == derive_seed(seed, *key)
            assert 0 <= s < 2**63
            np.random.default_rng(s)  # a valid numpy seed


def test_every_part_of_the_key_and_its_order_matter():
    base = derive_seed(0, "train", 3, "ppo")
    changed = [
        derive_seed(1, "train", 3, "ppo"),
        derive_seed(0, "trainx", 3, "ppo"),
        derive_seed(0, "train", 4, "ppo"),
        derive_seed(0, "train", 3, "ppo2"),
        derive_seed(0, "train", 3),
        derive_seed(0, "train", 3, "ppo", 0),
        derive_seed(0, "train", "ppo", 3),
        derive_seed(0, 3, "train", "ppo"),
        derive_seed(0, "train", "3", "ppo"),
    ]
    assert base not in changed and len(set(changed)) == len(changed)


def old_training_seed(seed: int, step: int, unit: int) -> int:
    """How the league once seeded a unit's training games of a step."""
    return seed * 1_000_003 + step + 7_919 * unit


def test_keys_never_meet_where_the_old_arithmetic_did():
    """Over three seeds, 8000 steps and three units the old sum gives one seed to two streams
    (unit 1 at step 1 and unit 0 at step 7920, for one); derived seeds stay apart."""
    grid = list(itertools.product(range(3), range(1, 8001), range(3)))
    old = [old_training_seed(*k) for k in grid]
    assert old_training_seed(0, 1, 1) == old_training_seed(0, 7920, 0)
    assert len(set(old)) < len(old)
    new = [derive_seed(seed, "train", step, unit) for seed, step, unit in grid]
    assert len(set(new)) == len(new)
