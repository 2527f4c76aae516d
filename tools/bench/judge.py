"""``arena bench judge-topology``: how well each ranking topology recovers the true order of a
group of N candidates from a noisy pairwise judge, and what it costs.

Every group draws N true qualities ``q ~ N(0, 1)``; the judge is the ``scorer`` plugin on them
(margin ``clip((q_a + e_a − q_b − e_b)/scale, −1, 1)``, ``e ~ N(0, noise²)``, fresh per
comparison). Each topology (:mod:`arena.evaluation.judge_ranking`: the tournament formats driven by the judge)
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

    from arena.evaluation.judge_ranking import rank_groups
    from arena.judge import Candidate, checked_compare
    from arena.loading import load_game, load_judge
    from arena.trainer import Trajectory

    game = load_game("open_task")
    rng = np.random.default_rng([seed, n, int(noise * 1000)])
    q = rng.standard_normal((groups, n))
    cands = [
        [Candidate(Trajectory(g, seed, ["x"], [], [0.0]), 0, None, {"q": float(q[g, i])}) for i in range(n)]
        for g in range(groups)
    ]
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
        out[kind] = {
            "tau": float(np.mean(taus)),
            "tau_ci95": float(1.96 * np.std(taus, ddof=1) / np.sqrt(groups)),
            "comparisons": float(np.mean(spent)),
            "max_comparisons": int(np.max(spent)),
        }
    return out


def run(args: argparse.Namespace) -> dict:
    from arena.evaluation.judge_ranking import TOPOLOGIES

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
            print(
                f"{n:>3} {noise:>5}  "
                + "  ".join(
                    f"{rows[k]['tau']:>8.3f}±{rows[k]['tau_ci95']:.3f} ({rows[k]['comparisons']:>5.1f})"
                    for k in TOPOLOGIES
                )
            )
    if 16 in sizes:  # ArenaRL's headline: SE >= 0.9 of round robin's tau with <= 2N - 2 comparisons
        passing = [
            noise
            for noise in noises
            if result[f"N16_noise{noise}_se_over_rr_ratio"] >= 0.9
            and max(
                r["max_comparisons"]
                for r in table
                if r["N"] == 16 and r["noise"] == noise and r["topology"] == "single_elimination"
            )
            <= 30
        ]
        result["N16_noise_levels_where_se_reaches_0.9_of_rr"] = ",".join(map(str, passing)) or "none"
    return result


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sizes", default="4,8,16,32", help="group sizes N (comma-separated)")
    p.add_argument(
        "--noise", default="0,0.1,0.25,0.5,1.0", help="judge noise levels (sd of per-candidate noise; q ~ N(0,1))"
    )
    p.add_argument("--groups", type=int, default=200, help="groups per (N, noise)")
    p.add_argument("--scale", type=float, default=4.0, help="margin scale of the scorer judge")
    p.add_argument("--seed", type=int, default=0)


# -- signal: how much of the true advantage each judged advantage keeps (no training) -----------
def sample_answers(seed: int, groups: int, n: int, model_dir: str) -> tuple[list[int], list[str]]:
    """Groups of ``n`` answers the tiny model (seed ``seed``, generated, T = 1) samples on
    ``open_task``, instances in turn: (instance, answer) per answer, group after group. The
    prompt does not depend on the shape, so every shape scores the same answers."""
    from pathlib import Path

    from arena.agent import Observation
    from arena.loading import load_agent, load_game
    from arena.playing.match import game_rng
    from arena.tools.tiny_model import build_tiny_model

    game: Any = load_game("open_task")
    if not (Path(model_dir) / "config.json").exists():
        build_tiny_model(Path(model_dir), seed=seed)
    agent = load_agent(
        {"name": "llm", "model": model_dir, "mode": "generated", "temperature": 1.0, "max_text_tokens": 24}, game
    )
    obs, inst = [], []
    for g in range(groups):
        for k in range(n):
            st = game.new_initial_state()
            st.apply_action(g % game.instances)
            inst.append(g % game.instances)
            obs.append(Observation(st, 0, game_rng(seed, g * n + k), game.spec.full_name))
    return inst, [str(a) for a in agent.act_batch(obs)]


SIGNALS = (
    ("single_elimination", "rank"),
    ("single_elimination", "margin"),
    ("swiss", "rank"),
    ("swiss", "margin"),
    ("adaptive", "margin"),
    ("round_robin", "rank"),
    ("round_robin", "margin"),
    ("pointwise", "score"),
)
"""(topology, advantage map) pairs the signal bench compares; ``pointwise`` is the noisy
pointwise judge (noise and drift) with GRPO's z-score."""


def run_signal(args: argparse.Namespace) -> dict:
    """Per shape and group size: the fidelity (mean correlation with the true-reward advantage,
    :func:`arena.evaluation.judge_ranking.advantage_fidelity`) of every signal of
    :data:`SIGNALS` on groups the tiny model samples."""
    from arena.evaluation.judge_ranking import advantage_fidelity
    from arena.loading import load_game

    out: dict[str, Any] = {}
    sizes = [int(x) for x in str(args.sizes).split(",")]
    sampled = {n: sample_answers(args.seed, args.groups, n, f"{args.out}/tiny-s{args.seed}") for n in sizes}
    for shape in [s for s in str(args.shapes).split(",") if s]:
        game: Any = load_game(f"open_task(shape={shape})")
        for n in sizes:
            inst, answers = sampled[n]
            q = np.asarray([game.quality(i, a) for i, a in zip(inst, answers)]).reshape(args.groups, n)
            out[f"{shape}_n{n}_quality_sd"] = float(np.mean(q.std(axis=1, ddof=1)))
            line = []
            for kind, adv in SIGNALS:
                noise = args.noise
                drift = args.drift if kind == "pointwise" else 0.0
                f = advantage_fidelity(q, noise, kind, adv if adv != "score" else "rank", args.seed, drift)
                out[f"{shape}_n{n}_{kind}_{adv}"] = f["fidelity"]
                out[f"{shape}_n{n}_flat"] = f["flat"]
                line.append(f"{kind}/{adv} {f['fidelity']:.3f}")
            se_rank = out[f"{shape}_n{n}_single_elimination_rank"]
            out[f"{shape}_n{n}_se_margin_over_rank_fidelity_ratio"] = (
                out[f"{shape}_n{n}_single_elimination_margin"] / se_rank if se_rank else float("nan")
            )
            print(
                f"  {shape} N={n} sd {out[f'{shape}_n{n}_quality_sd']:.4f} flat {out[f'{shape}_n{n}_flat']:.2f}: "
                + ", ".join(line),
                flush=True,
            )
    return out


def add_signal_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--shapes", default="chars,pairs,position,order,length,themes", help="open_task shapes")
    p.add_argument("--sizes", default="8", help="group sizes N (comma-separated)")
    p.add_argument("--groups", type=int, default=64, help="groups per shape and size")
    p.add_argument("--noise", type=float, default=0.05, help="judge noise sd per candidate and comparison")
    p.add_argument("--drift", type=float, default=0.1, help="pointwise judge: per-score offset sd")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/bench/arenarl-signal")


# -- learning: arenarl vs the true scalar reward vs pointwise scoring ---------------------------
METHODS = {
    "true_reward": {"judge": "scorer", "scoring": "pointwise"},
    "arenarl": {"judge": "scorer:noise={noise},drift={drift},seed={seed}", "scoring": "rank"},
    "arenarl_rank": {"judge": "scorer:noise={noise},drift={drift},seed={seed}", "advantage": "rank"},
    "arenarl_margin": {"judge": "scorer:noise={noise},drift={drift},seed={seed}", "advantage": "margin"},
    "arenarl_margin_rr": {
        "judge": "scorer:noise={noise},drift={drift},seed={seed}",
        "advantage": "margin",
        "topology": "round_robin",
    },
    "arenarl_margin_rr3": {
        "judge": "scorer:noise={noise},drift={drift},seed={seed}",
        "advantage": "margin",
        "topology": "round_robin",
        "repeats": "3",
    },
    "pointwise_noisy": {"judge": "scorer:noise={noise},drift={drift},seed={seed}", "scoring": "pointwise"},
    "sppo": {"trainer": "sppo", "judge": "scorer:noise={noise},drift={drift},seed={seed}", "epochs": "1"},
    "inpo": {"trainer": "inpo", "judge": "scorer:noise={noise},drift={drift},seed={seed}", "epochs": "1"},
}
"""Trainer params per method (``trainer``: which trainer, default ``arenarl``; ``arenarl`` at the
trainer's default advantage map, ``arenarl_rank`` / ``arenarl_margin`` at a named one,
``arenarl_margin_rr``: the margin map on a round robin, whatever ``--topology``;
``arenarl_margin_rr3``: the same with every pair judged 3 times). ``sppo`` is SPPO on
free text with the same noisy pairwise judge: its K = ``--group`` samples per task, P̂ from all
pairs, one regression step per iteration (its first-step gradient is a policy gradient with
advantage P̂ − ½); ``inpo`` fits its pairwise mirror-descent target on the same groups' pairs."""
DEFAULT_METHODS = "true_reward,arenarl,pointwise_noisy"


def run_learning(args: argparse.Namespace) -> dict:
    """Each shape × method × seed is one ``arena llm-train`` run (the league loop) on
    ``open_task(shape=...)`` with a tiny local model; the figure is the gain of the hidden
    ``true_score`` (last − first evaluation), and each method's gain over ``true_reward``'s."""
    from arena.errors import ArenaError

    seeds = [int(s) for s in str(args.seeds).split(",")]
    methods = [m for m in str(args.methods).split(",") if m]
    if unknown := sorted(set(methods) - set(METHODS)):
        raise ArenaError(f"bench arenarl-learning: unknown method(s) {unknown}; known: {', '.join(METHODS)}")
    shapes = [s for s in str(args.shapes).split(",") if s]
    out: dict[str, Any] = {}
    for shape in shapes:
        prefix = "" if shapes == ["chars"] else f"{shape}_"
        gains: dict[str, list[float]] = {m: [] for m in methods}
        for seed in seeds:
            for method in methods:
                first, last = _learning_run(args, shape, method, seed)
                gains[method].append(last - first)
                out[f"{prefix}{method}_s{seed}_true_score"] = f"{first:.3f} -> {last:.3f}"
                print(f"  {shape} seed {seed} {method:>16}: true_score {first:.3f} -> {last:.3f}", flush=True)
        for method, g in gains.items():
            out[f"{prefix}{method}_gain_mean"] = float(np.mean(g))
            out[f"{prefix}{method}_gain_min_max"] = f"{min(g):.3f} .. {max(g):.3f}"
        if "true_reward" in gains:
            ref = float(np.mean(gains["true_reward"]))
            for method in [m for m in gains if m != "true_reward"]:
                out[f"{prefix}{method}_over_true_reward_ratio"] = (
                    float(np.mean(gains[method])) / ref if ref else float("nan")
                )
    return out


def _learning_run(args: argparse.Namespace, shape: str, method: str, seed: int) -> tuple[float, float]:
    """One ``arena llm-train`` run; the first and last evaluation's ``true_score``."""
    import csv
    from pathlib import Path

    from arena.config import load_config
    from arena.plugins.trainers.llm.driver import LLMTrainConfig, train

    params: dict[str, Any] = {
        k: v.format(noise=args.noise, drift=args.drift, seed=seed) for k, v in METHODS[method].items()
    }
    trainer = params.pop("trainer", "arenarl")
    if trainer == "arenarl":
        params.update(group=args.group, topology=params.get("topology", args.topology))
        params.update({k: int(v) for k, v in params.items() if k == "repeats"})
    else:
        params.update(samples=args.group, epochs=int(params["epochs"]))
    params.update(lr=args.lr, seed=seed, torch_threads=1)
    run_dir = Path(args.out) / (f"{method}-s{seed}" if shape == "chars" else f"{shape}/{method}-s{seed}")
    cfg = load_config(
        LLMTrainConfig,
        None,
        base={
            "game": "open_task" if shape == "chars" else f"open_task(shape={shape})",
            "model": {"dir": str(Path(args.out) / f"tiny-s{seed}"), "seed": seed},
            "agent": {"mode": "generated", "temperature": 1.0, "max_text_tokens": 24},
            "trainer": trainer,
            "params": params,
            "iterations": args.iterations,
            "games_per_iter": args.tasks,
            "seed": seed,
            "eval_every": args.iterations,
            "eval_games": 0,
            "eval_opponents": [],
            "out": str(run_dir),
            "quiet": True,
            "torch_threads": 1,
        },
    )
    train(cfg, log=lambda line: None)
    with open(run_dir / "metrics.csv") as fh:
        rows = list(csv.DictReader(fh))
    return float(rows[0]["true_score"]), float(rows[-1]["true_score"])


def add_learning_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--tasks", type=int, default=8, help="task instances (games) per iteration")
    p.add_argument("--group", type=int, default=8, help="rollouts per task instance")
    p.add_argument("--topology", default="single_elimination")
    p.add_argument("--noise", type=float, default=0.03, help="scorer judge: per-candidate noise sd")
    p.add_argument("--drift", type=float, default=0.1, help="scorer judge: per-call offset sd (cancels in pairs)")
    p.add_argument("--lr", type=float, default=0.0005)
    p.add_argument("--methods", default=DEFAULT_METHODS, help=f"comma-separated, from {', '.join(METHODS)}")
    p.add_argument("--shapes", default="chars", help="open_task shapes (comma-separated; games/open_task.py SHAPES)")
    p.add_argument("--out", default="runs/bench/arenarl")


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "judge-topology",
            "Kendall τ of each ranking topology (anchor, seeded single elimination, "
            "Swiss, round robin, adaptive) with the true order under a noisy judge, and its comparisons",
            run,
            add_arguments,
            baseline="round robin (N(N-1)/2 comparisons) on the same groups",
            ratio="se_over_rr_ratio",
        ),
        Benchmark(
            "arenarl-signal",
            "no training: how much of the true-reward advantage each judged advantage keeps "
            "(topology x rank/margin map, pointwise noisy) on groups the tiny model samples, per open_task shape",
            run_signal,
            add_signal_arguments,
            baseline="the true-reward advantage (group z-score of the hidden quality) on the same groups",
            ratio="fidelity_ratio",
        ),
        Benchmark(
            "arenarl-learning",
            "hidden true-score gain on open_task: arenarl (noisy pairwise judge, "
            "seeded single elimination) vs the same PG on the true scalar reward vs pointwise noisy scoring",
            run_learning,
            add_learning_arguments,
            baseline="the same policy gradient with the true scalar reward (noiseless scorer, pointwise)",
            ratio="over_true_reward_ratio",
        ),
    ]
