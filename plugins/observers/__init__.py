"""Built-in observers: the TensorBoard writer and the progress display, as plugins on the event
hooks (:mod:`arena.hookspecs`). A third-party observer implements the same hooks and receives
exactly the same events.

- **tensorboard** — every ``arena_league_step`` metric as a scalar in ``RUN/tb`` (league, train,
  llm-train); a ``SessionLog.START`` at the resume step, so a resumed run's curves stay
  continuous; the leaderboard as text at the end. Off when the run says ``tensorboard: false``
  or writes no run directory.
- **progress** — a bar on a terminal, a plain line every few seconds otherwise; counts steps
  (leagues) or games (matches, hosted games). Off when the run says ``progress: false``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.hookspecs import hookimpl

_BOARDS: dict[str, Any] = {}
_BARS: dict[str, Any] = {}


@hookimpl
def arena_run_started(run: dict[str, Any]) -> None:
    rid = run.get("run_id")
    if rid is None:
        return
    if run.get("tensorboard") and run.get("run_dir"):
        from arena.reporting import TensorBoard

        tb = TensorBoard(Path(run["run_dir"]) / "tb")
        if run.get("resume_step"):
            tb.session_start(int(run["resume_step"]))
        _BOARDS[rid] = tb
    if run.get("progress"):
        from arena.reporting import Progress

        _BARS[rid] = Progress(
            f"{run.get('kind', 'run')}", run.get("total"), int(run.get("done") or 0), run.get("unit", "games")
        )


@hookimpl
def arena_league_step(step: int, metrics: dict[str, float], context: dict[str, Any]) -> None:
    rid = context.get("run_id")
    tb = _BOARDS.get(rid)
    if tb is not None:
        tb.scalars(metrics, step)
    bar = _BARS.get(rid)
    if bar is not None and context.get("unit") == "steps":
        bar.advance(1)


@hookimpl
def arena_checkpoint_written(path: str, agent: str, context: dict[str, Any]) -> None:
    tb = _BOARDS.get(context.get("run_id"))
    if tb is not None:  # what a resumed run keeps is on disk by the time the step is committed
        tb.flush()


@hookimpl
def arena_matches_finished(results: list[Any], context: dict[str, Any]) -> None:
    bar = _BARS.get(context.get("run_id"))
    if bar is not None and context.get("unit") == "games":
        bar.advance(len(results))


@hookimpl
def arena_run_finished(run: dict[str, Any], summary: dict[str, Any]) -> None:
    rid = run.get("run_id")
    tb = _BOARDS.pop(rid, None)
    if tb is not None:
        if summary.get("leaderboard_markdown"):
            tb.text("leaderboard", summary["leaderboard_markdown"], int(summary.get("step") or 0))
        tb.close()
    bar = _BARS.pop(rid, None)
    if bar is not None:
        bar.close()
