"""``arena bench llm-league``: K language agents in one process, as LoRA adapters on one shared base
model against K full models — peak memory, decisions/s (one mixed-adapter batch against the same
batch through one adapter) and seconds per learner update, with the ratios, in one run.

Each case runs in its own process (``python -m arena.tools.bench.llm_league --case JSON``), so a
case's peak memory is that process's own: ``ru_maxrss`` on a CPU, ``torch.cuda.max_memory_allocated``
on a GPU. Decisions are real ``llm`` agent decisions (prompts, scoring, sampling) on text Kuhn poker
positions; an update is one policy-gradient step of each learner on its own decisions.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from typing import Any

from arena.cli_api import Benchmark
from arena.errors import ArenaError
from arena.hookspecs import hookimpl

GAME = "kuhn_poker"


def positions(n: int, seed: int = 0) -> list[Any]:
    """``n`` decision points of random Kuhn poker games, as observations an agent acts on."""
    import numpy as np

    from arena.agent import Observation
    from arena.loading import load_game
    from arena.playing.match import game_rng, sample_chance

    game = load_game(GAME)
    rng = np.random.default_rng(seed)
    out: list[Any] = []
    i = 0
    while len(out) < n:
        stream = game_rng(seed, i)
        state = game.new_initial_state(seed=i)
        i += 1
        while not state.is_terminal() and len(out) < n:
            if state.is_chance_node():
                sample_chance(state, stream)
                continue
            p = state.current_player()
            out.append(Observation(state.clone(), p, game_rng(seed + 1, len(out)), game.spec.full_name))
            state.apply_action(int(rng.choice(state.legal_actions(p))))
    return out


def _agents(case: dict[str, Any]) -> list[Any]:
    """K ``llm`` agents: adapters of one shared base, or K full models each loaded on its own."""
    from arena.plugins.agents.llm.adapters import AdapterBackend, shared_base
    from arena.plugins.agents.llm.agent import LLMAgent
    from arena.plugins.agents.llm.hf import TransformersBackend

    k, model, device, dtype = case["k"], case["model"], case["device"], case["dtype"]
    if case["kind"] == "adapters":
        base = shared_base(model, device, dtype)
        lora = {"rank": case["rank"]}
        backends: list[Any] = [
            AdapterBackend(base, base.new_adapter(lora, f"a{j}", init="random", seed=j), merge=case["merge"])
            for j in range(k)
        ]
    else:
        backends = [TransformersBackend(model, device=device, dtype=dtype, merge=case["merge"]) for _ in range(k)]
    agents = []
    for j, b in enumerate(backends):
        agent = LLMAgent(b, mode="scored", fallback="random")
        agent.name = f"agent{j}"
        agents.append(agent)
    return agents


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(fn: Any, device: str, repeats: int) -> float:
    """Best wall seconds of ``repeats`` calls after one warm-up."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        _sync(device)
        t0 = time.perf_counter()
        fn()
        _sync(device)
        best = min(best, time.perf_counter() - t0)
    return best


def _update_seconds(agents: list[Any], obs: list[Any], case: dict[str, Any]) -> tuple[float, float]:
    """Seconds of one policy-gradient step per learner (each on its own slice of decisions, after
    one untimed warm-up step each), and the tokens per second those steps train on."""
    from arena.plugins.trainers.llm.model import TrainableLLM

    device = case["device"]
    trainables = [TrainableLLM(a, lr=1e-4, device=None) for a in agents]
    per = max(1, len(obs) // len(agents))
    spent, tokens = 0.0, 0
    batches = []
    for j, agent in enumerate(agents):
        _, infos = agent.act_batch_info(obs[j * per : (j + 1) * per] or obs[:per])
        batches.append([(i["prompt_ids"], i["completion_ids"]) for i in infos])
    for timed in (False, True):  # a first, untimed round warms allocators and kernels up
        for trainable, pairs in zip(trainables, batches):
            _sync(device)
            t0 = time.perf_counter()
            trainable.step(-trainable.logprobs(pairs).mean())
            _sync(device)
            if timed:
                spent += time.perf_counter() - t0
                tokens += sum(len(p) + len(c) for p, c in pairs)
    return spent / len(agents), tokens / max(spent, 1e-9)


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    """One configuration, measured in this process (call it in a fresh one for peak memory)."""
    import resource

    import torch

    device = case["device"]
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ArenaError(f"bench llm-league: device {device!r} requested but torch sees no CUDA GPU")
        torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(0)
    t0 = time.perf_counter()
    agents = _agents(case)
    load_s = time.perf_counter() - t0
    obs = positions(case["batch"], seed=1)
    split = [obs[j :: len(agents)] for j in range(len(agents))]
    out: dict[str, Any] = {**case, "load_s": round(load_s, 2)}
    single = _timed(lambda: agents[0].act_batch_info(obs), device, case["repeats"])
    out["single_decisions_per_s"] = round(len(obs) / single, 1)
    if case["kind"] == "adapters":
        together = type(agents[0]).act_together
        mixed = _timed(lambda: together(list(zip(agents, split))), device, case["repeats"])
    else:  # K full models: each answers its own share, one model after another
        mixed = _timed(lambda: [a.act_batch_info(s) for a, s in zip(agents, split)], device, case["repeats"])
    out["mixed_decisions_per_s"] = round(len(obs) / mixed, 1)
    if case["update"]:
        step_s, tok_s = _update_seconds(agents, obs, case)
        out["update_s_per_learner"] = round(step_s, 4)
        out["learner_tokens_per_s"] = round(tok_s, 1)
    if device.startswith("cuda"):
        out["peak_bytes"] = int(torch.cuda.max_memory_allocated())
    else:
        out["peak_bytes"] = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
    out["parameter_bytes"] = _parameter_bytes(agents)
    return out


def _parameter_bytes(agents: list[Any]) -> int:
    """Bytes of every distinct weight tensor the agents hold (a shared base counts once)."""
    seen: dict[int, int] = {}
    for a in agents:
        for p in a.backend.model.parameters():
            seen[id(p)] = p.numel() * p.element_size()
    return sum(seen.values())


def run_in_process(case: dict[str, Any], timeout: float = 1800.0) -> dict[str, Any]:
    """``run_case`` in a fresh Python process (its own peak memory); its JSON result."""
    cmd = [sys.executable, "-m", "arena.tools.bench.llm_league", "--case", json.dumps(case)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise ArenaError(f"bench llm-league: case {case['kind']} K={case['k']} failed: {tail[0]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def compare(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Ratios per K: adapters' peak memory against one model's, mixed against single-adapter
    decisions/s, adapters against K full models."""
    one = next((c for c in cases if c["kind"] == "full" and c["k"] == 1), None)
    out: dict[str, Any] = {}
    for c in cases:
        if c["kind"] != "adapters":
            continue
        row: dict[str, Any] = {
            "mixed_vs_single_decisions_ratio": round(c["mixed_decisions_per_s"] / c["single_decisions_per_s"], 3)
        }
        if one:
            row["peak_vs_one_model_ratio"] = round(c["peak_bytes"] / one["peak_bytes"], 3)
        full = next((f for f in cases if f["kind"] == "full" and f["k"] == c["k"]), None)
        if full:
            row["peak_vs_k_full_models_ratio"] = round(c["peak_bytes"] / full["peak_bytes"], 3)
            row["mixed_decisions_vs_k_full_models_ratio"] = round(
                c["mixed_decisions_per_s"] / full["mixed_decisions_per_s"], 3
            )
            if "update_s_per_learner" in c and "update_s_per_learner" in full:
                row["update_s_vs_full_ratio"] = round(c["update_s_per_learner"] / full["update_s_per_learner"], 3)
        out[f"K={c['k']}"] = row
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from pathlib import Path

    model = args.model
    if model is None:
        from arena.tools.tiny_model import build_tiny_model

        model = str(Path(args.work) / f"{args.arch}-{args.params}")
        if not (Path(model) / "config.json").exists():
            build_tiny_model(model, arch=args.arch, params=args.params, tokenizer="bpe", dtype=args.dtype)
    ks = [int(k) for k in str(args.k).split(",")]
    kinds = ["adapters", "full"]
    cases = []
    for k in ks:
        for kind in kinds:
            if kind == "full" and k > args.max_full:
                continue
            case = {
                "model": model,
                "k": k,
                "kind": kind,
                "device": args.device,
                "dtype": args.dtype,
                "batch": args.batch,
                "rank": args.rank,
                "repeats": args.repeats,
                "update": not args.no_update,
                "merge": not args.no_merge,
            }
            cases.append(run_in_process(case))
    if not any(c["kind"] == "full" and c["k"] == 1 for c in cases):
        cases.append(run_in_process({**cases[0], "k": 1, "kind": "full"}))
    return {"model": model, "device": args.device, "dtype": args.dtype, "cases": cases, "ratios": compare(cases)}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=None, help="a local base model directory (default: build one)")
    p.add_argument("--arch", default="qwen2", choices=("qwen2", "llama"), help="shape of the built model")
    p.add_argument("--params", default="2M", help="size of the built model (e.g. 0.5B on a GPU)")
    p.add_argument("--work", default="runs/bench/llm_league", help="where the built model goes")
    p.add_argument("--k", default="1,4,16", help="numbers of agents, comma-separated")
    p.add_argument("--max-full", type=int, default=16, help="largest K also run as K full models")
    p.add_argument("--batch", type=int, default=64, help="decisions per batch (equal for mixed and single)")
    p.add_argument("--rank", type=int, default=8, help="LoRA rank")
    p.add_argument("--device", default="cpu")
    p.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    p.add_argument("--repeats", type=int, default=3, help="timed repeats per measurement (best kept)")
    p.add_argument("--no-update", action="store_true", help="skip the learner-update timing")
    p.add_argument(
        "--no-merge",
        action="store_true",
        help="score every decision as its own row: identical prompts of different games are otherwise scored "
        "once, which a single-adapter batch can do across all its rows and a mixed batch only within each adapter",
    )


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "llm-league",
            "K LLM agents as LoRA adapters on one base vs K full models: memory, decisions/s, update time",
            run,
            add_arguments,
            baseline="K full models (and one model) in the same run; single-adapter batches of the same size",
            ratio="_ratio",
        )
    ]


if __name__ == "__main__":  # one case in its own process
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", required=True)
    result = run_case(json.loads(parser.parse_args().case))
    print(json.dumps(result))
