"""Monopoly Deal benchmarks.

``arena bench monopoly-deal``: random games per second through arena's batched runner against a
plain PettingZoo loop over the same game's AEC face (``arena.make_env``), in the same process,
with the machine load at the start. Every runner game must end without a forfeit (an engine
error forfeits); ``--games 10000`` is the 10,000-random-games check of docs/results/monopoly_deal.md.

``arena bench monopoly-deal-agents``: the agents' win rates with Wilson 95% intervals on fixed
seeds: the heuristic against random (retail and paper variants) and the MCCFR intent policy
against the heuristic (paper variant); ``--rules`` plays one-change scripted variants of the
heuristic against it instead (which choices leave room to gain). Seats alternate; a draw counts
as not winning.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any, Callable

from arena.cli_api import Benchmark
from arena.errors import ArenaError
from arena.hookspecs import hookimpl


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def win_rate(game_name: str, a: Any, b: Any, games: int, seed: int) -> dict[str, Any]:
    """Win rate of agent ``a`` against ``b`` (names, or agents already loaded) over ``games``
    games with alternating seats."""
    from scipy.stats import binomtest

    import arena

    game = arena.load_game(game_name)
    x = arena.load_agent(a, game, label="A") if isinstance(a, str) else a
    y = arena.load_agent(b, game, label="B") if isinstance(b, str) else b
    results = arena.play(game, [x, y], games=games, seed=seed, rotate_seats=True)
    forfeits = sum(r.forfeit is not None for r in results)
    wins = sum(1 for i, r in enumerate(results) if r.forfeit is None and r.info.get("winner") == i % 2)
    draws = sum(1 for r in results if r.forfeit is None and r.info.get("winner") is None)
    ci = binomtest(wins, games).proportion_ci(confidence_level=0.95, method="wilson")
    stats = x.stats() if hasattr(x, "stats") else {}
    return {
        "game": game_name,
        "agent": a if isinstance(a, str) else x.name,
        "opponent": b if isinstance(b, str) else y.name,
        "games": games,
        "seed": seed,
        "wins": wins,
        "draws": draws,
        "forfeits": forfeits,
        "win_rate": round(wins / games, 4),
        "ci95": [round(float(ci.low), 4), round(float(ci.high), 4)],
        **({"agent_stats": stats} if stats else {}),
    }


def rule_variants() -> dict[str, Callable[[Any, list[tuple]], tuple | None]]:
    """One-change variants of the heuristic (``--rules``): where could an intent-level policy
    gain on it? Each returns its move, or None for the heuristic's own."""
    from arena.games.monopoly_deal.cards import KINDS
    from arena.games.monopoly_deal.tactics import asset_cost, choose_payment, heuristic_move

    def refuse(test: Callable[[Any], bool]) -> Callable[[Any, list[tuple]], tuple | None]:
        def rule(v: Any, legal: list[tuple]) -> tuple | None:
            if v.phase == "respond" and ("jsn",) in legal:
                return ("jsn",) if test(v) else ("accept",)
            return None

        return rule

    def hold_small_rents(v: Any, legal: list[tuple]) -> tuple | None:
        m = heuristic_move(v, legal)
        if v.phase == "play" and m[0] == "rent" and v.rent(v.me, m[2]) < 4 and sum(v.hand.values()) < 6:
            return heuristic_move(v, [x for x in legal if x[0] != "rent"])
        return None

    def pay_with_property(v: Any, legal: list[tuple]) -> tuple | None:
        bank = [m for m in legal if m[0] == "paybank"]
        cheap = [m for m in legal if m[0] == "payprop" and asset_cost(v, m) < 25]
        if v.phase == "pay" and bank and cheap:
            prop = min(cheap, key=lambda m: asset_cost(v, m))
            if KINDS[prop[1]].value < choose_payment(v, bank)[1]:
                return prop
        return None

    return {
        "refuse every rent (Just Say No whenever it has assets)": refuse(lambda v: v.assets(v.me) > 0),
        "refuse rents of $2M+ or not covered by cash": refuse(lambda v: v.amount >= 2 or v.amount > v.bank_value(v.me)),
        "refuse only rents of $7M+": refuse(lambda v: v.amount >= 7),
        "hold rents below $4M (hand under 6 cards)": hold_small_rents,
        "pay with a property far from a set when cheaper than the bank card": pay_with_property,
    }


def run_rules(games: int, seed: int) -> dict[str, Any]:
    import arena
    from arena.plugins.agents.monopoly_deal import MonopolyDealHeuristic

    class Variant(MonopolyDealHeuristic):
        def __init__(self, game: Any, name: str, rule: Callable[[Any, list[tuple]], tuple | None]) -> None:
            super().__init__(game)
            self.name, self.rule = name, rule

        def choose(self, v: Any, legal: list[tuple]) -> tuple:
            return self.rule(v, legal) or super().choose(v, legal)

    game_name = "monopoly_deal(variant=paper)"
    game = arena.load_game(game_name)
    return {
        name: win_rate(game_name, Variant(game, name, rule), "monopoly_deal_heuristic", games, seed)
        for name, rule in rule_variants().items()
    }


def run_speed(args: argparse.Namespace) -> dict[str, Any]:
    import arena
    from arena.tools.bench.language_games import runner_seconds
    from arena.tools.bench.match import aec_random_loop

    if min(args.games, args.baseline_games, args.repeats) < 1:
        raise ArenaError("monopoly-deal: --games, --baseline-games and --repeats must be at least 1")
    out: dict[str, Any] = {"game": args.game, "load_at_start": load(), "games": args.games}
    runner_seconds(args.game, 20)  # warm-up: imports, caches
    runs = [runner_seconds(args.game, args.games, seed=r) for r in range(args.repeats)]
    t = min(t for t, _ in runs)
    t_aec = min(aec_random_loop(arena.make_env(args.game), args.baseline_games, seed=r) for r in range(args.repeats))
    out["forfeits"] = sum(f for _, f in runs)
    out["runner_games_per_second"] = round(args.games / t, 1)
    out["aec_loop_games_per_second"] = round(args.baseline_games / t_aec, 1)
    out["baseline"] = "plain PettingZoo AEC loop (agent_iter/last/step, masked random) over arena.make_env"
    out["speedup_vs_aec_loop"] = round((args.games / t) / (args.baseline_games / t_aec), 2)
    return out


def speed_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", default="monopoly_deal")
    p.add_argument("--games", type=int, default=1000, help="random games through the runner (each repeat)")
    p.add_argument("--baseline-games", type=int, default=300, help="random games through the AEC loop")
    p.add_argument("--repeats", type=int, default=3, help="best of N timings")


def run_agents(args: argparse.Namespace) -> dict[str, Any]:
    if args.games < 1:
        raise ArenaError("monopoly-deal-agents: --games must be at least 1")
    out: dict[str, Any] = {"load_at_start": load()}
    if not args.skip_heuristic:
        for variant in ("retail", "paper"):
            out[f"heuristic_vs_random_{variant}"] = win_rate(
                f"monopoly_deal(variant={variant})", "monopoly_deal_heuristic", "random", args.games, args.seed
            )
    if args.rules:
        out["heuristic_variants_vs_heuristic_paper"] = run_rules(args.games, args.seed)
        return out
    if args.policy:
        spec = f"monopoly_deal_mccfr:path={args.policy}"
    else:
        spec = f"monopoly_deal_mccfr:iterations={args.iterations},seed={args.seed},algo={args.algo}"
        if args.choices:
            spec += f",choices={args.choices}"
    start = time.perf_counter()
    out["mccfr_vs_heuristic_paper"] = win_rate(
        "monopoly_deal(variant=paper)", spec, "monopoly_deal_heuristic", args.games, args.seed
    )
    out["mccfr_vs_heuristic_paper"]["seconds"] = round(time.perf_counter() - start, 1)
    return out


def agents_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=int, default=2000, help="games per pairing")
    p.add_argument("--seed", type=int, default=0, help="match seed (and the MCCFR seed when solving on load)")
    p.add_argument(
        "--policy", help="MCCFR policy file (arena solve --game monopoly_deal_intents ...); default: solve on load"
    )
    p.add_argument("--iterations", type=int, default=4000, help="MCCFR iterations when solving on load")
    p.add_argument("--algo", default="es-mccfr", help="MCCFR sampler when solving on load (es-mccfr or os-mccfr)")
    p.add_argument("--choices", help="the abstraction's choices when solving on load (default: the agent's, jsn)")
    p.add_argument("--skip-heuristic", action="store_true", help="only the MCCFR pairing")
    p.add_argument(
        "--rules",
        action="store_true",
        help="instead of MCCFR: one-change variants of the heuristic against it (where a policy can gain)",
    )


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "monopoly-deal",
            "random Monopoly Deal games/s: runner vs plain AEC loop; forfeit-free check",
            run_speed,
            speed_args,
        ),
        Benchmark(
            "monopoly-deal-agents",
            "heuristic vs random and MCCFR vs heuristic win rates with 95% CIs",
            run_agents,
            agents_args,
        ),
    ]
