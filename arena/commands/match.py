"""``arena match [CONFIG] [key=value ...] [--game G --agents A B ...] [--json]``: N games between
agents, summarized per agent.

With ``--json`` (or ``out=FILE``) the report streams as each batch of games finishes (one line
per game, then the per-agent summary; see :mod:`arena.playing.match_report`), so memory stays
flat however many games are played. Observers hear the run through the event hooks
(``arena_run_started``, ``arena_matches_finished`` per batch, ``arena_match_finished`` per game
when some plugin implements it, ``arena_run_finished``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from arena.agent import Agent
from arena.cli_api import Command, add_config_arguments, config_and_overrides
from arena.commands.tables import print_table
from arena.config import MatchConfig, load_config
from arena.errors import ArenaError
from arena.game import Game
from arena.hookspecs import RunContext, hookimpl
from arena.loading import dedupe_names, load_agent, load_game
from arena.playing.array_match import ArrayResults
from arena.playing.match import BatchResults, GameResult, play_games
from arena.playing.match_report import MatchSummary, ReportWriter
from arena.registry import event_caller, get_registry

FLAG_KEYS = ("game", "agents", "games", "seed", "timeout")
"""Config keys that a command-line flag of the same name sets."""


def _args(p: argparse.ArgumentParser) -> None:
    add_config_arguments(
        p, "optional YAML match config (keys: game, agents, games, seed, ...)", "games=200 seed=3", optional=True
    )
    p.add_argument("--game", help="game name")
    p.add_argument("--agents", nargs="+", help="one agent per seat: name or name:key=value,...")
    p.add_argument("--games", type=int, help="number of games (default 100)")
    p.add_argument("--seed", type=int, help="random seed (default 0)")
    p.add_argument("--no-rotate", action="store_true", help="keep agents in their seats (default: rotate)")
    p.add_argument("--timeout", type=float, help="seconds an agent may take per step before forfeiting")
    p.add_argument("--json", action="store_true", help="print results as JSON")


def match_config(args: argparse.Namespace) -> MatchConfig:
    """The config file, its ``key=value`` overrides, then the flags (which win)."""
    config, overrides = config_and_overrides(args.config, args.overrides, optional=True)
    flags: dict[str, Any] = {key: getattr(args, key) for key in FLAG_KEYS if getattr(args, key) is not None}
    if args.no_rotate:
        flags["rotate_seats"] = False
    return load_config(MatchConfig, config, overrides=overrides + [f"{k}={json.dumps(v)}" for k, v in flags.items()])


def load_players(cfg: MatchConfig) -> tuple[Game, list[Agent]]:
    """The game and one agent per seat, with distinct names."""
    game = load_game(cfg.game)
    agents = [load_agent(spec, game) for spec in cfg.agents]
    if len(agents) != game.spec.num_players:
        raise ArenaError(
            f"game '{game.spec.full_name}' has {game.spec.num_players} seats but {len(agents)} agents were given"
        )
    dedupe_names(agents)
    return game, agents


def play_match(cfg: MatchConfig, game: Game, agents: list[Agent], as_json: bool) -> MatchSummary:
    """Play the games, announcing them to observers and streaming the report (to stdout under
    ``--json``, to ``cfg.out`` when set); returns the per-agent summary."""
    hook = get_registry().hook
    run = RunContext("match", f"match-{id(agents)}", total=cfg.games, progress=not as_json)
    hook.arena_run_started(run=run)
    announce = event_caller(hook.arena_match_finished)  # None: no per-game event to build
    announce_batch = event_caller(hook.arena_matches_finished)
    summary = MatchSummary([a.name for a in agents])
    writer = None
    if as_json or cfg.out:
        head = {"game": game.spec.full_name, "games": cfg.games, "seed": cfg.seed}
        writer = ReportWriter(head, sys.stdout if as_json else None, cfg.out)

    def tell_observers(results: Sequence[GameResult]) -> None:
        if announce is not None:
            for r in results:
                announce(result=r, context=run.with_(match_id=r.index))
        if announce_batch is not None:
            announce_batch(results=results, context=run)

    def on_batch(results: list[GameResult]) -> None:
        for r in results:
            summary.add(r)
        tell_observers(results)
        if writer is not None:
            writer.add(results)

    def on_columns(cols: ArrayResults) -> None:  # an array-path batch: no GameResult unless observers ask
        summary.add_columns(cols)
        tell_observers(BatchResults(cols))  # built only if an observer reads them
        if writer is not None:
            writer.add_columns(cols)

    try:
        play_games(
            game,
            agents,
            num_games=cfg.games,
            seed=cfg.seed,
            rotate_seats=cfg.rotate_seats,
            timeout=cfg.timeout,
            batch_size=cfg.batch_size,
            on_batch=on_batch,
            collect=False,
            on_columns=on_columns,
        )
    except BaseException:
        if writer is not None:
            writer.abort()
        hook.arena_run_finished(run=run, summary={"status": "stopped"})
        raise
    hook.arena_run_finished(run=run, summary={"status": "finished", "games": cfg.games})
    if writer is not None:
        writer.close(summary.as_dict())
    return summary


def print_summary(title: str, summary: MatchSummary) -> None:
    """The per-agent table, then one line per forfeited game. A one-seat game has no
    wins/draws/losses to show: its table is the mean return with its 95% interval."""
    if summary.one_seat:
        rows = [
            [name, f"{s['mean_return']:+.4f}", f"±{s['return_ci95']:.4f}", str(s["forfeits"])]
            for name, s in summary.as_dict().items()
        ]
        print_table(title, ("agent", "mean return", "95% interval", "forfeits"), rows, figures=True)
    else:  # with what the harness did: invalid answers, retries, substituted moves
        keys = ("wins", "draws", "losses", "forfeits", "invalid_attempts", "retries", "substitutions")
        rows = [[name, f"{s['mean_return']:+.4f}", *(str(s[k]) for k in keys)] for name, s in summary.as_dict().items()]
        head = ("agent", "mean return", "wins", "draws", "losses", "forfeits", "invalid", "retries", "substituted")
        print_table(title, head, rows, figures=True)
    for r in summary.forfeits:
        if (f := r.forfeit) is not None:
            print(f"game {r.index}: {f.agent} (seat {f.player}) forfeited — {f.reason}")


def _run(args: argparse.Namespace) -> int:
    cfg = match_config(args)
    game, agents = load_players(cfg)
    summary = play_match(cfg, game, agents, as_json=args.json)
    if not args.json:
        print_summary(f"{game.spec.full_name}: {cfg.games} games, seed {cfg.seed}", summary)
    return 0


@hookimpl
def arena_commands() -> list[Command]:
    return [Command("match", "play N games between agents and summarize the results", _args, _run)]
