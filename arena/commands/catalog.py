"""``arena plugins``, ``arena games`` and ``arena describe GAME``: what is installed, and what a
game looks like."""

from __future__ import annotations

import argparse
from typing import Any

from arena.cli_api import Command, emit_json
from arena.commands.tables import print_table
from arena.errors import ArenaError
from arena.hookspecs import hookimpl
from arena.loading import load_game
from arena.playing.match import game_rng, sample_chance
from arena.registry import Registry, get_registry

ENTRY_KINDS = ("game", "namespace", "agent", "trainer", "judge", "command", "benchmark", "array_face")
PLUGIN_COLUMNS = ("name", "kind", "plugin", "distribution", "version", "status", "description")
STATUS_STYLE = {"broken": "red", "conflict": "yellow"}


def _json_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")


# -- plugins ------------------------------------------------------------------------------------
def _row(name: str, kind: str, plugin: str, distribution: str, version: str, status: str, text: str) -> dict:
    return dict(zip(PLUGIN_COLUMNS, (name, kind, plugin, distribution, version, status, text)))


def _entry_rows(reg: Registry) -> list[dict]:
    """Every usable name, by kind."""
    return [
        _row(
            r.name,
            kind,
            r.provider.plugin,
            r.provider.distribution,
            r.provider.version,
            "ok",
            getattr(r.entry, "description", "") or getattr(r.entry, "help", ""),
        )
        for kind in ENTRY_KINDS
        for r in reg.items(kind)
    ]


def _conflict_rows(reg: Registry) -> list[dict]:
    """Names two plugins offer (unusable until one is uninstalled)."""
    return [
        _row(
            name,
            kind,
            " & ".join(p.plugin for p in providers),
            " & ".join(p.distribution for p in providers),
            "",
            "conflict",
            "provided by " + " and ".join(map(str, providers)),
        )
        for (kind, name), providers in sorted(reg.conflicts.items())
    ]


def _observer_rows(reg: Registry, listed: set[str]) -> list[dict]:
    """Plugins on the event hooks only (observers): they provide no name of their own."""
    reg.load_all()
    rows = []
    for name, prov in sorted(reg.providers.items()):
        if name not in listed:
            doc = (getattr(reg.pm.get_plugin(name), "__doc__", "") or "").strip().splitlines()
            rows.append(_row(name, "observer", name, prov.distribution, prov.version, "ok", doc[0] if doc else ""))
    return rows


def _broken_rows(reg: Registry) -> list[dict]:
    return [_row(b.plugin, "plugin", b.plugin, b.distribution, b.version, "broken", b.error) for b in reg.broken]


def plugin_rows(reg: Registry) -> list[dict]:
    """One row per name, conflict, observer and broken plugin (``arena plugins``)."""
    rows = _entry_rows(reg) + _conflict_rows(reg)
    rows += _observer_rows(reg, {r["plugin"] for r in rows})
    return rows + _broken_rows(reg)


def _plugins_run(args: argparse.Namespace) -> int:
    rows = plugin_rows(get_registry())
    if args.json:
        emit_json(rows)
        return 0
    cells = [[str(r[c]) for c in PLUGIN_COLUMNS] for r in rows]
    print_table("arena plugins", PLUGIN_COLUMNS, cells, [STATUS_STYLE.get(r["status"]) for r in rows])
    return 0


# -- games --------------------------------------------------------------------------------------
def game_rows(reg: Registry) -> list[dict]:
    """Every game, then every namespace of games (``openspiel:<name>``)."""
    rows = [
        {
            "name": r.name,
            "description": r.entry.description,
            "params": r.entry.params,
            "provider": r.provider.distribution,
        }
        for r in reg.items("game")
    ]
    for r in reg.items("namespace"):
        rows.append(
            {
                "name": f"{r.name}:<name>",
                "description": r.entry.description,
                "params": {},
                "provider": r.provider.distribution,
            }
        )
        rows += [
            {
                "name": f"{r.name}:{name}",
                "description": f"unavailable: {why}",
                "params": {},
                "provider": r.provider.distribution,
            }
            for name, why in _unavailable(r.entry)
        ]
    return rows


def _unavailable(namespace: Any) -> list[tuple[str, str]]:
    """The names a namespace says cannot run here (none when its library is not installed)."""
    listing = getattr(namespace, "unavailable", None)
    if listing is None:
        return []
    try:
        return list(listing())
    except ArenaError:
        return []


def _games_run(args: argparse.Namespace) -> int:
    rows = game_rows(get_registry())
    if args.json:
        emit_json(rows)
        return 0
    cells = [
        [r["name"], ", ".join(f"{k}={v}" for k, v in (r["params"] or {}).items()), r["description"], r["provider"]]
        for r in rows
    ]
    print_table("arena games", ("name", "parameters (defaults)", "description", "provider"), cells)
    return 0


# -- describe -----------------------------------------------------------------------------------
def _describe_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", help="game name, e.g. kuhn_poker or 'kuhn_poker(players=3)'")
    p.add_argument("--json", action="store_true")


def describe_game(name: str) -> dict[str, Any]:
    """A game's spec, and the first decision of a game (seed 0) as its acting player sees it."""
    game = load_game(name)
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
    return info


def _describe_run(args: argparse.Namespace) -> int:
    info = describe_game(args.game)
    if args.json:
        emit_json(info)
        return 0
    for k, v in info.items():
        print(f"{k:>20}: {v}")
    return 0


@hookimpl
def arena_commands() -> list[Command]:
    return [
        Command(
            "plugins", "list installed plugins: name, kind, distribution, version, status", _json_flag, _plugins_run
        ),
        Command("games", "list registered games", _json_flag, _games_run),
        Command(
            "describe",
            "describe one game: players, actions, tree view, an example observation",
            _describe_args,
            _describe_run,
        ),
    ]
