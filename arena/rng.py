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


def splitmix64(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


class GameRandom:
    __slots__ = ("seed", "index", "_key", "_counter", "_numpy")

    def __init__(self, seed: int, index: int) -> None:
        self.seed, self.index = int(seed), int(index)
        self._key = splitmix64(splitmix64(self.seed & _MASK) ^ (self.index & _MASK))
        self._counter = 0
        self._numpy: np.random.Generator | None = None

    def uniform(self) -> float:
        """Next float in [0, 1) (SplitMix64 inlined: this is the runner's hottest call)."""
        self._counter += 1
        z = (self._key + self._counter * 0x9E3779B97F4A7C15) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return ((z ^ (z >> 31)) >> 11) * _TO_UNIT

    def below(self, n: int) -> int:
        """Uniform integer in [0, n)."""
        return min(int(self.uniform() * n), n - 1)

    def bits(self) -> int:
        """31 random bits (e.g. a seed for a game's hidden randomness)."""
        self._counter += 1
        return splitmix64((self._key + self._counter) & _MASK) >> 33

    @property
    def numpy(self) -> np.random.Generator:
        """A numpy Generator for this game (its own stream, created on first use)."""
        if self._numpy is None:
            self._numpy = np.random.default_rng([self.seed & 0xFFFFFFFF, self.index])
        return self._numpy
