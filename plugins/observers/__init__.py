"""Built-in observers: the TensorBoard writer and the progress display, as plugins on the event
hooks (:mod:`arena.hookspecs`). A third-party observer implements the same hooks and receives
exactly the same events.

- **tensorboard** — every ``arena_league_step`` and ``arena_metrics_recorded`` metric as a scalar
  in ``RUN/tb`` (league, train, llm-train; a tournament's rating curves and final ratings); a
  ``SessionLog.START`` at the resume step, so a resumed run's curves stay continuous; the
  leaderboard as text at the end. Off when the run says ``tensorboard: false`` or writes no run
  directory.
- **progress** — a bar on a terminal, a plain line every few seconds otherwise; counts steps
  (leagues) or games (matches, tournaments, hosted games), its total growing as the run plans
  more (``arena_run_planned``). Off when the run says ``progress: false``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.hookspecs import RunContext, hookimpl
from arena.reporting import Progress, TensorBoard

_BOARDS: dict[str, TensorBoard] = {}
_BARS: dict[str, Progress] = {}


@hookimpl
def arena_run_started(run: RunContext) -> None:
    if not run.run_id:
        return
    if run.tensorboard and run.run_dir:
        tb = TensorBoard(Path(run.run_dir) / "tb")
        if run.resume_step:
            tb.session_start(run.resume_step)
        _BOARDS[run.run_id] = tb
    if run.progress:
        _BARS[run.run_id] = Progress(run.kind, run.total, run.done, run.unit)


@hookimpl
def arena_run_planned(run: RunContext) -> None:
    bar = _BARS.get(run.run_id)
    if bar is not None and run.total is not None:
        bar.add_total(run.total - (bar.total or 0))


@hookimpl
def arena_metrics_recorded(step: int, metrics: dict[str, float], context: RunContext) -> None:
    tb = _BOARDS.get(context.run_id)
    if tb is not None:
        tb.scalars(metrics, step)


@hookimpl
def arena_league_step(step: int, metrics: dict[str, float], context: RunContext) -> None:
    tb = _BOARDS.get(context.run_id)
    if tb is not None:
        tb.scalars(metrics, step)
    bar = _BARS.get(context.run_id)
    if bar is not None and context.unit == "steps":
        bar.advance(1)


@hookimpl
def arena_checkpoint_written(path: str, agent: str, context: RunContext) -> None:
    tb = _BOARDS.get(context.run_id)
    if tb is not None:  # what a resumed run keeps is on disk by the time the step is committed
        tb.flush()


@hookimpl
def arena_matches_finished(results: list[Any], context: RunContext) -> None:
    bar = _BARS.get(context.run_id)
    if bar is not None and context.unit == "games":
        bar.advance(len(results))


@hookimpl
def arena_run_finished(run: RunContext, summary: dict[str, Any]) -> None:
    tb = _BOARDS.pop(run.run_id, None)
    if tb is not None:
        if summary.get("leaderboard_markdown"):
            tb.text("leaderboard", summary["leaderboard_markdown"], int(summary.get("step") or 0))
        tb.close()
    bar = _BARS.pop(run.run_id, None)
    if bar is not None:
        bar.close()
