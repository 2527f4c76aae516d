"""``arena bench NAME [--json] ...``: run one benchmark (an ``arena_benchmarks`` entry).

A figure means little without what it was measured against and how busy the machine was: the
machine's load and the benchmark's baseline are printed before the run (so a slow or
interrupted run still shows them), the figures after it, the headline ratios last. With
``--json`` stdout holds one JSON document and nothing else: whatever the benchmark prints while
it runs (progress, its own tables, the output of processes it starts) goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from functools import partial
from typing import Iterator

from arena.cli_api import Benchmark, Command, emit_json, machine_load
from arena.commands.deferred_parser import DeferredParser
from arena.errors import ArenaError
from arena.hookspecs import hookimpl
from arena.registry import get_registry


def _args(p: argparse.ArgumentParser) -> None:
    """One sub-parser per benchmark, listed from the plugin index; a benchmark's plugin is
    imported only when it is the one chosen."""
    sub = p.add_subparsers(dest="bench", metavar="BENCHMARK", parser_class=DeferredParser)
    for name, text in get_registry().summaries("benchmark"):
        sub.add_parser(
            name, help=text.replace("%", "%%"), description=text, add_arguments=partial(_benchmark_arguments, name)
        )


def _benchmark_arguments(name: str, p: argparse.ArgumentParser) -> None:
    entry: Benchmark = get_registry().get("benchmark", name)
    p.add_argument("--json", action="store_true", help="print figures as JSON")
    if entry.add_arguments:
        entry.add_arguments(p)
    p.set_defaults(bench_entry=entry)


def _run(args: argparse.Namespace) -> int:
    entry: Benchmark | None = getattr(args, "bench_entry", None)
    if entry is None:
        names = ", ".join(name for name, _ in get_registry().summaries("benchmark")) or "none"
        raise ArenaError(f"name a benchmark: arena bench NAME (available: {names})")
    header = {"machine_load_at_start": machine_load(), "baseline": entry.baseline or "(none named)"}
    if args.json:
        with stdout_to_stderr():
            figures = entry.run(args)
        emit_json({**header, **figures})
        return 0
    for k, v in header.items():  # before the run, so that a slow or interrupted run still shows them
        print(f"{k:>40}: {v}", flush=True)
    figures = entry.run(args)
    for k, v in figures.items():
        print(f"{k:>40}: {v}")
    for k, v in figures.items():
        if entry.ratio and k.endswith(entry.ratio):
            print(f"{'ratio vs baseline':>40}: {k} = {v}")
    return 0


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send stdout to stderr for the duration, at the file-descriptor level too, so that
    processes started meanwhile (which inherit descriptor 1) write there as well."""
    stdout = sys.stdout
    stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        stdout.flush()
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)


@hookimpl
def arena_commands() -> list[Command]:
    return [Command("bench", "run a benchmark (arena bench NAME)", _args, _run)]
