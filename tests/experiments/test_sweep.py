"""``arena sweep``: seeds parsed, statistics right (IQM, stratified bootstrap, profiles), runs
resumable and refused when they would mix experiments, end to end from the CLI."""

import json
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import trim_mean

from arena.errors import ArenaError, ConfigError
from arena.experiments.sweep import aggregate, iqm, parse_seeds, performance_profile, split_overrides
from support import REPO


def test_parse_seeds_and_overrides():
    assert parse_seeds("0-4") == [0, 1, 2, 3, 4]
    assert parse_seeds("3,0-2,3") == [3, 0, 1, 2]
    for bad in ("4-1", "a", "1-", ""):
        with pytest.raises(ConfigError):
            parse_seeds(bad)
    assert split_overrides(["seeds=1-2", "params.beta=2"]) == ([1, 2], ["params.beta=2"])
    with pytest.raises(ConfigError, match="seeds="):
        split_overrides(["seed=3"])


def test_iqm_is_the_mean_of_the_middle_half():
    x = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 100.0]
    assert iqm(x) == pytest.approx(np.mean([2.0, 3.0, 4.0, 5.0])) == trim_mean(x, 0.25)
    agg = aggregate(x, resamples=500)
    assert agg.iqm == pytest.approx(3.5) and agg.mean == pytest.approx(np.mean(x))
    assert agg.iqm_ci[0] <= agg.iqm <= agg.iqm_ci[1] and agg.mean_ci[1] - agg.mean_ci[0] > agg.iqm_ci[1] - agg.iqm_ci[0]


def test_bootstrap_is_stratified_by_task():
    """Two tasks whose runs agree within the task: a stratified bootstrap keeps each task's
    count, so the pooled mean never moves; resampling the pool ignoring tasks would."""
    agg = aggregate({"a": [0.0] * 4, "b": [1.0] * 4}, resamples=300)
    assert agg.mean_ci == (0.5, 0.5) and agg.iqm_ci == (0.5, 0.5)
    pooled = aggregate([0.0] * 4 + [1.0] * 4, resamples=300)
    assert pooled.mean_ci[0] < 0.4 and pooled.mean_ci[1] > 0.6
    one = aggregate([0.7], resamples=100)  # one seed: a point, no interval to invent
    assert one.iqm_ci == (0.7, 0.7) and one.std == 0.0


def test_performance_profile():
    taus = np.array([0.0, 0.5, 0.8, 1.0])
    prof, lo, hi = performance_profile([0.2, 0.6, 0.9, 1.0], taus, resamples=200)
    assert list(prof) == [1.0, 0.75, 0.5, 0.0]
    assert np.all(lo <= prof) and np.all(prof <= hi)
    with pytest.raises(ArenaError):
        aggregate([float("nan")])


def _arena(*argv, check=True):
    p = subprocess.run(
        [sys.executable, "-m", "arena.cli", *argv], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    if check:
        assert p.returncode == 0, p.stderr
    return p


def test_sweep_cli_runs_resumes_and_refuses_mixing(tmp_path):
    conf = tmp_path / "solve.yaml"
    conf.write_text(f"game: kuhn_poker\nalgo: es-mccfr\niterations: 150\nlog_every: 150\nout: {tmp_path}/run\n")
    p = _arena("sweep", str(conf), "seeds=0-1", "--jobs", "2", "--json", "--no-plot")
    rep = json.loads(p.stdout)
    sweep = tmp_path / "run-sweep"
    assert rep["seeds"] == [0, 1] and rep["directory"] == str(sweep)
    expl = rep["metrics"]["exploitability"]
    per = [json.loads((sweep / f"seed-{s}" / "results.json").read_text())["final"]["exploitability"] for s in (0, 1)]
    assert list(expl["per_seed"].values()) == per and per[0] != per[1]  # a sampling solver: seeds differ
    assert expl["iqm"] == pytest.approx(np.mean(per)) and expl["min"] <= expl["iqm_ci"][0] <= expl["iqm_ci"][1]
    assert (sweep / "report.md").read_text().count("exploitability") == 1
    before = (sweep / "seed-0" / "results.json").stat().st_mtime_ns
    again = _arena("sweep", str(conf), "seeds=0-2", "--no-plot")  # grows by one seed, skips two
    assert "seed 0: started" not in again.stderr and "seed 2: done" in again.stderr
    assert (sweep / "seed-0" / "results.json").stat().st_mtime_ns == before
    assert json.loads((sweep / "sweep.json").read_text())["seeds"] == [0, 1, 2]
    other = _arena("sweep", str(conf), "seeds=0-1", "iterations=99", check=False)
    assert other.returncode == 2 and "different experiment" in other.stderr
    bad = _arena("sweep", str(conf), "seeds=3-1", check=False)
    assert bad.returncode == 2 and "runs backwards" in bad.stderr
    nocfg = _arena("sweep", str(tmp_path / "missing.yaml"), "seeds=0", check=False)
    assert nocfg.returncode == 2 and "not found" in nocfg.stderr


def test_reach_is_the_first_evaluated_step_past_the_level(tmp_path):
    from arena.experiments.sweep import add_reach, parse_reach

    curves = {0: [1.0, 5.0, 8.0, 9.0], 1: [1.0, 7.0, 6.0, 7.5], 2: [2.0, 3.0, 4.0, 5.0]}
    for s, ys in curves.items():
        d = tmp_path / f"seed-{s}"
        d.mkdir()
        rows = ["step,seconds,vs_fair/return"] + [f"{10 * i},{i},{y}" for i, y in enumerate(ys)]
        (d / "metrics.csv").write_text("\n".join(rows) + "\n")
    finals = {s: {"vs_fair/return": ys[-1]} for s, ys in curves.items()}
    never = add_reach(tmp_path, finals, ["vs_fair/return>=7", "vs_fair/return <= 1"])
    assert [finals[s]["reach:vs_fair/return>=7"] for s in (0, 1, 2)] == [20.0, 10.0, 30.0]
    assert never == {"reach:vs_fair/return>=7": [2], "reach:vs_fair/return<=1": [2]}
    assert finals[0]["reach:vs_fair/return<=1"] == 0.0
    assert parse_reach("a/b>=-0.5") == ("a/b", ">=", -0.5)
    for bad in ("vs_fair/return>7", "x>=abc", ">=3"):
        with pytest.raises(ConfigError):
            parse_reach(bad)
    with pytest.raises(ArenaError, match="no column"):
        add_reach(tmp_path, finals, ["missing>=1"])


def test_a_report_whose_every_metric_is_hidden_says_how_to_show_them():
    """A run without evaluation games reports only ``train/*`` finals, which the table hides by
    default: the report says so (it printed an empty table before), and ``--metric`` shows them."""
    from arena.experiments.sweep import report, to_markdown

    finals = {s: {"step": 12.0, "train/learner/win_rate": 0.5 + 0.1 * s} for s in range(3)}
    hidden = report(finals, resamples=200)
    assert hidden["metrics"] == {} and "--metric 'train/*'" in hidden["note"]
    assert hidden["note"] in to_markdown(hidden, "t")
    shown = report(finals, ["train/*"], resamples=200)
    assert list(shown["metrics"]) == ["train/learner/win_rate"] and "note" not in shown
    assert shown["metrics"]["train/learner/win_rate"]["mean"] == pytest.approx(0.6)
