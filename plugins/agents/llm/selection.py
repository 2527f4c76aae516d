"""Action selection rules: turning scores or free text into legal actions.

*Scored*: an action's score is the total (or, with ``score=mean``, per-token mean)
log-probability of its continuation text; the policy
is ``softmax(score / temperature)`` over the legal actions (temperature 0: uniform over the
best). Always legal, and the exact distribution is known.

*Generated*: free text is parsed by :func:`parse_choice`. The retry and fallback rule: a
completion that names no legal action is an invalid attempt; the decision is re-sampled with
a new seed up to ``retries`` more times (at ``retry_temperature`` when sampling was greedy,
since greedy decoding would repeat itself); when every attempt fails the ``fallback`` applies:
``forfeit`` (the default: no move is made up, the game is forfeited with the reason), or a
substituted move, marked ``substituted`` in the decision's info: ``random`` (uniform legal
action from the game's generator), ``scored`` (sample the scored policy) or ``first`` (first
legal action). Every invalid attempt is counted and kept.
"""

from __future__ import annotations

import math
import re
from typing import Sequence

from arena.agent import Observation

FALLBACKS = ("forfeit", "random", "scored", "first")
_BRACKET = re.compile(r"\[([^\[\]\n]{1,60})\]")
_BOXED = re.compile(r"\\boxed\{([^{}\n]{1,60})\}")


def softmax_policy(actions: Sequence[int], scores: Sequence[float], temperature: float) -> dict[int, float]:
    """``softmax(scores / temperature)``; temperature 0 spreads mass evenly over the best."""
    if temperature <= 0:
        best = max(scores)
        winners = [a for a, s in zip(actions, scores) if s == best]
        return {a: (1.0 / len(winners) if a in winners else 0.0) for a in actions}
    m = max(scores)
    w = [math.exp((s - m) / temperature) for s in scores]
    z = sum(w)
    return {a: x / z for a, x in zip(actions, w)}


def parse_choice(text: str, obs: Observation) -> int | None:
    """The legal action a completion names, or ``None``.

    Tried in order: the last ``\\boxed{...}``, the last ``[...]``, the first line, the first
    line without trailing punctuation, and the first word; each through
    :meth:`Observation.parse_action` (label, unique label prefix, or 1-based index)."""
    t = text.strip()
    if not t:
        return None
    candidates = []
    for rx in (_BOXED, _BRACKET):
        hits = rx.findall(t)
        if hits:
            candidates.append(hits[-1])
    first = t.splitlines()[0].strip()
    candidates += [first, first.rstrip(".!?,;:"), first.split()[0].strip(".!?,;:\"'") if first.split() else ""]
    for c in candidates:
        if c:
            a = obs.parse_action(c)
            if a is not None:
                return a
    return None


def clip_text(text: str, limit: int) -> str:
    """A text decision: the first line of the completion, cut to the game's character limit."""
    t = text.strip()
    return t[:limit] if limit > 0 else t
