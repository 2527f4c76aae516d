"""League checkpoint persistence: all-or-nothing directory writes and saving/loading a trainer's
optimizer state, so a crashed league resumes exactly where its last committed step left it.

Split out of :mod:`arena.league` so persistence has one home apart from the runner; it imports
nothing from :mod:`arena.league`.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Callable

from arena.errors import ArenaError


def _atomic_dir(path: Path, write: Callable[[Path], None]) -> None:
    """Write a directory under a temporary name, then rename: it exists whole or not at all."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    write(tmp)
    if path.exists():
        shutil.rmtree(path)
    os.replace(tmp, path)


def save_trainer_state(trainer: Any, path: Path) -> None:
    """A trainer's own ``state_dict()`` if it has one, else what policy-gradient trainers keep
    between updates (optimizer states, sampling generator, update count)."""
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    if hasattr(trainer, "state_dict"):
        state = {"state_dict": trainer.state_dict()}
    else:
        state = {"optimizers": [o.state_dict() for o in getattr(trainer, "optimizers", [])],
                 "generator": trainer.generator.get_state() if hasattr(trainer, "generator") else None,
                 "updates": getattr(trainer, "updates", 0)}
    torch.save(state, path)


def load_trainer_state(trainer: Any, path: Path) -> None:
    import torch

    if not path.exists():
        raise ArenaError(f"league checkpoint is missing trainer state {path}; the run directory is damaged")
    state = torch.load(path, weights_only=False)
    if "state_dict" in state:
        trainer.load_state_dict(state["state_dict"])
        return
    for opt, s in zip(getattr(trainer, "optimizers", []), state["optimizers"]):
        opt.load_state_dict(s)
    if state.get("generator") is not None:
        trainer.generator.set_state(state["generator"])
    if hasattr(trainer, "updates"):
        trainer.updates = state["updates"]
