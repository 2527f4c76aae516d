"""Tournament formats: which agents meet, round by round, decided only by stored results.

A *format* is a generator: it yields a round (a list of :class:`Pairing` — which agents meet
and how many games), receives that round's finished games, and finally returns its own ranking
(best first). Formats never play: the driver turns pairings into concrete games with stable
ids, skips the ones the store already holds, ships the rest to an executor and feeds the
stored records back. Because every planning decision depends only on stored results, a
resumed run plans exactly what a clean run would.

Formats (``format.kind``):

- ``round_robin`` — every group of ``num_players`` agents, ``games`` games per seat rotation
  (for 2 players: ``games`` per ordered pairing, seats swapped);
- ``gauntlet`` — each of ``candidates`` against every other agent (the fixed pool);
- ``swiss`` — ``rounds`` rounds (default ⌈log2 N⌉) pairing agents with equal points by a
  minimum-cost perfect matching (no rematch whenever a rematch-free pairing exists, no second
  bye when avoidable), a bye worth a win; ranked by points then Buchholz;
- ``elimination`` — ArenaRL's seeded single elimination: seeding by ``games`` against a
  ``reference`` agent, a power-of-two bracket with explicit byes for the top seeds, ranking by
  the round reached, ties by mean score;
- ``adaptive`` — a coverage round, then batches on the pairs whose order is most uncertain
  under a Bradley–Terry fit (probability the pair's order is wrong); stops when every
  neighbouring pair is separated at ``confidence`` or ``budget`` games are spent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Callable, Generator, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.evaluation.ratings.bradley_terry import bradley_terry
from arena.evaluation.ratings.outcomes import pair_score, pairwise_outcomes
from arena.rng import derive_seed

FORMATS = ("round_robin", "gauntlet", "swiss", "elimination", "adaptive")
SEEDED_FORMATS = ("swiss", "adaptive")
"""Formats that draw from :func:`arena.rng.derive_seed` streams; their tournaments' fingerprints
say so, since a run begun under the earlier seed arithmetic would pair differently on resume."""
ADAPTIVE_RANK_DISTANCES = (1, 2)
"""Adaptive pairs agents this many places apart in the current ranking (neighbours and next-but-one)."""


@dataclass(frozen=True)
class Pairing:
    """Agents that meet (in base seating order) and how many games they play now."""

    group: tuple[str, ...]
    games: int


Round = list[Pairing]
Results = list[Sequence[Any]]
"""Per pairing of the round, its finished games (records with ``seats`` and ``returns``)."""
FormatGen = Generator[Round, Results, list[str]]


@dataclass
class FormatConfig:
    """``format:`` section. ``games`` is per ordered pairing (round robin, gauntlet) or per match."""

    kind: str = "round_robin"
    games: int = 10
    rounds: int | None = None
    reference: str | None = None
    candidates: list[str] = field(default_factory=list)
    budget: int | None = None
    confidence: float = 0.95
    min_degree: int = 2
    batch_games: int = 2
    ridge: float = 0.05


# -- formats -----------------------------------------------------------------------------------
def round_robin(names: Sequence[str], games: int, num_players: int = 2) -> FormatGen:
    yield [Pairing(g, games * num_players) for g in combinations(names, num_players)]
    return []


def gauntlet(names: Sequence[str], candidates: Sequence[str], games: int, num_players: int = 2) -> FormatGen:
    pool = [n for n in names if n not in candidates]
    if not candidates or not pool:
        raise ArenaError("format 'gauntlet' needs format.candidates (agent labels) and at least one other agent")
    yield [
        Pairing((c,) + rest, games * num_players) for c in candidates for rest in combinations(pool, num_players - 1)
    ]
    return []


def match_points(records: Sequence[Any], a: str, scale: float | None = None) -> float:
    """Points of ``a`` over a match's games against its opponent (see :func:`pair_score`)."""
    pts = 0.0
    for r in records:
        pa = r.seats.index(a)
        pts += pair_score(r.returns[pa], r.returns[1 - pa], scale)
    return pts


def swiss_round(
    names: Sequence[str],
    points: dict[str, float],
    met: dict[str, dict[str, int]],
    byes: dict[str, int],
    rng: np.random.Generator,
) -> tuple[list[tuple[str, str]], str | None]:
    """One Swiss round: the pairs (higher standing first) and the agent with the bye (odd pools).

    A minimum-cost perfect matching (``networkx.max_weight_matching`` on ``BIG − cost``, integer
    weights) over every pair, plus a bye node when the pool is odd. Costs in strict tiers, each
    tier larger than every possible total of the tiers below, so the matching minimises them
    lexicographically: (1) rematches — none if any rematch-free pairing exists; (2) repeated
    byes; (3) squared points gaps (agents meet their score group); (4) squared distances in the
    standings (points, ties broken by a seeded shuffle; the bye goes to the lowest standing).
    A greedy top-down pairing cannot promise (1): it can strand the last two agents with a
    rematch that another pairing avoids."""
    import networkx as nx

    n = len(names)
    order = [names[i] for i in rng.permutation(n)]
    order.sort(key=lambda a: -points[a])
    rank = {a: i for i, a in enumerate(order)}
    floor = min(points.values())
    half = {a: round(2 * (points[a] - floor)) for a in names}
    tie = n**2
    gap = tie * (n // 2 + 1) + 1
    top = max(half.values(), default=0) + 1
    repeat_bye = gap * top**2 * (n // 2 + 1) + 1
    rematch = repeat_bye * (max(byes.values(), default=0) + 1)
    bye_node = ("bye",) if n % 2 else None  # a tuple never equals an agent label
    g = nx.Graph()
    costs: dict[tuple[Any, Any], int] = {}
    for a, b in combinations(names, 2):
        costs[a, b] = rematch * met[a].get(b, 0) + gap * (half[a] - half[b]) ** 2 + (rank[a] - rank[b]) ** 2
    if bye_node:
        for a in names:
            costs[a, bye_node] = repeat_bye * byes.get(a, 0) + gap * half[a] ** 2 + (n - 1 - rank[a]) ** 2
    big = max(costs.values()) + 1
    g.add_weighted_edges_from((a, b, big - c) for (a, b), c in costs.items())
    pairs, bye = [], None
    for a, b in nx.max_weight_matching(g, maxcardinality=True):
        if bye_node in (a, b):
            bye = b if a == bye_node else a
        else:
            pairs.append((a, b) if rank[a] < rank[b] else (b, a))
    pairs.sort(key=lambda p: rank[p[0]])
    return pairs, bye


def swiss(names: Sequence[str], games: int, rounds: int | None, seed: int, scale: float | None = None) -> FormatGen:
    n = len(names)
    rounds = rounds or max(1, min(math.ceil(math.log2(n)), n - 1))
    points = {a: 0.0 for a in names}
    met: dict[str, dict[str, int]] = {a: {} for a in names}
    byes: dict[str, int] = {}
    for rnd in range(rounds):
        rng = np.random.default_rng(derive_seed(seed, "swiss", rnd))
        pairs, bye = swiss_round(names, points, met, byes, rng)
        if bye is not None:
            byes[bye] = byes.get(bye, 0) + 1
            points[bye] += 1.0
        results = yield [Pairing(p, games) for p in pairs]
        for (a, b), recs in zip(pairs, results):
            pa, pb = match_points(recs, a, scale), match_points(recs, b, scale)
            points[a] += 1.0 if pa > pb else 0.5 if pa == pb else 0.0
            points[b] += 1.0 if pb > pa else 0.5 if pa == pb else 0.0
            met[a][b] = met[a].get(b, 0) + 1
            met[b][a] = met[b].get(a, 0) + 1
    buchholz = {a: sum(points[o] * k for o, k in met[a].items()) for a in names}
    return sorted(names, key=lambda a: (-points[a], -buchholz[a], names.index(a)))


def bracket_order(size: int) -> list[int]:
    """Seed order of a power-of-two bracket: 8 → [0, 7, 3, 4, 1, 6, 2, 5] (1v8, 4v5, 2v7, 3v6)."""
    b = [0]
    while len(b) < size:
        b = [x for i in b for x in (i, 2 * len(b) - 1 - i)]
    return b


def elimination(names: Sequence[str], games: int, reference: str | None, scale: float | None = None) -> FormatGen:
    ref = reference or names[0]
    if ref not in names:
        raise ArenaError(f"format.reference '{ref}' is not one of the agents: {', '.join(names)}")
    others = [a for a in names if a != ref]
    total = {a: 0.0 for a in names}
    played = {a: 0 for a in names}

    def book(recs: Sequence[Any], a: str, b: str) -> tuple[float, float]:
        pa, pb = match_points(recs, a, scale), match_points(recs, b, scale)
        for x, p in ((a, pa), (b, pb)):
            total[x] += p
            played[x] += len(recs)
        return pa, pb

    results = yield [Pairing((ref, a), games) for a in others]
    seed_score = {}
    for a, recs in zip(others, results):
        _, pa = book(recs, ref, a)
        seed_score[a] = pa / max(1, len(recs))
    seed_score[ref] = float(np.mean([1.0 - seed_score[a] for a in others])) if others else 0.0
    seeds = sorted(names, key=lambda a: (-seed_score[a], names.index(a)))
    size = 1 << max(0, (len(seeds) - 1).bit_length())
    slots: list[str | None] = [seeds[i] if i < len(seeds) else None for i in bracket_order(size)]
    out_round: dict[str, int] = {}
    rnd = 0
    while len(slots) > 1:
        pairs = [(slots[i], slots[i + 1]) for i in range(0, len(slots), 2)]
        to_play = [(a, b) for a, b in pairs if a is not None and b is not None]
        results = yield [Pairing(p, games) for p in to_play] if to_play else []
        winners: dict[tuple[str | None, str | None], str | None] = {}
        for (a, b), recs in zip(to_play, results):
            pa, pb = book(recs, a, b)
            winners[(a, b)] = a if pa >= pb else b
            out_round[b if winners[(a, b)] == a else a] = rnd
        slots = [winners.get((a, b), a if b is None else b) for a, b in pairs]
        rnd += 1
    champion = slots[0]
    assert champion is not None  # the top seed is never a bye
    mean = {a: total[a] / max(1, played[a]) for a in names}
    rest = sorted((a for a in names if a != champion), key=lambda a: (-out_round.get(a, -1), -mean[a], names.index(a)))
    return [champion] + rest


def adaptive(
    names: Sequence[str],
    batch_games: int,
    budget: int | None,
    confidence: float,
    min_degree: int,
    ridge: float,
    seed: int,
    scale: float | None = None,
) -> FormatGen:
    """Coverage rings, then uncertainty-guided batches (see module docstring)."""
    n = len(names)
    rng = np.random.default_rng(derive_seed(seed, "adaptive"))
    budget = budget if budget is not None else 4 * n * (n - 1) * batch_games
    outcomes: list[tuple[str, str, float]] = []
    spent = 0

    def take(results: Results) -> None:
        nonlocal spent
        for recs in results:
            outcomes.extend(pairwise_outcomes(recs, scale))
            spent += len(recs)

    for _ in range(max(1, math.ceil(min_degree / 2))):
        perm = [names[i] for i in rng.permutation(n)]
        ring = [(perm[i], perm[(i + 1) % n]) for i in range(n if n > 2 else 1)]
        take((yield [Pairing(p, batch_games) for p in ring]))
    while True:
        fit = bradley_terry(outcomes, names, bootstrap=0, ridge=ridge)
        order = list(np.argsort(-fit.theta))
        cand = []
        for r in range(n - 1):
            for d in ADAPTIVE_RANK_DISTANCES:
                if r + d >= n:
                    continue
                i, j = order[r], order[r + d]
                var = fit.cov[i, i] + fit.cov[j, j] - 2 * fit.cov[i, j]
                z = (fit.theta[i] - fit.theta[j]) / math.sqrt(max(var, 1e-12))
                cand.append((0.5 * math.erfc(z / math.sqrt(2.0)), d, i, j))
        worst_adjacent = max((u for u, d, _, _ in cand if d == 1), default=0.0)
        if worst_adjacent < 1.0 - confidence or spent + batch_games > budget:
            break
        cand.sort(key=lambda c: -c[0])
        busy: set[int] = set()
        batch: Round = []
        for u, _, i, j in cand:
            if i in busy or j in busy or spent + (len(batch) + 1) * batch_games > budget:
                continue
            busy.update((i, j))
            batch.append(Pairing((names[i], names[j]), batch_games))
        take((yield batch))
    fit = bradley_terry(outcomes, names, bootstrap=0, ridge=ridge)
    return [names[i] for i in np.argsort(-fit.theta, kind="stable")]


def make_format(
    cfg: FormatConfig, names: Sequence[str], num_players: int, seed: int, scale: float | None = None
) -> FormatGen:
    """The generator for ``cfg.kind`` over agent labels ``names``; ``scale`` selects margin
    scores (see :func:`arena.evaluation.ratings.outcomes.pair_score`)."""
    names = list(names)
    if cfg.kind not in FORMATS:
        raise ArenaError(f"unknown format.kind '{cfg.kind}'; known: {', '.join(FORMATS)}")
    if len(names) < num_players:
        raise ArenaError(f"a {num_players}-player game needs at least {num_players} agents, got {len(names)}")
    if cfg.games < 1 or cfg.batch_games < 1:
        raise ArenaError("format.games and format.batch_games must be at least 1")
    if cfg.kind == "round_robin":
        return round_robin(names, cfg.games, num_players)
    if cfg.kind == "gauntlet":
        unknown = [c for c in cfg.candidates if c not in names]
        if unknown:
            raise ArenaError(f"format.candidates {unknown} are not agent labels; labels: {', '.join(names)}")
        return gauntlet(names, list(cfg.candidates), cfg.games, num_players)
    if num_players != 2:
        raise ArenaError(
            f"format '{cfg.kind}' is for 2-player games; use round_robin or gauntlet for {num_players}-player games"
        )
    if cfg.kind == "swiss":
        return swiss(names, cfg.games, cfg.rounds, seed, scale)
    if cfg.kind == "elimination":
        return elimination(names, cfg.games, cfg.reference, scale)
    if not 0.5 < cfg.confidence < 1.0:
        raise ArenaError(f"format.confidence must lie in (0.5, 1), got {cfg.confidence}")
    return adaptive(names, cfg.batch_games, cfg.budget, cfg.confidence, cfg.min_degree, cfg.ridge, seed, scale)


def drive(fmt: FormatGen, play: Callable[[int, Round], Results]) -> list[str]:
    """Run a format to the end: ``play(round_number, pairings)`` returns each pairing's games."""
    rnd = 0
    try:
        pairings = next(fmt)
        while True:
            results = play(rnd, pairings)
            rnd += 1
            pairings = fmt.send(results)
    except StopIteration as stop:
        return list(stop.value or [])
