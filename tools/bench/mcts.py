"""``arena bench mcts``: the ``mcts`` agent against perfect play and against random.

- tic-tac-toe against a perfect player (every position solved by memoised minimax; among
  optimal moves it picks uniformly, so the games vary): how many of the games are draws;
- connect four against uniform random: win rate with a Wilson 95% interval;
- Leduc hold'em, information-set MCTS against uniform random: score (win 1, tie ½) and mean
  return, each with a 95% interval.

Seats alternate (half of the games in each seat). Baselines: perfect play and uniform random.
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any, Mapping, Sequence

import numpy as np

from arena.agent import Agent, Observation, sample_from
from arena.cli_api import Benchmark
from arena.errors import ArenaError
from arena.game import Game, State
from arena.hookspecs import hookimpl


class PerfectPlayer(Agent):
    """Uniform over the minimax-optimal moves of a small 2-player zero-sum perfect-information
    game whose observation is the whole position (a board): values memoised per observation
    tensor and player to move (tic-tac-toe: 5,478 positions, where histories number 549,946)."""

    name = "perfect"

    def __init__(self, game: Game, limit: int = 200_000) -> None:
        if game.spec.num_players != 2 or not game.spec.zero_sum:
            raise ArenaError(f"perfect play needs a 2-player zero-sum game, not '{game.spec.full_name}'")
        self.game, self.limit = game, limit
        self.values: dict[tuple[int, bytes], float] = {}

    def value(self, state: State) -> float:
        """Player 0's minimax return from ``state``."""
        if state.is_terminal():
            return float(state.returns()[0])
        p = state.current_player()
        key = (p, np.asarray(state.observation_tensor(p), dtype=np.float32).tobytes())
        if key not in self.values:
            if len(self.values) >= self.limit:
                raise ArenaError(f"perfect play: '{self.game.spec.full_name}' has more than {self.limit} positions")
            kids = [self.value(child(state, a)) for a in state.legal_actions(p)]
            self.values[key] = max(kids) if p == 0 else min(kids)
        return self.values[key]

    def policy(self, obs: Observation) -> Mapping[int, float]:
        sign = 1.0 if obs.player == 0 else -1.0
        vals = {a: sign * self.value(child(obs.state, a)) for a in obs.legal_actions}
        best = max(vals.values())
        opt = [a for a, v in vals.items() if v >= best - 1e-9]
        return {a: 1.0 / len(opt) for a in opt}

    def act_batch(self, observations: Sequence[Observation]) -> list[Any]:
        return [sample_from(self.policy(o), o) for o in observations]


def child(state: State, action: int) -> State:
    s = state.clone()
    s.apply_action(action)
    return s


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, centre - half), min(1.0, centre + half)


def seat_returns(game: Game, agent: Agent, other: Agent, games: int, seed: int) -> np.ndarray:
    """``agent``'s returns over ``games`` games, half in each seat."""
    from arena.playing.match import play_games
    from arena.rng import derive_seed

    first = games // 2
    out = [r.returns[0] for r in play_games(game, [agent, other], num_games=first, seed=derive_seed(seed, "seat", 0))]
    rest = play_games(game, [other, agent], num_games=games - first, seed=derive_seed(seed, "seat", 1))
    return np.asarray(out + [r.returns[1] for r in rest], dtype=float)


def summary(returns: np.ndarray, seconds: float) -> dict[str, Any]:
    n = len(returns)
    wins, ties = float((returns > 0).sum()), float((returns == 0).sum())
    score = (wins + 0.5 * ties) / max(n, 1)
    lo, hi = wilson(wins + 0.5 * ties, n)
    sd = float(returns.std(ddof=1)) if n > 1 else 0.0
    half = 1.96 * sd / math.sqrt(max(n, 1))
    return {
        "games": n,
        "wins": int(wins),
        "draws": int(ties),
        "losses": int((returns < 0).sum()),
        "score": round(score, 4),
        "score_ci95": [round(lo, 4), round(hi, 4)],
        "mean_return": round(float(returns.mean()), 4),
        "mean_return_ci95": [round(float(returns.mean()) - half, 4), round(float(returns.mean()) + half, 4)],
        "seconds": round(seconds, 1),
    }


def run(games: dict[str, int], simulations: dict[str, int], seed: int) -> dict[str, Any]:
    from arena.loading import load_agent, load_game

    out: dict[str, Any] = {"seed": seed}
    for key, game_name, opponent in (
        ("tic_tac_toe_vs_perfect", "openspiel:tic_tac_toe", "perfect"),
        ("connect_four_vs_random", "openspiel:connect_four", "random"),
        ("leduc_vs_random", "leduc_poker", "random"),
    ):
        game = load_game(game_name)
        sims = simulations[key]
        agent = load_agent(f"mcts:simulations={sims}", game)
        other = PerfectPlayer(game) if opponent == "perfect" else load_agent("random", game)
        start = time.perf_counter()
        returns = seat_returns(game, agent, other, games[key], seed)
        out[key] = {"simulations": sims, **summary(returns, time.perf_counter() - start)}
    out["draw_ratio"] = out["tic_tac_toe_vs_perfect"]["draws"] / games["tic_tac_toe_vs_perfect"]
    return out


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=int, default=100, help="tic-tac-toe and connect-four games (half in each seat)")
    p.add_argument("--leduc-games", type=int, default=1000, help="Leduc games (half in each seat)")
    p.add_argument("--ttt-simulations", type=int, default=1000)
    p.add_argument("--c4-simulations", type=int, default=400)
    p.add_argument("--leduc-simulations", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)


def _run(args: argparse.Namespace) -> dict:
    if min(args.games, args.leduc_games) < 2:
        raise ArenaError("--games and --leduc-games must be at least 2 (one per seat)")
    sims = {
        "tic_tac_toe_vs_perfect": args.ttt_simulations,
        "connect_four_vs_random": args.c4_simulations,
        "leduc_vs_random": args.leduc_simulations,
    }
    games = {
        "tic_tac_toe_vs_perfect": args.games,
        "connect_four_vs_random": args.games,
        "leduc_vs_random": args.leduc_games,
    }
    return run(games, sims, args.seed)


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "mcts",
            "MCTS: tic-tac-toe vs perfect play (draws), connect four and Leduc (IS-MCTS) vs random",
            _run,
            _args,
            baseline="perfect play (solved tic-tac-toe) and uniform random, same seeds",
            ratio="ratio",
        )
    ]
