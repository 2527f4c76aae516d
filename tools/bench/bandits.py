"""``arena bench bandits``: regret of bandit policies at the horizon they were trained for and
beyond it — UCB1, Thompson sampling, uniform play and, given model directories, trained LLM
policies (``--llm``, one directory per training seed, e.g. the snapshots of ``arena sweep
configs/llm/bandit_rlvr.yaml``).

Each policy plays ``--games`` games of ``bandit(arms=A, horizon=H, ...)`` for every horizon in
``--horizons`` and every seed in ``--seeds`` (arm means drawn per game from the game's chance
stream, so every policy meets the same bandits at the same seed and game index). A seed's score
is its mean pseudo-regret (``outcome_info["regret"]``, ``H * mu* - sum_t mu_{I_t}``); the seeds
are aggregated as IQM and mean with 95% stratified bootstrap intervals
(:func:`arena.experiments.sweep.aggregate`). With ``--llm DIR,DIR,...`` the i-th directory plays
the i-th seed. ``*_ratio`` figures: the LLM's mean regret over UCB1's at each horizon.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from arena.cli_api import Benchmark
from arena.game import parse_scalar
from arena.hookspecs import hookimpl


def seed_scores(agent_spec: Any, game_name: str, games: int, seed: int) -> dict[str, float]:
    """One policy, one seed: mean regret, best-arm rate and arms tried over ``games`` games."""
    from arena.loading import load_agent, load_game
    from arena.playing.match import play_games

    game = load_game(game_name)
    agent = load_agent(agent_spec, game)
    try:
        results = play_games(game, [agent], num_games=games, seed=seed)
    finally:
        agent.close()
    bad = [r.forfeit for r in results if r.forfeit is not None]
    if bad:
        raise RuntimeError(f"{agent_spec} forfeited on {game_name}: {bad[0]}")
    return {k: float(np.mean([r.info[k] for r in results])) for k in ("regret", "best_arm_rate", "arms_tried")}


def _summary(per_seed: list[dict[str, float]]) -> dict[str, Any]:
    from arena.experiments.sweep import aggregate

    regrets = [s["regret"] for s in per_seed]
    agg = aggregate(regrets)
    return {
        "regret_per_seed": [round(r, 4) for r in regrets],
        "regret_mean": agg.mean,
        "regret_mean_ci95": list(agg.mean_ci),
        "regret_iqm": agg.iqm,
        "regret_iqm_ci95": list(agg.iqm_ci),
        "best_arm_rate": float(np.mean([s["best_arm_rate"] for s in per_seed])),
        "arms_tried": float(np.mean([s["arms_tried"] for s in per_seed])),
    }


def policies(args: argparse.Namespace, seeds: list[int]) -> dict[str, list[Any]]:
    """Label -> one agent spec per seed."""
    out: dict[str, list[Any]] = {a: [a] * len(seeds) for a in args.agents.split(",") if a}
    dirs = [d for d in (args.llm or "").split(",") if d]
    if dirs:
        if len(dirs) != len(seeds):
            raise SystemExit(f"--llm: {len(dirs)} model directories for {len(seeds)} seeds")
        extra = {k: parse_scalar(v) for k, v in (kv.split("=", 1) for kv in args.llm_params.split(",") if kv)}
        out["llm"] = [{"name": "llm", "mode": "scored", "model": d, **extra} for d in dirs]
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    seeds = [int(s) for s in args.seeds.split(",")]
    if args.llm:
        import torch

        torch.set_num_threads(1)
    out: dict[str, Any] = {"seeds": seeds, "games_per_seed": args.games}
    for horizon in [int(h) for h in args.horizons.split(",")]:
        game = f"bandit(arms={args.arms},horizon={horizon},kind={args.kind},recent=0,text=brief)"
        for label, specs in policies(args, seeds).items():
            per_seed = [seed_scores(spec, game, args.games, s) for spec, s in zip(specs, seeds)]
            summary = _summary(per_seed)
            for k, v in summary.items():
                out[f"h{horizon}/{label}/{k}"] = v
            print(
                f"H={horizon} {label}: regret mean {summary['regret_mean']:.3f} "
                f"{[round(x, 3) for x in summary['regret_mean_ci95']]}, IQM {summary['regret_iqm']:.3f}",
                file=sys.stderr,
                flush=True,
            )
        if f"h{horizon}/llm/regret_mean" in out and f"h{horizon}/ucb1/regret_mean" in out:
            out[f"h{horizon}/llm_over_ucb1_ratio"] = out[f"h{horizon}/llm/regret_mean"] / max(
                1e-9, out[f"h{horizon}/ucb1/regret_mean"]
            )
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--arms", type=int, default=2)
    p.add_argument("--kind", default="bernoulli")
    p.add_argument("--horizons", default="10,60", help="comma-separated horizons (training horizon and 6x it)")
    p.add_argument("--games", type=int, default=200, help="games per seed and horizon")
    p.add_argument("--seeds", default="0,1,2,3,4")
    p.add_argument("--agents", default="ucb1,thompson,random", help="baseline agents (comma-separated)")
    p.add_argument("--llm", default="", help="trained model directories, one per seed (comma-separated)")
    p.add_argument(
        "--llm-params",
        default="score=sum,temperature=1,chat=false,templates=configs/llm/bandit_templates.yaml",
        help="llm agent parameters, key=value comma-separated",
    )


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "bandits",
            "bandit regret of UCB1, Thompson sampling, uniform play and trained LLM policies at several horizons",
            run,
            add_arguments,
            baseline="UCB1 (Auer et al. 2002) on the same drawn bandits",
            ratio="ratio",
        )
    ]
