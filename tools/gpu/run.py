"""Every GPU measurement arena makes, as one command for one H100/H200 (at most ~8 minutes).

    bash tools/gpu/run.sh OUT_DIR               # on the GPU machine (installs the carried wheels)
    python3 tools/gpu/run.py --out DIR          # the same, packages already there
    python3 tools/gpu/run.py --cpu --out DIR    # the same sections at tiny sizes on a CPU (a test)
    python3 tools/gpu/run.py --sections torch_face --out DIR   # some sections only

It writes ``DIR/gpu_results.json`` and ``DIR/gpu_results.md``: the machine and library versions,
then one section per measurement, each against its baseline in the same run:

- ``cfr``: CFR+ on Leduc poker, seconds per iteration, torch on the GPU against numpy;
- ``ppo``: a neural PPO league on Kuhn poker (256 games a step), steps/s on the GPU against the CPU;
- ``llm_league``: K language agents on one ~0.5B Qwen2-shaped random model in bf16, as K LoRA
  adapters on one shared base against K full models (and 4K adapters): decisions/s (a
  mixed-adapter batch and the same batch through one adapter), learner tokens/s and seconds per
  update, peak GPU memory;
- ``torch_face``: two-player Kuhn poker and Leduc hold'em as torch tensors (``arena.games.card_torch``), whole
  rollouts on the GPU (random seats, then the neural agent's default MLP in every seat): games/s at
  several batch sizes against the same rollouts on the CPU, whether the GPU played the CPU's
  games (same seed: the same actions and returns), and that a rollout never synchronised with the
  host (CUDA's sync debug mode); skipped, with a message, without CUDA;
- ``torch_face_compiled``: the same rollouts ``torch.compile``-d (``compiled_rollout``): compile
  seconds, games/s against eager at batch 262,144, and whether the compiled rollout plays the
  eager one's games;
- ``mismatch``: the log-prob gap between bf16 rollouts and the fp32 learner on the same decisions,
  and the truncated importance weights that correct for it.

A section that fails is recorded with its error and the others still run. The machine has no
network: the packages it lacks travel as wheels made by ``tools/gpu/wheels.sh``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

SECTIONS = ("cfr", "ppo", "torch_face", "torch_face_compiled", "llm_league", "mismatch")


def environment(device: str) -> dict[str, Any]:
    import peft
    import torch
    import transformers

    env = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
        "device": device,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(0)
        env.update(gpu=props.name, gpu_memory_gib=round(props.total_memory / 2**30, 1), cuda=torch.version.cuda)
    return env


def cfr(device: str, iterations: int) -> dict[str, Any]:
    """CFR+ on Leduc: seconds per iteration on ``device`` against numpy, same iterates."""
    from arena.loading import load_game
    from arena.plugins.agents.cfr import TreeSolver, make_rule

    game = load_game("leduc_poker")
    out: dict[str, Any] = {"game": "leduc_poker", "iterations": iterations}
    for name, dev in (("numpy", "numpy"), (device, device)):
        solver = TreeSolver(game, make_rule("cfr+"), device=dev)
        solver.iterate(2)  # warm-up (kernels, allocations)
        t0 = time.perf_counter()
        solver.iterate(iterations)
        out[f"{name}_s_per_iter"] = (time.perf_counter() - t0) / iterations
        out[f"{name}_nash_conv"] = float(solver.nash_conv())
    out["speedup_ratio"] = out["numpy_s_per_iter"] / out[f"{device}_s_per_iter"]
    return out


def ppo(device: str, steps: int, games: int, work: Path) -> dict[str, Any]:
    """A neural PPO learner's league on Kuhn poker (self-play, in one process): steps/s on
    ``device`` against the CPU."""
    from arena.config import load_config
    from arena.league import LeagueConfig
    from arena.league.runner import League

    out: dict[str, Any] = {"game": "kuhn_poker", "games_per_step": games, "steps": steps}
    for dev in ("cpu", device) if device != "cpu" else ("cpu",):
        learner = {
            "label": "ppo",
            "agent": f"neural:hidden=64,seed=0,device={dev}",
            "role": "learner",
            "trainer": {"name": "ppo", "params": {}},
            "games_per_step": games,
            "snapshot_every": steps,
        }
        cfg = load_config(
            LeagueConfig,
            base={
                "game": "kuhn_poker",
                "seed": 0,
                "steps": steps,
                "out": str(work / f"ppo-{dev}"),
                "population": [learner],
                "tensorboard": False,
                "plots": False,
                "progress": False,
                "evaluation": {"every": steps, "games": 0},
            },
        )
        league = League(cfg, quiet=True)
        t0 = time.perf_counter()
        try:
            league.run()
        finally:
            league.close()
        out[f"{dev}_steps_per_s"] = steps / (time.perf_counter() - t0)
    if device != "cpu":
        out["speedup_ratio"] = out[f"{device}_steps_per_s"] / out["cpu_steps_per_s"]
    return out


def torch_face(device: str, small: bool) -> dict[str, Any]:
    """Kuhn poker and Leduc hold'em as tensors: games/s of whole on-device rollouts (random, MLP)
    on ``device`` at several batch sizes, the CPU at batch 4,096 as the baseline, and whether
    both devices play the same seed's games."""
    import torch

    from arena.tools.bench.array_games import TORCH_FACES
    from arena.tools.bench.array_games import torch_face as timed

    if device.startswith("cuda") and not torch.cuda.is_available():
        return {"skipped": "no CUDA device (torch.cuda.is_available() is False): not measured"}
    torch.set_num_threads(1)
    cpu_games, games = (2_048, 4_096) if small else (98_304, 1 << 21)  # whole batches of 4,096 (or 256, 1,024)
    batches = [256, 1024] if small else [4096, 65536, 262144]
    out: dict[str, Any] = {"cpu_games": cpu_games, "games": games, "torch_threads": 1}
    for name in TORCH_FACES:
        for policy in ("random", "mlp"):
            t, _ = timed("cpu", cpu_games, 4096, policy, 0, name)
            cpu = out[f"{name}_cpu_{policy}_games_per_s"] = round(cpu_games / t, 1)
            if device == "cpu":
                continue
            best = 0.0
            for b in batches:
                t, _ = timed(device, games, b, policy, 0, name)
                gps = out[f"{name}_{device}_{policy}_b{b}_games_per_s"] = round(games / t, 1)
                best = max(best, gps)
            out[f"{name}_{policy}_speedup_ratio"] = round(best / cpu, 2)
        if device != "cpu":
            out.update(_same_games(name, device))
    return out


def _same_games(name: str, device: str) -> dict[str, Any]:
    """The fraction of 65,536 games (seed 5) that ``device`` plays exactly as the CPU does, and
    where the device's rollout synchronised with the host (:func:`sync_sites`: any ``.item()``, host
    copy or data-dependent shape inside the loop), ``none`` when nowhere."""
    import torch

    from arena.games.card_torch import KuhnTorch, LeducTorch, TorchRandom, rollout
    from arena.loading import load_agent, load_game

    net = load_agent("neural", load_game(name), seed=0).net.actor
    out: dict[str, Any] = {}
    for policy in ("random", "mlp"):
        played = []
        for dev in ("cpu", device):
            game = KuhnTorch(2, dev) if name == "kuhn_poker" else LeducTorch(dev)
            seats = ["random"] * 2 if policy == "random" else [net.to(dev)] * 2
            rng = TorchRandom(5, range(65536), dev)
            with torch.no_grad():
                rollout(game, seats, TorchRandom(5, range(64), dev))  # warm-up: cached tensors, kernels
                if dev.startswith("cuda"):
                    torch.cuda.synchronize()
                    (ret, acts, _), sites = sync_sites(lambda: rollout(game, seats, rng))
                    out[f"{name}_{policy}_host_syncs_in_rollout"] = "; ".join(sites) or "none"
                else:
                    ret, acts, _ = rollout(game, seats, rng)
            played.append((ret.cpu(), acts.cpu()))
        same = (played[0][1] == played[1][1]).all(1) & (played[0][0] == played[1][0]).all(1)
        out[f"{name}_{policy}_games_same_as_cpu_fraction"] = float(same.double().mean())
    return out


def torch_face_compiled(device: str, small: bool) -> dict[str, Any]:
    """The torch faces' rollouts ``torch.compile``-d on ``device`` (``compiled_rollout``): seconds to
    compile, games/s at the largest batch against the eager rollout in the same run, and whether
    the compiled rollout plays the eager one's games (one batch, seed 5). Each case is printed as
    it ends, so a run cut short still shows the cases it finished."""
    import torch

    from arena.games.card_torch import KuhnTorch, LeducTorch, TorchRandom, compiled_rollout, rollout
    from arena.loading import load_agent, load_game

    if device.startswith("cuda") and not torch.cuda.is_available():
        return {"skipped": "no CUDA device (torch.cuda.is_available() is False): not measured"}
    torch.set_num_threads(1)
    batch, rounds = (1024, 2) if small else (262_144, 8)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    out: dict[str, Any] = {"batch": batch, "games": batch * rounds}
    cases = (
        [("kuhn_poker", "random")]
        if small
        else [(g, p) for g in ("kuhn_poker", "leduc_poker") for p in ("random", "mlp")]
    )
    for name, policy in cases:
        game = KuhnTorch(2, device) if name == "kuhn_poker" else LeducTorch(device)
        net = load_agent("neural", load_game(name), seed=0).net.actor.to(device)
        seats = ["random"] * 2 if policy == "random" else [net] * 2
        fast = compiled_rollout(game, seats)
        with torch.no_grad():
            t0 = time.perf_counter()
            fast(TorchRandom(0, range(batch), device))
            sync()
            out[f"{name}_{policy}_compile_s"] = round(time.perf_counter() - t0, 1)
            for label, play in (("eager", lambda r: rollout(game, seats, r)), ("compiled", fast)):
                play(TorchRandom(1, range(batch), device))  # warm
                sync()
                t0 = time.perf_counter()
                for i in range(rounds):
                    play(TorchRandom(0, range(i * batch, (i + 1) * batch), device))
                sync()
                out[f"{name}_{policy}_{label}_games_per_s"] = round(batch * rounds / (time.perf_counter() - t0), 1)
            out[f"{name}_{policy}_compiled_vs_eager_ratio"] = round(
                out[f"{name}_{policy}_compiled_games_per_s"] / out[f"{name}_{policy}_eager_games_per_s"], 2
            )
            want = rollout(game, seats, TorchRandom(5, range(batch), device))
            got = fast(TorchRandom(5, range(batch), device))
            same = (want[1] == got[1]).all(1) & (want[0] == got[0]).all(1)
            out[f"{name}_{policy}_games_same_as_eager_fraction"] = float(same.double().mean())
        print(f"[gpu] torch_face_compiled {name} {policy}: {json.dumps({k: v for k, v in out.items() if name in k})}")
    return out


def sync_sites(fn: Callable[[], Any]) -> tuple[Any, list[str]]:
    """``fn()`` under CUDA's sync debug mode set to ``warn``, and where it synchronised with the host:
    each distinct ``file:line function`` of the innermost arena frame below a synchronising call."""
    import warnings

    import torch

    root = str(Path(__file__).resolve().parents[2])
    sites: list[str] = []

    def note(message: Any, *rest: Any, **kw: Any) -> None:
        if "called a synchronizing" not in str(message):  # not torch's one-time "prototype feature" notice
            return
        stack = [f for f in traceback.extract_stack()[:-1] if f.filename != __file__]
        ours = [f for f in stack if f.filename.startswith(root)]
        if ours:
            site = f"{Path(ours[-1].filename).relative_to(root)}:{ours[-1].lineno} {ours[-1].name}"
        else:  # outside the repository (or an installed copy of it): the innermost frames, named
            site = " < ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in stack[::-1][:3]) or "?"
        if site not in sites:
            sites.append(site)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = note
        torch.cuda.set_sync_debug_mode("warn")
        try:
            result = fn()
        finally:
            torch.cuda.set_sync_debug_mode(0)
    return result, sites


def llm_league(model: str, device: str, dtype: str, k: int, batch: int, repeats: int) -> dict[str, Any]:
    """K adapters on one base against K full models (and one model), each case its own process."""
    from arena.tools.bench.llm_league import compare, run_in_process

    base = {"model": model, "device": device, "dtype": dtype, "batch": batch, "rank": 16, "repeats": repeats}
    base.update(update=True, merge=True)
    plan = [(k, "adapters"), (k, "full"), (1, "full"), (4 * k, "adapters")]  # 4K adapters: memory as K grows
    cases = [run_in_process({**base, "k": kk, "kind": kind}) for kk, kind in plan]
    return {"cases": cases, "ratios": compare(cases)}


def mismatch(model: str, device: str, dtype: str, batch: int) -> dict[str, Any]:
    """Log-prob gap between low-precision rollouts and the fp32 learner on the same decisions,
    and the truncated importance weights (cap 2, as the trainers' ``is_cap``) that correct it."""
    import torch

    from arena.plugins.agents.llm.agent import LLMAgent
    from arena.plugins.agents.llm.hf import TransformersBackend
    from arena.tools.bench.llm_league import positions

    obs = positions(batch, seed=2)
    low = LLMAgent(TransformersBackend(model, device=device, dtype=dtype), mode="scored")
    _, infos = low.act_batch_info(obs)
    pairs = [(i["prompt_ids"], i["completion_ids"]) for i in infos]
    rollout = torch.tensor([sum(i["completion_logprobs"]) for i in infos], dtype=torch.float64)
    exact = TransformersBackend(model, device=device, dtype="float32")
    learner = torch.tensor([sum(x) for x in exact.score_ids(pairs)], dtype=torch.float64)
    gap = (learner - rollout).abs()
    weights = torch.exp(learner - rollout)
    capped = weights.clamp(max=2.0)
    return {
        "rollout_dtype": dtype,
        "decisions": len(pairs),
        "mean_abs_logprob_gap": float(gap.mean()),
        "max_abs_logprob_gap": float(gap.max()),
        "is_weight_mean": float(weights.mean()),
        "is_weight_max": float(weights.max()),
        "truncated_fraction": float((weights > 2.0).double().mean()),
        "truncated_weight_mean": float(capped.mean()),
    }


def section(results: dict[str, Any], name: str, fn: Callable[[], dict[str, Any]], out: Path) -> None:
    """Run one measurement, record it (or its error), and rewrite the reports: a run cut short
    keeps every section finished before it."""
    t0 = time.perf_counter()
    print(f"[gpu] {name} ...", flush=True)
    try:
        results[name] = fn()
    except Exception as exc:  # recorded; the other sections still run
        results[name] = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-2000:]}
    results[name]["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"[gpu] {name}: {json.dumps(results[name], default=str)[:1500]}", flush=True)
    (out / "gpu_results.json").write_text(json.dumps(results, indent=2, default=str))
    (out / "gpu_results.md").write_text(markdown(results))


def markdown(r: dict[str, Any]) -> str:
    env = r["environment"]
    lines = [f"# arena GPU measurements, {env.get('date')}", ""]
    lines.append(", ".join(f"{k} {v}" for k, v in env.items() if k != "date"))
    lines.append("")
    lines.append("| measurement | value |")
    lines.append("|---|---|")
    for name in ("cfr", "ppo", "torch_face", "torch_face_compiled", "mismatch"):
        for key, value in r.get(name, {}).items():
            if key != "trace":
                lines.append(
                    f"| {name}.{key} | {value:.4g} |" if isinstance(value, float) else f"| {name}.{key} | {value} |"
                )
    league = r.get("llm_league", {})
    if "cases" in league:
        lines += ["", "| kind | K | peak GiB | single dec/s | mixed dec/s | update s/learner | learner tok/s |"]
        lines.append("|---|---|---|---|---|---|---|")
        for c in league["cases"]:
            lines.append(
                f"| {c['kind']} | {c['k']} | {c['peak_bytes'] / 2**30:.2f} | {c['single_decisions_per_s']} | "
                f"{c['mixed_decisions_per_s']} | {c.get('update_s_per_learner')} | {c.get('learner_tokens_per_s')} |"
            )
        lines += ["", f"ratios: `{json.dumps(league['ratios'])}`"]
    elif league:
        lines += ["", f"llm_league: {league.get('error')}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpu", action="store_true", help="dry run on the CPU at tiny sizes")
    p.add_argument("--out", default="runs/gpu", help="where the JSON and markdown reports go")
    p.add_argument("--params", default=None, help="model size (default 0.5B on a GPU, 2M with --cpu)")
    p.add_argument("--k", type=int, default=4, help="learners as adapters vs as full models")
    p.add_argument("--work", default=None, help="scratch space for the model and runs (default OUT/work)")
    p.add_argument("--sections", default=",".join(SECTIONS), help=f"comma list of {', '.join(SECTIONS)}")
    args = p.parse_args(argv)
    chosen = [x for x in args.sections.split(",") if x]
    unknown = sorted(set(chosen) - set(SECTIONS))
    if unknown:
        p.error(f"--sections: unknown {', '.join(unknown)}; known: {', '.join(SECTIONS)}")
    device = "cpu" if args.cpu else "cuda"
    dtype = "float32" if args.cpu else "bfloat16"
    out = Path(args.out)
    work = Path(args.work) if args.work else out / "work"
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"environment": environment(device), "command": " ".join(sys.argv)}
    print(f"[gpu] {json.dumps(results['environment'])}", flush=True)

    def measure(name: str, fn: Callable[[], dict[str, Any]]) -> None:
        if name in chosen:
            section(results, name, fn, out)

    measure("cfr", lambda: cfr(device, 5 if args.cpu else 200))
    measure("ppo", lambda: ppo(device, 2 if args.cpu else 8, 32 if args.cpu else 256, work))
    measure("torch_face", lambda: torch_face(device, args.cpu))
    measure("torch_face_compiled", lambda: torch_face_compiled(device, args.cpu))
    model = str(work / "base")

    def build() -> dict[str, Any]:
        from arena.tools.tiny_model import build_tiny_model

        params = args.params or ("2M" if args.cpu else "0.5B")
        build_tiny_model(model, arch="qwen2", params=params, tokenizer="bpe", dtype=dtype)
        return json.loads((Path(model) / "arena_tiny_model.json").read_text())

    if {"llm_league", "mismatch"} & set(chosen):  # both need the model
        section(results, "model", build, out)
    batch = 8 if args.cpu else 256
    repeats = 1 if args.cpu else 3
    measure("llm_league", lambda: llm_league(model, device, dtype, args.k, batch, repeats))
    measure("mismatch", lambda: mismatch(model, device, "bfloat16", batch))
    failed = [k for k, v in results.items() if isinstance(v, dict) and "error" in v]
    print(f"[gpu] wrote {out / 'gpu_results.json'} and gpu_results.md; failed sections: {failed or 'none'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
