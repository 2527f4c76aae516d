"""``arena join URL --token T``: play a seat of a hosted match from the terminal.

The prompts are those of ``arena play`` (:class:`arena.tools.terminal.TerminalIO`): the
observation, the moves as a numbered menu, names/prefixes/numbers accepted, a re-prompt on bad
input, the final position and "Result: you won (+1)". Moves are checked again by the host; if it
refuses one (say the clock already played for you), the reason is shown and play goes on.
"""

from __future__ import annotations

import argparse
from typing import Any

from arena.cli_api import Command
from arena.errors import ArenaError
from arena.hookspecs import hookimpl
from arena.tools.host.client import HostError, JoinClient
from arena.tools.host.protocol import TurnView
from arena.tools.terminal import TerminalIO


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("url", help="the host's address as printed by `arena host`, e.g. http://127.0.0.1:8765")
    p.add_argument("--token", help="your seat's join token (or put it in the URL as #token=...)")


def _token(args: argparse.Namespace) -> str:
    if args.token:
        return args.token
    if "#token=" in args.url:
        return args.url.split("#token=", 1)[1]
    raise ArenaError("arena join needs --token TOKEN (printed by `arena host` for your seat)")


def play(client: JoinClient, io: TerminalIO) -> float:
    """Play every turn of this seat until the series ends; returns the seat's total."""
    seat, played, total = 0, 0, 0.0
    for ev in client.events():
        kind = ev.get("type")
        if kind == "hello":
            seat = ev["seat"]
            others = [f"{n} (player {q})" for q, n in enumerate(ev["seats"]) if q != seat]
            limit = f"; {ev['move_time']:g}s per move" if ev.get("move_time") else ""
            io.say(f"arena join: {ev['game']} — you are player {seat}; others: {', '.join(others)}{limit}.")
        elif kind == "turn":
            _take_turn(client, io, ev)
        elif kind == "moved" and ev.get("by") == "clock":
            io.say(f"(time is up: {ev['label']!r} was played for you)")
        elif kind == "game_over":
            played += 1
            total = ev["total"]
            io.say("--- game over ---")
            if ev.get("forfeit"):
                io.say(f"(forfeit: {ev['forfeit']})")
            io.say(ev.get("text", ""))
            io.say(f"Result: you {ev['outcome']} ({ev['you']:+g}).")
            io.say(f"Games played: {played}, your total: {total:+g}.")
        elif kind == "series_over":
            io.say(f"The host's series is over ({ev.get('games', played)} game(s)); your total: {ev['total']:+g}.")
    return total


def _take_turn(client: JoinClient, io: TerminalIO, ev: dict[str, Any]) -> None:
    obs = TurnView.observation(ev)
    action = io.choose(obs, header=f"--- your turn (player {obs.player}) ---")
    try:
        if isinstance(action, str):
            client.act(ev["turn"], text=action)
        else:
            client.act(ev["turn"], action=int(action))
    except HostError as exc:
        if exc.status == 0:
            raise
        io.say(f"(the host refused that move: {exc.reason})")


def run(args: argparse.Namespace) -> int:
    client = JoinClient(args.url, _token(args))
    io = TerminalIO()
    try:
        client.open()
        play(client, io)
    except HostError as exc:
        raise ArenaError(f"host {client.url} refused or dropped the connection: {exc.reason}") from None
    except EOFError:
        io.say("\nbye")
    finally:
        client.close()
    return 0


@hookimpl
def arena_commands() -> list[Command]:
    return [Command("join", "join a hosted match from the terminal (arena join URL --token T)", add_arguments, run)]
