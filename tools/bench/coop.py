"""``arena bench coop``: independent PPO (IPPO) against value decomposition (VDN, QMIX) on the
climbing and penalty games, several seeds each.

Every run trains two learners from scratch by self-play for ``--games`` games (batches of
``--batch``), then reads each learner's greedy action; a run succeeds when that joint action
earns the game's optimum (11 in the climbing game, 10 in the penalty game). Reported per game and
method: the success rate over seeds with a Wilson 95% interval, the mean greedy payoff and every
seed's final joint action. Baseline: IPPO (the ``ppo`` trainer on ``neural`` agents).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from arena.cli_api import Benchmark
from arena.errors import ArenaError
from arena.hookspecs import hookimpl

METHODS = ("ippo", "mappo", "vdn", "qmix", "ow_qmix")
GAMES = ("climbing", "penalty")


def learners(game: Any, method: str, seed: int) -> tuple[list[Any], Any]:
    from arena.registry import get_registry

    if method in ("ippo", "mappo"):
        from arena.plugins.agents.neural import NeuralAgent

        agents: list[Any] = [NeuralAgent(game, hidden=32, seed=seed * 10 + p) for p in range(2)]
        for p, a in enumerate(agents):
            a.name = f"{method}-{p}"
        name = "ppo" if method == "ippo" else "mappo"
        trainer = get_registry().get("trainer", name).factory(game, agents, seed=seed, gamma=0.0, lam=1.0)
    elif method in ("vdn", "qmix", "ow_qmix"):
        from arena.plugins.trainers.value_decomposition import QAgent

        agents = [QAgent(game, hidden=32, seed=seed * 10 + p) for p in range(2)]
        for p, a in enumerate(agents):
            a.name = f"{method}-{p}"
        extra = {"weighting": "optimistic"} if method == "ow_qmix" else {}
        trainer = get_registry().get("trainer", method.replace("ow_", "")).factory(game, agents, seed=seed, **extra)
    else:
        raise ArenaError(f"unknown method {method!r}; methods: {', '.join(METHODS)}")
    return agents, trainer


def greedy_joint(game: Any, agents: list[Any]) -> tuple[int, int]:
    from arena.agent import Observation

    state = game.new_initial_state()
    out = []
    for p, a in enumerate(agents):
        probs = a.policy(Observation(state, p, np.random.default_rng(0), game.spec.full_name))
        out.append(int(max(probs, key=lambda k: probs[k])))
    return out[0], out[1]


def run_one(game_name: str, method: str, seed: int, games: int, batch: int) -> dict[str, Any]:
    from arena.loading import load_game
    from arena.playing.match import play_games
    from arena.rng import derive_seed

    game = load_game(game_name)
    agents, trainer = learners(game, method, seed)
    for b in range(max(1, games // batch)):
        res = play_games(
            game, agents, num_games=batch, seed=derive_seed(seed, "coop", game_name, method, b), record=True
        )
        trainer.update([r.trajectory for r in res])
    for a in agents:  # read the greedy action
        if hasattr(a, "epsilon"):
            a.epsilon = 0.0
    a, b = greedy_joint(game, agents)
    payoff = game.matrix[a][b]
    return {"seed": seed, "joint": "abc"[a] + "abc"[b], "payoff": payoff, "optimal": payoff >= game.optimum}


def run(seeds: int, games: int, batch: int, methods: list[str], game_names: list[str]) -> dict[str, Any]:
    import torch

    from arena.tools.bench.mcts import wilson

    torch.set_num_threads(1)  # tiny networks: worker threads only contend
    out: dict[str, Any] = {"seeds": seeds, "games": games, "batch": batch}
    for g in game_names:
        for m in methods:
            start = time.perf_counter()
            runs = [run_one(g, m, s, games, batch) for s in range(seeds)]
            hits = sum(r["optimal"] for r in runs)
            lo, hi = wilson(hits, seeds)
            out[f"{g}_{m}"] = {
                "optimal_rate": hits / seeds,
                "optimal_rate_ci95": [round(lo, 3), round(hi, 3)],
                "mean_payoff": float(np.mean([r["payoff"] for r in runs])),
                "joints": [r["joint"] for r in runs],
                "seconds": round(time.perf_counter() - start, 1),
            }
        base = out[f"{g}_ippo"]["optimal_rate"] if "ippo" in methods else None
        for m in methods:
            if m != "ippo" and base is not None:
                out[f"{g}_{m}"]["minus_ippo"] = out[f"{g}_{m}"]["optimal_rate"] - base
    return out


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--games", type=int, default=3000, help="training games per run")
    p.add_argument("--batch", type=int, default=50, help="games per update")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--games-list", default=",".join(GAMES), help="which games (climbing, penalty)")


def _run(args: argparse.Namespace) -> dict:
    methods = [m for m in args.methods.split(",") if m]
    names = [g for g in args.games_list.split(",") if g]
    bad = sorted(set(methods) - set(METHODS)) + sorted(set(names) - set(GAMES))
    if bad:
        raise ArenaError(f"arena bench coop: unknown {bad}; methods {', '.join(METHODS)}, games {', '.join(GAMES)}")
    if args.seeds < 1 or args.games < 1 or args.batch < 1:
        raise ArenaError("arena bench coop: --seeds, --games and --batch must be positive")
    return run(args.seeds, args.games, args.batch, methods, names)


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "coop",
            "cooperative learners on the climbing and penalty games: how often each ends on the optimum",
            _run,
            _args,
            baseline="IPPO (ppo trainer on neural agents), same seeds and games",
        )
    ]
