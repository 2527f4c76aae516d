"""``numpy.random.default_rng(seed)`` for B seeds at once, draw for draw: the generators of B
games' hidden randomness stepped as ``uint64`` arrays.

A game that seeds its own ``Generator`` from the state seed (the Coin Game's start cells and coin
respawns) cannot take its draws from :class:`arena.arrays.ArrayRandom`; its array face instead
runs B copies of that ``Generator``. Building B ``Generator`` objects costs ~10 µs each and every
draw is a Python call, so this module does what numpy does, over arrays:

- ``SeedSequence(seed)`` (O'Neill's seed-sequence hashing, numpy's constants) turns each seed
  into four 64-bit words;
- ``PCG64`` (O'Neill, "PCG: a family of simple fast space-efficient statistically good
  algorithms for random number generation", 2014): a 128-bit LCG, kept as (high, low) ``uint64``
  halves, with the XSL-RR output; a 32-bit draw takes half of a 64-bit one and keeps the other
  half for the next 32-bit draw, as numpy's bit generator does;
- ``Generator.integers(k)`` for ``k <= 2**32``: Lemire's multiply-and-reject on a 32-bit draw
  (Lemire, "Fast random integer generation in an interval", arXiv 1805.10941);
- ``Generator.choice(n, 2, replace=False)``: Floyd's two draws, then a one-step shuffle.

Only those draws are written; :func:`matches_numpy` compares them with numpy's own on a few
seeds, so a face built on them can refuse to run (and the runner fall back to ``State``) if a
numpy release changes its algorithms.
"""

from __future__ import annotations

import numpy as np

_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
# SeedSequence's hashing constants (numpy/random/bit_generator.pyx)
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R, _XSHIFT = 0xCA01F9DD, 0x4973F715, 16
_POOL = 4
# PCG64's 128-bit multiplier, high and low halves
_MUL_HI, _MUL_LO = np.uint64(2549297995355413924), np.uint64(4865540595714422341)


def _u32(x: int) -> np.uint32:
    return np.uint32(x & 0xFFFFFFFF)


def seed_words(seeds: np.ndarray) -> np.ndarray:
    """``SeedSequence(seed).generate_state(4, np.uint64)`` for each seed in ``[0, 2**32)``
    (one 32-bit entropy word each): ``uint64 [B, 4]``."""
    s = np.asarray(seeds, dtype=np.uint64)
    if (s >> _S32).any():
        raise ValueError("seed_words takes seeds below 2**32")
    word = s.astype(np.uint32)
    hash_const = _INIT_A

    def hashmix(value: np.ndarray) -> np.ndarray:
        nonlocal hash_const
        value = value ^ _u32(hash_const)
        hash_const = (hash_const * _MULT_A) & 0xFFFFFFFF
        value = value * _u32(hash_const)
        return value ^ (value >> np.uint32(_XSHIFT))

    with np.errstate(over="ignore"):
        zero = np.zeros_like(word)
        pool = [hashmix(word if i == 0 else zero) for i in range(_POOL)]
        for i_src in range(_POOL):
            for i_dst in range(_POOL):
                if i_src != i_dst:
                    y = hashmix(pool[i_src])
                    r: np.ndarray = _u32(_MIX_MULT_L) * pool[i_dst] - _u32(_MIX_MULT_R) * y
                    pool[i_dst] = r ^ (r >> np.uint32(_XSHIFT))
        hash_const = _INIT_B
        out = []
        for i in range(2 * _POOL):
            v = pool[i % _POOL] ^ _u32(hash_const)
            hash_const = (hash_const * _MULT_B) & 0xFFFFFFFF
            v = v * _u32(hash_const)
            out.append((v ^ (v >> np.uint32(_XSHIFT))).astype(np.uint64))
    return np.stack([out[2 * k] | (out[2 * k + 1] << _S32) for k in range(_POOL)], axis=1)


def _mulhi(a: np.ndarray, b: np.uint64) -> np.ndarray:
    """The high 64 bits of the 128-bit products ``a · b``."""
    a0, a1 = a & _M32, a >> _S32
    b0, b1 = b & _M32, b >> _S32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> _S32) + (p01 & _M32) + (p10 & _M32)
    return p11 + (p01 >> _S32) + (p10 >> _S32) + (mid >> _S32)


class PCG64Arrays:
    """B ``numpy.random.default_rng(seed)`` generators (seeds in ``[0, 2**32)``), each row's
    draws those of its own ``Generator``; ``rows`` arguments are distinct row numbers."""

    def __init__(self, seeds: np.ndarray) -> None:
        words = seed_words(seeds)
        b = len(words)
        # pcg64_set_seed: initstate = (w0, w1), initseq = (w2, w3); inc = initseq << 1 | 1
        self.inc_hi = (words[:, 2] << np.uint64(1)) | (words[:, 3] >> np.uint64(63))
        self.inc_lo = (words[:, 3] << np.uint64(1)) | np.uint64(1)
        self.hi, self.lo = np.zeros(b, np.uint64), np.zeros(b, np.uint64)
        everyone = np.arange(b)
        self._step(everyone)
        with np.errstate(over="ignore"):
            lo = self.lo + words[:, 1]
            self.hi = self.hi + words[:, 0] + (lo < self.lo).astype(np.uint64)
            self.lo = lo
        self._step(everyone)
        self.has32 = np.zeros(b, dtype=bool)
        self.cache32 = np.zeros(b, dtype=np.uint64)

    def __len__(self) -> int:
        return len(self.hi)

    def _step(self, rows: np.ndarray) -> None:
        """state = state · multiplier + inc (mod 2¹²⁸) for ``rows``."""
        hi, lo = self.hi[rows], self.lo[rows]
        with np.errstate(over="ignore"):
            new_hi = _mulhi(lo, _MUL_LO) + lo * _MUL_HI + hi * _MUL_LO
            new_lo = lo * _MUL_LO
            inc_lo = self.inc_lo[rows]
            out_lo = new_lo + inc_lo
            self.hi[rows] = new_hi + self.inc_hi[rows] + (out_lo < new_lo).astype(np.uint64)
            self.lo[rows] = out_lo

    def next64(self, rows: np.ndarray) -> np.ndarray:
        """Each row's next 64-bit output (step, then XSL-RR of the new state)."""
        self._step(rows)
        hi = self.hi[rows]
        x = hi ^ self.lo[rows]
        rot = hi >> np.uint64(58)
        return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))

    def next32(self, rows: np.ndarray) -> np.ndarray:
        """Each row's next 32-bit draw (``uint64`` values below 2³²): the kept high half of the
        last 64-bit output, else the low half of a new one (its high half kept)."""
        out = np.empty(len(rows), dtype=np.uint64)
        has = self.has32[rows]
        if has.any():
            kept = rows[has]
            out[has] = self.cache32[kept]
            self.has32[kept] = False
        if not has.all():
            fresh = rows[~has]
            x = self.next64(fresh)
            out[~has] = x & _M32
            self.cache32[fresh] = x >> _S32
            self.has32[fresh] = True
        return out

    def integers(self, rows: np.ndarray, k: np.ndarray | int) -> np.ndarray:
        """``Generator.integers(k)`` per row (``1 <= k <= 2**32 - 1``; ``k == 1`` draws nothing)."""
        k = np.broadcast_to(np.asarray(k, dtype=np.uint64), rows.shape)
        return self._bounded(rows, k - np.uint64(1))

    def _bounded(self, rows: np.ndarray, rng: np.ndarray) -> np.ndarray:
        """numpy's ``random_bounded_uint64(0, rng)`` for ``rng < 2**32 - 1``: Lemire's method on
        32-bit draws (rows with ``rng == 0`` draw nothing and give 0)."""
        out = np.zeros(len(rows), dtype=np.int64)
        todo = np.flatnonzero(rng > 0)
        excl = rng[todo] + np.uint64(1)
        threshold = (np.uint64(0xFFFFFFFF) - rng[todo]) % excl
        while len(todo):  # (numpy asks ``leftover < excl`` first: the same rows, threshold < excl)
            m = self.next32(rows[todo]) * excl
            bad = (m & _M32) < threshold
            good = ~bad
            out[todo[good]] = (m[good] >> _S32).astype(np.int64)
            todo, excl, threshold = todo[bad], excl[bad], threshold[bad]
        return out

    def choice2(self, rows: np.ndarray, n: int) -> np.ndarray:
        """``Generator.choice(n, size=2, replace=False)`` per row (``n >= 2``): ``int64 [R, 2]``
        (Floyd's algorithm, then the pair shuffled by one bounded draw, as numpy does)."""
        first = self._bounded(rows, np.full(len(rows), n - 2, dtype=np.uint64))
        second = self._bounded(rows, np.full(len(rows), n - 1, dtype=np.uint64))
        second = np.where(second == first, n - 1, second)
        pair = np.stack([first, second], axis=1)
        swap = self._interval1(rows)
        pair[swap] = pair[swap][:, ::-1]
        return pair

    def _interval1(self, rows: np.ndarray) -> np.ndarray:
        """The shuffle's draw of a position in ``[0, 1]``: 0 swaps the pair."""
        return self._bounded(rows, np.ones(len(rows), dtype=np.uint64)) == 0


def matches_numpy(seeds: tuple[int, ...] = (0, 1, 12345, 2**31 - 1)) -> bool:
    """Whether :class:`PCG64Arrays` draws what this numpy's ``default_rng`` draws for a few seeds:
    a pair of distinct cells of 9, then integers below 2, 7, 3 and 5, repeated."""
    rows = np.arange(len(seeds))
    mine = PCG64Arrays(np.asarray(seeds))
    for seed, row in zip(seeds, rows.tolist()):
        ref = np.random.default_rng(seed)
        for _ in range(3):
            if ref.choice(9, size=2, replace=False).tolist() != mine.choice2(rows[row : row + 1], 9)[0].tolist():
                return False
            for k in (2, 7, 3, 5):
                if int(ref.integers(k)) != int(mine.integers(rows[row : row + 1], k)[0]):
                    return False
    return True
