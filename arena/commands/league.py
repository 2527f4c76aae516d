"""``arena league CONFIG [key=value ...]``: run or resume a league (see :mod:`arena.league`)."""

from __future__ import annotations

import argparse
import sys

from arena.cli_api import Command, add_config_arguments, config_and_overrides, console, emit_json
from arena.config import load_config, to_yaml
from arena.evaluation.leaderboard import rich_table, to_json
from arena.hookspecs import hookimpl
from arena.league import LeagueConfig, run_league


def _args(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p, "league YAML (see configs/league/, configs/quickstart.yaml)", "out=runs/x steps=40")
    p.add_argument("--json", action="store_true", help="print the final leaderboard as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no table")


def _run(args: argparse.Namespace) -> int:
    cfg = load_config(LeagueConfig, *config_and_overrides(args.config, args.overrides))
    quiet = args.quiet or args.json
    say = (lambda s: None) if quiet else (lambda s: print(s, file=sys.stderr))
    result = run_league(cfg, config_text=to_yaml(cfg), quiet=quiet, log=say)
    if args.json:
        emit_json(
            dict(
                to_json(result.board) if result.board else {},
                run_dir=result.run_dir,
                steps_run=result.steps_run,
                train_games=result.train_games,
                eval_games=result.eval_games,
            )
        )
        return 0
    if not args.quiet and result.board:
        console().print(rich_table(result.board, f"{cfg.game} — league"))
    print(
        f"{result.steps_run} steps run now; {result.train_games} training and {result.eval_games} evaluation "
        f"games in the store; run directory: {result.run_dir} (leaderboard.md, payoff.png, ratings.png, tb/)"
    )
    return 0


@hookimpl
def arena_commands() -> list[Command]:
    return [
        Command(
            "league",
            "run or resume a league (population training + evaluation) from a YAML config",
            _args,
            _run,
            config=LeagueConfig,
        )
    ]
