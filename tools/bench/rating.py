"""``arena bench rating`` and ``arena bench rating-coverage``: synthetic pools with known strengths.

``rating-coverage`` asks whether the reported 95% intervals can be trusted: over many simulated
tournaments of every format, the fraction of agents whose interval contains the true (centred)
rating should be near 95%. Its games are *decided by the deal*: the game's own random stream
(:func:`arena.playing.match.game_rng` of the run seed and the planned deal, exactly as the match runner
derives it) draws ``u`` and seat 0 wins iff ``u < P(seat 0 beats seat 1)`` — Elo odds, and
the seat-swapped game of the same deal sees the same ``u`` (duplicate style). A planner that
reused deal numbers across pairings would make every pairing's errors move together, which
this study detects (that was the bug it was written for).

``rating``: how many games each tournament format needs to recover a known order.

Sixteen synthetic agents with known Bradley–Terry strengths (Elo scale, evenly spaced by
``--gap``) play simulated win/loss games: ``P(i beats j) = 1/(1 + 10^((Rj − Ri)/400))``. Each
format runs through the same generator code as real tournaments (:func:`arena.evaluation.formats.drive`)
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

MODELS = ("independent", "deal")
"""How a simulated game is decided: a fresh draw per game, or by its deal's random stream."""


def simulator(strengths: dict[str, float], seed: int, model: str = "independent") -> tuple[Callable, list]:
    """A ``play(round, pairings)`` for :func:`drive` that draws BT outcomes, and its game log."""
    from arena.evaluation.schedule import Planner
    from arena.evaluation.store import MatchRecord
    from arena.playing.match import game_rng

    if model not in MODELS:
        raise ValueError(f"unknown game model '{model}'; known: {', '.join(MODELS)}")
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
                win = (game_rng(seed, g.deal).uniform() if model == "deal" else rng.random()) < p
                recs.append(
                    MatchRecord(
                        g.id,
                        g.pairing,
                        seed,
                        g.deal,
                        "bt_sim",
                        [a, b],
                        [1.0, -1.0] if win else [-1.0, 1.0],
                        g.plan_seq,
                        g.round,
                    )
                )
            log.extend(recs)
            out.append(recs)
        return out

    return play, log


def simulate(kind: str, knob: int, strengths: dict[str, float], seed: int, model: str = "independent") -> list:
    """The records of one simulated tournament; ``knob`` is games per pairing/match (the game
    budget for adaptive)."""
    from arena.evaluation.formats import FormatConfig, drive, make_format

    cfg = FormatConfig(kind=kind)
    if kind == "adaptive":
        cfg.budget, cfg.confidence = knob, 0.999999
    else:
        cfg.games = knob
    play, log = simulator(strengths, seed, model)
    drive(make_format(cfg, list(strengths), 2, seed), play)
    return log


def trial(kind: str, knob: int, strengths: dict[str, float], seed: int) -> tuple[int, float]:
    """Games played and Kendall τ of the BT ranking against the true order, for one run."""
    from arena.evaluation.ratings.agreement import kendall_tau
    from arena.evaluation.ratings.bradley_terry import bradley_terry
    from arena.evaluation.ratings.outcomes import pairwise_outcomes

    names = list(strengths)
    log = simulate(kind, knob, strengths, seed)
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


COVERAGE_KNOBS = {"round_robin": 10, "swiss": 16, "elimination": 16, "adaptive": 1000}
"""Default size of each format in the coverage study (games per ordered pairing, per match, budget)."""


def coverage_study(
    kind: str,
    knob: int,
    strengths: dict[str, float],
    tournaments: Sequence[int],
    model: str = "deal",
    bootstrap: int = 200,
    baseline: bool = True,
) -> dict[str, Any]:
    """Fraction of (agent, tournament) 95% intervals that contain the true rating.

    ``coverage`` is the leaderboard's interval (:func:`arena.evaluation.ratings.bradley_terry.bradley_terry_records`: deals
    resampled within pairings, basic bootstrap); ``baseline_coverage`` the estimator it replaced
    (games resampled, percentile interval) on the same games. Truth: the strengths centred on
    1000, the scale BT ratings are reported on."""
    from arena.evaluation.ratings.agreement import kendall_tau
    from arena.evaluation.ratings.bradley_terry import bradley_terry, bradley_terry_records
    from arena.evaluation.ratings.outcomes import pairwise_outcomes

    names = list(strengths)
    truth = np.array([strengths[a] for a in names], dtype=float)
    truth = truth - truth.mean() + 1000.0
    order = sorted(names, key=lambda a: -strengths[a])
    hit, base_hit, games, width, err, taus = [], [], [], [], [], []
    for seed in tournaments:
        log = simulate(kind, knob, strengths, seed, model)
        fit = bradley_terry_records(log, names, bootstrap=bootstrap, seed=seed)
        hit.append((fit.lo <= truth) & (truth <= fit.hi))
        if baseline:
            base = bradley_terry(pairwise_outcomes(log), names, bootstrap=bootstrap, seed=seed, interval="percentile")
            base_hit.append((base.lo <= truth) & (truth <= base.hi))
        games.append(len(log))
        width.append(float(np.mean(fit.hi - fit.lo)) / 2)
        err.append(float(np.max(np.abs(fit.rating - truth))))
        taus.append(kendall_tau([names[i] for i in np.argsort(-fit.rating, kind="stable")], order))
    hit_a = np.array(hit)
    return {
        "coverage": round(float(hit_a.mean()), 3),
        "baseline_coverage": round(float(np.mean(base_hit)), 3) if base_hit else None,
        "worst_agent_coverage": round(float(hit_a.mean(axis=0).min()), 3),
        "games": int(np.median(games)),
        "half_width_elo": round(float(np.median(width)), 1),
        "max_error_elo": round(float(np.median(err)), 1),
        "median_tau": round(float(np.median(taus)), 3),
    }


def run_coverage(args: argparse.Namespace) -> dict:
    import os

    from arena.errors import ArenaError

    knobs = dict(COVERAGE_KNOBS)
    for item in args.knob:
        kind, _, value = item.partition("=")
        if kind not in knobs or not value.isdigit() or int(value) < 1:
            raise ArenaError(f"--knob {item}: expected FORMAT=POSITIVE_INT with FORMAT in {', '.join(knobs)}")
        knobs[kind] = int(value)
    strengths = {f"a{i:02d}": args.gap * i for i in range(args.agents)}
    seeds = range(args.first_seed, args.first_seed + args.tournaments)
    out: dict[str, Any] = {
        "load_at_start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "agents": args.agents,
        "gap_elo": args.gap,
        "tournaments": args.tournaments,
        "bootstrap": args.bootstrap,
        "nominal": 0.95,
    }
    for model in args.models:
        for kind in args.formats:
            r = coverage_study(kind, knobs[kind], strengths, seeds, model, args.bootstrap)
            out[f"{model}.{kind}.knob"] = knobs[kind]
            for k, v in r.items():
                out[f"{model}.{kind}.{k}"] = v
    return out


def add_coverage_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agents", type=int, default=12)
    p.add_argument("--gap", type=float, default=100.0, help="Elo gap between neighbouring agents")
    p.add_argument("--tournaments", type=int, default=200, help="simulated tournaments per format and model")
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--bootstrap", type=int, default=200)
    p.add_argument(
        "--models",
        nargs="+",
        default=list(MODELS),
        choices=list(MODELS),
        help="deal: the game is decided by its deal's random stream; independent: a fresh draw per game",
    )
    p.add_argument("--formats", nargs="+", default=list(COVERAGE_KNOBS), choices=list(COVERAGE_KNOBS))
    p.add_argument(
        "--knob",
        nargs="*",
        default=[],
        metavar="FORMAT=N",
        help=f"format size: games per ordered pairing / per match, adaptive budget (defaults {COVERAGE_KNOBS})",
    )


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agents", type=int, default=16)
    p.add_argument("--gap", type=float, default=100.0, help="Elo gap between neighbouring agents")
    p.add_argument("--seeds", type=int, default=15)
    p.add_argument("--target", type=float, default=0.9, help="Kendall τ to reach")
    p.add_argument(
        "--formats", nargs="+", default=["round_robin", "swiss", "elimination", "adaptive"], choices=list(KNOBS)
    )


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "rating",
            "games until Kendall τ ≥ 0.9 on 16 synthetic BT agents: round robin, Swiss, seeded elimination, adaptive",
            run,
            add_arguments,
            baseline="round robin (games it needs to reach the same Kendall τ)",
            ratio="adaptive_over_round_robin",
        ),
        Benchmark(
            "rating-coverage",
            "how often the 95% rating intervals contain the true rating: simulated "
            "tournaments of every format on synthetic pools (chance-decided and independent games)",
            run_coverage,
            add_coverage_arguments,
        ),
    ]
