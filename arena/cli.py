"""The ``arena`` command: parse, dispatch, report errors.

Every sub-command is a plugin's (``arena_commands`` hook): the built-in ones live in
:mod:`arena.commands` (``plugins``, ``games``, ``describe``, ``match``, ``bench``, ``tournament``,
``league``, ``sweep``, ...), registered through the same entry points as third-party ones.
Any :class:`~arena.errors.ArenaError` is printed as one line with exit status 2; ``--debug``
shows the traceback instead, and arena's debug log (e.g. which path the match runner took) on stderr.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from functools import partial
from typing import Sequence

import arena
from arena.cli_api import console, emit_json  # noqa: F401  (re-exported: older plugins import them from here)
from arena.commands.deferred_parser import DeferredParser
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
        _debug_log()
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
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _debug_log() -> None:
    """arena's own debug messages (logger ``arena``) on stderr; other libraries' stay quiet."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("arena debug: %(message)s"))
    logger = logging.getLogger("arena")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)


def build_parser() -> argparse.ArgumentParser:
    """The ``arena`` parser: every command is listed from the plugin index; a command's plugin
    is imported and asked for its arguments only when that command is parsed (or its parser's
    :meth:`~arena.commands.deferred_parser.DeferredParser.complete` is called)."""
    parser = argparse.ArgumentParser(prog="arena", description="Games, agents, trainers, tournaments and leagues.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("--version", action="version", version=f"arena {arena.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=DeferredParser)
    for name, text in get_registry().summaries("command"):
        sub.add_parser(name, help=text, description=text, add_arguments=partial(_command_arguments, name))
    return parser


def _command_arguments(name: str, p: argparse.ArgumentParser) -> None:
    command = get_registry().get("command", name)
    command.add_arguments(p)
    p.set_defaults(run=command.run)


if __name__ == "__main__":
    sys.exit(main())
