"""TensorBoard scalars/text and a console progress display, for the observer plugins every run reports to.

Why here: every long-running part of arena reports the same two ways — a live bar for the
person watching and TensorBoard events for later — and should not each re-learn how. The
TensorBoard writer uses the ``tensorboard`` package's own event writer (no torch needed).

    with TensorBoard(run_dir / "tb") as tb:
        tb.scalar("rating/bt/cfr", 1180.0, step=400)
        tb.text("leaderboard", markdown, step=400)
    bar = Progress("tournament", total=240)
    bar.advance(1); bar.add_total(60); bar.close()
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any


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

        tensor = tensor_pb2.TensorProto(
            dtype=7,
            string_val=[text.encode()],  # 7 = DT_STRING
            tensor_shape=tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=1)]),
        )
        meta = metadata.create_summary_metadata(display_name=tag, description="")
        self._add(summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, metadata=meta, tensor=tensor)]), step)

    def session_start(self, step: int) -> None:
        """Mark a restart at ``step``: TensorBoard drops events a crashed run wrote at ``step``
        or later (``SessionLog.START``), so a resumed run's curves stay continuous."""
        if not self.enabled:
            return
        from tensorboard.compat.proto import event_pb2

        self._w().add_event(
            event_pb2.Event(
                wall_time=time.time(),
                step=int(step),
                session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START),
            )
        )

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


class Progress:
    """Progress on stderr: a rich bar (done / total, rate, ETA) on a terminal; otherwise a plain
    line every ``every`` seconds and one at the end, so CI and cluster logs are never silent."""

    def __init__(
        self, description: str, total: int | None = None, done: int = 0, unit: str = "games", every: float = 5.0
    ) -> None:
        self.description, self.total, self.done, self.unit, self.every = description, total, done, unit, every
        self.start = self._last = time.monotonic()
        self._shown = -1  # ``done`` at the last plain line: the closing line is not printed twice
        self._rich: Any = None
        self._task: Any = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
            from rich.progress import Progress as RichProgress

            self._rich = RichProgress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
            )
            self._rich.start()
            self._task = self._rich.add_task(description, total=total or None, completed=done)

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self._rich is not None:
            self._rich.advance(self._task, n)
        elif time.monotonic() - self._last >= self.every:
            self._line()

    def add_total(self, n: int) -> None:
        self.total = (self.total or 0) + n
        if self._rich is not None:
            self._rich.update(self._task, total=self.total)

    def _line(self) -> None:
        self._last, self._shown = time.monotonic(), self.done
        elapsed = self._last - self.start
        of = f"/{self.total}" if self.total else ""
        print(f"{self.description}: {self.done}{of} {self.unit} ({elapsed:.0f}s)", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()
            self._rich = None
        elif self.done and self.done != self._shown:
            self._line()
