"""``arena tournament CONFIG [key=value ...]`` and ``arena leaderboard RUN_DIR [--json]``."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any

from arena.cli_api import Command, add_config_arguments, config_and_overrides, console, emit_json
from arena.config import load_config, to_yaml
from arena.errors import ArenaError
from arena.evaluation.leaderboard import compute, plot_payoff, plot_ratings, rich_table, to_json, write_files
from arena.evaluation.ratings.outcomes import winner_rows
from arena.evaluation.store import RunStore
from arena.evaluation.tournament import TournamentConfig, run_tournament
from arena.hookspecs import hookimpl


def _tournament_args(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p, "tournament YAML (see configs/tournament/)", "out=runs/x format.games=20")
    p.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no table")


def _tournament_run(args: argparse.Namespace) -> int:
    cfg = load_config(TournamentConfig, *config_and_overrides(args.config, args.overrides))
    result = run_tournament(cfg, config_text=to_yaml(cfg), quiet=args.quiet or args.json)
    if args.json:
        emit_json(
            dict(
                to_json(result.board),
                run_dir=result.run_dir,
                format_ranking=result.format_ranking,
                played=result.played,
            )
        )
        return 0
    if not args.quiet:
        console().print(rich_table(result.board, f"{cfg.game} — {cfg.format.kind}"))
        if result.format_ranking:
            print(f"{cfg.format.kind} ranking: {' > '.join(result.format_ranking)}")
    print(f"{result.played} games played now, {result.total} in the store; run directory: {result.run_dir}")
    return 0


def _leaderboard_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", help="a run directory written by `arena tournament` (or a league)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--bootstrap", type=int, default=None, help="bootstrap rounds for the interval")
    p.add_argument("--write", action="store_true", help="also rewrite leaderboard.{md,csv,json} and the PNGs")
    p.add_argument(
        "--export",
        choices=["pairs"],
        help="instead of the board, every comparison as CSV rows model_a,model_b,winner (LMArena's arena-rank format)",
    )
    p.add_argument("--out", help="with --export: the CSV file (default: stdout)")


def _stored_tournament(store: RunStore) -> TournamentConfig | None:
    """The tournament config a run directory was written with (None: a league's or another
    tool's run, which is ranked with the default rating settings)."""
    if store.config_text() is None:
        return None
    try:
        return load_config(TournamentConfig, store.path / "config.yaml")
    except ArenaError:
        return None


def _export_pairs(store: RunStore, out: str | None) -> int:
    """Every stored comparison as ``model_a,model_b,winner`` rows, streamed in plan order."""
    fh = open(out, "w", newline="") if out else sys.stdout
    try:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["model_a", "model_b", "winner"])
        n = 0
        for row in winner_rows(store.iter_matches()):
            writer.writerow(row)
            n += 1
    finally:
        if out:
            fh.close()
    if out:
        print(f"wrote {n} pairs to {out}", file=sys.stderr)
    return 0


def _leaderboard_run(args: argparse.Namespace) -> int:
    if args.export:
        with RunStore.open_existing(args.run_dir) as store:
            return _export_pairs(store, args.out)
    with RunStore.open_existing(args.run_dir) as store:
        cfg = _stored_tournament(store)
        kw: dict[str, Any] = {}
        if cfg is not None:
            rc = cfg.ratings
            kw = {
                "elo_k": rc.elo_k,
                "bootstrap": rc.bootstrap,
                "openskill_model": rc.openskill_model,
                "alpha": rc.alpha,
                "rank_by": rc.rank_by,
            }
        if args.bootstrap is not None:
            kw["bootstrap"] = args.bootstrap
        meta = store.meta()
        names = json.loads(meta.get("agents", "[]"))  # pool order: the bootstrap depends on it
        seed = cfg.seed if cfg is not None else 0
        board = compute(store.iter_matches(), names, scale=store.margin_scale(), seed=seed, **kw)
        extra = {"format_ranking": json.loads(meta.get("format_ranking", "[]"))}
        title = Path(args.run_dir).name
        if cfg is not None:
            extra["format"] = cfg.format.kind
            title = f"{cfg.game} — {cfg.format.kind}"
        if args.write:
            write_files(board, store.path, title, extra)
            plot_payoff(board, store.path / "payoff.png")
            plot_ratings(store.snapshots("bt"), store.path / "ratings.png")
    if args.json:
        emit_json(to_json(board, extra))
        return 0
    console().print(rich_table(board, title))
    return 0


@hookimpl
def arena_commands() -> list[Command]:
    return [
        Command(
            "tournament",
            "run or resume a tournament from a YAML config into a run directory",
            _tournament_args,
            _tournament_run,
        ),
        Command("leaderboard", "show the leaderboard of a run directory", _leaderboard_args, _leaderboard_run),
    ]
