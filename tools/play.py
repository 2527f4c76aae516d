"""``arena play``: a person plays any game against any agent in the terminal."""

from __future__ import annotations

import argparse
import random

from arena.cli_api import Command
from arena.errors import ArenaError
from arena.hookspecs import hookimpl
from arena.loading import load_agent, load_game
from arena.playing.match import play_games
from arena.plugins.agents.human import HumanAgent
from arena.tools.terminal import TerminalIO, confirm


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", required=True, help="game name, e.g. kuhn_poker")
    p.add_argument(
        "--opponent", nargs="+", default=["random"], help="agent spec for every other seat (one, or one per other seat)"
    )
    p.add_argument("--seat", type=int, default=0, help="your seat (player id), default 0")
    p.add_argument("--seed", type=int, help="seed of the first game (default: random)")


def run(args: argparse.Namespace) -> int:
    game = load_game(args.game)
    n = game.spec.num_players
    if not 0 <= args.seat < n:
        raise ArenaError(f"--seat must be between 0 and {n - 1} for '{game.spec.full_name}'")
    specs = args.opponent if len(args.opponent) == n - 1 else args.opponent[:1] * (n - 1)
    if len(args.opponent) not in (1, n - 1):
        raise ArenaError(f"--opponent takes 1 or {n - 1} agent specs for a {n}-player game")
    io = TerminalIO()
    human = HumanAgent(io)
    others = [load_agent(s, game) for s in specs]
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    io.say(
        f"arena play: {game.spec.full_name} — you are player {args.seat}; "
        f"opponents: {', '.join(a.name for a in others)}."
    )
    total, played = 0.0, 0
    while True:
        agents = others[: args.seat] + [human] + others[args.seat :]
        try:
            result = play_games(game, agents, num_games=1, seed=seed + played)[0]
        except EOFError:
            io.say("\nbye")
            return 0
        if result.forfeit:
            io.say(f"(forfeit by {result.forfeit.agent}: {result.forfeit.reason})")
        played += 1
        total += result.returns[args.seat]
        io.say(f"Games played: {played}, your total: {total:+g}.")
        if not confirm(io, "Play again? [y/N] "):
            return 0


@hookimpl
def arena_commands() -> list[Command]:
    return [Command("play", "play a game against an agent in the terminal", add_arguments, run)]
