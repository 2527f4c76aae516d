"""Per-game randomness that does not depend on batching, order or executor.

Every game in a run owns a :class:`GameRandom` derived from ``(run seed, game index)``. Chance
nodes and cheap agent draws use :meth:`GameRandom.uniform`, a counter-based SplitMix64 stream
(no set-up cost — a numpy ``default_rng`` costs ~10 µs to create, which dominated small games);
agents that want a full numpy ``Generator`` get one lazily through ``.numpy``.

The match runner starts a batch of games at once with :func:`start_games`: numpy computes every
game's key, its first draw (the state's seed) and the next draws it will likely make, so a
Python ``uniform`` call then only pops a precomputed value. The values are the stream's own
(SplitMix64 in ``uint64`` arithmetic is the same modulo 2⁶⁴), so draws, and results, do not
depend on how many were drawn ahead.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

_MASK = (1 << 64) - 1
_TO_UNIT = 1.0 / (1 << 53)
_GOLDEN = 0x9E3779B97F4A7C15
_GOLDEN_INV = pow(_GOLDEN, -1, 1 << 64)


def splitmix64(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def derive_seed(seed: int, *key: str | int) -> int:
    """The seed of one named stream of a run, e.g. ``derive_seed(seed, "train", step, "ppo")``.

    Why keys and not arithmetic: sums such as ``seed * 1_000_003 + step`` let two streams of one
    run (or of two seeds) meet by accident; chaining SplitMix64 over the key's parts makes every
    key its own stream. Strings are hashed with BLAKE2b (stable across processes, unlike
    ``hash``). The result is below 2⁶³, a valid seed for numpy, torch and Python's ``random``."""
    z = splitmix64(int(seed) & _MASK)
    for part in key:
        if isinstance(part, str):
            word = int.from_bytes(hashlib.blake2b(part.encode(), digest_size=8).digest(), "little")
        else:
            word = int(part) & _MASK
        z = splitmix64(z ^ word)
    return z >> 1


class GameRandom:
    """The stream of one game. Draw ``k`` (k = 1, 2, ...) is SplitMix64's output for the
    counter ``key + k·golden``; the object keeps that sum (``_z``) rather than ``k`` because
    the runner draws millions of uniforms and only once per game needs ``k`` itself."""

    __slots__ = ("seed", "index", "_key", "_z", "_numpy", "_ahead")

    def __init__(self, seed: int, index: int) -> None:
        self.seed, self.index = int(seed), int(index)
        # splitmix64(splitmix64(seed) ^ index), inlined: one of these is built per game.
        z = ((self.seed & _MASK) + _GOLDEN) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z = (((z ^ (z >> 31)) ^ (self.index & _MASK)) + _GOLDEN) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        self._key = self._z = z ^ (z >> 31)
        self._numpy: np.random.Generator | None = None
        self._ahead: list[float] = _NONE_AHEAD
        """Uniforms drawn ahead, next last; ``_z`` is then the position after the last of them."""

    def clone(self) -> "GameRandom":
        """An independent copy at the same position of the stream (for states that clone)."""
        c = GameRandom.__new__(GameRandom)
        c.seed, c.index, c._key, c._z, c._numpy = self.seed, self.index, self._key, self._z, None
        c._ahead = self._ahead[:] if self._ahead else _NONE_AHEAD
        return c

    def _sync(self) -> None:
        """Drop the uniforms drawn ahead, putting ``_z`` back at the true position."""
        if self._ahead:
            self._z = (self._z - len(self._ahead) * _GOLDEN) & _MASK
        self._ahead = _NONE_AHEAD

    def left_ahead(self) -> int:
        """Uniforms drawn ahead and not used yet."""
        return len(self._ahead)

    @property
    def _counter(self) -> int:
        """How many draws were made (``uniform``, ``below`` and ``bits`` alike)."""
        z = (self._z - len(self._ahead) * _GOLDEN) & _MASK
        return ((z - self._key) * _GOLDEN_INV) & _MASK

    def uniform(self) -> float:
        """Next float in [0, 1) (SplitMix64 inlined: this is the runner's hottest call)."""
        ahead = self._ahead
        if ahead:
            return ahead.pop()
        z = self._z = (self._z + _GOLDEN) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return ((z ^ (z >> 31)) >> 11) * _TO_UNIT

    def below(self, n: int) -> int:
        """Uniform integer in [0, n)."""
        return min(int(self.uniform() * n), n - 1)

    def bits(self) -> int:
        """31 random bits (e.g. a seed for a game's hidden randomness)."""
        if self._ahead:
            self._sync()
        z = self._z = (self._z + _GOLDEN) & _MASK
        k = ((z - self._key) * _GOLDEN_INV) & _MASK  # the draw's counter
        z = (self._key + k + _GOLDEN) & _MASK  # splitmix64(key + k), inlined (once per game)
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return (z ^ (z >> 31)) >> 33

    @property
    def numpy(self) -> np.random.Generator:
        """A numpy Generator for this game (its own stream, created on first use)."""
        if self._numpy is None:
            self._numpy = np.random.default_rng([self.seed & 0xFFFFFFFF, self.index])
        return self._numpy


_NONE_AHEAD: list[float] = []
"""Shared by every stream with nothing drawn ahead (never appended to: ``uniform`` pops only a
non-empty list)."""


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function on ``uint64`` arrays (wraps modulo 2⁶⁴ as ``& _MASK`` does)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def start_games(seed: int, indices: Sequence[int], ahead: int = 0) -> tuple[list[GameRandom], list[int]]:
    """The streams of games ``indices`` of a run seeded ``seed`` after their first draw, and that
    draw (``bits()``: the seed of each game's initial state), with the next ``ahead`` uniforms of
    each stream computed at once. The same as ``r = GameRandom(seed, i); r.bits()`` per game —
    one numpy pass instead of a few microseconds of Python integer arithmetic per game."""
    n = len(indices)
    if n == 0:
        return [], []
    golden = np.uint64(_GOLDEN)
    with np.errstate(over="ignore"):
        base = _mix(np.array([((int(seed) & _MASK) + _GOLDEN) & _MASK], dtype=np.uint64))[0]
        idx = np.fromiter((int(i) & _MASK for i in indices), dtype=np.uint64, count=n)
        keys = _mix((base ^ idx) + golden)
        z1 = keys + golden  # the first draw, as bits(): splitmix64(key + 1)
        first = (_mix(keys + np.uint64(1) + golden) >> np.uint64(33)).tolist()
        if ahead > 0:
            steps = np.arange(ahead, 0, -1, dtype=np.uint64) * golden  # next draw last: list.pop order
            draws = ((_mix(z1[:, None] + steps) >> np.uint64(11)).astype(np.float64) * _TO_UNIT).tolist()
            ends = (z1 + np.uint64(ahead) * golden).tolist()
        else:
            draws, ends = [_NONE_AHEAD] * n, z1.tolist()
        keys_list = keys.tolist()
    seed = int(seed)
    new = GameRandom.__new__
    streams = []
    for i, key, end, pre in zip(indices, keys_list, ends, draws):
        r = new(GameRandom)
        r.seed, r.index, r._key, r._z, r._numpy, r._ahead = seed, int(i), key, end, None, pre
        streams.append(r)
    return streams, first
