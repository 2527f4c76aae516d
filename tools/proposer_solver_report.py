"""Headline numbers of the proposer/solver acceptance experiment (docs/results/proposer_solver.md).

``ROOT/selfplay/seed-S`` and ``ROOT/fixed/seed-S`` are ``arena llm-train configs/llm/proposer_solver.yaml``
runs (``params.mode=selfplay`` and ``params.mode=fixed``, same seed: same warm-up model, same
streams). Per seed, from ``metrics.csv``: the final evaluation's held-out pass@1, pass@8 and
per-token entropy of the solver's answers; the training-time token entropy of the solver (mean
over steps after ``--warmup``); and the proposer's proposed-task solve rate (mean over steps after
``--warmup`` that kept a task). Then the paired differences selfplay - fixed, with mean, IQM and
95% stratified bootstrap intervals (:func:`arena.experiments.sweep.aggregate`).

    python tools/proposer_solver_report.py runs/llm/proposer_solver_exp --warmup 20
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from pathlib import Path
from typing import Any

PREFIX = "train/learner/"
FINAL = ("heldout_pass1", "heldout_pass8", "heldout_entropy", "train_pass1", "train_pass8")


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path) as f:
        return list(csv.DictReader(f))


def _num(x: str | None) -> float:
    try:
        return float(x) if x not in (None, "") else math.nan
    except ValueError:
        return math.nan


def seed_numbers(run: Path, warmup: int) -> dict[str, float]:
    rows = _rows(run / "metrics.csv")
    evals = [r for r in rows if _num(r.get("heldout_pass1")) == _num(r.get("heldout_pass1"))]
    out = {k: _num(evals[-1].get(k)) for k in FINAL} if evals else {}
    late = [r for r in rows if _num(r.get("step")) > warmup]

    def mean_of(key: str) -> float:
        xs = [_num(r.get(PREFIX + key)) for r in late]
        xs = [x for x in xs if x == x]
        return sum(xs) / len(xs) if xs else math.nan

    out["solver_token_entropy"] = mean_of("solver_token_entropy")
    out["proposed_solve_rate"] = mean_of("proposed_solve_rate")
    out["valid_rate"] = mean_of("valid_rate")
    out["in_band_frac"] = mean_of("in_band_frac")
    out["steps"] = _num(rows[-1].get("step")) if rows else math.nan
    return out


def curves(run: Path) -> dict[int, dict[str, float]]:
    """Per evaluation step, the held-out and training probes."""
    out = {}
    for r in _rows(run / "metrics.csv"):
        if _num(r.get("heldout_pass1")) == _num(r.get("heldout_pass1")):
            out[int(_num(r["step"]))] = {k: _num(r.get(k)) for k in FINAL}
    return out


def by_step(root: Path, seeds: list[int]) -> dict[str, Any]:
    """Paired differences selfplay - fixed at every evaluation step (equal solver updates)."""
    from arena.experiments.sweep import aggregate

    runs = {arm: {s: curves(root / arm / f"seed-{s}") for s in seeds} for arm in ("selfplay", "fixed")}
    steps = sorted(set.intersection(*(set(runs[a][s]) for a in runs for s in seeds))) if seeds else []
    out: dict[str, Any] = {}
    for step in steps:
        row = {}
        for key in ("heldout_pass1", "heldout_pass8", "heldout_entropy", "train_pass8"):
            sp = [runs["selfplay"][s][step][key] for s in seeds]
            fx = [runs["fixed"][s][step][key] for s in seeds]
            d = aggregate([a - b for a, b in zip(sp, fx)])
            row[key] = {"selfplay": sum(sp) / len(sp), "fixed": sum(fx) / len(fx), "diff": d.mean, "ci": d.mean_ci}
        out[str(step)] = row
    return out


def report(root: Path, warmup: int) -> dict[str, Any]:
    from arena.experiments.sweep import aggregate

    arms: dict[str, dict[int, dict[str, float]]] = {arm: {} for arm in ("selfplay", "fixed")}
    for arm in arms:
        for run in sorted((root / arm).glob("seed-*")):
            if (run / "metrics.csv").exists():
                arms[arm][int(run.name.split("-")[1])] = seed_numbers(run, warmup)
    seeds = sorted(set(arms["selfplay"]) & set(arms["fixed"]))
    out: dict[str, Any] = {"seeds": seeds, "per_seed": arms, "differences": {}, "arms": {}}
    out["by_step"] = by_step(root, seeds)
    keys = (*FINAL, "solver_token_entropy")
    for key in keys:
        d = [arms["selfplay"][s][key] - arms["fixed"][s][key] for s in seeds]
        if any(x == x for x in d):
            a = aggregate(d)
            out["differences"][key] = {
                "mean": a.mean,
                "mean_ci": a.mean_ci,
                "iqm": a.iqm,
                "iqm_ci": a.iqm_ci,
                "values": d,
            }
    for arm in arms:
        for key in (*keys, "proposed_solve_rate", "valid_rate", "in_band_frac"):
            xs = [arms[arm][s][key] for s in seeds if arms[arm][s].get(key, math.nan) == arms[arm][s].get(key)]
            if xs:
                a = aggregate(xs)
                out["arms"][f"{arm}/{key}"] = {"mean": a.mean, "mean_ci": a.mean_ci, "iqm": a.iqm, "values": xs}
    return out


def markdown(rep: dict[str, Any]) -> str:
    """The report as the tables of the results page."""

    def ci(x: Any) -> str:
        return f"[{x[0]:+.3f}, {x[1]:+.3f}]"

    lines = [
        f"seeds: {rep['seeds']}",
        "",
        "| step | metric | self-play | fixed | diff (mean) | 95% CI |",
        "|---|---|---|---|---|---|",
    ]
    for step, row in rep["by_step"].items():
        for key, v in row.items():
            lines.append(
                f"| {step} | {key} | {v['selfplay']:.3f} | {v['fixed']:.3f} | {v['diff']:+.3f} | {ci(v['ci'])} |"
            )
    lines += ["", "| final, selfplay - fixed | mean | 95% CI | IQM | 95% CI | per seed |", "|---|---|---|---|---|---|"]
    for key, v in rep["differences"].items():
        vals = ", ".join(f"{x:+.3f}" for x in v["values"])
        lines.append(
            f"| {key} | {v['mean']:+.3f} | {ci(v['mean_ci'])} | {v['iqm']:+.3f} | {ci(v['iqm_ci'])} | {vals} |"
        )
    lines += ["", "| arm/metric | mean | 95% CI | per seed |", "|---|---|---|---|"]
    for key, v in rep["arms"].items():
        vals = ", ".join(f"{x:.3f}" for x in v["values"])
        lines.append(f"| {key} | {v['mean']:.3f} | [{v['mean_ci'][0]:.3f}, {v['mean_ci'][1]:.3f}] | {vals} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("root", type=Path)
    p.add_argument("--warmup", type=int, default=20, help="steps before the proposer statistics count")
    p.add_argument("--markdown", action="store_true", help="tables instead of JSON")
    args = p.parse_args()
    rep = report(args.root, args.warmup)
    if args.markdown:
        print(markdown(rep))
    else:
        print(json.dumps(rep, indent=1, default=lambda x: list(x) if isinstance(x, tuple) else str(x)))


if __name__ == "__main__":
    main()
