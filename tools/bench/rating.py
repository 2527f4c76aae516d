"""``arena bench rating``: how many games each tournament format needs to recover a known order.

Sixteen synthetic agents with known Bradley–Terry strengths (Elo scale, evenly spaced by
``--gap``) play simulated win/loss games: ``P(i beats j) = 1/(1 + 10^((Rj − Ri)/400))``. Each
format runs through the same generator code as real tournaments (:func:`arena.tournament.drive`)
with a simulator in place of the match runner, and its games are ranked by a Bradley–Terry fit.
For each format we sweep its size knob (games per pairing for round robin, games per match for
Swiss and seeded single elimination, the game budget for adaptive) and report the fewest games
at which the median Kendall τ over seeds reaches ``--target``. The baseline is round robin,
measured in the same process; the figure of merit is ``adaptive / round robin`` games.
"""
from __future__ import annotations

import argparse
from typing import Any, Callable, Sequence

import numpy as np

from arena.cli_api import Benchmark
from arena.hookspecs import hookimpl


def simulator(strengths: dict[str, float], seed: int) -> tuple[Callable, list]:
    """A ``play(round, pairings)`` for :func:`drive` that draws BT outcomes, and its game log."""
    from arena.store import MatchRecord
    from arena.tournament import Planner

    rng = np.random.default_rng(seed)
    planner = Planner("bench", seed)
    log: list[MatchRecord] = []

    def play(rnd: int, pairings: Sequence[Any]) -> list[list[MatchRecord]]:
        out = []
        for games in planner.plan(rnd, pairings):
            recs = []
            for g in games:
                a, b = g.seats
                p = 1.0 / (1.0 + 10.0 ** ((strengths[b] - strengths[a]) / 400.0))
                win = rng.random() < p
                recs.append(MatchRecord(g.id, g.pairing, seed, g.deal, "bt_sim", [a, b],
                                        [1.0, -1.0] if win else [-1.0, 1.0], g.plan_seq, g.round))
            log.extend(recs)
            out.append(recs)
        return out

    return play, log


def trial(kind: str, knob: int, strengths: dict[str, float], seed: int) -> tuple[int, float]:
    """Games played and Kendall τ of the BT ranking against the true order, for one run."""
    from arena.rating import bradley_terry, kendall_tau, pairwise_outcomes
    from arena.tournament import FormatConfig, drive, make_format

    names = list(strengths)
    cfg = FormatConfig(kind=kind)
    if kind == "adaptive":
        cfg.budget, cfg.confidence = knob, 0.999999
    else:
        cfg.games = knob
    play, log = simulator(strengths, seed)
    drive(make_format(cfg, names, 2, seed), play)
    fit = bradley_terry(pairwise_outcomes(log), names, bootstrap=0)
    order = [names[i] for i in np.argsort(-fit.rating, kind="stable")]
    truth = sorted(names, key=lambda a: -strengths[a])
    return len(log), kendall_tau(order, truth)


KNOBS = {
    "round_robin": [1, 2, 3, 4, 6, 8, 10, 12, 16, 20],
    "swiss": [2, 4, 8, 16, 32, 64, 128],
    "elimination": [2, 4, 8, 16, 32, 64, 128],
    "adaptive": [100, 125, 150, 175, 200, 250, 300, 350, 400, 500, 600, 800, 1000, 1200, 1600, 2400, 3200],
}


def games_needed(kind: str, strengths: dict[str, float], seeds: Sequence[int], target: float) -> dict[str, Any]:
    """Sweep the format's knob until the median τ over seeds reaches ``target``."""
    best, below = (0.0, 0), None
    for knob in KNOBS[kind]:
        runs = [trial(kind, knob, strengths, s) for s in seeds]
        games = int(np.median([g for g, _ in runs]))
        tau = float(np.median([t for _, t in runs]))
        if tau > best[0]:
            best = (tau, games)
        if tau >= target:
            out = {"games": games, "knob": knob, "median_tau": round(tau, 3)}
            if below:
                out["previous_games"], out["previous_tau"] = below
            return out
        below = (games, round(tau, 3))
    return {"games": None, "knob": None, "median_tau": round(best[0], 3), "at_games": best[1]}


def run(args: argparse.Namespace) -> dict:
    strengths = {f"a{i:02d}": args.gap * i for i in range(args.agents)}
    seeds = list(range(args.seeds))
    out: dict[str, Any] = {"agents": args.agents, "gap_elo": args.gap, "seeds": args.seeds, "target_tau": args.target}
    for kind in args.formats:
        r = games_needed(kind, strengths, seeds, args.target)
        for k, v in r.items():
            out[f"{kind}.{k}"] = v
    rr, ad = out.get("round_robin.games"), out.get("adaptive.games")
    if rr and ad:
        out["adaptive_over_round_robin"] = round(ad / rr, 3)
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agents", type=int, default=16)
    p.add_argument("--gap", type=float, default=100.0, help="Elo gap between neighbouring agents")
    p.add_argument("--seeds", type=int, default=15)
    p.add_argument("--target", type=float, default=0.9, help="Kendall τ to reach")
    p.add_argument("--formats", nargs="+", default=["round_robin", "swiss", "elimination", "adaptive"],
                   choices=list(KNOBS))


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [Benchmark("rating", "games until Kendall τ ≥ 0.9 on 16 synthetic BT agents: round robin, Swiss, "
                      "seeded elimination, adaptive", run, add_arguments,
                      baseline="round robin (games it needs to reach the same Kendall τ)",
                      ratio="adaptive_over_round_robin")]
