"""``arena bench language-games``: games per second of 1,000 random-agent games of Werewolf and
Deal or No Deal through arena's batched runner, against a plain PettingZoo loop over the same
games' AEC face (``arena.make_env``), measured in the same process.

``arena bench language-baselines`` measures the issue-7 baselines on fixed seeds: scripted vs
random villagers against the same scripted wolves, and the negotiation heuristics head to head.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from arena.cli_api import Benchmark
from arena.errors import ArenaError
from arena.hookspecs import hookimpl

GAMES = ("werewolf", "deal_or_no_deal")


def runner_seconds(name: str, games: int, seed: int = 0) -> tuple[float, int]:
    """Seconds for ``games`` random games through ``arena.play``, and how many forfeited."""
    import arena

    game = arena.load_game(name)
    agents = [arena.load_agent("random", game) for _ in range(game.spec.num_players)]
    start = time.perf_counter()
    results = arena.play(game, agents, games=games, seed=seed)
    return time.perf_counter() - start, sum(r.forfeit is not None for r in results)


def aec_seconds(name: str, games: int, seed: int = 0) -> float:
    """Seconds for ``games`` random games through the PettingZoo AEC env and a user's loop."""
    import arena
    from arena.tools.bench.match import aec_random_loop

    return aec_random_loop(arena.make_env(name), games, seed)


def run_speed(args: argparse.Namespace) -> dict[str, Any]:
    if min(args.games, args.baseline_games, args.repeats) < 1:
        raise ArenaError("language-games: --games, --baseline-games and --repeats must be at least 1")
    out: dict[str, Any] = {"games_each": args.games}
    for name in GAMES:
        runner_seconds(name, 20)  # warm-up: imports, caches
        t, forfeits = min(runner_seconds(name, args.games, seed=r) for r in range(args.repeats))
        t_aec = min(aec_seconds(name, args.baseline_games, seed=r) for r in range(args.repeats))
        out[f"{name}_games_per_second"] = round(args.games / t, 1)
        out[f"{name}_aec_loop_games_per_second"] = round(args.baseline_games / t_aec, 1)
        out[f"{name}_speedup_vs_aec_loop"] = round((args.games / t) / (args.baseline_games / t_aec), 2)
        out[f"{name}_forfeits"] = forfeits
    return out


def speed_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=int, default=1000, help="random games of each game through the runner")
    p.add_argument("--baseline-games", type=int, default=300, help="random games of each through the AEC loop")
    p.add_argument("--repeats", type=int, default=3, help="best of N timings")


def run_baselines(args: argparse.Namespace) -> dict[str, Any]:
    if args.games < 1:
        raise ArenaError("language-baselines: --games must be at least 1")
    import arena
    from arena.games.negotiation import negotiation_metrics
    from arena.games.werewolf.report import win_rates

    out: dict[str, Any] = {}
    for players in (5, 7, 9):
        game = arena.load_game(f"werewolf(players={players})")
        for label, spec in (("scripted", "werewolf_scripted"), ("random", "werewolf_scripted:village=random")):
            agents = [arena.load_agent(spec, game) for _ in range(players)]
            rates = win_rates(arena.play(game, agents, games=args.games, seed=args.seed))
            out[f"werewolf{players}_village_win_rate_{label}_villagers_vs_scripted_wolves"] = round(
                rates["sides"]["village"], 3
            )
        scripted = out[f"werewolf{players}_village_win_rate_scripted_villagers_vs_scripted_wolves"]
        random_ = out[f"werewolf{players}_village_win_rate_random_villagers_vs_scripted_wolves"]
        out[f"werewolf{players}_village_win_rate_scripted_over_random"] = (
            round(scripted / random_, 2) if random_ else None
        )
    game = arena.load_game("deal_or_no_deal")
    for a, b in (("greedy", "fair"), ("fair", "fair"), ("greedy", "concede"), ("fair", "concede")):
        x, y = arena.load_agent(a, game, label=f"{a}#1"), arena.load_agent(b, game, label=f"{b}#2")
        m = negotiation_metrics(arena.play(game, [x, y], games=args.games, seed=args.seed, rotate_seats=True))
        key = f"dond_{a}_vs_{b}"
        out[f"{key}_mean_scores"] = [
            round(m["agents"][x.name]["mean_score"], 2),
            round(m["agents"][y.name]["mean_score"], 2),
        ]
        out[f"{key}_agreement_rate"] = round(m["agreement_rate"], 3)
        out[f"{key}_pareto_rate"] = round(m["pareto_rate"], 3)
        out[f"{key}_joint_fraction_of_max"] = round(m["joint_fraction_of_max"], 3)
    return out


def baseline_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=int, default=1000, help="games per measurement")
    p.add_argument("--seed", type=int, default=0)


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "language-games",
            "games/s of 1,000 random Werewolf and Deal-or-No-Deal games: runner vs AEC loop",
            run_speed,
            speed_args,
            baseline="a plain PettingZoo loop over the same game's AEC env, in this process",
            ratio="_speedup_vs_aec_loop",
        ),
        Benchmark(
            "language-baselines",
            "scripted vs random villagers; greedy vs fair negotiators (fixed seeds)",
            run_baselines,
            baseline_args,
            baseline="random villagers against the scripted wolves",
            ratio="_scripted_over_random",
        ),
    ]
