"""TensorBoard scalars/text and a console progress bar, shared by tournaments, leagues and trainers.

Why here: every long-running part of arena reports the same two ways — a live bar for the
person watching and TensorBoard events for later — and should not each re-learn how. The
TensorBoard writer uses the ``tensorboard`` package's own event writer (no torch needed).

    with TensorBoard(run_dir / "tb") as tb:
        tb.scalar("rating/bt/cfr", 1180.0, step=400)
        tb.text("leaderboard", markdown, step=400)
    with progress("tournament", total=240) as bar:
        bar.advance(1); bar.add_total(60)
"""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


class TensorBoard:
    """Append-only TensorBoard event file in ``logdir`` (created on first use)."""

    def __init__(self, logdir: str | Path, enabled: bool = True) -> None:
        self.logdir = Path(logdir)
        self.enabled = enabled
        self._writer: Any = None

    def _w(self) -> Any:
        if self._writer is None:
            from tensorboard.summary.writer.event_file_writer import EventFileWriter

            self.logdir.mkdir(parents=True, exist_ok=True)
            self._writer = EventFileWriter(str(self.logdir))
        return self._writer

    def _add(self, summary: Any, step: int) -> None:
        from tensorboard.compat.proto import event_pb2

        self._w().add_event(event_pb2.Event(wall_time=time.time(), step=int(step), summary=summary))

    def scalar(self, tag: str, value: float, step: int) -> None:
        if not self.enabled:
            return
        from tensorboard.compat.proto import summary_pb2

        self._add(summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=float(value))]), step)

    def scalars(self, values: dict[str, float], step: int) -> None:
        for tag, v in values.items():
            self.scalar(tag, v, step)

    def text(self, tag: str, text: str, step: int) -> None:
        """A text summary (Markdown), shown in TensorBoard's Text tab."""
        if not self.enabled:
            return
        from tensorboard.compat.proto import summary_pb2, tensor_pb2, tensor_shape_pb2
        from tensorboard.plugins.text import metadata

        tensor = tensor_pb2.TensorProto(dtype=7, string_val=[text.encode()],  # 7 = DT_STRING
                                        tensor_shape=tensor_shape_pb2.TensorShapeProto(
                                            dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=1)]))
        meta = metadata.create_summary_metadata(display_name=tag, description="")
        self._add(summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, metadata=meta, tensor=tensor)]), step)

    def session_start(self, step: int) -> None:
        """Mark a restart at ``step``: TensorBoard drops events a crashed run wrote at ``step``
        or later (``SessionLog.START``), so a resumed run's curves stay continuous."""
        if not self.enabled:
            return
        from tensorboard.compat.proto import event_pb2

        self._w().add_event(event_pb2.Event(wall_time=time.time(), step=int(step),
                                            session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START)))

    def flush(self) -> None:
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> "TensorBoard":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def read_scalars(logdir: str | Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar in ``logdir``'s event files: ``{tag: [(step, value), ...]}`` (for tests, tools)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(logdir))
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


class _Bar:
    def __init__(self, prog: Any, task: Any) -> None:
        self._p, self._t = prog, task

    def advance(self, n: int = 1) -> None:
        if self._p is not None:
            self._p.advance(self._t, n)

    def add_total(self, n: int) -> None:
        if self._p is not None:
            total = self._p.tasks[self._t].total or 0
            self._p.update(self._t, total=total + n)

    def describe(self, text: str) -> None:
        if self._p is not None:
            self._p.update(self._t, description=text)


@contextmanager
def progress(description: str, total: int = 0, enabled: bool = True) -> Iterator[_Bar]:
    """A rich progress bar on stderr (games done / planned, rate, ETA); a no-op when disabled
    or when stderr is not a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield _Bar(None, None)
        return
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=Console(stderr=True), transient=False) as prog:
        yield _Bar(prog, prog.add_task(description, total=total))
