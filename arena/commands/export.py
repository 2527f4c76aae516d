"""``arena export RUN_DIR --format trl-prompt|trl-preference|verl|jsonl``: a run's LLM data for
post-training tools (:mod:`arena.evaluation.export`), streamed to a file or stdout.
``--source human`` exports the people's decisions of hosted games instead
(:mod:`arena.evaluation.human_data`): SFT rows and DPO pairs in the prompt of ``--agent``."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

from arena.cli_api import Command
from arena.errors import ArenaError
from arena.evaluation import human_data as hd
from arena.evaluation.export import FORMATS, rows, trl_prompt, verl, write_jsonl, write_parquet
from arena.hookspecs import hookimpl
from arena.loading import load_agent, load_game

SOURCES = ("run", "human")


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", help="a run directory (tournament, league, arena llm-train, arena host)")
    p.add_argument("--format", required=True, choices=FORMATS, help="output format")
    p.add_argument(
        "--out",
        help="output file (default RUN_DIR/export/<format>.jsonl, .parquet for verl; '-' streams JSON lines to stdout)",
    )
    p.add_argument(
        "--source",
        choices=SOURCES,
        default="run",
        help="run: the LLM decisions and stored pairs; human: the people's decisions of hosted games",
    )
    human = p.add_argument_group("--source human")
    human.add_argument("--agent", help="the agent whose prompt the rows use and whose move DPO rejects (an llm spec)")
    human.add_argument(
        "--rejected",
        choices=("agent", "sampled"),
        default="sampled",
        help="trl-preference: the rejected move is a uniformly drawn other legal move (default; a pair at every "
        "decision) or the agent's own (only where it differs from the person's)",
    )
    human.add_argument("--holdout", type=float, default=0.2, help="fraction of games held out, by game (default 0.2)")
    human.add_argument(
        "--part", choices=("train", "heldout", "all"), default="train", help="which games to export (default train)"
    )
    human.add_argument("--human", help="only this person's seat name (default: every human seat)")


def _human_source(args: argparse.Namespace, run: Path) -> Iterator[dict[str, Any]]:
    hd.check_holdout(args.holdout, args.part)
    if args.format == "jsonl":
        source: Iterator[dict[str, Any]] = hd.human_decisions(run, args.holdout, args.part, args.human)
    else:
        if not args.agent:
            raise ArenaError(
                f"export: --source human --format {args.format} needs --agent (the llm agent whose prompt the rows use)"
            )
        first = next(hd.human_decisions(run, args.holdout, "all", args.human), None)
        if first is None:
            raise ArenaError(f"{run} holds no human decisions (games hosted with `arena host` keep them)")
        agent = load_agent(args.agent, load_game(first["game"]))
        if args.format == "trl-preference":
            source = hd.pair_records(run, agent, args.holdout, args.part, args.rejected, args.human)
        else:
            source = hd.sft_records(run, agent, args.holdout, args.part, args.human)
    first_row = next(source, None)
    if first_row is None:
        raise ArenaError(
            f"{run} gives no {args.format} rows from human decisions (part {args.part!r}"
            + (
                ", every decision agrees with the agent: try --rejected sampled)"
                if args.format == "trl-preference"
                else ")"
            )
        )
    return _human_shaped(first_row, source, args.format)


def _human_shaped(first: dict[str, Any], rest: Iterator[dict[str, Any]], fmt: str) -> Iterator[dict[str, Any]]:
    for i, row in enumerate([first, *rest]):
        if fmt == "trl-prompt":
            yield {**trl_prompt(row), "part": row["part"], "agent": row["agent"]}
        elif fmt == "verl":
            yield verl(row, i)
        else:
            yield row


def _run(args: argparse.Namespace) -> int:
    fmt, run = args.format, Path(args.run_dir)
    source = _human_source(args, run) if args.source == "human" else rows(run, fmt)
    if args.out == "-":
        if fmt == "verl":
            raise ArenaError("export: --format verl writes parquet, which cannot stream to stdout; give --out FILE")
        write_jsonl(source, sys.stdout)
        return 0
    stem = fmt if args.source == "run" else f"human-{fmt}-{args.part}"
    target = Path(args.out) if args.out else run / "export" / f"{stem}.{'parquet' if fmt == 'verl' else 'jsonl'}"
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
