"""Sequential comparison of two methods over seeds (AdaStop-style group-sequential permutation test).

Why: how many seeds a comparison needs depends on how different the methods are, which is what
one does not know in advance. Running seeds in batches and testing after each batch decides easy
comparisons with few seeds and spends more only where needed — but testing repeatedly inflates
the error unless the boundaries account for it. AdaStop (Mathieu et al., *AdaStop: adaptive
statistical testing for sound comparisons of Deep RL agents*, arXiv 2306.10882) does this with permutation tests and an
α-spending boundary; this module is that test for one pair of methods (so the family-wise error
is the error of that one comparison over all its interim looks).

The test, with K interim stages of seeds for each method:

- statistic after stage k: ``T_k = |mean(A) - mean(B)|`` over all seeds so far;
- its null distribution: the same statistic under permutations that swap the method labels
  *within* each stage (under H0 "same distribution" the labels inside a stage are
  exchangeable; across stages they are not, since the stage sizes were fixed by the plan); M
  random permutations, drawn from ``(seed, stage)`` so that re-running on the same data (a
  resumed sweep) reproduces every decision;
- boundaries by linear α-spending: at stage k at most ``floor(α k / K · M)`` of the permutations
  may have crossed a boundary so far; ``b_k`` is set on the permutations that had not crossed an
  earlier one, as the smallest value that keeps the count within the budget;
- decision: the first stage with ``T_k > b_k`` rejects H0 and the sign of the difference names
  the better method; otherwise, after stage K, no difference is detected.

The probability of rejecting when both methods have the same score distribution is at most α
(up to the Monte-Carlo error of M permutations and the discreteness of small stages), however
many interim looks are taken; ``tests/experiments/test_adastop.py`` measures it by simulation. Not done: the
early-accept (futility) boundary of the paper and comparisons of more than two methods.
scipy's ``permutation_test`` tests one look; the sequential boundary is what is written here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError


@dataclass
class Decision:
    """Where a sequential comparison stands after the stages seen so far."""

    decided: bool
    verdict: str
    """``"A > B"``, ``"A < B"``, or ``"no difference detected"`` / ``"undecided"``."""
    stage: int
    """Stages used (1-based); the stage that decided when ``decided``."""
    stages: int
    alpha: float
    n: tuple[int, int]
    """Seeds used per method."""
    means: tuple[float, float]
    statistic: float
    boundary: float
    permutations: int
    history: list[dict[str, float]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self, a: str = "A", b: str = "B", metric: str = "score") -> str:
        """One line: the decision, the seeds used and the error control."""
        verdict = {"A > B": f"{a} > {b}", "A < B": f"{a} < {b}"}.get(self.verdict, self.verdict)
        control = (
            f"two-sided group-sequential permutation test, {self.stages} stage(s), linear alpha-spending, "
            f"{self.permutations} permutations within stages: family-wise error <= {self.alpha:g}"
        )
        return (
            f"{metric}: {verdict} after stage {self.stage} of {self.stages} "
            f"({self.n[0]} + {self.n[1]} seeds; means {self.means[0]:.4g} vs {self.means[1]:.4g}; "
            f"|diff| {self.statistic:.4g}, boundary {self.boundary:.4g}) — {control}"
        )


def _stage_sums(values: np.ndarray, n_a: int, permutations: int, rng: np.random.Generator) -> np.ndarray:
    """Sum of the values labelled A under ``permutations`` random relabellings of one stage."""
    keys = rng.random((permutations, len(values)))
    idx = np.argsort(keys, axis=1)[:, :n_a]
    return values[idx].sum(axis=1)


def sequential_test(
    a: Sequence[Sequence[float]],
    b: Sequence[Sequence[float]],
    stages: int,
    alpha: float = 0.05,
    permutations: int = 10000,
    seed: int = 0,
) -> Decision:
    """Run the test over the stages seen so far: ``a[k]``, ``b[k]`` are the two methods' scores
    of stage k (the seeds of that batch). ``stages`` is the planned number K (it sets the
    spending), at least ``len(a)``. Stops at the first stage that rejects."""
    if not 0 < alpha < 1:
        raise ArenaError(f"adastop: alpha must be in (0, 1), got {alpha}")
    if len(a) != len(b) or len(a) == 0:
        raise ArenaError("adastop: both methods need scores for the same, non-zero number of stages")
    if stages < len(a):
        raise ArenaError(f"adastop: {len(a)} stages seen but only {stages} planned")
    if permutations < 100:
        raise ArenaError("adastop: use at least 100 permutations")
    sum_obs = np.zeros(2)
    n = np.zeros(2, dtype=int)
    perm_a = np.zeros(permutations)
    total = 0.0
    alive = np.ones(permutations, dtype=bool)
    crossed = 0
    history: list[dict[str, float]] = []
    decision: Decision | None = None
    for k, (stage_a, stage_b) in enumerate(zip(a, b), start=1):
        xa, xb = np.asarray(stage_a, dtype=float), np.asarray(stage_b, dtype=float)
        if not len(xa) or not len(xb) or not (np.all(np.isfinite(xa)) and np.all(np.isfinite(xb))):
            raise ArenaError(f"adastop: stage {k} needs finite scores for both methods")
        values = np.concatenate([xa, xb])
        perm_a += _stage_sums(values, len(xa), permutations, np.random.default_rng([seed, k]))
        total += values.sum()
        n += (len(xa), len(xb))
        sum_obs += (xa.sum(), xb.sum())
        stat_perm = np.abs(perm_a / n[0] - (total - perm_a) / n[1])
        means = (float(sum_obs[0] / n[0]), float(sum_obs[1] / n[1]))
        stat = abs(means[0] - means[1])
        budget = int(np.floor(alpha * k / stages * permutations)) - crossed
        cand = np.sort(stat_perm[alive])[::-1]
        # the smallest boundary b with #(alive permutations > b) <= budget: the (budget+1)-th largest
        boundary = float(cand[budget]) if 0 <= budget < len(cand) else (-np.inf if budget >= len(cand) else np.inf)
        newly = alive & (stat_perm > boundary)
        crossed += int(newly.sum())
        alive &= ~newly
        history.append({"stage": k, "n_a": int(n[0]), "n_b": int(n[1]), "statistic": stat, "boundary": boundary})
        if stat > boundary and np.isfinite(boundary):
            verdict = "A > B" if means[0] > means[1] else "A < B"
            decision = Decision(
                True, verdict, k, stages, alpha, (int(n[0]), int(n[1])), means, stat, boundary, permutations
            )
            break
        last = k == stages
        decision = Decision(
            False,
            "no difference detected" if last else "undecided",
            k,
            stages,
            alpha,
            (int(n[0]), int(n[1])),
            means,
            stat,
            boundary,
            permutations,
        )
    assert decision is not None
    decision.history = history
    return decision
