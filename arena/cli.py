"""The ``arena`` command.

Built-in sub-commands live here (``plugins``, ``games``, ``describe``, ``match``, ``bench``);
plugins add more through the ``arena_commands`` hook (``play``, ``solve``, ``tournament``, ...).
Any :class:`~arena.errors.ArenaError` is printed as one line with exit status 2; ``--debug``
shows the traceback instead.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

import arena
from arena.cli_api import Command, add_config_arguments
from arena.errors import ArenaError
from arena.registry import get_registry

EXIT_BAD_INPUT = 2


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # The command line (the application, not library code) keeps stdout for results (--json):
    # inference engines it starts (vLLM and the processes it spawns) log to stderr.
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
    debug = "--debug" in argv
    if debug:
        argv.remove("--debug")
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        if not getattr(args, "run", None):
            parser.print_help()
            return EXIT_BAD_INPUT
        return int(args.run(args) or 0)
    except ArenaError as exc:
        if debug:
            raise
        print(f"arena: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `arena leaderboard RUN --json | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``arena`` parser. Given ``argv``, only the chosen sub-command's plugin is imported
    and asked for its arguments (the others are listed from the plugin index), so start-up
    does not pay for every plugin's imports; without it, every sub-command is complete."""
    parser = argparse.ArgumentParser(prog="arena", description="Games, agents, trainers, tournaments and leagues.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("--version", action="version", version=f"arena {arena.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = _positionals(argv)[:1] if argv is not None else None
    builtins = {c.name: c for c in builtin_commands(argv)}
    listed = [(name, cmd.help) for name, cmd in builtins.items()]
    listed += [(n, text) for n, text in get_registry().summaries("command") if n not in builtins]
    for name, text in listed:
        p = sub.add_parser(name, help=text, description=text)
        if chosen is None or chosen == [name]:
            cmd = builtins.get(name) or get_registry().get("command", name)
            cmd.add_arguments(p)
            p.set_defaults(run=cmd.run)
    return parser


def _positionals(argv: Sequence[str]) -> list[str]:
    """The leading words of a command line (``bench cli`` of ``bench cli --json``)."""
    words = []
    for a in argv:
        if a.startswith("-"):
            break
        words.append(a)
    return words


from arena.cli_api import console, emit_json  # noqa: E402  (re-exported: older plugins import them from here)


# -- plugins / games / describe --------------------------------------------------------------------
def _plugins_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _plugins_run(args: argparse.Namespace) -> int:
    reg = get_registry()
    rows = []
    for kind in ("game", "namespace", "agent", "trainer", "judge", "command", "benchmark"):
        for r in reg.items(kind):
            rows.append(
                {
                    "name": r.name,
                    "kind": kind,
                    "plugin": r.provider.plugin,
                    "distribution": r.provider.distribution,
                    "version": r.provider.version,
                    "status": "ok",
                    "description": getattr(r.entry, "description", "") or getattr(r.entry, "help", ""),
                }
            )
    for (kind, name), providers in sorted(reg.conflicts.items()):
        rows.append(
            {
                "name": name,
                "kind": kind,
                "plugin": " & ".join(p.plugin for p in providers),
                "distribution": " & ".join(p.distribution for p in providers),
                "version": "",
                "status": "conflict",
                "description": "provided by " + " and ".join(map(str, providers)),
            }
        )
    reg.load_all()
    listed = {r["plugin"] for r in rows}
    for name, prov in sorted(reg.providers.items()):  # plugins on the event hooks only (observers)
        if name not in listed:
            doc = (getattr(reg.pm.get_plugin(name), "__doc__", "") or "").strip().splitlines()
            rows.append(
                {
                    "name": name,
                    "kind": "observer",
                    "plugin": name,
                    "distribution": prov.distribution,
                    "version": prov.version,
                    "status": "ok",
                    "description": doc[0] if doc else "",
                }
            )
    for b in reg.broken:
        rows.append(
            {
                "name": b.plugin,
                "kind": "plugin",
                "plugin": b.plugin,
                "distribution": b.distribution,
                "version": b.version,
                "status": "broken",
                "description": b.error,
            }
        )
    if args.json:
        emit_json(rows)
        return 0
    from rich.table import Table

    table = Table(title="arena plugins")
    for col in ("name", "kind", "plugin", "distribution", "version", "status", "description"):
        table.add_column(col, overflow="fold")
    for r in rows:
        style = {"broken": "red", "conflict": "yellow"}.get(r["status"])
        table.add_row(
            *(str(r[c]) for c in ("name", "kind", "plugin", "distribution", "version", "status", "description")),
            style=style,
        )
    console().print(table)
    return 0


def _games_run(args: argparse.Namespace) -> int:
    reg = get_registry()
    rows = [
        {
            "name": r.name,
            "description": r.entry.description,
            "params": r.entry.params,
            "provider": r.provider.distribution,
        }
        for r in reg.items("game")
    ]
    rows += [
        {
            "name": f"{r.name}:<name>",
            "description": r.entry.description,
            "params": {},
            "provider": r.provider.distribution,
        }
        for r in reg.items("namespace")
    ]
    if args.json:
        emit_json(rows)
        return 0
    from rich.table import Table

    table = Table(title="arena games")
    for col in ("name", "parameters (defaults)", "description", "provider"):
        table.add_column(col, overflow="fold")
    for r in rows:
        params = ", ".join(f"{k}={v}" for k, v in (r["params"] or {}).items())
        table.add_row(r["name"], params, r["description"], r["provider"])
    console().print(table)
    return 0


def _describe_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", help="game name, e.g. kuhn_poker or 'kuhn_poker(players=3)'")
    p.add_argument("--json", action="store_true")


def _describe_run(args: argparse.Namespace) -> int:
    from arena.loading import load_game
    from arena.playing.match import game_rng, sample_chance

    game = load_game(args.game)
    spec = game.spec
    info = {
        "name": spec.full_name,
        "description": spec.description,
        "players": spec.num_players,
        "distinct_actions": spec.num_distinct_actions,
        "observation_shape": list(spec.observation_shape),
        "utility": [spec.min_utility, spec.max_utility],
        "zero_sum": spec.zero_sum,
        "max_game_length": spec.max_game_length,
        "tree_view": spec.tree,
        "text_decisions": spec.text_decisions,
        "params": spec.params,
    }
    state = game.new_initial_state(seed=0)
    sample_chance(state, game_rng(0, 0))
    if not state.is_terminal():
        p = state.acting_players()[0]
        info["example_observation"] = state.observation_text(p)
        info["example_actions"] = [state.action_label(p, a) for a in state.legal_actions(p)]
    if args.json:
        emit_json(info)
        return 0
    for k, v in info.items():
        print(f"{k:>20}: {v}")
    return 0


# -- match --------------------------------------------------------------------------------------
def _match_args(p: argparse.ArgumentParser) -> None:
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


def _match_run(args: argparse.Namespace) -> int:
    from arena.cli_api import config_and_overrides
    from arena.config import MatchConfig, load_config
    from arena.loading import dedupe_names, load_agent, load_game
    from arena.playing.match import play_games
    from arena.playing.match_report import MatchSummary, ReportWriter

    config, overrides = config_and_overrides(args.config, args.overrides, optional=True)
    base: dict[str, Any] = {}
    for key, val in (
        ("game", args.game),
        ("agents", args.agents),
        ("games", args.games),
        ("seed", args.seed),
        ("timeout", args.timeout),
    ):
        if val is not None:
            base[key] = val
    if args.no_rotate:
        base["rotate_seats"] = False
    cfg = load_config(MatchConfig, config, overrides=overrides + [f"{k}={json.dumps(v)}" for k, v in base.items()])
    game = load_game(cfg.game)
    agents = [load_agent(spec, game) for spec in cfg.agents]
    if len(agents) != game.spec.num_players:
        raise ArenaError(
            f"game '{game.spec.full_name}' has {game.spec.num_players} seats but {len(agents)} agents were given"
        )
    dedupe_names(agents)
    from arena.registry import event_caller, get_registry

    hook = get_registry().hook
    run = {
        "kind": "match",
        "run_id": f"match-{id(agents)}",
        "run_dir": None,
        "total": cfg.games,
        "unit": "games",
        "tensorboard": False,
        "progress": not args.json,
    }
    hook.arena_run_started(run=run)
    announce = event_caller(hook.arena_match_finished)  # None: no per-game event to build
    announce_batch = event_caller(hook.arena_matches_finished)
    summary = MatchSummary([a.name for a in agents])
    writer = None
    if args.json or cfg.out:
        # Results stream out batch by batch (one line per game); the summary closes the document.
        writer = ReportWriter(
            {"game": game.spec.full_name, "games": cfg.games, "seed": cfg.seed},
            sys.stdout if args.json else None,
            cfg.out,
        )

    def on_batch(results: list) -> None:
        for r in results:
            summary.add(r)
        if announce is not None:
            for r in results:
                announce(result=r, context=run)
        if announce_batch is not None:
            announce_batch(results=results, context=run)
        if writer is not None:
            writer.add(results)

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
        )
    except BaseException:
        if writer is not None:
            writer.abort()
        hook.arena_run_finished(run=run, summary={"status": "stopped"})
        raise
    hook.arena_run_finished(run=run, summary={"status": "finished", "games": cfg.games})
    table = summary.as_dict()
    if writer is not None:
        writer.close(table)
    if args.json:
        return 0
    from rich.table import Table

    rich_table = Table(title=f"{game.spec.full_name}: {cfg.games} games, seed {cfg.seed}")
    for col in ("agent", "mean return", "wins", "draws", "losses", "forfeits"):
        rich_table.add_column(col, justify="right" if col != "agent" else "left")
    for name, s in table.items():
        rich_table.add_row(
            name, f"{s['mean_return']:+.4f}", str(s["wins"]), str(s["draws"]), str(s["losses"]), str(s["forfeits"])
        )
    console().print(rich_table)
    for r in summary.forfeits:
        print(f"game {r.index}: {r.forfeit.agent} (seat {r.forfeit.player}) forfeited — {r.forfeit.reason}")
    return 0


def summarize(results: list, names: list[str]) -> dict[str, dict[str, Any]]:
    """Per agent summary of a list of results (kept for callers; see :mod:`arena.playing.match_report`)."""
    from arena.playing.match_report import summarize as _summarize

    return _summarize(results, names)


# -- bench --------------------------------------------------------------------------------------
def _bench_args(p: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> None:
    """One sub-parser per benchmark; with ``argv`` only the chosen one is imported."""
    reg = get_registry()
    sub = p.add_subparsers(dest="bench", metavar="BENCHMARK")
    chosen = _positionals(argv)[1:2] if argv is not None else None
    for name, text in reg.summaries("benchmark"):
        bp = sub.add_parser(name, help=text.replace("%", "%%"), description=text)
        if chosen is None or chosen == [name]:
            entry = reg.get("benchmark", name)
            bp.add_argument("--json", action="store_true", help="print figures as JSON")
            if entry.add_arguments:
                entry.add_arguments(bp)
            bp.set_defaults(bench_run=entry.run, bench_entry=entry)


def _bench_run(args: argparse.Namespace) -> int:
    from arena.cli_api import machine_load

    if not getattr(args, "bench_run", None):
        names = ", ".join(name for name, _ in get_registry().summaries("benchmark")) or "none"
        raise ArenaError(f"name a benchmark: arena bench NAME (available: {names})")
    entry = args.bench_entry
    header = {"machine_load_at_start": machine_load(), "baseline": entry.baseline or "(none named)"}
    if not args.json:  # before the run, so that a slow or interrupted run still shows them
        for k, v in header.items():
            print(f"{k:>40}: {v}", flush=True)
    figures = args.bench_run(args)
    ratios = {k: v for k, v in figures.items() if entry.ratio and k.endswith(entry.ratio)}
    if args.json:
        emit_json({**header, **figures})
        return 0
    for k, v in figures.items():
        print(f"{k:>40}: {v}")
    for k, v in ratios.items():
        print(f"{'ratio vs baseline':>40}: {k} = {v}")
    return 0


def builtin_commands(argv: Sequence[str] | None = None) -> list[Command]:
    return [
        Command(
            "plugins", "list installed plugins: name, kind, distribution, version, status", _plugins_args, _plugins_run
        ),
        Command("games", "list registered games", _plugins_args, _games_run),
        Command(
            "describe",
            "describe one game: players, actions, tree view, an example observation",
            _describe_args,
            _describe_run,
        ),
        Command("match", "play N games between agents and summarize the results", _match_args, _match_run),
        Command("bench", "run a benchmark (arena bench NAME)", lambda p: _bench_args(p, argv), _bench_run),
    ]


if __name__ == "__main__":
    sys.exit(main())
