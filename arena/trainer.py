"""The trainer contract.

A trainer owns the update of one or more learning agents. It never plays: the league (or the
trainer's own driver loop) asks :mod:`arena.playing.match` for rollouts and hands the resulting
:class:`Trajectory` batches to ``update``, so batching, seeding and distribution live in one
place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from arena.agent import Agent, Observation
from arena.atomic import write_json_atomic
from arena.errors import ArenaError
from arena.game import Action


@dataclass
class Step:
    """One decision of one player."""

    player: int
    observation: Observation
    action: Action
    log_prob: float | None = None
    reward: float = 0.0
    """Reward credited to this decision (the final return lands on the player's last step)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Backend-specific data, e.g. prompt/completion token ids for LLM policies."""


@dataclass
class Trajectory:
    """All decisions of one game, in order, with the final returns."""

    game_index: int
    seed: int
    seats: list[str]
    steps: list[Step]
    returns: list[float]
    staleness: int = 0
    """Learner updates between the policy that played this game and the one being updated
    (asynchronous training; 0 when synchronous). ``Step.log_prob`` is the behaviour policy's."""

    def for_player(self, player: int) -> list[Step]:
        return [s for s in self.steps if s.player == player]


class Trainer:
    """Base class: ``update`` consumes trajectories and returns scalar metrics.

    ``state_dict`` / ``load_state_dict`` carry everything *besides the learners' weights* that
    the next update depends on (optimiser moments, random generators, counters), so a killed
    run resumes to the same numbers as an uninterrupted one. The learners' weights travel with
    the agents (:func:`arena.loading.save_checkpoint`). A state holds tensors, numbers, strings,
    lists and dicts only: it is loaded with ``torch.load(weights_only=True)``, never unpickled.
    """

    name: str = "trainer"
    learners: Sequence[Agent] = ()
    data_dir: Path | None = None
    """Where the trainer may keep data it made for others to read (set by the runner hosting
    it: ``RUN/data/<unit>``; ``None`` outside a run): e.g. the preference pairs a DPO-family
    trainer fit, which ``arena export`` turns into TRL preference datasets."""

    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        raise NotImplementedError(f"trainer '{self.name}' has no state_dict(); it cannot be resumed")

    def load_state_dict(self, state: dict[str, Any]) -> None:
        raise NotImplementedError(f"trainer '{self.name}' has no load_state_dict(); it cannot be resumed")

    def save(self, directory: str | Path) -> None:
        raise NotImplementedError(f"trainer '{self.name}' cannot be saved")


def save_trainer_state(trainer: Trainer, path: str | Path) -> None:
    """``trainer.state_dict()`` to ``path`` (a torch file when torch is installed, else JSON)."""
    state = trainer.state_dict()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        import torch
    except ImportError:
        write_json_atomic(target, state)
        return
    tmp = target.with_name(f".{target.name}.tmp")
    torch.save(state, tmp)
    tmp.replace(target)


def load_trainer_state(trainer: Trainer, path: str | Path) -> None:
    """Load what :func:`save_trainer_state` wrote — tensors and plain values only. A file that
    would need unpickling arbitrary objects (code execution on load) is refused."""
    target = Path(path)
    if not target.exists():
        raise ArenaError(f"trainer state {target} is missing; the run directory is damaged")
    try:
        import torch
    except ImportError:
        trainer.load_state_dict(json.loads(target.read_text()))
        return
    try:
        state = torch.load(target, weights_only=True, map_location="cpu")
    except Exception as exc:  # UnpicklingError and friends: whatever it is, it is not safe to load
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ArenaError(
            f"refusing to load trainer state {target}: it is not a plain tensor/number file "
            f"(loading it would run pickled code): {first}"
        ) from None
    trainer.load_state_dict(state)


TrainerFactory = Callable[..., Trainer]
"""``factory(game, learners, **params) -> Trainer``"""


@dataclass(frozen=True)
class TrainerEntry:
    name: str
    factory: TrainerFactory
    description: str = ""
    params: Mapping[str, Any] | None = None
