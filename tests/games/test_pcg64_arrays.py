"""numpy's ``default_rng(seed)`` on arrays: every draw the Coin Game's face makes, row by row
against B real ``Generator`` objects."""

from __future__ import annotations

import numpy as np

from arena.games.social.pcg64_arrays import PCG64Arrays, matches_numpy, seed_words

SEEDS = np.array([0, 1, 5, 12345, 2**31 - 1, 2**32 - 1])


def test_seed_sequence_and_raw_outputs_are_numpys():
    ref = np.stack([np.random.SeedSequence(int(s)).generate_state(4, np.uint64) for s in SEEDS])
    assert (seed_words(SEEDS) == ref).all()
    gen = PCG64Arrays(SEEDS)
    refs = [np.random.default_rng(int(s)).bit_generator for s in SEEDS]
    rows = np.arange(len(SEEDS))
    for _ in range(5):
        assert gen.next64(rows).tolist() == [int(r.random_raw()) for r in refs]


def test_interleaved_draws_on_row_subsets_are_each_rows_own():
    """Pairs of distinct cells, small bounds and bounds near 2**32 (where Lemire's method rejects
    about half the draws), each on a random half of the rows: every row stays its Generator."""
    rs = np.random.default_rng(7)
    b = 2000
    seeds = rs.integers(0, 2**31, b)
    gen = PCG64Arrays(seeds)
    refs = [np.random.default_rng(int(s)) for s in seeds]
    drawn = 0
    for it in range(24):
        rows = np.flatnonzero(rs.random(b) < 0.5)
        if it % 3 == 0:
            n = int(rs.integers(2, 40))
            got = gen.choice2(rows, n)
            want = np.array([refs[r].choice(n, size=2, replace=False) for r in rows])
        else:
            high = 2**31 + 1 if it % 3 == 1 else 10
            k = rs.integers(1, high, len(rows))
            got = gen.integers(rows, k)
            want = np.array([refs[r].integers(int(x)) for r, x in zip(rows, k)])
        assert got.tolist() == want.tolist()
        drawn += len(rows)
    assert drawn > 20_000
    # and the next raw output of every row still agrees: no draw was skipped or doubled
    assert gen.next64(np.arange(b)).tolist() == [int(r.bit_generator.random_raw()) for r in refs]


def test_the_self_check_passes_and_notices_a_difference(monkeypatch):
    assert matches_numpy()
    swap_on_one = lambda self, rows: self._bounded(rows, np.ones(len(rows), np.uint64)) == 1  # noqa: E731
    monkeypatch.setattr(PCG64Arrays, "_interval1", swap_on_one)
    assert not matches_numpy()  # the pair's shuffle read the wrong way round
