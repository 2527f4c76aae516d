"""Rank a group of N candidates with a pairwise judge, and turn ranks into advantages.

ArenaRL (arXiv 2601.06487) scores the N rollouts of one task instance *against each other*. The
topologies are the tournament formats of :mod:`arena.evaluation.formats`, driven by a judge
instead of games: each pairing a format yields is **one comparison** (one ``compare`` item; the
``llm`` judge runs it in both orders), fed back to the format as a record whose returns are
``±margin`` with margin scale 2, so the format's pair score is exactly ``(1 + margin) / 2`` =
P(first better). Nothing about pairing is re-implemented here:

=====================  ==========================================  =====================
topology               pairing (format)                            comparisons
=====================  ==========================================  =====================
``anchor``             every candidate against candidate 0          N − 1
``single_elimination`` :func:`arena.evaluation.formats.elimination`         2N − 2 (N a power of 2)
                       (seeding against candidate 0, the anchor;
                       ArenaRL's bracket with explicit byes)
``swiss``              :func:`arena.evaluation.formats.swiss` (networkx     ⌈log2 N⌉ · ⌊N/2⌋
                       matching, no rematches)
``round_robin``        :func:`arena.evaluation.formats.round_robin`         N(N − 1)/2
``adaptive``           :func:`arena.evaluation.formats.adaptive` (Bradley–  ``budget`` (2N − 2)
                       Terry uncertainty)
=====================  ==========================================  =====================

Several groups are ranked in lockstep (:func:`rank_groups`): each round collects the
pairings of every unfinished group and asks the judge once, so an LLM judge sees one batch.

:func:`rank_advantages` is ArenaRL's rank → reward → advantage map (``r_k = 1 − k/(N−1)``,
z-scored with the unbiased std): N = 4 gives [1.1619, 0.3873, −0.3873, −1.1619].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.evaluation.formats import FormatGen, Pairing, adaptive, elimination, match_points, round_robin, swiss
from arena.rng import derive_seed

TOPOLOGIES = ("anchor", "single_elimination", "swiss", "round_robin", "adaptive")
MARGIN_SCALE = 2.0
"""A comparison's record has returns (m, −m); with this scale its pair score is (1 + m)/2."""

Compare = Callable[[Sequence[tuple[int, int, int]]], Sequence[float]]
"""``compare([(group, i, j), ...]) -> margins`` (positive: candidate i of that group is better)."""


@dataclass
class Ranking:
    order: list[int]
    """Candidate indices, best first."""
    comparisons: int
    decisive: int = 0
    """Comparisons with a non-zero margin; 0 means the judge could not tell any pair apart and
    the order is only the formats' tie-breaking (a trainer should not learn from it)."""
    margins: list[tuple[int, int, float]] = field(default_factory=list)
    """Every comparison the topology made, ``(i, j, margin of i over j)``, in order."""


def anchor(names: Sequence[str]) -> FormatGen:
    """Every other candidate against ``names[0]``; ranked by the score against it (the
    anchor's own score is the mean of its N − 1 scores, as ArenaRL's seeding phase)."""
    ref, others = names[0], list(names[1:])
    results = yield [Pairing((ref, a), 1) for a in others]
    score = {a: match_points(recs, a, MARGIN_SCALE) for a, recs in zip(others, results)}
    score[ref] = float(np.mean([1.0 - score[a] for a in others])) if others else 0.0
    return sorted(names, key=lambda a: (-score[a], names.index(a)))


def _once(fmt: FormatGen) -> Any:
    """A one-round format (round robin) played once, ranked by points (win 1, tie 0.5), then
    the sum of pair scores, then index (the format itself returns no ranking)."""
    pairings = next(fmt)
    results = yield pairings
    names = sorted({a for p in pairings for a in p.group}, key=lambda a: int(a))
    points = {a: 0.0 for a in names}
    total = {a: 0.0 for a in names}
    for p, recs in zip(pairings, results):
        a, b = p.group
        pa = match_points(recs, a, MARGIN_SCALE)
        pb = match_points(recs, b, MARGIN_SCALE)
        points[a] += 1.0 if pa > pb else 0.5 if pa == pb else 0.0
        points[b] += 1.0 if pb > pa else 0.5 if pa == pb else 0.0
        total[a] += pa
        total[b] += pb
    return sorted(names, key=lambda a: (-points[a], -total[a], int(a)))


def topology(
    kind: str,
    n: int,
    seed: int = 0,
    rounds: int | None = None,
    budget: int | None = None,
    confidence: float = 0.95,
    min_degree: int = 2,
    ridge: float = 0.05,
) -> FormatGen:
    """The format generator of ``kind`` over candidates named "0".."n-1"."""
    if kind not in TOPOLOGIES:
        raise ArenaError(f"unknown topology '{kind}'; known: {', '.join(TOPOLOGIES)}")
    if n < 2:
        raise ArenaError(f"a group needs at least 2 candidates to rank, got {n}")
    names = [str(i) for i in range(n)]
    if kind == "anchor":
        return anchor(names)
    if kind == "single_elimination":
        return elimination(names, 1, names[0], MARGIN_SCALE)
    if kind == "swiss":
        return swiss(names, 1, rounds, seed, MARGIN_SCALE)
    if kind == "round_robin":
        return _once(round_robin(names, 1))
    budget = budget if budget is not None else 2 * n - 2
    return adaptive(names, 1, budget, confidence, min_degree, ridge, seed, MARGIN_SCALE)


def rank_groups(
    sizes: Sequence[int],
    compare: Compare,
    kind: str = "single_elimination",
    seed: int = 0,
    repeats: int = 1,
    **knobs: Any,
) -> list[Ranking]:
    """Rank every group (``sizes[g]`` candidates) with topology ``kind``, all groups in lockstep:
    one ``compare`` call per round with every group's pairings. ``repeats`` > 1 asks the judge
    about every pairing that many times (in the same call; a noisy judge answers each afresh):
    the format sees their summed pair scores, the margins keep every answer, and each counts as a
    comparison."""
    if int(repeats) < 1:
        raise ArenaError(f"repeats must be at least 1 judgement per pairing, got {repeats}")
    gens = [topology(kind, n, seed=derive_seed(seed, "group", g), **knobs) for g, n in enumerate(sizes)]
    spent = [0] * len(gens)
    decisive = [0] * len(gens)
    played: list[list[tuple[int, int, float]]] = [[] for _ in gens]
    out: list[Ranking | None] = [None] * len(gens)
    pending: dict[int, list[Pairing]] = {}

    def advance(g: int, value: Any) -> None:
        try:
            pending[g] = gens[g].send(value) if value is not None else next(gens[g])
        except StopIteration as stop:
            pending.pop(g, None)
            out[g] = Ranking([int(a) for a in stop.value], spent[g], decisive[g], played[g])

    for g in range(len(gens)):
        advance(g, None)
    while pending:
        batch = [
            (g, int(p.group[0]), int(p.group[1])) for g in sorted(pending) for p in pending[g] for _ in range(repeats)
        ]
        margins = list(compare(batch)) if batch else []
        if len(margins) != len(batch):
            raise ArenaError(f"compare returned {len(margins)} margins for {len(batch)} pairs")
        k = 0
        for g in sorted(pending):
            results = []
            for p in pending[g]:
                recs = []
                for m in (float(x) for x in margins[k : k + repeats]):
                    decisive[g] += m != 0.0
                    played[g].append((int(p.group[0]), int(p.group[1]), m))
                    recs.append(SimpleNamespace(seats=list(p.group), returns=[m, -m], info={}))
                k += repeats
                results.append(recs)
            spent[g] += len(results) * repeats
            advance(g, results)
    return [r for r in out if r is not None]


def rank_group(
    n: int, compare: Callable[[int, int], float], kind: str = "single_elimination", seed: int = 0, **knobs: Any
) -> Ranking:
    """One group; ``compare(i, j)`` is the margin of candidate i over j."""
    return rank_groups([n], lambda batch: [compare(i, j) for _, i, j in batch], kind, seed, **knobs)[0]


def rank_rewards(n: int) -> np.ndarray:
    """Reward of rank k (0 = best): ``1 − k/(N−1)``."""
    if n < 2:
        raise ArenaError(f"a group needs at least 2 candidates to rank, got {n}")
    return 1.0 - np.arange(n) / (n - 1)


def rank_advantages(order: Sequence[int]) -> np.ndarray:
    """Advantage of every candidate (by index) from a ranking (best first): ArenaRL's z-scored
    rank rewards, ``(r − mean) / (std_unbiased + 1e-6)``."""
    n = len(order)
    r = rank_rewards(n)
    a = (r - r.mean()) / (r.std(ddof=1) + 1e-6)
    out = np.zeros(n)
    out[list(order)] = a
    return out


def group_zscore(scores: Sequence[float] | np.ndarray) -> np.ndarray:
    """GRPO's pointwise advantage: ``(s − mean) / (std_unbiased + 1e-6)`` (0 for a flat group)."""
    s = np.asarray(scores, dtype=float)
    if len(s) < 2:
        return np.zeros(len(s))
    sd = s.std(ddof=1)
    return (s - s.mean()) / (sd + 1e-6) if sd > 0 else np.zeros(len(s))


def comparisons_bound(kind: str, n: int) -> int:
    """The comparisons a topology spends on N candidates (N a power of two for SE)."""
    if kind == "anchor":
        return n - 1
    if kind == "single_elimination":
        return 2 * n - 2
    if kind == "swiss":
        return max(1, min(math.ceil(math.log2(n)), n - 1)) * (n // 2)
    if kind == "round_robin":
        return n * (n - 1) // 2
    return 2 * n - 2


ADVANTAGE_MAPS = ("rank", "margin")
"""How a ranked group becomes advantages: ``rank`` (ArenaRL's ``1 − k/(N−1)``, z-scored) or
``margin`` (least-squares strengths from the same comparisons' margins, z-scored)."""


def margin_strengths(n: int, margins: Sequence[tuple[int, int, float]]) -> np.ndarray:
    """Strengths ``s`` (mean 0 on each connected part of the comparison graph) that fit every
    comparison's margin in least squares, ``s_i − s_j ≈ m_ij``: the minimum-norm solution of
    the graph Laplacian system ``L s = b`` (``b_i`` = the margins i won minus those it lost).
    Where a margin is linear in a quality difference (a scorer judge: ``m = Δq + noise``) this
    is the quality up to a constant, each candidate's noise averaged over every comparison it
    played; a rank keeps only the order."""
    if n < 2:
        raise ArenaError(f"a group needs at least 2 candidates to rank, got {n}")
    lap, b = np.zeros((n, n)), np.zeros(n)
    for i, j, m in margins:
        lap[i, i] += 1.0
        lap[j, j] += 1.0
        lap[i, j] -= 1.0
        lap[j, i] -= 1.0
        b[i] += m
        b[j] -= m
    s = np.linalg.pinv(lap) @ b
    return s - s.mean()


def ranking_advantages(r: Ranking, n: int, kind: str = "rank") -> np.ndarray:
    """A ranked group's advantages under map ``kind`` (:data:`ADVANTAGE_MAPS`); all zeros when
    no comparison was decisive (the order would only be tie-breaking)."""
    if kind not in ADVANTAGE_MAPS:
        raise ArenaError(f"advantage map must be one of {', '.join(ADVANTAGE_MAPS)}, not {kind!r}")
    if not r.decisive:
        return np.zeros(n)
    if kind == "rank":
        return rank_advantages(r.order)
    return group_zscore(margin_strengths(n, r.margins))


SCALINGS = ("group", "batch")
"""How centred strengths become advantages: ``group`` divides each group by its own std (GRPO);
``batch`` divides every group by one pooled std (the root mean of the groups' variances)."""


def scaled_advantages(values: Sequence[np.ndarray], scaling: str = "group") -> list[np.ndarray]:
    """Centre each group's values and scale them (:data:`SCALINGS`). With a noisy judge, a group
    whose members are truly alike still shows a spread of noise; ``group`` scales that noise up
    to unit variance like any other group, ``batch`` leaves it as small as it is next to the
    groups that differ."""
    if scaling not in SCALINGS:
        raise ArenaError(f"advantage scaling must be one of {', '.join(SCALINGS)}, not {scaling!r}")
    if scaling == "group":
        return [group_zscore(v) for v in values]
    centred = [np.asarray(v, dtype=float) - np.mean(v) if len(v) else np.zeros(0) for v in values]
    var = [float(c.var(ddof=1)) for c in centred if len(c) > 1]
    pooled = float(np.sqrt(np.mean(var))) if var else 0.0
    return [c / (pooled + 1e-6) if pooled > 0 else np.zeros(len(c)) for c in centred]


def advantage_fidelity(
    qualities: np.ndarray,
    noise: float,
    kind: str = "single_elimination",
    advantage: str = "rank",
    seed: int = 0,
    drift: float = 0.0,
    scaling: str = "group",
    repeats: int = 1,
) -> dict[str, float]:
    """How much of the true-reward advantage a judged advantage keeps, without training.

    ``qualities`` is (groups, N): the true quality of every candidate. A simulated pairwise
    judge answers ``q_i + e − q_j − e′`` (``e, e′ ~ N(0, noise²)``, fresh per comparison); a
    simulated pointwise one (``kind="pointwise"``) answers ``q + e + d`` with ``d ~ N(0,
    drift²)`` per score, and its advantage is the group z-score. Returns ``fidelity``: the mean
    over groups with any true spread of the Pearson correlation between the advantage and the
    true-reward advantage (``group_zscore(q)``; a group with zero advantages counts 0), and
    ``flat``: the share of groups with no true spread (no signal for any method); and
    ``batch_fidelity``: the cosine over every candidate of the batch between the advantages and
    the true-reward ones — the alignment of the policy-gradient step with the true one when the
    rollouts' score-function gradients are roughly orthogonal, so it also counts how much step
    each group gets (``scaling``, :func:`scaled_advantages`; ``rank`` advantages are unit-variance
    per group whatever the scaling)."""
    q = np.asarray(qualities, dtype=float)
    rng = np.random.default_rng(seed)
    if kind == "pointwise":
        advs = [
            group_zscore(row + noise * rng.standard_normal(len(row)) + drift * rng.standard_normal(len(row)))
            for row in q
        ]
    else:

        def compare(batch: Sequence[tuple[int, int, int]]) -> list[float]:
            e = noise * rng.standard_normal((len(batch), 2))
            return [float(q[g, i] - q[g, j] + e[k, 0] - e[k, 1]) for k, (g, i, j) in enumerate(batch)]

        ranks = rank_groups([q.shape[1]] * q.shape[0], compare, kind, seed=seed, repeats=repeats)
        if advantage == "margin":
            advs = scaled_advantages([margin_strengths(q.shape[1], r.margins) for r in ranks], scaling)
        else:
            advs = [ranking_advantages(r, q.shape[1], advantage) for r in ranks]
    truth = np.concatenate([group_zscore(row) for row in q])
    flat_adv = np.concatenate(advs)
    norm = float(np.linalg.norm(truth) * np.linalg.norm(flat_adv))
    cors, flat = [], 0
    for row, a in zip(q, advs):
        if np.ptp(row) == 0:
            flat += 1
            continue
        cors.append(float(np.corrcoef(a, row)[0, 1]) if np.ptp(a) > 0 else 0.0)
    return {
        "fidelity": float(np.mean(cors)) if cors else float("nan"),
        "flat": flat / max(1, len(q)),
        "batch_fidelity": float(truth @ flat_adv) / norm if norm > 0 else 0.0,
    }
