"""Games to reach trajectory credit's final return: the sample-efficiency figure of
docs/results/turn_credit.md, from two (or more) finished ``arena sweep`` directories of
configs/llm/dond_rlvr_credit.yaml.

    python tools/turn_credit.py runs/llm/credit_trajectory runs/llm/credit_critic [more dirs] [--window 4]

Per seed, the learner's return in its training games against ``fair`` (the mean over its two
seats, ``rlvr/return_p0`` and ``rlvr/return_p1``, of each iteration, as the run's TensorBoard
scalars hold them; a trailing mean over ``--window`` iterations). The reference (first directory): its final value F is the IQM over seeds of the
mean of the last ``window`` iterations, and its games are all the games it trained on. Every
other directory: per seed the games played (training games, plus ``credit/playout_games`` for
``credit: turn``) until the trailing mean first reaches F (a seed that never does counts at its
last iteration: a lower bound), divided by the reference's games. Reported: the ratio's IQM over
seeds and a 95% bootstrap interval that resamples the reference seeds (F) and the seeds of the
compared run together (2,000 resamples). Half the games is a ratio of 0.5.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from arena.experiments.sweep import iqm


def _scalars(events: Path, tag: str) -> dict[int, float]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(events), size_guidance={"scalars": 0})
    acc.Reload()
    if tag not in acc.Tags()["scalars"]:
        return {}
    return {int(e.step): float(e.value) for e in acc.Scalars(tag)}


def curves(directory: Path, games_per_iter: int, playouts: bool = True) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """seed -> (return per iteration, games played by the end of each iteration), from each
    finished seed's TensorBoard scalars (``train/learner/*``: one point per training step)."""
    out = {}
    for seed_dir in sorted(directory.glob("seed-*")):
        if not seed_dir.is_dir() or not (seed_dir / "results.json").exists():
            continue
        events = sorted((seed_dir / "tb").glob("events.*"))
        p0, p1, extra = {}, {}, {}
        for ev in events:  # a resumed run writes a second file
            p0.update(_scalars(ev, "train/learner/return_p0"))
            p1.update(_scalars(ev, "train/learner/return_p1"))
            extra.update(_scalars(ev, "train/learner/playout_games"))
        steps = sorted(set(p0) & set(p1))
        ret = np.array([(p0[s] + p1[s]) / 2 for s in steps])
        games = games_per_iter * np.arange(1, len(steps) + 1, dtype=float)
        if playouts:  # credit: turn's playouts (cumulative)
            games += np.array([extra.get(s, 0.0) for s in steps])
        out[int(seed_dir.name.split("-")[1])] = (ret, games)
    return out


def trailing(x: np.ndarray, w: int) -> np.ndarray:
    return np.array([np.mean(x[max(0, i - w + 1) : i + 1]) for i in range(len(x))])


def reach(ret: np.ndarray, games: np.ndarray, level: float, w: int) -> tuple[float, bool]:
    t = trailing(ret, w)
    hit = np.nonzero(t >= level)[0]
    return (float(games[hit[0]]), True) if len(hit) else (float(games[-1]), False)


def ratios(ref: list, other: list, w: int, ref_games: float) -> tuple[float, list[float], list[bool]]:
    final = float(iqm([np.mean(r[-w:]) for r, _ in ref]))
    out, hit = [], []
    for r, g in other:
        x, ok = reach(r, g, final, w)
        out.append(x / ref_games)
        hit.append(ok)
    return final, out, hit


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reference")
    ap.add_argument("others", nargs="+")
    ap.add_argument("--window", type=int, default=4)
    ap.add_argument("--games-per-iter", type=int, default=24)
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--training-games-only", action="store_true", help="do not count credit: turn's playouts")
    args = ap.parse_args()
    w = args.window
    ref = list(curves(Path(args.reference), args.games_per_iter).values())
    ref_games = float(np.median([g[-1] for _, g in ref]))
    report: dict = {"reference": args.reference, "seeds": len(ref), "games": ref_games, "window": w}
    finals = [float(np.mean(r[-w:])) for r, _ in ref]
    report["final_return"] = {"iqm": float(iqm(finals)), "per_seed": finals}
    rng = np.random.default_rng(0)
    for d in args.others:
        other = list(curves(Path(d), args.games_per_iter, not args.training_games_only).values())
        level, rs, hit = ratios(ref, other, w, ref_games)
        boot = []
        for _ in range(args.resamples):
            a = [ref[i] for i in rng.integers(len(ref), size=len(ref))]
            b = [other[i] for i in rng.integers(len(other), size=len(other))]
            boot.append(iqm(ratios(a, b, w, ref_games)[1]))
        ofinals = [float(np.mean(r[-w:])) for r, _ in other]
        report[d] = {
            "level": level,
            "ratio_iqm": float(iqm(rs)),
            "ratio_ci95": [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))],
            "ratio_per_seed": rs,
            "reached": hit,
            "final_return": {"iqm": float(iqm(ofinals)), "per_seed": ofinals},
            "games": float(np.median([g[-1] for _, g in other])),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
