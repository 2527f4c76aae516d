"""AdaStop-style sequential comparison: the family-wise error holds at the nominal level over
interim looks (simulation), clear differences are decided early, and ``arena sweep --compare``
runs it end to end."""

import json
import subprocess
import sys

import numpy as np
import pytest

from arena.errors import ArenaError
from arena.experiments.adastop import sequential_test


def _simulate(delta: float, sims: int, stages: int = 4, n: int = 5, alpha: float = 0.05, binary: bool = False):
    """Run the test as a sweep would (one look after every stage, stop when decided)."""
    rng = np.random.default_rng(7)
    decided, used, right = 0, [], 0
    for s in range(sims):
        if binary:  # discrete scores (many ties): the permutation distribution is lumpy
            a = rng.binomial(1, 0.5, (stages, n)).astype(float)
            b = rng.binomial(1, 0.5, (stages, n)).astype(float)
        else:
            a, b = rng.normal(delta, 1.0, (stages, n)), rng.normal(0.0, 1.0, (stages, n))
        for k in range(1, stages + 1):
            d = sequential_test(a[:k], b[:k], stages, alpha, permutations=1000, seed=s)
            if d.decided:
                break
        decided += d.decided
        right += d.verdict == "A > B"
        used.append(d.stage)
    return decided / sims, float(np.mean(used)), right / sims


def test_family_wise_error_is_nominal_under_equal_distributions():
    """200 simulated comparisons of equal distributions with 4 looks each: rejections near
    alpha = 0.05 (binomial sd 0.015), where testing at 0.05 after every look would reject far more."""
    rate, stages, _ = _simulate(0.0, 200)
    assert 0.01 <= rate <= 0.09 and stages > 3.8
    rate_binary, _, _ = _simulate(0.0, 120, binary=True)
    assert rate_binary <= 0.09
    naive = 0  # the same data tested at alpha at every look, ignoring the repetition
    rng = np.random.default_rng(7)
    for s in range(200):
        a, b = rng.normal(0, 1, (4, 5)), rng.normal(0, 1, (4, 5))
        looks = [sequential_test([a[:k].ravel()], [b[:k].ravel()], 1, permutations=1000, seed=s) for k in (1, 2, 3, 4)]
        naive += any(d.decided for d in looks)
    assert naive / 200 > rate + 0.03


def test_clear_differences_are_decided_at_the_first_stage():
    rate, stages, right = _simulate(3.0, 40)
    assert rate == 1.0 and right == 1.0 and stages <= 1.2
    rate, stages, right = _simulate(1.0, 40)  # a moderate difference needs more seeds, still decided
    assert right >= 0.6 and stages > 1.3
    d = sequential_test([[0.0, 0.1, 0.2, 0.1, 0.0]], [[1.0, 1.1, 0.9, 1.2, 1.0]], stages=3, permutations=2000)
    assert d.decided and d.verdict == "A < B" and d.n == (5, 5) and d.statistic > d.boundary
    assert "family-wise error <= 0.05" in d.summary("x", "y", "m") and "x < y" in d.summary("x", "y", "m")


def test_decisions_are_reproducible_and_inputs_checked():
    a, b = [[1.0, 2.0, 3.0]], [[1.5, 2.5, 0.5]]
    assert sequential_test(a, b, 2).as_dict() == sequential_test(a, b, 2).as_dict()
    assert sequential_test(a, b, 2).verdict == "undecided"
    assert sequential_test(a, b, 1).verdict == "no difference detected"
    for bad in (dict(alpha=0.0), dict(stages=0)):
        with pytest.raises(ArenaError):
            sequential_test(a, b, **{"stages": 2, **bad})
    with pytest.raises(ArenaError, match="stage 1"):
        sequential_test([[float("nan")]], b, 2)


def _arena(*argv, cwd):
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *argv], capture_output=True, text=True, cwd=cwd, timeout=600
    )


def test_sweep_compare_cli_stops_when_decided(tmp_path):
    """Two solver configs far apart (100 vs 2,000 sampling iterations): with 4 seeds a stage and
    alpha 0.1 the first stage decides, and the second stage's seeds are never run."""
    for name, iters in (("short", 100), ("long", 2000)):
        (tmp_path / f"{name}.yaml").write_text(
            f"game: kuhn_poker\nalgo: es-mccfr\niterations: {iters}\nlog_every: {iters}\nout: {tmp_path}/{name}\n"
        )
    argv = ["sweep", "short.yaml", "seeds=0-7", "--compare", "long.yaml", "--adastop", "0.1", "--batch", "4"]
    p = _arena(*argv, "--metric", "exploitability", "--jobs", "2", "--json", "--permutations", "2000", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["decided"] and out["verdict"] == "A > B" and out["stage"] == 1 and out["n"] == [4, 4]
    assert json.loads((tmp_path / "short-sweep" / "adastop-vs-long.json").read_text())["verdict"] == "A > B"
    assert sorted(p.name for p in (tmp_path / "long-sweep").glob("seed-?")) == [f"seed-{s}" for s in range(4)]
    bad = _arena("sweep", "short.yaml", "seeds=0-3", "--compare", "long.yaml", cwd=tmp_path)
    assert bad.returncode != 0 and "--adastop ALPHA and exactly one --metric" in bad.stderr
