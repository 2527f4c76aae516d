"""The judge contract: compare two trajectories of the same task instance.

Why a plugin kind of its own: a tournament of rollouts (ArenaRL), SPPO's preferences and any
preference-based trainer need "which of these two is better?" for tasks with no verifiable
reward. What answers it varies (the game's payoff, a metric, an LLM with a rubric) but the
trainers should not care, so judges register like agents (``arena_judges`` in
:mod:`arena.hookspecs`), are listed by ``arena plugins`` and are built from a spec
(``"scorer:noise=0.3,seed=1"`` or ``{"name": "scorer", "noise": 0.3}``).

``Judge.compare(pairs)`` is batched: it receives every pair a trainer needs this round (the
``llm`` judge sends them in one backend call) and returns one *margin* per pair in [−1, 1]:
positive when the first candidate is better; ``(1 + margin) / 2`` is read as P(first better).
A judge that can also score one candidate alone (``score(items)``, higher is better) supports
pointwise scoring, the baseline ArenaRL argues against.

:func:`checked_compare` is how callers use a judge: a judge that raises, returns the wrong
number of margins or a NaN becomes one :class:`JudgeError` line naming the judge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from arena.errors import ArenaError
from arena.game import State
from arena.trainer import Trajectory


class JudgeError(ArenaError):
    """A judge failed (raised, or returned NaN / the wrong number of margins)."""


@dataclass
class Candidate:
    """One trajectory as a judge sees it: the judged seat ``player``, the finished ``state``
    (None when it could not be rebuilt) and the task (the seat's first observation)."""

    trajectory: Trajectory
    player: int
    state: State | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def task(self) -> str:
        steps = self.trajectory.for_player(self.player)
        return steps[0].observation.text if steps else ""

    @property
    def response(self) -> str:
        """What the judged seat did, in words: its text moves and action labels, one per line."""
        out = []
        for s in self.trajectory.for_player(self.player):
            a = s.action
            out.append(a if isinstance(a, str) else s.observation.label_of(int(a)))
        return "\n".join(out)

    @property
    def ret(self) -> float:
        return float(self.trajectory.returns[self.player])


Pair = tuple[Candidate, Candidate]


class Judge:
    """Base class. Subclasses implement ``compare``; ``score`` is optional (pointwise)."""

    name: str = "judge"
    pointwise: bool = False
    """True when :meth:`score` is implemented."""

    def compare(self, pairs: Sequence[Pair]) -> list[float]:
        raise NotImplementedError

    def score(self, items: Sequence[Candidate]) -> list[float]:
        raise JudgeError(
            f"judge '{self.name}' cannot score a single candidate (it only compares pairs); use scoring: rank"
        )

    comparisons: int = 0
    """Pairs compared so far, counted by :func:`checked_compare` for every judge; kept in the
    state, so a resumed run keeps counting."""

    def stats(self) -> dict[str, float]:
        """Usage counters (comparisons, calls, tokens...) for metrics; extend with ``super()``."""
        return {"comparisons": float(self.comparisons)}

    def state_dict(self) -> dict[str, Any]:
        """What the next comparison depends on (e.g. a noise counter), for exact resume; extend
        with ``super()``."""
        return {"comparisons": self.comparisons}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.comparisons = int(state.get("comparisons", 0))

    def close(self) -> None:
        pass


JudgeFactory = Callable[..., Judge]
"""``factory(game, **params) -> Judge``"""


@dataclass(frozen=True)
class JudgeEntry:
    name: str
    factory: JudgeFactory
    description: str = ""
    params: Mapping[str, Any] | None = None
    """Documented parameters and defaults (shown by ``arena plugins``)."""


def _checked(judge: Judge, what: str, n: int, call: Callable[[], Sequence[float]]) -> list[float]:
    if n == 0:
        return []
    try:
        out = [float(x) for x in call()]
    except ArenaError:
        raise
    except Exception as exc:  # a third-party judge may raise anything: one line, the run keeps its store
        raise JudgeError(f"judge '{judge.name}' failed in {what}: {type(exc).__name__}: {exc}") from exc
    if len(out) != n:
        raise JudgeError(f"judge '{judge.name}' returned {len(out)} values for {n} {what} items")
    bad = [i for i, x in enumerate(out) if not math.isfinite(x)]
    if bad:
        raise JudgeError(
            f"judge '{judge.name}' returned a non-finite value ({out[bad[0]]}) in {what} (item {bad[0]} of {n})"
        )
    return out


def checked_compare(judge: Judge, pairs: Sequence[Pair]) -> list[float]:
    """``judge.compare(pairs)`` with margins clipped to [−1, 1], counted in ``judge.comparisons``;
    failures → :class:`JudgeError`."""
    margins = _checked(judge, "compare", len(pairs), lambda: judge.compare(pairs))
    judge.comparisons += len(pairs)
    return [min(1.0, max(-1.0, m)) for m in margins]


def checked_score(judge: Judge, items: Sequence[Candidate]) -> list[float]:
    """``judge.score(items)``; failures → :class:`JudgeError`."""
    if not judge.pointwise:
        judge.score(items)  # raises the judge's own "cannot score" line
    return _checked(judge, "score", len(items), lambda: judge.score(items))
