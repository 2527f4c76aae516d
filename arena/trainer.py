"""The trainer contract.

A trainer owns the update of one or more learning agents. It never plays: the league (or the
trainer's own driver loop) asks :mod:`arena.match` for rollouts and hands the resulting
:class:`Trajectory` batches to ``update``, so batching, seeding and distribution live in one
place.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from arena.agent import Agent, Observation
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

    def for_player(self, player: int) -> list[Step]:
        return [s for s in self.steps if s.player == player]


class Trainer:
    """Base class: ``update`` consumes trajectories and returns scalar metrics."""

    name: str = "trainer"
    learners: Sequence[Agent] = ()

    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        raise NotImplementedError

    def save(self, directory: str | Path) -> None:
        raise NotImplementedError(f"trainer '{self.name}' cannot be saved")


TrainerFactory = Callable[..., Trainer]
"""``factory(game, learners, **params) -> Trainer``"""


@dataclass(frozen=True)
class TrainerEntry:
    name: str
    factory: TrainerFactory
    description: str = ""
    params: Mapping[str, Any] | None = None
