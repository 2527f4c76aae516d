"""Multi-seed experiments: run one config over many seeds, then say what the seeds agree on.

``arena sweep CONFIG seeds=0-9 [key=value ...]`` runs the command that owns ``CONFIG`` (any
command that declares a config with ``seed`` and ``out`` keys and writes ``results.json`` with
its ``final`` metrics: ``arena train``, ``arena league``, ``arena llm-train``, ``arena solve``
with a YAML config) once per seed, each seed a whole process with its own run directory
``SWEEP_DIR/seed-S`` (so a seed's crash, memory or threads never touch another's), up to
``--jobs`` at a time. Rerunning the same sweep skips finished seeds and reruns unfinished ones
in their directories — where the command resumes by itself (a league continues from its last
checkpoint). ``executor.*`` overrides pass through, so every seed runs on any executor.

Why these statistics (Agarwal et al., *Deep RL at the Edge of the Statistical Precipice*,
NeurIPS 2021, arXiv 2108.13264 — rliable): with a handful of
seeds a mean is at the mercy of one outlier and a median throws most runs away; the
**interquartile mean** (mean of the middle 50%, :func:`scipy.stats.trim_mean` at 0.25) is
robust and still efficient. Its uncertainty is a **stratified percentile bootstrap**
(:func:`scipy.stats.bootstrap` resamples every sample it is given independently — one sample
per task is exactly rliable's stratification, runs resampled within their task). **Performance
profiles** (the fraction of runs scoring above τ, for every τ) show the whole distribution
rather than a point, with bootstrap bands.
"""

from __future__ import annotations

import csv
import fnmatch
import json
import math
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from arena.errors import ArenaError, ConfigError
from arena.experiments.adastop import sequential_test

SWEEP_FILE = "sweep.json"
DEFAULT_HIDDEN = ("step", "seconds", "train/*")
"""Final-metric keys the table leaves out unless asked for (--metric): bookkeeping and losses."""


# -- statistics ------------------------------------------------------------------------------------
def iqm(x: Any, axis: int | None = None) -> Any:
    """Interquartile mean: the mean of the middle 50% (``scipy.stats.trim_mean`` at 0.25)."""
    from scipy.stats import trim_mean

    return trim_mean(x, 0.25, axis=axis)


@dataclass
class Aggregate:
    """One metric over runs: point estimates and 95% stratified bootstrap intervals."""

    n: int
    iqm: float
    iqm_ci: tuple[float, float]
    mean: float
    mean_ci: tuple[float, float]
    median: float
    std: float
    min: float
    max: float
    values: list[float] = field(default_factory=list)


def _ci(
    samples: Sequence[np.ndarray], stat: Callable[..., Any], resamples: int, seed: int, confidence: float
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``stat`` of the pooled runs, each sample (task)
    resampled on its own — stratified, as rliable prescribes."""
    from scipy.stats import bootstrap

    pooled = np.concatenate(samples)
    if len(pooled) < 2 or np.ptp(pooled) == 0:
        v = float(stat(pooled))
        return v, v
    usable = [s for s in samples if len(s) >= 2]
    fixed = [s for s in samples if len(s) < 2]  # a task with one run has nothing to resample
    fixed_pool = np.concatenate(fixed) if fixed else np.zeros(0)

    def pooled_stat(*xs: np.ndarray, axis: int = -1) -> Any:
        parts = list(xs)
        if len(fixed_pool):
            parts.append(np.broadcast_to(fixed_pool, xs[0].shape[:-1] + fixed_pool.shape))
        return stat(np.concatenate(parts, axis=-1), axis=-1)

    res = bootstrap(
        tuple(usable),
        pooled_stat,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        vectorized=True,
        random_state=np.random.default_rng(seed),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def _mean(x: Any, axis: int | None = None) -> Any:
    return np.mean(x, axis=axis)


def aggregate(
    scores: Mapping[str, Sequence[float]] | Sequence[float],
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Aggregate:
    """IQM, mean, their stratified bootstrap intervals, and spread, of runs' scores.

    ``scores``: a list of runs (one task), or ``{task: runs}`` — the intervals then resample runs
    within each task (scores of different tasks must be on comparable, e.g. normalised, scales)."""
    samples = [np.asarray(v, dtype=float) for v in (scores.values() if isinstance(scores, Mapping) else [scores])]
    samples = [s[np.isfinite(s)] for s in samples]
    samples = [s for s in samples if len(s)]
    if not samples:
        raise ArenaError("aggregate: no finite scores")
    x = np.concatenate(samples)
    return Aggregate(
        n=len(x),
        iqm=float(iqm(x)),
        iqm_ci=_ci(samples, iqm, resamples, seed, confidence),
        mean=float(x.mean()),
        mean_ci=_ci(samples, _mean, resamples, seed, confidence),
        median=float(np.median(x)),
        std=float(x.std(ddof=1)) if len(x) > 1 else 0.0,
        min=float(x.min()),
        max=float(x.max()),
        values=[float(v) for v in x],
    )


def performance_profile(
    scores: Sequence[float] | np.ndarray,
    taus: np.ndarray,
    resamples: int = 500,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fraction of runs scoring above each τ, with a percentile bootstrap band over runs
    (rliable's run-score distribution)."""
    x = np.asarray(scores, dtype=float)
    prof = (x[None, :] > taus[:, None]).mean(axis=1)
    if len(x) < 2:
        return prof, prof.copy(), prof.copy()
    rng = np.random.default_rng(seed)
    boot = x[rng.integers(0, len(x), size=(resamples, len(x)))]
    bp = (boot[:, None, :] > taus[None, :, None]).mean(axis=2)
    q = (1 - confidence) / 2
    return prof, np.quantile(bp, q, axis=0), np.quantile(bp, 1 - q, axis=0)


# -- seeds and directories -------------------------------------------------------------------------
def parse_seeds(text: str) -> list[int]:
    """``0-9``, ``0,2,5`` or ``0-4,10`` → the seeds, in order, without repeats."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(-?\d+)(?:-(\d+))?", part)
        if not m:
            raise ConfigError(f"seeds={text!r}: expected a range like 0-9 or a list like 0,2,5")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise ConfigError(f"seeds={text!r}: range {part} runs backwards")
        out += [s for s in range(lo, hi + 1) if s not in out]
    return out


def split_overrides(overrides: Sequence[str]) -> tuple[list[int] | None, list[str]]:
    """Take ``seeds=...`` out of the overrides; the rest go to every seed's command."""
    seeds, rest = None, []
    for o in overrides:
        if o.startswith("seeds="):
            seeds = parse_seeds(o.split("=", 1)[1])
        elif o.startswith("seed="):
            raise ConfigError("arena sweep sets seed= for every run; give the seeds as seeds=0-4")
        else:
            rest.append(o)
    return seeds, rest


@dataclass
class SweepPlan:
    command: str
    config: str
    overrides: list[str]
    seeds: list[int]
    directory: Path

    def run_dir(self, seed: int) -> Path:
        return self.directory / f"seed-{seed}"

    def argv(self, seed: int, arena: Sequence[str]) -> list[str]:
        return [*arena, self.command, self.config, *self.overrides, f"seed={seed}", f"out={self.run_dir(seed)}"]

    def identity(self) -> dict[str, Any]:
        """What makes two sweeps the same experiment (not the seeds: a sweep may grow)."""
        return {"command": self.command, "config": str(Path(self.config).resolve()), "overrides": self.overrides}


def _finished(plan: SweepPlan, seed: int) -> bool:
    mark = plan.run_dir(seed) / "sweep-done.json"
    return mark.exists() and (plan.run_dir(seed) / "results.json").exists()


def open_sweep(plan: SweepPlan) -> dict[str, Any]:
    """Create ``sweep.json`` or check that the directory holds this same experiment."""
    path = plan.directory / SWEEP_FILE
    if path.exists():
        try:
            state = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ArenaError(f"{path} is not a sweep file ({exc}); choose another directory") from None
        if state.get("identity") != plan.identity():
            raise ArenaError(
                f"sweep directory {plan.directory} holds a different experiment "
                f"({state.get('identity')}); use a new directory to change the config or overrides"
            )
        state["seeds"] = sorted(set(state.get("seeds", [])) | set(plan.seeds))
    else:
        if plan.directory.exists() and any(plan.directory.iterdir()):
            raise ArenaError(
                f"{plan.directory} is a non-empty directory without {SWEEP_FILE}; "
                "refusing to write into it — choose a new or empty directory"
            )
        state = {"identity": plan.identity(), "seeds": list(plan.seeds), "runs": {}}
    plan.directory.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state, indent=2))
    return state


def run_seeds(
    plan: SweepPlan, arena: Sequence[str], jobs: int = 1, log: Callable[[str], None] = print, nice: int = 0
) -> dict[int, str]:
    """Run every unfinished seed (``jobs`` processes at a time); ``{seed: status}``.

    A seed is finished when its command exited 0 and left ``results.json``; a seed that fails
    is reported (its log in ``seed-S.log``) and the others still run."""
    state = open_sweep(plan)
    status: dict[int, str] = {}
    todo = []
    for s in plan.seeds:
        if _finished(plan, s):
            status[s] = "done (skipped)"
        else:
            todo.append(s)
    running: dict[int, tuple[subprocess.Popen, Any, float]] = {}

    def start(seed: int) -> None:
        fh = open(plan.directory / f"seed-{seed}.log", "a")
        fh.write(f"$ {' '.join(plan.argv(seed, arena))}\n")
        fh.flush()
        pre = (lambda: os.nice(nice)) if nice else None
        proc = subprocess.Popen(plan.argv(seed, arena), stdout=fh, stderr=subprocess.STDOUT, preexec_fn=pre)
        running[seed] = (proc, fh, time.perf_counter())
        log(f"seed {seed}: started ({plan.run_dir(seed)})")

    def reap(block: bool) -> None:
        while running:
            for seed, (proc, fh, t0) in list(running.items()):
                if proc.poll() is None:
                    continue
                fh.close()
                del running[seed]
                secs = round(time.perf_counter() - t0, 1)
                if proc.returncode == 0 and (plan.run_dir(seed) / "results.json").exists():
                    (plan.run_dir(seed) / "sweep-done.json").write_text(json.dumps({"seconds": secs}))
                    status[seed] = "done"
                    log(f"seed {seed}: done in {secs}s")
                else:
                    status[seed] = f"failed (exit {proc.returncode}; see {plan.directory}/seed-{seed}.log)"
                    log(f"seed {seed}: {status[seed]}")
                state["runs"][str(seed)] = status[seed]
                (plan.directory / SWEEP_FILE).write_text(json.dumps(state, indent=2))
                return
            if not block:
                return
            time.sleep(0.2)

    try:
        for s in todo:
            while len(running) >= max(1, jobs):
                reap(block=True)
            start(s)
        while running:
            reap(block=True)
    finally:
        for proc, fh, _ in running.values():  # interrupted: stop our children, keep their run dirs
            proc.terminate()
            proc.wait()
            fh.close()
    return status


# -- reading results and reporting -----------------------------------------------------------------
def final_metrics(plan_dir: Path, seeds: Sequence[int]) -> dict[int, dict[str, float]]:
    """``final`` of each finished seed's ``results.json`` (numeric values only)."""
    out = {}
    for s in seeds:
        path = plan_dir / f"seed-{s}" / "results.json"
        if not path.exists():
            continue
        data = json.loads(path.read_text())
        final = data.get("final", data)
        out[s] = {
            k: float(v)
            for k, v in final.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))
        }
    return out


REACH = re.compile(r"^(?P<metric>[^<>=]+?)\s*(?P<op>>=|<=)\s*(?P<level>[-+0-9.eE]+)$")


def parse_reach(text: str) -> tuple[str, str, float]:
    """``METRIC>=LEVEL`` (or ``<=``) → ``(metric, op, level)``."""
    m = REACH.match(text.strip())
    if not m:
        raise ConfigError(f"--reach {text!r}: expected METRIC>=LEVEL or METRIC<=LEVEL, e.g. 'vs_fair/return>=7.79'")
    try:
        level = float(m["level"])
    except ValueError:
        raise ConfigError(f"--reach {text!r}: level {m['level']!r} is not a number") from None
    return m["metric"].strip(), m["op"], level


def add_reach(plan_dir: Path, finals: dict[int, dict[str, float]], targets: Sequence[str]) -> dict[str, list[int]]:
    """Sample efficiency: for each ``METRIC>=LEVEL`` target, the first evaluated ``step`` of each
    seed's ``metrics.csv`` at which ``METRIC`` crossed ``LEVEL`` joins that seed's finals as
    ``reach:METRIC>=LEVEL`` (multiply by the games per step to get games). A seed that never
    crossed counts at its last step — a lower bound — and is listed in the returned
    ``{target: [seeds]}`` (the report says so)."""
    censored: dict[str, list[int]] = {}
    for text in targets:
        metric, op, level = parse_reach(text)
        key = f"reach:{metric}{op}{level:g}"
        censored[key] = []
        for s in sorted(finals):
            path = plan_dir / f"seed-{s}" / "metrics.csv"
            rows = []
            if path.exists():
                with path.open() as fh:
                    rows = list(csv.DictReader(fh))
            if not rows or metric not in rows[0]:
                raise ArenaError(f"--reach: {path} has no column {metric!r}")
            hit = None
            for r in rows:
                v = float(r[metric]) if r[metric] not in ("", None) else math.nan
                if math.isfinite(v) and (v >= level if op == ">=" else v <= level):
                    hit = float(r["step"])
                    break
            if hit is None:
                censored[key].append(s)
                hit = float(rows[-1]["step"])
            finals[s][key] = hit
    return censored


def select(keys: Sequence[str], patterns: Sequence[str]) -> list[str]:
    if patterns:
        return [k for k in keys if any(fnmatch.fnmatchcase(k, p) for p in patterns)]
    return [k for k in keys if not any(fnmatch.fnmatchcase(k, p) for p in DEFAULT_HIDDEN)]


def report(
    finals: Mapping[int, Mapping[str, float]], patterns: Sequence[str] = (), resamples: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """Per metric (those every finished seed reports): the aggregate over seeds."""
    if not finals:
        raise ArenaError("no finished seed has a results.json to aggregate")
    common = [k for k in next(iter(finals.values())) if all(k in f for f in finals.values())]
    keys = select(common, patterns)
    if patterns and not keys:
        raise ArenaError(f"no final metric matches {', '.join(patterns)}; metrics: {', '.join(common)}")
    seeds = sorted(finals)
    metrics = {}
    for k in keys:
        agg = aggregate([finals[s][k] for s in seeds], resamples=resamples, seed=seed)
        metrics[k] = {
            "iqm": agg.iqm,
            "iqm_ci": list(agg.iqm_ci),
            "mean": agg.mean,
            "mean_ci": list(agg.mean_ci),
            "median": agg.median,
            "std": agg.std,
            "min": agg.min,
            "max": agg.max,
            "per_seed": dict(zip(map(str, seeds), agg.values)),
        }
    out = {
        "seeds": seeds,
        "n": len(seeds),
        "metrics": metrics,
        "method": "IQM = scipy.stats.trim_mean(x, 0.25); 95% percentile bootstrap (scipy.stats.bootstrap, "
        f"{resamples} resamples, runs resampled within their task)",
    }
    if common and not keys:  # e.g. a run with no evaluation games reports training metrics only
        out["note"] = (
            f"every final metric is hidden by default ({', '.join(DEFAULT_HIDDEN)}); "
            "show them with --metric 'train/*' (or name one)"
        )
    return out


def to_markdown(rep: Mapping[str, Any], title: str, command: str = "") -> str:
    lines = [f"# {title}", "", f"{rep['n']} seeds ({', '.join(map(str, rep['seeds']))}). {rep['method']}."]
    if command:
        lines += ["", f"Reproduce: `{command}`"]
    lines += ["", "| metric | IQM [95% CI] | mean [95% CI] | min | max | per seed |", "|---|---|---|---|---|---|"]
    for k, m in rep["metrics"].items():
        per = " ".join(f"{v:.3g}" for v in m["per_seed"].values())
        lines.append(
            f"| {k} | {m['iqm']:.4g} [{m['iqm_ci'][0]:.4g}, {m['iqm_ci'][1]:.4g}] | {m['mean']:.4g} "
            f"[{m['mean_ci'][0]:.4g}, {m['mean_ci'][1]:.4g}] | {m['min']:.4g} | {m['max']:.4g} | {per} |"
        )
    if rep.get("note"):
        lines.append(f"\n{rep['note']}.")
    for k, seeds in (rep.get("never_reached") or {}).items():
        if seeds:
            lines.append(f"\n{k}: seed(s) {', '.join(map(str, seeds))} never reached it (counted at their last step).")
    return "\n".join(lines) + "\n"


def plot(rep: Mapping[str, Any], path: Path, title: str, max_panels: int = 9) -> Path | None:
    """One panel per metric: the performance profile (fraction of seeds above τ) with its
    bootstrap band, the IQM and its interval shaded, the seeds as ticks."""
    keys = list(rep["metrics"])[:max_panels]
    if not keys:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(3, len(keys))
    rows = math.ceil(len(keys) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False)
    for ax, k in zip(axes.flat, keys):
        m = rep["metrics"][k]
        x = np.array(list(m["per_seed"].values()))
        lo, hi = float(x.min()), float(x.max())
        pad = (hi - lo) * 0.1 or max(abs(lo) * 0.1, 0.05)
        taus = np.linspace(lo - pad, hi + pad, 200)
        prof, blo, bhi = performance_profile(x, taus)
        ax.step(taus, prof, where="post", color="C0", label="fraction of seeds > τ")
        ax.fill_between(taus, blo, bhi, step="post", color="C0", alpha=0.2)
        ax.axvspan(m["iqm_ci"][0], m["iqm_ci"][1], color="C1", alpha=0.2)
        ax.axvline(m["iqm"], color="C1", label="IQM (95% CI)")
        ax.plot(x, np.full(len(x), -0.04), "|", color="k", markersize=10)
        ax.set_ylim(-0.08, 1.05)
        ax.set_title(k, fontsize=9)
        ax.set_xlabel("τ", fontsize=8)
    for ax in list(axes.flat)[len(keys) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7, loc="lower left")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write_report(rep: Mapping[str, Any], directory: Path, title: str, command: str, plots: bool = True) -> list[Path]:
    """``report.json``, ``report.md`` and ``report.png`` in the sweep directory."""
    out = [directory / "report.json", directory / "report.md"]
    out[0].write_text(json.dumps(dict(rep, command=command), indent=2))
    out[1].write_text(to_markdown(rep, title, command))
    if plots and plot(rep, directory / "report.png", title):
        out.append(directory / "report.png")
    return out


def arena_argv() -> list[str]:
    """How to start this environment's ``arena`` (the console script beside this Python)."""
    exe = Path(sys.executable).parent / "arena"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "arena.cli"]


# -- sequential comparison (AdaStop) ---------------------------------------------------------------
def adastop_sweep(
    plans: tuple[SweepPlan, SweepPlan],
    arena: Sequence[str],
    metric: str,
    batch: int,
    alpha: float = 0.05,
    permutations: int = 10000,
    jobs: int = 1,
    nice: int = 0,
    log: Callable[[str], None] = print,
) -> tuple[Any, dict[str, str]]:
    """Compare two sweeps on one final metric, ``batch`` seeds of each per stage, stopping at the
    first stage where :func:`arena.experiments.adastop.sequential_test` decides; the seeds of
    ``plans[0].seeds`` split into the planned stages. Finished seeds are reused (a rerun
    reproduces the decision without running anything). Returns the decision and the failed
    seeds (``{"CONFIG seed S": status}``); a stage keeps the seeds that finished."""
    seeds = plans[0].seeds
    if batch < 1:
        raise ArenaError("--batch must be at least 1")
    chunks = [seeds[i : i + batch] for i in range(0, len(seeds), batch)]
    scores: tuple[list[list[float]], list[list[float]]] = ([], [])
    status: dict[str, str] = {}
    decision = None
    for k, chunk in enumerate(chunks, start=1):
        for plan, got in zip(plans, scores):
            part = SweepPlan(plan.command, plan.config, plan.overrides, chunk, plan.directory)
            for s, v in run_seeds(part, arena, jobs=jobs, log=log, nice=nice).items():
                if v.startswith("failed"):
                    status[f"{plan.config} seed {s}"] = v
            finals = final_metrics(plan.directory, chunk)
            missing = [s for s in chunk if s in finals and metric not in finals[s]]
            if missing:
                raise ArenaError(
                    f"{plan.config}: seed {missing[0]} has no final metric {metric!r}; "
                    f"metrics: {', '.join(finals[missing[0]])}"
                )
            got.append([finals[s][metric] for s in chunk if s in finals])
            if not got[-1]:
                raise ArenaError(f"{plan.config}: no seed of stage {k} ({chunk}) finished; see {plan.directory}")
        decision = sequential_test(scores[0], scores[1], len(chunks), alpha, permutations)
        log(
            f"stage {k}/{len(chunks)}: "
            + decision.summary(Path(plans[0].config).stem, Path(plans[1].config).stem, metric)
        )
        if decision.decided:
            break
    return decision, status
