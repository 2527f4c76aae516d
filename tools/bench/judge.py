"""``arena bench judge-topology``: how well each ranking topology recovers the true order of a
group of N candidates from a noisy pairwise judge, and what it costs.

Every group draws N true qualities ``q ~ N(0, 1)``; the judge is the ``scorer`` plugin on them
(margin ``clip((q_a + e_a − q_b − e_b)/scale, −1, 1)``, ``e ~ N(0, noise²)``, fresh per
comparison). Each topology (:mod:`arena.ranking`: the tournament formats driven by the judge)
ranks ``--groups`` groups per (N, noise) in lockstep; we report the mean Kendall τ
(``scipy.stats.kendalltau``) of its ranking with the true order, its comparisons per group,
and the headline: seeded single elimination's τ over round robin's (the baseline, measured in
the same run) at ≤ 2N − 2 comparisons (ArenaRL's claim: ≥ 0.9 at N = 16).
"""
from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from arena.cli_api import Benchmark
from arena.hookspecs import hookimpl


def measure(n: int, noise: float, groups: int, seed: int, kinds: tuple[str, ...], scale: float = 4.0) -> dict[str, Any]:
    from scipy.stats import kendalltau

    from arena.judge import Candidate, checked_compare, load_judge
    from arena.loading import load_game
    from arena.ranking import rank_groups
    from arena.trainer import Trajectory

    game = load_game("open_task")
    rng = np.random.default_rng([seed, n, int(noise * 1000)])
    q = rng.standard_normal((groups, n))
    cands = [[Candidate(Trajectory(g, seed, ["x"], [], [0.0]), 0, None, {"q": float(q[g, i])}) for i in range(n)]
             for g in range(groups)]
    out: dict[str, Any] = {}
    for kind in kinds:
        judge = load_judge("scorer", game, fn=lambda c: c.extra["q"], noise=noise, scale=scale, seed=seed)

        def compare(batch: Any) -> list[float]:
            return checked_compare(judge, [(cands[g][i], cands[g][j]) for g, i, j in batch])

        ranks = rank_groups([n] * groups, compare, kind, seed=seed)
        taus, spent = [], []
        for g, r in enumerate(ranks):
            pos = np.empty(n)
            pos[r.order] = np.arange(n)
            taus.append(kendalltau(-pos, q[g]).statistic)
            spent.append(r.comparisons)
        out[kind] = {"tau": float(np.mean(taus)), "tau_ci95": float(1.96 * np.std(taus, ddof=1) / np.sqrt(groups)),
                     "comparisons": float(np.mean(spent)), "max_comparisons": int(np.max(spent))}
    return out


def run(args: argparse.Namespace) -> dict:
    from arena.ranking import TOPOLOGIES

    sizes = [int(x) for x in str(args.sizes).split(",")]
    noises = [float(x) for x in str(args.noise).split(",")]
    table, result = [], {}
    for n in sizes:
        for noise in noises:
            m = measure(n, noise, args.groups, args.seed, TOPOLOGIES, args.scale)
            for kind, row in m.items():
                table.append({"N": n, "noise": noise, "topology": kind, **row})
            rr, se = m["round_robin"]["tau"], m["single_elimination"]["tau"]
            result[f"N{n}_noise{noise}_se_over_rr_ratio"] = se / rr if rr else float("nan")
    print(f"{'N':>3} {'noise':>5}  " + "  ".join(f"{k:>22}" for k in TOPOLOGIES))
    print(" " * 11 + "  ".join(f"{'tau (comparisons)':>22}" for _ in TOPOLOGIES))
    for n in sizes:
        for noise in noises:
            rows = {r["topology"]: r for r in table if r["N"] == n and r["noise"] == noise}
            print(f"{n:>3} {noise:>5}  " + "  ".join(
                f"{rows[k]['tau']:>8.3f}±{rows[k]['tau_ci95']:.3f} ({rows[k]['comparisons']:>5.1f})" for k in TOPOLOGIES))
    if 16 in sizes:  # ArenaRL's headline: SE >= 0.9 of round robin's tau with <= 2N - 2 comparisons
        passing = [noise for noise in noises if result[f"N16_noise{noise}_se_over_rr_ratio"] >= 0.9
                   and max(r["max_comparisons"] for r in table if r["N"] == 16 and r["noise"] == noise
                           and r["topology"] == "single_elimination") <= 30]
        result["N16_noise_levels_where_se_reaches_0.9_of_rr"] = ",".join(map(str, passing)) or "none"
    return result


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sizes", default="4,8,16,32", help="group sizes N (comma-separated)")
    p.add_argument("--noise", default="0,0.1,0.25,0.5,1.0", help="judge noise levels (sd of per-candidate noise; q ~ N(0,1))")
    p.add_argument("--groups", type=int, default=200, help="groups per (N, noise)")
    p.add_argument("--scale", type=float, default=4.0, help="margin scale of the scorer judge")
    p.add_argument("--seed", type=int, default=0)


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [Benchmark("judge-topology", "Kendall τ of each ranking topology (anchor, seeded single elimination, "
                      "Swiss, round robin, adaptive) with the true order under a noisy judge, and its comparisons",
                      run, add_arguments, baseline="round robin (N(N-1)/2 comparisons) on the same groups",
                      ratio="se_over_rr_ratio")]
