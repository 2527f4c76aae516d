"""A command's (or benchmark's) plugin is asked for its arguments only when it is chosen."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from arena.commands.deferred_parser import DeferredParser


def test_arguments_arrive_when_the_sub_command_is_parsed():
    asked = []

    def add_arguments(p):
        asked.append(p.prog)
        p.add_argument("--size", type=int)

    top = DeferredParser(prog="top")
    sub = top.add_subparsers(dest="command", parser_class=DeferredParser)
    sub.add_parser("used", add_arguments=add_arguments)
    sub.add_parser("unused", add_arguments=lambda p: pytest.fail("an unused sub-command was asked"))
    assert asked == []
    assert top.parse_args(["used", "--size", "3"]).size == 3
    assert asked == ["top used"]
    top.parse_args(["used"])
    assert asked == ["top used"]  # once


def test_help_imports_no_command_module(tmp_path):
    """`arena --help` and `arena bench --help` list commands and benchmarks from the plugin index."""
    probe = textwrap.dedent("""
        import contextlib, io, sys
        from arena.cli import main
        for argv in (["--help"], ["bench", "--help"]):
            with contextlib.redirect_stdout(io.StringIO()):
                try:
                    main(argv)
                except SystemExit:
                    pass
        print(sorted(m for m in sys.modules if m.startswith(("arena.commands.", "arena.tools.bench."))))
    """)
    env = dict(os.environ, ARENA_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True) for _ in range(2)]
    assert runs[1].returncode == 0, runs[1].stderr
    assert runs[1].stdout.split("\n")[0] == "['arena.commands.bench', 'arena.commands.deferred_parser']"
