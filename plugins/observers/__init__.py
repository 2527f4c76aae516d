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

Runs that still send plain mappings are read through :meth:`RunContext.of`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from arena.hookspecs import RunContext, hookimpl
from arena.reporting import Progress, TensorBoard

_BOARDS: dict[str, TensorBoard] = {}
_BARS: dict[str, Progress] = {}


@hookimpl
def arena_run_started(run: Mapping[str, Any]) -> None:
    ctx = RunContext.of(run)
    if not ctx.run_id:
        return
    if ctx.tensorboard and ctx.run_dir:
        tb = TensorBoard(Path(ctx.run_dir) / "tb")
        if ctx.resume_step:
            tb.session_start(ctx.resume_step)
        _BOARDS[ctx.run_id] = tb
    if ctx.progress:
        _BARS[ctx.run_id] = Progress(ctx.kind, ctx.total, ctx.done, ctx.unit)


@hookimpl
def arena_run_planned(run: Mapping[str, Any]) -> None:
    ctx = RunContext.of(run)
    bar = _BARS.get(ctx.run_id)
    if bar is not None and ctx.total is not None:
        bar.add_total(ctx.total - (bar.total or 0))


@hookimpl
def arena_metrics_recorded(step: int, metrics: dict[str, float], context: Mapping[str, Any]) -> None:
    tb = _BOARDS.get(RunContext.of(context).run_id)
    if tb is not None:
        tb.scalars(metrics, step)


@hookimpl
def arena_league_step(step: int, metrics: dict[str, float], context: Mapping[str, Any]) -> None:
    ctx = RunContext.of(context)
    tb = _BOARDS.get(ctx.run_id)
    if tb is not None:
        tb.scalars(metrics, step)
    bar = _BARS.get(ctx.run_id)
    if bar is not None and ctx.unit == "steps":
        bar.advance(1)


@hookimpl
def arena_checkpoint_written(path: str, agent: str, context: Mapping[str, Any]) -> None:
    tb = _BOARDS.get(RunContext.of(context).run_id)
    if tb is not None:  # what a resumed run keeps is on disk by the time the step is committed
        tb.flush()


@hookimpl
def arena_matches_finished(results: list[Any], context: Mapping[str, Any]) -> None:
    ctx = RunContext.of(context)
    bar = _BARS.get(ctx.run_id)
    if bar is not None and ctx.unit == "games":
        bar.advance(len(results))


@hookimpl
def arena_run_finished(run: Mapping[str, Any], summary: dict[str, Any]) -> None:
    ctx = RunContext.of(run)
    tb = _BOARDS.pop(ctx.run_id, None)
    if tb is not None:
        if summary.get("leaderboard_markdown"):
            tb.text("leaderboard", summary["leaderboard_markdown"], int(summary.get("step") or 0))
        tb.close()
    bar = _BARS.pop(ctx.run_id, None)
    if bar is not None:
        bar.close()
