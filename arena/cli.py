"""The ``arena`` command.

Built-in sub-commands live here (``plugins``, ``games``, ``describe``, ``match``, ``bench``);
plugins add more through the ``arena_commands`` hook (``play``, ``solve``, ``tournament``, ...).
Any :class:`~arena.errors.ArenaError` is printed as one line with exit status 2; ``--debug``
shows the traceback instead.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from arena.cli_api import Command, add_config_arguments
from arena.errors import ArenaError
from arena.registry import get_registry

EXIT_BAD_INPUT = 2


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    if debug:
        argv.remove("--debug")
    try:
        parser = build_parser()
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
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("arena-rl")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description="Games, agents, trainers, tournaments and leagues.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("--version", action="version", version=f"arena {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for cmd in builtin_commands() + [r.entry for r in get_registry().items("command")]:
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.add_arguments(p)
        p.set_defaults(run=cmd.run)
    return parser


from arena.cli_api import console, emit_json  # noqa: E402  (re-exported: older plugins import them from here)


# -- plugins / games / describe --------------------------------------------------------------------
def _plugins_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _plugins_run(args: argparse.Namespace) -> int:
    reg = get_registry()
    rows = []
    for kind in ("game", "namespace", "agent", "trainer", "command", "benchmark"):
        for r in reg.items(kind):
            rows.append({"name": r.name, "kind": kind, "plugin": r.provider.plugin,
                         "distribution": r.provider.distribution, "version": r.provider.version,
                         "status": "ok", "description": getattr(r.entry, "description", "") or getattr(r.entry, "help", "")})
    for (kind, name), providers in sorted(reg.conflicts.items()):
        rows.append({"name": name, "kind": kind, "plugin": " & ".join(p.plugin for p in providers),
                     "distribution": " & ".join(p.distribution for p in providers), "version": "",
                     "status": "conflict", "description": "provided by " + " and ".join(map(str, providers))})
    for b in reg.broken:
        rows.append({"name": b.plugin, "kind": "plugin", "plugin": b.plugin, "distribution": b.distribution,
                     "version": b.version, "status": "broken", "description": b.error})
    if args.json:
        emit_json(rows)
        return 0
    from rich.table import Table

    table = Table(title="arena plugins")
    for col in ("name", "kind", "plugin", "distribution", "version", "status", "description"):
        table.add_column(col, overflow="fold")
    for r in rows:
        style = {"broken": "red", "conflict": "yellow"}.get(r["status"])
        table.add_row(*(str(r[c]) for c in ("name", "kind", "plugin", "distribution", "version", "status", "description")), style=style)
    console().print(table)
    return 0


def _games_run(args: argparse.Namespace) -> int:
    reg = get_registry()
    rows = [{"name": r.name, "description": r.entry.description, "params": r.entry.params,
             "provider": r.provider.distribution} for r in reg.items("game")]
    rows += [{"name": f"{r.name}:<name>", "description": r.entry.description, "params": {},
              "provider": r.provider.distribution} for r in reg.items("namespace")]
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
    from arena.match import game_rng, sample_chance

    game = load_game(args.game)
    spec = game.spec
    info = {
        "name": spec.full_name, "description": spec.description, "players": spec.num_players,
        "distinct_actions": spec.num_distinct_actions, "observation_shape": list(spec.observation_shape),
        "utility": [spec.min_utility, spec.max_utility], "zero_sum": spec.zero_sum,
        "max_game_length": spec.max_game_length, "tree_view": spec.tree, "text_decisions": spec.text_decisions,
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
    add_config_arguments(p, "optional YAML match config (keys: game, agents, games, seed, ...)",
                         "games=200 seed=3", optional=True)
    p.add_argument("--game", help="game name")
    p.add_argument("--agents", nargs="+", help="one agent per seat: name or name:key=value,...")
    p.add_argument("--games", type=int, help="number of games (default 100)")
    p.add_argument("--seed", type=int, help="random seed (default 0)")
    p.add_argument("--no-rotate", action="store_true", help="keep agents in their seats (default: rotate)")
    p.add_argument("--timeout", type=float, help="seconds an agent may take per step before forfeiting")
    p.add_argument("--json", action="store_true", help="print results as JSON")


def _match_run(args: argparse.Namespace) -> int:
    from arena.atomic import write_json_atomic
    from arena.cli_api import config_and_overrides
    from arena.config import MatchConfig, load_config
    from arena.loading import dedupe_names, load_agent, load_game
    from arena.match import play_games

    config, overrides = config_and_overrides(args.config, args.overrides, optional=True)
    base: dict[str, Any] = {}
    for key, val in (("game", args.game), ("agents", args.agents), ("games", args.games),
                     ("seed", args.seed), ("timeout", args.timeout)):
        if val is not None:
            base[key] = val
    if args.no_rotate:
        base["rotate_seats"] = False
    cfg = load_config(MatchConfig, config, overrides=overrides + [f"{k}={json.dumps(v)}" for k, v in base.items()])
    game = load_game(cfg.game)
    agents = [load_agent(spec, game) for spec in cfg.agents]
    if len(agents) != game.spec.num_players:
        raise ArenaError(f"game '{game.spec.full_name}' has {game.spec.num_players} seats but "
                         f"{len(agents)} agents were given")
    dedupe_names(agents)
    from arena.registry import get_registry

    hook = get_registry().hook
    run = {"kind": "match", "run_id": f"match-{id(agents)}", "run_dir": None, "total": cfg.games,
           "unit": "games", "tensorboard": False, "progress": not args.json}
    hook.arena_run_started(run=run)
    results = play_games(game, agents, num_games=cfg.games, seed=cfg.seed, rotate_seats=cfg.rotate_seats,
                         timeout=cfg.timeout, batch_size=cfg.batch_size,
                         on_result=lambda r: hook.arena_match_finished(result=r, context=run))
    hook.arena_run_finished(run=run, summary={"status": "finished", "games": len(results)})
    summary = summarize(results, [a.name for a in agents])
    report = {"game": game.spec.full_name, "games": cfg.games, "seed": cfg.seed, "agents": summary,
              "results": [{"index": r.index, "seats": r.seats, "returns": r.returns,
                           "forfeit": r.forfeit.__dict__ if r.forfeit else None} for r in results]}
    if cfg.out:
        write_json_atomic(cfg.out, report, indent=2, default=str)
    if args.json:
        emit_json(report)
        return 0
    from rich.table import Table

    table = Table(title=f"{game.spec.full_name}: {cfg.games} games, seed {cfg.seed}")
    for col in ("agent", "mean return", "wins", "draws", "losses", "forfeits"):
        table.add_column(col, justify="right" if col != "agent" else "left")
    for name, s in summary.items():
        table.add_row(name, f"{s['mean_return']:+.4f}", str(s["wins"]), str(s["draws"]), str(s["losses"]), str(s["forfeits"]))
    console().print(table)
    for r in results:
        if r.forfeit:
            print(f"game {r.index}: {r.forfeit.agent} (seat {r.forfeit.player}) forfeited — {r.forfeit.reason}")
    return 0


def summarize(results: list, names: list[str]) -> dict[str, dict[str, Any]]:
    """Per agent: games, mean return, wins/draws/losses, forfeits. A game is won by the team
    (``result.info["teams"]``, else each seat alone) with the highest mean return; teams tied
    for the top draw."""
    def blank() -> dict[str, Any]:
        return {"games": 0, "total": 0.0, "wins": 0, "draws": 0, "losses": 0, "forfeits": 0}

    out = {n: blank() for n in names}
    for r in results:
        teams = (r.info or {}).get("teams") or [[seat] for seat in range(len(r.seats))]
        score = [sum(r.returns[s] for s in team) / len(team) for team in teams]
        best = max(score)
        top = [i for i, x in enumerate(score) if x == best]
        outcome = {}
        for i, team in enumerate(teams):
            word = ("wins" if len(top) == 1 else "draws") if i in top else "losses"
            outcome.update({seat: word for seat in team})
        for seat, name in enumerate(r.seats):
            s = out.setdefault(name, blank())
            s["games"] += 1
            s["total"] += r.returns[seat]
            s[outcome.get(seat, "losses")] += 1
            if r.forfeit and r.forfeit.player == seat:
                s["forfeits"] += 1
    for s in out.values():
        s["mean_return"] = s.pop("total") / max(1, s["games"])
    return out


# -- bench --------------------------------------------------------------------------------------
def _bench_args(p: argparse.ArgumentParser) -> None:
    benches = get_registry().items("benchmark")
    sub = p.add_subparsers(dest="bench", metavar="BENCHMARK")
    for r in benches:
        bp = sub.add_parser(r.name, help=r.entry.help, description=r.entry.help)
        bp.add_argument("--json", action="store_true", help="print figures as JSON")
        if r.entry.add_arguments:
            r.entry.add_arguments(bp)
        bp.set_defaults(bench_run=r.entry.run)


def _bench_run(args: argparse.Namespace) -> int:
    if not getattr(args, "bench_run", None):
        names = ", ".join(get_registry().names("benchmark")) or "none"
        raise ArenaError(f"name a benchmark: arena bench NAME (available: {names})")
    figures = args.bench_run(args)
    if args.json:
        emit_json(figures)
    else:
        for k, v in figures.items():
            print(f"{k:>40}: {v}")
    return 0


def builtin_commands() -> list[Command]:
    return [
        Command("plugins", "list installed plugins: name, kind, distribution, version, status", _plugins_args, _plugins_run),
        Command("games", "list registered games", _plugins_args, _games_run),
        Command("describe", "describe one game: players, actions, tree view, an example observation", _describe_args, _describe_run),
        Command("match", "play N games between agents and summarize the results", _match_args, _match_run),
        Command("bench", "run a benchmark (arena bench NAME)", _bench_args, _bench_run),
    ]


if __name__ == "__main__":
    sys.exit(main())
