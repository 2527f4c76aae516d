"""``arena bench alphazero``: AlphaZero self-play on tic-tac-toe, measured against perfect play.

One ``alphazero`` learner plays itself in batches of ``--batch`` games and the ``alphazero``
trainer updates it after each batch (the loop a league runs with ``matchmaking: self_play``);
every ``--every`` batches a greedy copy (no root noise, most-visited move, ``--eval-simulations``
simulations, by default as many as in self-play) plays ``--eval-games``
games against perfect play (half in each seat) and the share of draws is recorded. Baseline:
perfect play (solved tic-tac-toe), against which a perfect player draws every game.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from arena.cli_api import Benchmark
from arena.errors import ArenaError
from arena.hookspecs import hookimpl


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from arena.loading import load_game
    from arena.playing.match import play_games
    from arena.plugins.agents.alphazero import AlphaZeroAgent
    from arena.plugins.trainers.alphazero import AlphaZeroTrainer
    from arena.rng import derive_seed
    from arena.tools.bench.mcts import PerfectPlayer, seat_returns

    torch.set_num_threads(1)
    game = load_game("openspiel:tic_tac_toe")
    agent = AlphaZeroAgent(game, seed=args.seed, simulations=args.simulations)
    agent.name = "alphazero"
    trainer = AlphaZeroTrainer(game, [agent], seed=args.seed)
    perfect = PerfectPlayer(game)
    evaluation = args.eval_simulations or args.simulations
    curve, start = [], time.perf_counter()
    for b in range(args.batches):
        res = play_games(
            game, [agent, agent], num_games=args.batch, seed=derive_seed(args.seed, "selfplay", b), record=True
        )
        metrics = trainer.update([r.trajectory for r in res])
        if (b + 1) % args.every == 0 or b + 1 == args.batches:
            greedy = AlphaZeroAgent(game, seed=args.seed, simulations=evaluation, greedy=True)
            greedy.net.net.load_state_dict(agent.net.net.state_dict())
            r = seat_returns(game, greedy, perfect, args.eval_games, derive_seed(args.seed, "eval", b))
            curve.append({
                "games": (b + 1) * args.batch,
                "seconds": round(time.perf_counter() - start, 1),
                "draws": float((r == 0).mean()),
                "losses": float((r < 0).mean()),
                "value_loss": round(metrics["value_loss"], 4),
            })  # fmt: skip
    last = curve[-1]
    return {
        "seed": args.seed,
        "simulations": args.simulations,
        "eval_simulations": evaluation,
        "curve": curve,
        "draw_ratio": last["draws"],
    }


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batches", type=int, default=150, help="self-play batches (one update each)")
    p.add_argument("--batch", type=int, default=32, help="games per batch")
    p.add_argument("--simulations", type=int, default=40)
    p.add_argument(
        "--eval-simulations", type=int, default=0, help="the greedy copy's simulations (0: as --simulations)"
    )
    p.add_argument("--every", type=int, default=25, help="batches between evaluations")
    p.add_argument("--eval-games", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)


def _run(args: argparse.Namespace) -> dict:
    if min(args.batches, args.batch, args.simulations, args.every) < 1 or args.eval_games < 2:
        raise ArenaError("arena bench alphazero: counts must be positive (--eval-games at least 2)")
    if args.eval_simulations < 0:
        raise ArenaError("arena bench alphazero: --eval-simulations must be >= 0 (0: as --simulations)")
    return run(args)


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "alphazero",
            "AlphaZero self-play on tic-tac-toe: draws against perfect play as training goes on",
            _run,
            _args,
            baseline="perfect play (solved tic-tac-toe), which draws every game against itself",
            ratio="ratio",
        )
    ]
