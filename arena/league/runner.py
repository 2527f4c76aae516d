"""The one training loop: a population plays, learners improve, snapshots join the pool,
evaluation rates everyone, and a crash loses nothing. ``arena league``, ``arena train`` and
``arena llm-train`` all run here.

Each step: solvers improve; every training unit (team or lone learner) plays ``games_per_step``
games against opponents drawn by its matchmaking and its trainer updates on them
(:mod:`arena.league.rollouts`); every ``snapshot_every`` steps a frozen copy joins the opponent
pool (:mod:`arena.league.population`); every ``evaluation.every`` steps the newest snapshots
play a gauntlet against every earlier evaluation member and learner metrics are measured
(:mod:`arena.league.evaluation`); every ``checkpoint_every`` steps the step is committed
(:mod:`arena.league.checkpoints`). Every game is stored under an id derived from the step, the
pairing and a seed named by its stream (:meth:`arena.league.workspace.Workspace.seed`), so a
rerun of the same command resumes from the last commit and replays the same games. Observers
(TensorBoard, progress, third-party plugins) hear every event through the hooks in
:mod:`arena.hookspecs`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from arena.hookspecs import RunContext
from arena.league import checkpoints
from arena.league.config import LeagueConfig, validate
from arena.league.evaluation import Evaluation
from arena.league.metrics import training_scalars
from arena.league.population import Member, Population, Unit
from arena.league.rollouts import Rollouts
from arena.league.workspace import LeagueState, Workspace


@dataclass
class LeagueResult:
    run_dir: str
    steps_run: int
    board: dict[str, Any] | None
    train_games: int
    eval_games: int
    metrics: list[dict[str, Any]] = field(default_factory=list)
    results: dict[str, Any] | None = None
    """What ``results.json`` holds (None when no learner was measured)."""


class League:
    """Builds the population from a validated config and runs (or resumes) it in ``cfg.out``."""

    def __init__(
        self,
        cfg: LeagueConfig,
        config_text: str | None = None,
        quiet: bool = False,
        log: Callable[[str], None] | None = None,
        kind: str = "league",
    ) -> None:
        validate(cfg)
        _torch_threads(cfg.torch_threads)
        self.cfg = cfg
        self.work = Workspace(cfg, config_text, kind, quiet, log)
        self.run_dir = self.work.run_dir
        self.state = LeagueState()
        self.results: dict[str, Any] | None = None
        self._started = self._finished = False
        try:
            self._build()
            self.work.executor()  # an unreachable cluster or impossible request fails here, before any step
        except BaseException:
            self.close()
            self.work.discard()
            raise

    def _build(self) -> None:
        """The phases, as of the last committed step (or fresh); observers hear the run start."""
        self.state, ckpt = checkpoints.resume(self.work)
        self.population = Population(self.work, self.state, ckpt)
        self.rollouts = Rollouts(self.work, self.population, self.state)
        self.evaluation = Evaluation(self.work, self.population, self.state)
        committed = self.state.step if ckpt is not None else 0
        if committed:
            self.work.log(f"resuming from step {committed} (checkpoint {ckpt})")
        self._started = True
        run = self.context().with_(resume_step=committed + 1 if committed else 0, done=committed)
        self.work.hook.arena_run_started(run=run)

    @property
    def members(self) -> dict[str, Member]:
        return self.population.members

    @property
    def units(self) -> dict[str, Unit]:
        return self.population.units

    def context(self) -> RunContext:
        """What observers are told about this run (events add their keys with ``.with_``)."""
        return self.work.context()

    # -- the loop ------------------------------------------------------------------------------------
    def run(self) -> LeagueResult:
        start_step = self.state.step
        if start_step == 0 and not self.state.metrics:
            self.evaluation.measure(0, {})
        for step in range(start_step + 1, self.cfg.steps + 1):
            t0 = time.perf_counter()
            metrics = self.step(step)
            metrics["league/step_seconds"] = time.perf_counter() - t0
            self.work.hook.arena_league_step(step=step, metrics=metrics, context=self.context())
            if step % self.cfg.checkpoint_every == 0 or step == self.cfg.steps:
                self.commit(step)
        board = self.finish()
        return LeagueResult(
            str(self.run_dir),
            self.cfg.steps - start_step,
            board,
            self.work.stores["train"].count(),
            self.work.store.count(),
            list(self.state.metrics),
            self.results,
        )

    def step(self, step: int) -> dict[str, float]:
        """Solvers improve, every unit trains, snapshots join the pool, and (when due) evaluation."""
        metrics = self.population.improve_solvers()
        refs = self.population.refs()
        for unit in self.population.units.values():
            metrics.update(self.rollouts.train(step, unit, refs))
        self.population.snapshot_learners(step)
        if step % self.cfg.evaluation.every == 0 or step == self.cfg.steps:
            metrics.update(self.evaluation.evaluate(step))
            metrics.update(self.evaluation.measure(step, metrics))
        drawn = training_scalars(metrics)
        if drawn:
            self.state.training.append({"step": step, **drawn})
        self.state.step = step
        return metrics

    # -- checkpoints and the end ---------------------------------------------------------------------
    def commit(self, step: int) -> None:
        """Learners, trainer states and the league state (with the rollouts started ahead), then
        the commit mark."""
        self.state.pending = self.rollouts.pending()
        checkpoints.commit(self.work, self.population, self.state, step)

    def finish(self) -> dict[str, Any] | None:
        """Metrics files, leaderboard and plots from what the stores and the state hold."""
        self.results = checkpoints.write_results(self.work, self.state)
        ratings = self.evaluation.ratings(list(self.state.eval_members))
        board = checkpoints.write_board(self.work, self.state, ratings)
        self._finished = True
        self.work.hook.arena_run_finished(run=self.context(), summary=checkpoints.summary(self.work, self.state, board))
        return board

    def close(self) -> None:
        if self._started and not self._finished:
            self._finished = True  # observers close what they opened for this run (it stopped early)
            self.work.hook.arena_run_finished(
                run=self.context(), summary={"status": "stopped", "step": self.state.step}
            )
        self.work.close()


def _torch_threads(n: int) -> None:
    if n > 0:
        try:
            import torch  # heavy and optional: only a run that asks for a thread count imports it here
        except ImportError:
            return
        torch.set_num_threads(n)


def run_league(
    cfg: LeagueConfig,
    config_text: str | None = None,
    quiet: bool = False,
    log: Callable[[str], None] | None = None,
    kind: str = "league",
) -> LeagueResult:
    league = League(cfg, config_text, quiet, log, kind)
    try:
        return league.run()
    finally:
        league.close()
