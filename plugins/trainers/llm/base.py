"""What the three LLM trainers share: one learner, its :class:`TrainableLLM`, common knobs,
checkpointing (``state_dict`` for league resume, ``save`` for snapshots)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from arena.errors import ArenaError
from arena.game import Game
from arena.trainer import Trainer

from .model import attach

COMMON = {"lr": 1e-3, "lora": None, "max_grad_norm": 1.0, "seed": 0, "torch_threads": 0, "device": None}
"""``device``: where the trainer's copy of the weights lives (``cuda``, ``cuda:1``, ``cpu``); default:
the agent's device (transformers) or the CPU (a vLLM engine's trainer copy)."""
PG_DEFAULTS = {"epochs": 1, "clip": 0.2, "is_cap": 2.0, "kl": 0.0, "entropy": 0.0, "minibatches": 1}
"""Knobs of :meth:`LLMTrainer.policy_gradient_step` (trainers that use it merge these into ``defaults``)."""


class LLMTrainer(Trainer):
    """Base: ``self.model`` is the learner's trainable weights; subclasses implement ``update``."""

    defaults: dict[str, Any] = {}

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        allowed = {**COMMON, **self.defaults}
        unknown = sorted(set(params) - set(allowed))
        if unknown:
            raise ArenaError(
                f"trainer '{self.name}' has no parameter {', '.join(map(repr, unknown))}; "
                f"parameters: {', '.join(sorted(allowed))}"
            )
        if len(learners) != 1:
            raise ArenaError(
                f"trainer '{self.name}' trains one shared LLM policy (it plays every seat); "
                f"got {len(learners)} learners"
            )
        self.p = {**allowed, **params}
        import torch

        if self.p["torch_threads"]:
            torch.set_num_threads(int(self.p["torch_threads"]))
        torch.manual_seed(int(self.p["seed"]))
        self.game = game
        self.learners = list(learners)
        self.agent = learners[0]
        self.model = attach(
            self.agent,
            lr=float(self.p["lr"]),
            lora=self.p["lora"],
            max_grad_norm=float(self.p["max_grad_norm"]),
            device=self.p["device"],
        )
        self.optimizers = self.model.optimizers
        self.ref = self.model.frozen_copy() if float(self.p.get("kl", 0.0)) > 0 else None
        self.updates = 0

    def policy_gradient_step(self, decisions: Sequence[Any], advantages: Sequence[float]) -> dict[str, float]:
        """One clipped policy-gradient update on the action tokens with this trainer's knobs,
        then push the new weights to the inference backend."""
        from .tokens import clipped_pg_update

        stats = clipped_pg_update(
            self.model,
            decisions,
            advantages,
            epochs=int(self.p["epochs"]),
            clip=float(self.p["clip"]),
            is_cap=float(self.p["is_cap"]),
            kl=float(self.p["kl"]),
            ref_model=self.ref,
            minibatches=int(self.p["minibatches"]),
            seed=int(self.p["seed"]) + self.updates,
            entropy=float(self.p["entropy"]),
        )
        self.model.sync()
        self.updates += 1
        return stats

    def extra_state(self) -> dict[str, Any]:
        return {}

    def load_extra_state(self, state: dict[str, Any]) -> None:
        pass

    def state_dict(self) -> dict[str, Any]:
        return {"model": self.model.state_dict(), "updates": self.updates, "extra": self.extra_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self.updates = int(state["updates"])
        self.load_extra_state(state.get("extra", {}))

    def save(self, directory: str | Path) -> None:
        self.model.save(directory)
