"""``arena bench tournament-scale``: does a tournament cost the same per game at 10⁴, 10⁵ and
10⁶ games, and how close does it come to ``arena match`` with the same agents?

Each size runs two whole processes, timed from outside (start-up, imports, output included),
one after the other so that load from other processes hits both alike:

- the baseline: ``arena match --game G --agents A B --games N --seed S`` (a summary table, no
  JSON document: the match runner keeps no per-game store);
- ``arena tournament CONFIG``: a 2-agent round robin of the same agents, ``N/2`` games per
  ordered pairing, into a fresh run directory — every game committed to the SQLite store,
  rating snapshots every ``snapshot_every`` games, the full leaderboard (Bradley–Terry with a
  200-resample bootstrap, Elo, OpenSkill, α-Rank, Nash) at the end.

Reported per size: games/s of both, their ratio (the goal: ≥ 0.5), peak resident memory of both;
and the flatness of the curve — games/s and memory at the largest size over the smallest (the
goal: 1, i.e. a constant cost per game and memory that does not grow with the games).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from arena.cli_api import Benchmark
from arena.errors import ArenaError
from arena.hookspecs import hookimpl


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(float(x)) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ArenaError(f"bench tournament-scale: --sizes must be comma-separated game counts, got '{text}'") from None
    if not sizes or min(sizes) < 2 or any(n % 2 for n in sizes):
        raise ArenaError(f"bench tournament-scale: --sizes must be even game counts >= 2, got '{text}'")
    return sizes


def run(args: argparse.Namespace) -> dict:
    from arena.tools.bench.cli import arena_command, match_command, timed

    sizes = _sizes(args.sizes)
    agents = list(args.agents)
    if len(agents) != 2:
        raise ArenaError("bench tournament-scale: --agents takes exactly two agent specs")
    labels = [{"name": agents[0], "label": "a"}, {"name": agents[1], "label": "b"}]
    out: dict = {"game": args.game, "agents": " vs ".join(agents), "sizes": sizes}
    curve = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            cfg = Path(tmp) / f"t{n}.json"  # JSON is YAML: the config the tournament reads
            cfg.write_text(
                json.dumps(
                    {
                        "game": args.game,
                        "agents": labels,
                        "seed": args.seed,
                        "out": str(Path(tmp) / f"run{n}"),
                        "format": {"kind": "round_robin", "games": n // 2},
                        "executor": {"kind": "inprocess"},
                        "progress": False,
                        "tensorboard": False,
                        "plots": False,
                    }
                )
            )
            match = match_command(args.game, agents, n, args.seed)
            tour = arena_command() + ["tournament", str(cfg), "--json"]
            m_wall, m_cpu, m_rss = timed(match)
            with open(Path(tmp) / f"t{n}.out", "w") as fh:
                t_wall, t_cpu, t_rss = timed(tour, stdout=fh)
            board = json.loads((Path(tmp) / f"t{n}.out").read_text())
            if board.get("games") != n:  # the output is the real thing, checked after timing
                raise ArenaError(f"bench tournament-scale: the tournament reported {board.get('games')} games, not {n}")
            row = {
                "games": n,
                "tournament_games_per_s": round(n / t_wall),
                "match_games_per_s": round(n / m_wall),
                "tournament_seconds": round(t_wall, 2),
                "match_seconds": round(m_wall, 2),
                "tournament_cpu_seconds": round(t_cpu, 2),
                "match_cpu_seconds": round(m_cpu, 2),
                "tournament_peak_rss_mib": t_rss,
                "match_peak_rss_mib": m_rss,
                "ratio": round(m_wall / t_wall, 3),
                "cpu_ratio": round(m_cpu / t_cpu, 3),
            }
            curve.append(row)
            print(
                f"{n:>9} games: tournament {row['tournament_games_per_s']:>7} games/s "
                f"({t_wall:.1f}s, {t_rss} MiB), match {row['match_games_per_s']:>7} games/s "
                f"({m_wall:.1f}s, {m_rss} MiB), ratio {row['ratio']}",
                file=sys.stderr,
                flush=True,
            )
            if args.keep:
                import shutil

                shutil.copytree(Path(tmp) / f"run{n}", Path(args.keep) / f"run{n}", dirs_exist_ok=True)
    out["curve"] = curve
    first, last = curve[0], curve[-1]
    out["tournament_over_match_ratio"] = min(r["ratio"] for r in curve)
    out["tournament_over_match_cpu_ratio"] = min(r["cpu_ratio"] for r in curve)
    out["flatness_games_per_s_largest_over_smallest"] = round(
        last["tournament_games_per_s"] / first["tournament_games_per_s"], 3
    )
    out["flatness_rss_largest_over_smallest"] = round(
        last["tournament_peak_rss_mib"] / max(1, first["tournament_peak_rss_mib"]), 3
    )
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", default="kuhn_poker")
    p.add_argument(
        "--agents", nargs=2, default=["random", "random"], metavar="AGENT", help="two agent specs (as for arena match)"
    )
    p.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated game counts (even)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--keep", help="copy the tournaments' run directories here")


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "tournament-scale",
            "round-robin games/s and memory at 10^4..10^6 games vs whole-process `arena match`",
            run,
            add_arguments,
            baseline="a whole `arena match` process playing the same games between the same agents",
            ratio="over_match_ratio",
        )
    ]
