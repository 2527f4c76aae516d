"""``arena bench match``: random-vs-random Kuhn poker games per second through arena's batched
runner, against the loop a user would otherwise write — a plain PettingZoo loop over shimmy's
OpenSpiel→AEC env — measured in the same process."""

from __future__ import annotations

import argparse
import time

import numpy as np

from arena.cli_api import Benchmark
from arena.hookspecs import hookimpl


def aec_random_loop(env, games: int, seed: int = 0) -> float:
    """Seconds for ``games`` random games through a PettingZoo AEC env, written the way a user
    would: ``agent_iter``/``last``/``step`` with a mask-aware random choice."""
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for g in range(games):
        env.reset(seed=seed + g)
        for _ in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                action = None
            else:
                mask = info["action_mask"] if isinstance(info, dict) and "action_mask" in info else obs["action_mask"]
                action = int(rng.choice(np.flatnonzero(mask)))
            env.step(action)
    return time.perf_counter() - start


def pyspiel_random_loop(game_name: str, games: int, seed: int = 0) -> float:
    """Seconds for ``games`` random games straight on OpenSpiel: ``new_initial_state``,
    chance by its probabilities, ``random.choice`` over ``legal_actions``, ``apply_action``.
    Nothing is recorded: the speed limit for Python driving OpenSpiel (sequential games)."""
    import random

    import pyspiel

    game = pyspiel.load_game(game_name)
    rng = random.Random(seed)
    start = time.perf_counter()
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(actions, probs)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
    return time.perf_counter() - start


def shimmy_loop(game_name: str, games: int, seed: int = 0) -> float:
    """Seconds for ``games`` random games through shimmy's OpenSpiel AEC env."""
    import pyspiel
    from shimmy import OpenSpielCompatibilityV0

    return aec_random_loop(OpenSpielCompatibilityV0(env=pyspiel.load_game(game_name)), games, seed)


def arena_runner(game_name: str, games: int, seed: int = 0, batch_size: int | None = None) -> float:
    import arena

    game = arena.load_game(game_name)
    agents = [arena.load_agent("random", game) for _ in range(game.spec.num_players)]
    start = time.perf_counter()
    arena.play(game, agents, games=games, seed=seed, batch_size=batch_size)
    return time.perf_counter() - start


def run(args: argparse.Namespace) -> dict:
    arena_runner(args.game, 200)  # warm-up: imports, registry
    shimmy_loop(args.game, 20)
    t_arena = min(arena_runner(args.game, args.games, seed=r) for r in range(args.repeats))
    t_shimmy = min(shimmy_loop(args.game, args.baseline_games, seed=r) for r in range(args.repeats))
    arena_gps = args.games / t_arena
    shimmy_gps = args.baseline_games / t_shimmy
    return {
        "game": args.game,
        "arena_games_per_second": round(arena_gps, 1),
        "shimmy_aec_games_per_second": round(shimmy_gps, 1),
        "speedup_vs_shimmy": round(arena_gps / shimmy_gps, 2),
        "arena_games": args.games,
        "shimmy_games": args.baseline_games,
    }


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", default="kuhn_poker")
    p.add_argument("--games", type=int, default=20000, help="games through arena's runner")
    p.add_argument("--baseline-games", type=int, default=2000, help="games through the shimmy loop")
    p.add_argument("--repeats", type=int, default=3, help="best of N timings")


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "match",
            "random-vs-random games/s: arena runner vs shimmy OpenSpiel AEC loop",
            run,
            add_arguments,
            baseline="a plain PettingZoo loop over shimmy's OpenSpiel AEC env, in this process",
            ratio="speedup_vs_shimmy",
        )
    ]
