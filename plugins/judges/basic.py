"""``outcome`` and ``scorer`` judges.

``scorer`` is the controllable judge tests and benchmarks use. Its noise model has two parts,
because they behave differently under the two ways of asking a judge:

- ``noise``: independent Gaussian noise on every candidate's score in every call;
- ``drift``: a Gaussian offset per *call* — an LLM judge asked to grade one answer on an
  absolute scale drifts from call to call (ArenaRL's "discriminative collapse" of pointwise
  scores); a pairwise call grades both candidates in one context, so the offset is shared and
  cancels in the margin. ``score`` (pointwise) is one call per candidate and sees it.

Margins are ``clip((s_a − s_b) / scale, −1, 1)``. The noise stream is derived from ``seed`` and
a call counter kept in ``state_dict``, so a resumed run draws the same noise.
"""

from __future__ import annotations

import importlib
import math
from typing import Any, Callable, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import Game
from arena.judge import Candidate, Judge, JudgeError, Pair

OUTCOME_PARAMS: dict[str, Any] = {"scale": None}
SCORER_PARAMS: dict[str, Any] = {"fn": None, "noise": 0.0, "drift": 0.0, "scale": 1.0, "seed": 0}


class OutcomeJudge(Judge):
    """Margin = (R_a − R_b) / (max_utility − min_utility): exact for games with payoffs."""

    pointwise = True

    def __init__(self, game: Game, scale: float | None = None) -> None:
        span = float(game.spec.max_utility) - float(game.spec.min_utility)
        self.scale = float(scale) if scale is not None else span
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise ArenaError(f"game '{game.spec.full_name}' has no finite utility range; pass scale=")

    def compare(self, pairs: Sequence[Pair]) -> list[float]:
        return [(a.ret - b.ret) / self.scale for a, b in pairs]

    def score(self, items: Sequence[Candidate]) -> list[float]:
        return [c.ret for c in items]


def _callable(path: str) -> Callable[[Candidate], float]:
    if ":" not in path:
        raise ArenaError(f"fn must be 'module:function', got {path!r}")
    mod, attr = path.split(":", 1)
    try:
        fn = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as exc:
        raise ArenaError(f"cannot load fn {path!r}: {exc}") from None
    if not callable(fn):
        raise ArenaError(f"fn {path!r} is not callable")
    return fn


class ScorerJudge(Judge):
    """Scores each candidate with ``fn(candidate)`` or ``game.judge_score(state, player)``."""

    pointwise = True

    def __init__(
        self, game: Game, fn: Any = None, noise: float = 0.0, drift: float = 0.0, scale: float = 1.0, seed: int = 0
    ) -> None:
        if fn is None and not callable(getattr(game, "judge_score", None)):
            raise ArenaError(
                f"game '{game.spec.full_name}' provides no judge_score(state, player); pass fn=module:function"
            )
        if noise < 0 or drift < 0 or scale <= 0:
            raise ArenaError("noise and drift must be >= 0 and scale > 0")
        self.game = game
        self.fn = fn if callable(fn) else _callable(str(fn)) if fn is not None else None
        self.noise, self.drift, self.scale, self.seed = float(noise), float(drift), float(scale), int(seed)
        self.calls = 0

    def truth(self, c: Candidate) -> float:
        """The noiseless score."""
        if self.fn is not None:
            return float(self.fn(c))
        if c.state is None:
            raise JudgeError("judge 'scorer' needs the finished state of each candidate (game metric)")
        return float(self.game.judge_score(c.state, c.player))  # type: ignore[attr-defined]

    def _rng(self) -> np.random.Generator:
        self.calls += 1
        return np.random.default_rng([self.seed & 0xFFFFFFFF, self.calls])

    def compare(self, pairs: Sequence[Pair]) -> list[float]:
        rng = self._rng()
        out = []
        for a, b in pairs:
            sa = self.truth(a) + self.noise * rng.standard_normal()
            sb = self.truth(b) + self.noise * rng.standard_normal()
            # one call grades both: its drift is the same for a and b and cancels
            out.append((sa - sb) / self.scale)
        return out

    def score(self, items: Sequence[Candidate]) -> list[float]:
        rng = self._rng()
        return [self.truth(c) + self.drift * rng.standard_normal() + self.noise * rng.standard_normal() for c in items]

    def stats(self) -> dict[str, float]:
        return {**super().stats(), "calls": float(self.calls)}

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "calls": self.calls}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.calls = int(state.get("calls", 0))


PREFERENCE_PARAMS: dict[str, Any] = {"sample": False, "seed": 0}


class PreferenceJudge(Judge):
    """A game's own preference probability ``game.preference_of(state_a, state_b)`` = P(a ≻ b),
    for games whose ground truth is a preference rather than a score (``cyclic_preference``:
    intransitive, so no score could express it). ``sample: false`` answers the expected margin
    ``2P − 1``; ``sample: true`` draws one labelled comparison (margin ±1, a Bernoulli(P) label,
    the way a human or a pairwise reward model labels pairs), seeded per call as ``scorer``."""

    def __init__(self, game: Game, sample: bool = False, seed: int = 0) -> None:
        if not callable(getattr(game, "preference_of", None)):
            raise ArenaError(f"judge 'preference': game '{game.spec.full_name}' provides no preference_of(a, b)")
        self.game, self.sample, self.seed = game, bool(sample), int(seed)
        self.calls = 0

    def probability(self, a: Candidate, b: Candidate) -> float:
        if a.state is None or b.state is None:
            raise JudgeError("judge 'preference' needs the finished state of each candidate")
        return float(self.game.preference_of(a.state, b.state))  # type: ignore[attr-defined]

    def compare(self, pairs: Sequence[Pair]) -> list[float]:
        self.calls += 1
        p = np.array([self.probability(a, b) for a, b in pairs], dtype=float)
        if not self.sample:
            return (2.0 * p - 1.0).tolist()
        u = np.random.default_rng([self.seed & 0xFFFFFFFF, self.calls]).random(p.size)
        return np.where(u < p, 1.0, -1.0).tolist()

    def stats(self) -> dict[str, float]:
        return {**super().stats(), "calls": float(self.calls)}

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "calls": self.calls}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.calls = int(state.get("calls", 0))
