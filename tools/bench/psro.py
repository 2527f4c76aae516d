"""``arena bench psro``: arena's PSRO against OpenSpiel's ``psro_v2`` in one process.

Both start from the uniform random policy, use the same meta-solver and add one exact best
response per player per iteration; OpenSpiel uses its C++ best-response oracle
(``BestResponseOracle(best_response_backend='cpp')``) and estimates each meta-game entry from
``sims_per_entry`` sampled episodes (its only payoff mode), arena computes entries exactly on
the compiled tree. Reported: wall time of the PSRO iterations (exploitability measurement
excluded for both) and exact exploitability (NashConv/2, OpenSpiel's ``exploitability``) of
each side's mixture after every iteration, plus the wall-time ratio.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from arena.cli_api import Benchmark
from arena.errors import ArenaError
from arena.hookspecs import hookimpl

OS_SOLVERS = {"nash": "nash", "uniform": "uniform", "prd": "prd", "rm": "rm", "alpharank": "alpharank"}


def run_openspiel(game_name: str, meta_solver: str, iterations: int, sims_per_entry: int, seed: int) -> dict[str, Any]:
    """OpenSpiel ``psro_v2`` with the C++ exact best-response oracle; exploitability of the
    meta-mixture through ``PolicyAggregator`` after every iteration (not timed)."""
    import contextlib
    import io

    import numpy as np
    import pyspiel
    from open_spiel.python import policy as os_policy
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import exploitability, policy_aggregator

    try:
        from open_spiel.python.algorithms.psro_v2 import best_response_oracle, psro_v2, strategy_selectors
    except ImportError as exc:  # psro_v2 imports OpenSpiel's cvxpy-based LP solver
        raise ArenaError(f"the OpenSpiel psro_v2 baseline needs {exc.name}: pip install 'arena-rl[bench]'") from None

    np.random.seed(seed)
    game = pyspiel.load_game(game_name)
    env = rl_environment.Environment(game)
    start = time.perf_counter()
    random_policy = os_policy.TabularPolicy(env.game)
    oracle = best_response_oracle.BestResponseOracle(game=env.game, policy=random_policy, best_response_backend="cpp")
    agents = [random_policy.__copy__() for _ in range(game.num_players())]
    with contextlib.redirect_stdout(io.StringIO()):
        solver = psro_v2.PSROSolver(
            env.game,
            oracle,
            initial_policies=agents,
            training_strategy_selector=strategy_selectors.probabilistic,
            sims_per_entry=sims_per_entry,
            number_policies_selected=1,
            meta_strategy_method=OS_SOLVERS[meta_solver],
            sample_from_marginals=True,
            symmetric_game=False,
        )
    setup = time.perf_counter() - start
    elapsed, curve = setup, []
    aggregator = policy_aggregator.PolicyAggregator(env.game)
    for it in range(iterations):
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            solver.iteration()
        elapsed += time.perf_counter() - t0
        aggr = aggregator.aggregate(range(game.num_players()), solver.get_policies(), solver.get_meta_strategies())
        curve.append(
            {
                "iteration": it + 1,
                "seconds": elapsed,
                "exploitability": float(exploitability.nash_conv(env.game, aggr)) / game.num_players(),
            }
        )
    return {"setup_seconds": setup, "curve": curve}


def run_arena(game_name: str, meta_solver: str, iterations: int, seed: int) -> dict[str, Any]:
    """arena's PSRO (exact oracle); the clock includes loading and compiling the tree."""
    from arena.loading import load_game
    from arena.plugins.agents.psro.solver import PSRO

    start = time.perf_counter()
    psro = PSRO(load_game(game_name), meta_solver, seed=seed)
    setup = time.perf_counter() - start
    curve = []
    for it in range(iterations):
        psro.run(1, measure=False)
        curve.append({"iteration": it + 1, "seconds": setup + psro.elapsed, "exploitability": psro.exploitability()})
    return {"setup_seconds": setup, "curve": curve}


def compare(game: str, meta_solver: str, iterations: int, sims_per_entry: int, seed: int) -> dict[str, Any]:
    ours = run_arena(game, meta_solver, iterations, seed)
    theirs = run_openspiel(game, meta_solver, iterations, sims_per_entry, seed)
    a, o = ours["curve"][-1], theirs["curve"][-1]
    return {
        "game": game,
        "meta_solver": meta_solver,
        "iterations": iterations,
        "openspiel_sims_per_entry": sims_per_entry,
        "arena_seconds": round(a["seconds"], 3),
        "openspiel_seconds": round(o["seconds"], 3),
        "speedup_x": round(o["seconds"] / max(a["seconds"], 1e-9), 1),
        "arena_exploitability": a["exploitability"],
        "openspiel_exploitability": o["exploitability"],
        "arena_curve": [(c["iteration"], round(c["seconds"], 3), round(c["exploitability"], 6)) for c in ours["curve"]],
        "openspiel_curve": [
            (c["iteration"], round(c["seconds"], 3), round(c["exploitability"], 6)) for c in theirs["curve"]
        ],
    }


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", default="leduc_poker", help="OpenSpiel game name (default leduc_poker)")
    p.add_argument("--meta-solver", default="nash", choices=sorted(OS_SOLVERS))
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--sims-per-entry", type=int, default=1000, help="OpenSpiel's episodes per meta-game entry")
    p.add_argument("--seed", type=int, default=0)


def _run(args: argparse.Namespace) -> dict:
    return compare(args.game, args.meta_solver, args.iterations, args.sims_per_entry, args.seed)


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "psro",
            "PSRO wall time and exploitability per iteration: arena vs OpenSpiel psro_v2",
            _run,
            _args,
            baseline="OpenSpiel psro_v2 with C++ best responses, same game and meta-solver",
            ratio="speedup_x",
        )
    ]
