"""``arena export RUN_DIR --format trl-prompt|trl-preference|verl|jsonl``: a run's LLM data for
post-training tools (:mod:`arena.evaluation.export`), streamed to a file or stdout."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from arena.cli_api import Command
from arena.errors import ArenaError
from arena.evaluation.export import FORMATS, rows, write_jsonl, write_parquet
from arena.hookspecs import hookimpl


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", help="a run directory (tournament, league, arena llm-train)")
    p.add_argument("--format", required=True, choices=FORMATS, help="output format")
    p.add_argument(
        "--out",
        help="output file (default RUN_DIR/export/<format>.jsonl, .parquet for verl; '-' streams JSON lines to stdout)",
    )


def _run(args: argparse.Namespace) -> int:
    fmt, run = args.format, Path(args.run_dir)
    source = rows(run, fmt)
    if args.out == "-":
        if fmt == "verl":
            raise ArenaError("export: --format verl writes parquet, which cannot stream to stdout; give --out FILE")
        write_jsonl(source, sys.stdout)
        return 0
    target = Path(args.out) if args.out else run / "export" / f"{fmt}.{'parquet' if fmt == 'verl' else 'jsonl'}"
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:  # the file appears whole or not at all (an error mid-way leaves nothing)
        if fmt == "verl":
            os.close(fd)
            n = write_parquet(source, Path(tmp))
        else:
            with os.fdopen(fd, "w") as fh:
                n = write_jsonl(source, fh)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    print(f"wrote {n} {fmt} rows to {target}", file=sys.stderr)
    return 0


@hookimpl
def arena_commands() -> list[Command]:
    return [Command("export", "a run's LLM decisions and preference pairs for TRL, verl or as JSON lines", _args, _run)]
