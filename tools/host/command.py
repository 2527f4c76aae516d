"""``arena host [CONFIG] [key=value ...] [flags]``: host a match between people and agents."""

from __future__ import annotations

import argparse
import json
import logging
import sys

from arena.cli_api import Command, add_config_arguments
from arena.hookspecs import hookimpl

FLAGS = (
    ("game", "game"),
    ("seats", "seats"),
    ("games", "games"),
    ("seed", "seed"),
    ("bind", "bind"),
    ("port", "port"),
    ("out", "out"),
    ("move_time", "move_time"),
    ("default_action", "default_action"),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p, "YAML host config (see configs/host/)", "games=3 move_time=30", optional=True)
    p.add_argument("--game", help="game name, e.g. kuhn_poker or 'werewolf(talk=text)'")
    p.add_argument("--seats", nargs="+", help="one spec per seat: 'human' (or human:name=alice) or an agent spec")
    p.add_argument("--games", type=int, help="games in the series (default 1)")
    p.add_argument("--seed", type=int, help="seed of the series (default: random)")
    p.add_argument("--bind", help="address to listen on (default 127.0.0.1; 0.0.0.0 exposes it)")
    p.add_argument("--port", type=int, help="TCP port (default 8765; 0 picks a free one)")
    p.add_argument("--out", help="run directory for results (default runs/host/<game>)")
    p.add_argument("--no-store", action="store_true", help="keep no results")
    p.add_argument("--move-time", dest="move_time", type=float, help="seconds per human decision (default 120)")
    p.add_argument(
        "--default-action",
        dest="default_action",
        choices=("random", "first"),
        help="what the clock plays when time runs out",
    )
    p.add_argument("--quiet", action="store_true", help="log only rejected requests, not connections")


def run(args: argparse.Namespace) -> int:
    from arena.cli_api import config_and_overrides
    from arena.config import load_config, to_yaml
    from arena.tools.host.session import HostConfig, run_host

    config, overrides = config_and_overrides(args.config, args.overrides, optional=True)
    for key, attr in FLAGS:
        val = getattr(args, attr)
        if val is not None:
            overrides.append(f"{key}={json.dumps(val)}")
    if args.no_store:
        overrides.append("out=null")
    cfg = load_config(HostConfig, config, overrides)
    _setup_logging(logging.WARNING if args.quiet else logging.INFO)
    result = run_host(cfg, config_text=to_yaml(cfg))
    for name, total in result.totals.items():
        print(f"  {name}: total {total:+g} over {len(result.results)} game(s)")
    return 0


def _setup_logging(level: int) -> None:
    """Connections and rejections go to stderr as one line each (never tokens)."""
    logger = logging.getLogger("arena.host")
    if not any(getattr(h, "_arena_host", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("arena host: %(message)s"))
        handler._arena_host = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False


@hookimpl
def arena_commands() -> list[Command]:
    return [Command("host", "host a match between people (joining over the network) and agents", add_arguments, run)]
