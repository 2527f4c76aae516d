"""IPPO against MAPPO on level-based foraging: the share of food the trained pair collects.

For every method and seed, two ``neural`` learners trained by self-play from scratch for
``--games`` games (updates every ``--batch`` games): IPPO is the ``ppo`` trainer (each agent its
own critic), MAPPO the ``mappo`` trainer (one centralised critic on the joint observation). Then
``--eval-games`` games of the trained pair, sampling its policies: the team return (the share of
the spawned food level collected, 1 = everything) and the episode length in rounds. Over seeds: IQM and
mean of the team return with 95% bootstrap intervals (:func:`arena.experiments.sweep.aggregate`),
and the same for an untrained pair (the baseline).

    python -m arena.tools.foraging_marl --game "foraging(coop=true,max_level=1,horizon=25)" --seeds 0,1,2 --games 3000
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from typing import Any, Sequence

import numpy as np

METHODS = {"ippo": "ppo", "mappo": "mappo"}


def evaluate(game: Any, agents: list[Any], games: int, seed: int) -> tuple[float, float]:
    from arena.playing.match import play_games

    res = play_games(game, agents, num_games=games, seed=seed)
    rounds = [r.length / game.spec.num_players for r in res]  # a round is one move per seat
    return float(np.mean([sum(r.returns) for r in res])), float(np.mean(rounds))


def run_one(game_name: str, method: str, seed: int, games: int, batch: int, eval_games: int) -> dict[str, Any]:
    from arena.loading import load_game
    from arena.playing.match import play_games
    from arena.plugins.agents.neural import NeuralAgent
    from arena.registry import get_registry
    from arena.rng import derive_seed

    game = load_game(game_name)
    agents = [NeuralAgent(game, hidden=64, seed=seed * 10 + p) for p in range(2)]
    for p, a in enumerate(agents):
        a.name = f"{method}-{p}"
    trainer = get_registry().get("trainer", METHODS[method]).factory(game, agents, seed=seed, gamma=0.99, lam=0.95)
    start = time.perf_counter()
    untrained = evaluate(game, agents, eval_games, derive_seed(seed, "foraging-eval"))
    for b in range(max(1, games // batch)):
        res = play_games(game, agents, num_games=batch, seed=derive_seed(seed, "foraging", method, b), record=True)
        trainer.update([r.trajectory for r in res])
    team, length = evaluate(game, agents, eval_games, derive_seed(seed, "foraging-eval"))
    return {
        "seed": seed,
        "team_return": team,
        "rounds": length,
        "untrained_team_return": untrained[0],
        "untrained_rounds": untrained[1],
        "seconds": round(time.perf_counter() - start, 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m arena.tools.foraging_marl", description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="foraging(coop=true,max_level=1,horizon=25)")
    ap.add_argument("--methods", default="ippo,mappo")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--games", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--eval-games", type=int, default=200)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    import torch

    from arena.errors import ArenaError
    from arena.experiments.sweep import aggregate, parse_seeds

    torch.set_num_threads(1)
    methods = [m for m in a.methods.split(",") if m]
    if set(methods) - set(METHODS):
        raise ArenaError(f"foraging_marl: methods are {', '.join(METHODS)}, got {a.methods!r}")
    out: dict[str, Any] = {"config": vars(a)}
    for m in methods:
        rows = [run_one(a.game, m, s, a.games, a.batch, a.eval_games) for s in parse_seeds(a.seeds)]
        out[m] = {
            "seeds": rows,
            "team_return": {k: v for k, v in asdict(aggregate([r["team_return"] for r in rows])).items()},
            "untrained_team_return": float(np.mean([r["untrained_team_return"] for r in rows])),
        }
        if not a.json:
            print(json.dumps({m: out[m]["team_return"]}), flush=True)
    print(json.dumps(out, indent=None if a.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
