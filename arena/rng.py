"""Per-game randomness that does not depend on batching, order or executor.

Every game in a run owns a :class:`GameRandom` derived from ``(run seed, game index)``. Chance
nodes and cheap agent draws use :meth:`GameRandom.uniform`, a counter-based SplitMix64 stream
(no set-up cost — a numpy ``default_rng`` costs ~10 µs to create, which dominated small games);
agents that want a full numpy ``Generator`` get one lazily through ``.numpy``.
"""

from __future__ import annotations

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


class GameRandom:
    """The stream of one game. Draw ``k`` (k = 1, 2, ...) is SplitMix64's output for the
    counter ``key + k·golden``; the object keeps that sum (``_z``) rather than ``k`` because
    the runner draws millions of uniforms and only once per game needs ``k`` itself."""

    __slots__ = ("seed", "index", "_key", "_z", "_numpy")

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

    def clone(self) -> "GameRandom":
        """An independent copy at the same position of the stream (for states that clone)."""
        c = GameRandom.__new__(GameRandom)
        c.seed, c.index, c._key, c._z, c._numpy = self.seed, self.index, self._key, self._z, None
        return c

    @property
    def _counter(self) -> int:
        """How many draws were made (``uniform``, ``below`` and ``bits`` alike)."""
        return ((self._z - self._key) * _GOLDEN_INV) & _MASK

    def uniform(self) -> float:
        """Next float in [0, 1) (SplitMix64 inlined: this is the runner's hottest call)."""
        z = self._z = (self._z + _GOLDEN) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return ((z ^ (z >> 31)) >> 11) * _TO_UNIT

    def below(self, n: int) -> int:
        """Uniform integer in [0, n)."""
        return min(int(self.uniform() * n), n - 1)

    def bits(self) -> int:
        """31 random bits (e.g. a seed for a game's hidden randomness)."""
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
