"""``reinforce``: REINFORCE with a learned baseline — the PPO code path with one on-policy epoch,
no ratio clipping and Monte-Carlo advantages (``lam=1``: return-to-go minus the critic)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

from arena.game import Game
from arena.hookspecs import hookimpl
from arena.trainer import TrainerEntry

from .ppo import PGConfig, PPOTrainer


@dataclass
class ReinforceConfig(PGConfig):
    lam: float = 1.0
    epochs: int = 1
    clip: float | None = None


class ReinforceTrainer(PPOTrainer):
    name = "reinforce"
    config_class = ReinforceConfig


def make_reinforce(game: Game, learners: Sequence[Any], **params: Any) -> ReinforceTrainer:
    return ReinforceTrainer(game, learners, **params)


@hookimpl
def arena_trainers() -> list[TrainerEntry]:
    return [
        TrainerEntry(
            "reinforce",
            make_reinforce,
            "REINFORCE with a critic baseline for neural agents",
            dataclasses.asdict(ReinforceConfig()),
        )
    ]
