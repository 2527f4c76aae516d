"""``arena bench train-throughput``: training games/s and learner updates/s, synchronous vs
asynchronous, with 1 and 2 Ray rollout workers, in one run.

Each case is a real league (:mod:`arena.league.runner`) on a local Ray cluster started once for
the whole benchmark: a PPO learner on Kuhn poker and the LLM Advantage Alignment learner (the
tiny local model) on the text IPD. The baseline of every asynchronous run (``max_staleness: 1``:
the next step's rollouts play while the learner updates) is the synchronous run
(``max_staleness: 0``) with the same workers, the same games and the same number of updates.
Sync and async runs alternate ``--repeats`` times (a shared machine's load drifts; alternating
spreads it over both) and the median run of each is the headline, with every paired ratio. Timing is steady state: from
the end of the first step (workers started, models loaded) to the end of the last. The final
learner metrics of both runs (same number of games) are reported beside the speeds: quality at
equal games.

How it projects to N workers (``.../projection``): from the synchronous 1-worker run, R = the
rollout time of one step on one worker and U = the learner's update time. Synchronous steps take
about ``R/N + U``, asynchronous ones ``max(R/N, U)``; past ``N* = R/U`` workers the learner is the
bottleneck and more workers add nothing (asynchronous training then hides all rollout time).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from arena.cli_api import Benchmark
from arena.hookspecs import hookimpl

QUALITY = ("exploitability", "selfplay/cooperation", "selfplay/return", "vs_random/return")


def _ppo_kuhn(
    games: int, device: str = "cpu", model: str | None = None, backend: str = "transformers"
) -> dict[str, Any]:
    return {
        "game": "kuhn_poker",
        "chunk": max(1, games // 4),
        "population": [
            {
                "label": "ppo",
                "agent": f"neural:hidden=32,seed=0,device={device}",
                "role": "learner",
                "matchmaking": "self_play",
                "trainer": {"name": "ppo", "params": {"lr": 0.003, "epochs": 4, "gamma": 1.0}},
                "games_per_step": games,
                "snapshot_every": 1000,
            }
        ],
        "metrics": {"games": 0, "exact": True},
    }


def _llm_ipd(
    games: int, device: str = "cpu", model: str | None = None, backend: str = "transformers"
) -> dict[str, Any]:
    from arena.tools.tiny_model import tiny_model_dir

    params = {
        "beta": 3.0,
        "gamma": 0.96,
        "gamma_aa": 0.96,
        "reward_scale": 2.0,
        "whiten": True,
        "entropy": 0.01,
        "lr": 1e-4,
        "epochs": 2,
        "torch_threads": 1,
        "device": device,
    }
    agent: dict[str, Any] = {
        "name": "llm",
        "model": model or str(tiny_model_dir(1)),
        "mode": "scored",
        "temperature": 1,
        "backend": backend,
    }
    if backend == "transformers":
        agent["device"] = device
    else:  # vllm: the learner keeps a transformers copy on `device`; the engine pushes updates in place
        agent.update({"dtype": "float32", "enforce_eager": device == "cpu"})
    return {
        "game": "ipd(horizon=10,text=brief)",
        "chunk": max(1, games // 2),
        "population": [
            {
                "label": "aa",
                "agent": agent,
                "role": "learner",
                "matchmaking": "self_play",
                "games_per_step": games,
                "snapshot_every": 1000,
                "trainer": {"name": "llm_advantage_alignment", "params": params},
            }
        ],
        "metrics": {"games": 16, "opponents": []},
    }


CASES = {
    "ppo_kuhn": (_ppo_kuhn, 256),
    "llm_ipd": (_llm_ipd, 64),
}  # llm: configs/llm/ipd_aa.yaml's 64 games per iteration


def one_run(
    case: dict[str, Any], out: str, steps: int, workers: int, stale: int, seed: int, num_gpus: float = 0.0
) -> dict[str, Any]:
    """One league; returns steady-state games/s, updates/s, the mean update time and final metrics."""
    from arena.config import load_config
    from arena.league import LeagueConfig
    from arena.league.runner import League

    cfg = load_config(
        LeagueConfig,
        base={
            "game": case["game"],
            "seed": seed,
            "steps": steps,
            "out": out,
            "population": case["population"],
            "max_staleness": stale,
            "torch_threads": 1,
            "tensorboard": False,
            "plots": False,
            "progress": False,
            "executor": {
                "kind": "ray",
                "workers": workers,
                "chunk": case["chunk"],
                "log_to_driver": False,
                "num_gpus": num_gpus,
            },
            "evaluation": {"every": steps, "games": 0, "metrics": case["metrics"]},
        },
    )
    league = League(cfg, quiet=True)
    marks: list[float] = []
    updates: list[float] = []
    tokens = [0]
    try:
        for unit in league.units.values():
            trainable = getattr(unit.trainer, "model", None)
            if trainable is not None and hasattr(trainable, "logprobs"):  # LLM learner: count tokens it trains on
                scored = trainable.logprobs

                def counted(pairs: Any, grad: bool = True, model: Any = None, scored: Any = scored) -> Any:
                    if grad:  # the distinct sequences (what the forward/backward pass computes)
                        tokens[0] += sum(len(p) + len(c) for p, c in {(tuple(p), tuple(c)) for p, c in pairs})
                    return scored(pairs, grad=grad, model=model)

                trainable.logprobs = counted
            inner = unit.trainer.update

            def timed(trajectories: Any, inner: Any = inner) -> Any:
                t0 = time.perf_counter()
                try:
                    return inner(trajectories)
                finally:
                    updates.append(time.perf_counter() - t0)

            unit.trainer.update = timed
        step = league.step

        def marked(n: int) -> Any:
            out = step(n)
            marks.append(time.perf_counter())
            return out

        league.step = marked  # type: ignore[method-assign]
        league.run()
    finally:
        league.close()
    games = sum(m.cfg.games_per_step for m in league.members.values() if m.cfg.role == "learner")
    span = marks[-1] - marks[0]
    final = league.state.metrics[-1] if league.state.metrics else {}
    out = {
        "games_per_s": round(games * (steps - 1) / span, 2),
        "updates_per_s": round((steps - 1) / span, 3),
        "update_seconds": round(sum(updates[1:]) / max(1, len(updates) - 1), 3),
        "step_seconds": round(span / (steps - 1), 3),
        "final": {k: round(float(v), 4) for k, v in final.items() if k in QUALITY},
    }
    if tokens[0]:  # forward+backward tokens per second of update time (all updates)
        out["learner_tokens_per_s"] = round(tokens[0] / max(sum(updates), 1e-9), 1)
    return out


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median games/s (the headline), with every run's games/s beside it."""
    ordered = sorted(runs, key=lambda r: r["games_per_s"])
    return dict(ordered[len(ordered) // 2], games_per_s_runs=[r["games_per_s"] for r in runs])


def projection(sync1: dict[str, Any], games: int) -> dict[str, Any]:
    """Games/s at N workers from the synchronous 1-worker run (module docstring)."""
    step, update = sync1["step_seconds"], sync1["update_seconds"]
    rollout = max(step - update, 1e-9)
    out: dict[str, Any] = {
        "rollout_seconds_1_worker": round(rollout, 3),
        "update_seconds": update,
        "learner_bound_from_workers": round(rollout / max(update, 1e-9), 2),
    }
    for n in (1, 2, 4, 8, 16, 32):
        out[f"sync_games_per_s_{n}"] = round(games / (rollout / n + update), 1)
        out[f"async_games_per_s_{n}"] = round(games / max(rollout / n, update), 1)
    return out


def run(args: argparse.Namespace) -> dict:
    import shutil
    import tempfile

    import ray

    try:  # the learner's checkpoint is written every step: no progress bar per write
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:
        pass
    owns = not ray.is_initialized()
    if owns:  # one local cluster for every case: no start-up inside the timings
        ray.init(num_cpus=max(args.workers_list), include_dashboard=False, log_to_driver=False, configure_logging=False)
    root = tempfile.mkdtemp(prefix="arena-bench-train-")
    out: dict[str, Any] = {"steps": args.steps, "seed": args.seed, "device": args.device, "backend": args.backend}
    try:
        for name in args.cases.split(","):
            build, default_games = CASES[name.strip()]
            games = args.games or default_games
            case = build(games, args.device, args.model, args.backend)
            out[f"{name}/games_per_step"] = games
            for w in args.workers_list:
                runs: dict[str, list[dict[str, Any]]] = {"sync": [], "async": []}
                for r in range(args.repeats):  # alternated, so a change in the machine's load hits both
                    for stale in (0, 1):
                        mode = "sync" if stale == 0 else "async"
                        runs[mode].append(
                            one_run(
                                case, f"{root}/{name}-w{w}-{mode}-{r}", args.steps, w, stale, args.seed, args.num_gpus
                            )
                        )
                res = {mode: median_run(rs) for mode, rs in runs.items()}
                for mode in runs:
                    out[f"{name}/w{w}/{mode}"] = res[mode]
                ratios = sorted(a["games_per_s"] / b["games_per_s"] for a, b in zip(runs["async"], runs["sync"]))
                out[f"{name}/w{w}/async_vs_sync_games_per_s_ratio"] = round(
                    res["async"]["games_per_s"] / res["sync"]["games_per_s"], 3
                )
                out[f"{name}/w{w}/paired_ratios"] = [round(x, 3) for x in ratios]
                if w == 1:
                    out[f"{name}/projection"] = projection(res["sync"], games)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        if owns:
            ray.shutdown()
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cases", default="ppo_kuhn,llm_ipd", help="comma list of " + ", ".join(CASES))
    p.add_argument(
        "--workers",
        dest="workers_list",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[1, 2],
        help="comma list of rollout worker counts",
    )
    p.add_argument("--steps", type=int, default=6, help="league steps per run (the first is warm-up)")
    p.add_argument("--games", type=int, default=0, help="games per step (default per case: 256 Kuhn, 64 IPD)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="sync/async pairs per worker count, alternated; the median run is reported",
    )
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N]: the learners (and transformers agents)")
    p.add_argument("--model", default=None, help="LLM case: a local model directory (default: the tiny test model)")
    p.add_argument(
        "--backend",
        default="transformers",
        choices=["transformers", "vllm"],
        help="LLM case: the rollout agents' backend",
    )
    p.add_argument(
        "--num-gpus", dest="num_gpus", type=float, default=0.0, help="GPUs (or a fraction) each rollout worker reserves"
    )


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "train-throughput",
            "training games/s and updates/s: synchronous vs asynchronous rollouts "
            "on 1 and 2 Ray workers (PPO Kuhn, LLM AA on the text IPD)",
            run,
            add_arguments,
            baseline="the synchronous run (max_staleness 0) with the same workers, games and updates",
            ratio="_ratio",
        )
    ]
