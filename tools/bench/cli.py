"""``arena bench cli``: what a user waits for — whole ``arena match`` processes, timed from
outside, against whole processes running the loop a user would otherwise write.

Three programs play the same number of random-vs-random games, each as a fresh process (start-up,
imports and output included), interleaved round by round so that load from other processes
hits all alike; the best round of each counts:

- ``arena match --game G --agents random random --games N --json > file`` (the console script);
- the baseline: a plain PettingZoo loop over shimmy's OpenSpiel AEC env (``shimmy_loop``'s loop);
- the moonshot reference: a plain ``pyspiel`` loop (``pyspiel_random_loop``), no records at all.

The two loops run as standalone scripts built from the functions of :mod:`arena.tools.bench.match`
(one definition each), importing only numpy/pyspiel/shimmy — not arena. Also timed: ``arena
--help`` (start-up; the target is 0.25 s) and the match process's peak memory. Besides wall
time (the headline) the ratios are given in CPU seconds of each whole process, which load
from other processes on a shared machine distorts far less.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from arena.cli_api import Benchmark
from arena.errors import ArenaError
from arena.hookspecs import hookimpl


def arena_command() -> list[str]:
    """The installed ``arena`` console script of this environment (what a user types)."""
    exe = Path(sys.executable).parent / "arena"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "arena.cli"]


def match_command(game: str, agents: list[str], games: int, seed: int, json: bool = False) -> list[str]:
    """``arena match --game G --agents A B --games N --seed S [--json]``: the whole process both
    ``arena bench cli`` and ``arena bench tournament-scale`` time."""
    return arena_command() + [
        "match",
        "--game",
        game,
        "--agents",
        *agents,
        "--games",
        str(games),
        "--seed",
        str(seed),
        *(["--json"] if json else []),
    ]


def loop_script(loop: str, game: str, games: int, seed: int) -> list[str]:
    """A standalone ``python -c`` program running one loop of :mod:`arena.tools.bench.match`."""
    from arena.tools.bench import match

    source = inspect.getsource(getattr(match, loop))
    if loop == "shimmy_loop":
        source = inspect.getsource(match.aec_random_loop) + "\n" + source
    program = f"import time\nimport numpy as np\n{source}\n{loop}({game!r}, {games}, {seed})\n"
    return [sys.executable, "-c", program]


def timed(cmd: list[str], stdout: Any = subprocess.DEVNULL) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, peak RSS in MiB) of one process, its exit checked."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read() if proc.stderr else ""
    proc.stderr.close()
    if proc.returncode != 0:
        raise ArenaError(f"bench cli: {' '.join(cmd[:4])} ... exited with {proc.returncode}: {err.strip()[-400:]}")
    return wall, usage.ru_utime + usage.ru_stime, round(usage.ru_maxrss / 1024)


def run(args: argparse.Namespace) -> dict:
    if min(args.games, args.baseline_games, args.rounds) < 1:
        raise ArenaError("bench cli: --games, --baseline-games and --rounds must be at least 1")
    import pyspiel

    seats = pyspiel.load_game(args.game).num_players()
    match = match_command(args.game, ["random"] * seats, args.games, args.seed, json=True)
    programs = {
        "arena_match": (match, args.games),
        "shimmy_loop": (loop_script("shimmy_loop", args.game, args.baseline_games, args.seed), args.baseline_games),
        "pyspiel_loop": (loop_script("pyspiel_random_loop", args.game, args.games, args.seed), args.games),
    }
    timed(arena_command() + ["--help"])  # warm the plugin index and the file cache, untimed
    best: dict[str, tuple[float, float, int]] = {}
    cpu: dict[str, float] = {}
    helps = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "match.json"
        for _ in range(args.rounds):
            helps.append(timed(arena_command() + ["--help"])[0])
            for name, (cmd, _) in programs.items():
                if name == "arena_match":
                    with open(out, "w") as fh:  # a file, as `> out.json` would
                        t = timed(cmd, stdout=fh)
                else:
                    t = timed(cmd)
                if name not in best or t[0] < best[name][0]:
                    best[name] = t
                cpu[name] = min(cpu.get(name, t[1]), t[1])
        report = json.loads(out.read_text())  # the output is the real thing, checked after timing
        if len(report["results"]) != args.games:
            raise ArenaError(f"bench cli: the match reported {len(report['results'])} games, not {args.games}")
        size = out.stat().st_size
    rate = {name: programs[name][1] / best[name][0] for name in programs}
    cpu_rate = {name: programs[name][1] / cpu[name] for name in programs}
    return {
        "game": args.game,
        "games": args.games,
        "baseline_games": args.baseline_games,
        "rounds": args.rounds,
        "arena_match_games_per_s": round(rate["arena_match"]),
        "shimmy_loop_games_per_s": round(rate["shimmy_loop"]),
        "pyspiel_loop_games_per_s": round(rate["pyspiel_loop"]),
        "arena_match_seconds": round(best["arena_match"][0], 3),
        "arena_match_cpu_seconds": round(best["arena_match"][1], 3),
        "arena_match_peak_rss_mib": best["arena_match"][2],
        "arena_match_json_mib": round(size / 2**20, 1),
        "arena_help_seconds": round(min(helps), 3),
        "arena_over_pyspiel_loop": round(rate["arena_match"] / rate["pyspiel_loop"], 3),
        # CPU seconds of the whole process (user + system): what other processes' load changes least
        "cpu_arena_over_pyspiel_loop": round(cpu_rate["arena_match"] / cpu_rate["pyspiel_loop"], 3),
        "cpu_speedup_vs_shimmy_loop": round(cpu_rate["arena_match"] / cpu_rate["shimmy_loop"], 2),
        "speedup_vs_shimmy_loop": round(rate["arena_match"] / rate["shimmy_loop"], 2),
    }


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", default="kuhn_poker", help="a sequential OpenSpiel-backed game")
    p.add_argument("--games", type=int, default=100_000, help="games for the arena match and the pyspiel loop")
    p.add_argument("--baseline-games", type=int, default=100_000, help="games for the shimmy loop")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (best of each counts)")
    p.add_argument("--seed", type=int, default=0)


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "cli",
            "whole-process `arena match --json` games/s vs whole-process shimmy and pyspiel loops",
            run,
            add_arguments,
            baseline="a whole process running a plain PettingZoo loop over shimmy's OpenSpiel AEC env "
            "(moonshot reference: a plain pyspiel loop)",
            ratio="vs_shimmy_loop",
        )
    ]
