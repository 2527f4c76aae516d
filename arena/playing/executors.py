"""The one place an executor is chosen from its config: in process, a local process pool, or Ray.

Why a module of its own: the Ray executor builds on the executor contract
(:mod:`arena.playing.executor`), so the factory that may return either sits above both.
"""

from __future__ import annotations

from typing import Any, Mapping

from arena.playing.executor import (
    Executor,
    ExecutorConfig,
    InProcessExecutor,
    ProcessPoolExecutor,
    check_config,
)
from arena.playing.ray_executor import RayExecutor


def make_executor(cfg: ExecutorConfig | Mapping[str, Any] | None = None) -> Executor:
    """The executor ``cfg`` names (a config, its mapping, or None for in-process), checked first."""
    if cfg is None:
        cfg = ExecutorConfig()
    elif isinstance(cfg, Mapping):
        cfg = ExecutorConfig(**dict(cfg))
    check_config(cfg)
    if cfg.kind == "inprocess":
        return InProcessExecutor()
    if cfg.kind == "process":
        return ProcessPoolExecutor(cfg.workers)
    return RayExecutor(cfg)
