"""A saved mixture of LLM policies, played one member per game.

``sppo`` with ``average: mixture`` keeps its averaged iterate as a uniform mixture of snapshots
(SPPO's guarantee, arXiv 2405.00675, is for that average); a snapshot directory holds the
members in ``mixture/``: ``member-NNNN`` (each a model or adapter directory, as the learner saves
itself) and ``mixture.json`` (``members``: their paths and iterations, ``weights``). ``llm:model=
DIR/mixture`` loads it as :class:`SampledMixture`: every member an ``llm`` agent with the spec's
other parameters, member k playing a whole game with probability ``weights[k]``, drawn from the
game's own random stream at its first decision (results depend on the match seed only).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from arena.agent import Agent
from arena.errors import ArenaError
from arena.mixture import MixtureAgent

MIXTURE = "mixture.json"


def is_mixture_dir(path: Any) -> bool:
    return path is not None and (Path(str(path)) / MIXTURE).is_file()


class SampledMixture(MixtureAgent):
    """Plays member k with probability ``weights[k]`` for a whole game (one draw per game), each
    decision's info naming its member; a negative weight is an error here, not a rounding."""

    member_info = "mixture_member"

    def __init__(self, members: Sequence[Agent], weights: Sequence[float], name: str = "mixture") -> None:
        w = np.asarray(weights, dtype=float)
        if len(w) != len(members) or (len(w) and (w.min() < 0 or w.sum() <= 0)):
            raise ArenaError("llm agent: a mixture needs one non-negative weight per member, not all zero")
        super().__init__(members, w, name)

    def close(self) -> None:
        for m in self.members:
            m.close()


def load_mixture(directory: Any, member: Callable[[str], Agent]) -> SampledMixture:
    """The mixture saved in ``directory``; ``member(path)`` builds the agent of one member."""
    root = Path(str(directory))
    try:
        manifest = json.loads((root / MIXTURE).read_text())
        paths = [str(root / m["path"]) for m in manifest["members"]]
        weights = [float(w) for w in manifest["weights"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ArenaError(f"llm agent: {root / MIXTURE} is not a mixture manifest ({exc})") from None
    if not paths:
        raise ArenaError(f"llm agent: the mixture in {root} has no members")
    return SampledMixture([member(p) for p in paths], weights, name="llm")
