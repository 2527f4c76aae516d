"""What every phase of a league run shares: the config and game, the run directory and its three
stores (evaluation games in ``RUN/``, training games in ``RUN/train/``, metrics games in
``RUN/metrics/``), the executor, the run's named seeds, the context observers hear, and the
:class:`LeagueState` a checkpoint saves."""

from __future__ import annotations

import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from arena.evaluation.schedule import PlannedGame, Submitted, submit_planned
from arena.evaluation.store import RunStore
from arena.hookspecs import RunContext
from arena.league.config import LeagueConfig, fingerprint_of
from arena.loading import load_game
from arena.playing.executor import Executor, task_games
from arena.playing.executors import make_executor
from arena.registry import get_registry
from arena.rng import derive_seed


@dataclass
class LeagueState:
    """What ``checkpoints/step-N/state.json`` holds besides weights: enough to resume after step N."""

    step: int = 0
    snapshots: list[dict] = field(default_factory=list)
    eval_members: list[str] = field(default_factory=list)
    payoff: dict[str, list[float]] = field(default_factory=dict)
    payoff_returns: dict[str, list[float]] = field(default_factory=dict)
    """Decayed mean returns per ordered pair (the meta-solvers' meta-game)."""
    solver_budget: dict[str, int] = field(default_factory=dict)
    evaluated_at: list[int] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    """One row per learner-metrics evaluation (``metrics.csv``)."""
    versions: dict[str, int] = field(default_factory=dict)
    """Live learners' and solvers' versions (how many times each changed)."""
    pending: list[dict[str, Any]] = field(default_factory=list)
    """Asynchronous training: rollouts planned and started for later steps (replayed on resume)."""
    training: list[dict[str, float]] = field(default_factory=list)
    """One row per step: the solver and learner scalars ``training.png`` draws."""


class Workspace:
    """Opens the run (one writer a run: the evaluation store holds the lock) and hands planned
    games to the executor, announced to observers with this run's context."""

    def __init__(
        self, cfg: LeagueConfig, config_text: str | None, kind: str, quiet: bool, log: Callable[[str], None] | None
    ) -> None:
        self.cfg, self.kind, self.quiet = cfg, kind, quiet
        self.log: Callable[[str], None] = log or (lambda s: None)
        self.game = load_game(cfg.game)  # free-text games too: agents that cannot talk forfeit those games
        self.fp = fingerprint_of(cfg)
        self._existed = _existing_ancestor(Path(cfg.out))
        self.store = RunStore.open(cfg.out, self.fp, config_text, kind="league", lock=True)
        self.run_dir = self.store.path
        self.stores = {
            "evaluation": self.store,
            "train": RunStore.open(self.run_dir / "train", self.fp, None, kind="league-train"),
            "metrics": RunStore.open(self.run_dir / "metrics", self.fp, None, kind="league-metrics"),
        }
        self.run_id = uuid.uuid4().hex
        self.started = time.perf_counter()
        self._executor: Executor | None = None

    def seed(self, *key: str | int) -> int:
        """The seed of one named stream of this run (every seed the league derives comes from
        here, so no two streams meet: :func:`arena.rng.derive_seed`)."""
        return derive_seed(self.cfg.seed, *key)

    def context(self) -> RunContext:
        """What observers are told about this run (every event carries it)."""
        return RunContext(
            kind=self.kind,
            run_id=self.run_id,
            run_dir=str(self.run_dir),
            total=self.cfg.steps,
            unit="steps",
            tensorboard=self.cfg.tensorboard,
            progress=self.cfg.progress and not self.quiet,
        )

    @property
    def hook(self) -> Any:
        return get_registry().hook

    def seconds(self) -> float:
        """Since the run (this invocation of it) started."""
        return time.perf_counter() - self.started

    def executor(self) -> Executor:
        if self._executor is None:
            self._executor = make_executor(self.cfg.executor)
        return self._executor

    def submit(
        self,
        store: str,
        games: Sequence[PlannedGame],
        refs: dict[str, Any],
        seed: int,
        step: int,
        **options: Any,
    ) -> Submitted:
        """Hand ``games`` to the executor, to be recorded in the store named ``store``
        (``evaluation``, ``train`` or ``metrics``; observers hear them with ``store`` and ``step``)."""
        return submit_planned(
            self.executor(),
            self.stores[store],
            games,
            refs,
            game=self.game.spec.full_name,
            seed=seed,
            chunk=task_games(self.cfg.executor),
            context=self.context().with_(store=store, step=step),
            **options,
        )

    def close(self) -> None:
        if self._executor is not None:
            self._executor.close()
            self._executor = None
        for store in self.stores.values():
            store.close()

    def discard(self) -> None:
        """After a refused start (an agent or trainer would not build): leave no half-made run
        behind, nor the empty parents it made."""
        if self.store.created:
            shutil.rmtree(self.run_dir, ignore_errors=True)
            _remove_empty_parents(self.run_dir, self._existed)


def _existing_ancestor(path: Path) -> Path:
    """The nearest of ``path`` and its parents that exists now."""
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _remove_empty_parents(run_dir: Path, existed: Path) -> None:
    """Remove the parents of ``run_dir`` a refused start created, up to ``existed``, while they are
    empty: never a directory that existed before or that another run (a sweep's other seeds) has
    written into since."""
    path = run_dir.absolute().parent
    while path != existed and existed in path.parents:
        try:
            path.rmdir()
        except OSError:  # not empty (another run's) or already gone: stop here
            return
        path = path.parent
