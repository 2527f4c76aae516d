"""Preferences over whole responses, for text tasks: what ``sppo`` (free text), ``inpo`` and
``arenarl`` share.

A *group* is K responses to one prompt: the rollout the league recorded plus K − 1 new ones
sampled by the current policy from the same start state (:func:`rollout.branch`: same task
instance, same deal). A judge (:mod:`arena.judge`) compares responses of a group in pairs;
``(1 + margin) / 2`` is P(first ≻ second). A response's log-probability is the sum of its
decisions' (:func:`tokens.action_logprobs`: the summed log-prob of each sampled completion).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.game import Game
from arena.judge import Candidate, Judge, checked_compare
from arena.trainer import Trajectory

from .rollout import branch, final_state
from .tokens import action_logprobs, learner_decisions


def sampled_groups(
    game: Game, agent: Any, trajectories: Sequence[Trajectory], size: int, seed: int
) -> tuple[list[list[Candidate]], int]:
    """One group of ``size`` responses per game the learner played (its first seat), the recorded
    rollout first; and the number of games skipped (not rebuildable, or another agent decides)."""
    items = []
    for traj in trajectories:
        seats = [p for p, name in enumerate(traj.seats) if name == agent.name]
        if seats:
            items.append((traj, seats[0]))
    copies = branch(game, items, agent, size - 1, seed=seed)
    out, skipped = [], 0
    for (traj, player), more in zip(items, copies):
        end = final_state(game, traj) if more is not None else None
        if more is None or end is None:
            skipped += 1
            continue
        out.append([Candidate(traj, player, end)] + [Candidate(t, player, s) for t, s in more])
    return out, skipped


def sampled_opponents(
    game: Game, agent: Any, groups: Sequence[Sequence[Candidate]], size: int, seed: int
) -> list[list[Candidate]]:
    """``size`` fresh responses of ``agent`` to each group's prompt (from its recorded rollout's
    start state): samples of the policy the group's responses are then compared against."""
    copies = branch(game, [(g[0].trajectory, g[0].player) for g in groups], agent, size, seed=seed)
    out = []
    for grp, more in zip(groups, copies):
        if more is None:
            raise RuntimeError("a group's start state could not be rebuilt a second time")
        out.append([Candidate(t, grp[0].player, s) for t, s in more])
    return out


def cross_win_rates(
    judge: Judge, groups: Sequence[Sequence[Candidate]], others: Sequence[Sequence[Candidate]]
) -> list[np.ndarray]:
    """Per group, P̂(y_i ≻ π') = mean_j P(y_i ≻ z_j) over ``others`` (samples of π'), one judge call."""
    where = [
        (g, i, j) for g, (grp, oth) in enumerate(zip(groups, others)) for i in range(len(grp)) for j in range(len(oth))
    ]
    margins = checked_compare(judge, [(groups[g][i], others[g][j]) for g, i, j in where]) if where else []
    out = [np.zeros((len(grp), max(1, len(oth)))) for grp, oth in zip(groups, others)]
    for (g, i, j), m in zip(where, margins):
        out[g][i, j] = (1 + float(m)) / 2
    return [w.mean(axis=1) for w in out]


def pair_margins(judge: Judge, groups: Sequence[Sequence[Candidate]]) -> list[dict[tuple[int, int], float]]:
    """Per group, the judge's margin for every pair ``i < j`` (one judge call for all groups)."""
    where = [(g, i, j) for g, grp in enumerate(groups) for i in range(len(grp)) for j in range(i + 1, len(grp))]
    margins = checked_compare(judge, [(groups[g][i], groups[g][j]) for g, i, j in where]) if where else []
    out: list[dict[tuple[int, int], float]] = [{} for _ in groups]
    for (g, i, j), m in zip(where, margins):
        out[g][(i, j)] = float(m)
    return out


def win_rates(
    groups: Sequence[Sequence[Candidate]], margins: Sequence[dict[tuple[int, int], float]]
) -> list[np.ndarray]:
    """SPPO's P̂(y_i ≻ π_t) = (1/K) Σ_j P(y_i ≻ y_j) over the group, the response itself counting
    ½ (the K samples stand in for π_t; uclaml/SPPO's estimate)."""
    out = []
    for grp, m in zip(groups, margins):
        k = len(grp)
        p = np.full((k, k), 0.5)
        for (i, j), x in m.items():
            p[i, j], p[j, i] = (1 + x) / 2, (1 - x) / 2
        out.append(p.mean(axis=1))
    return out


def response_logprobs(model: Any, agent: Any, trajs: Sequence[Trajectory], grad: bool, ref: Any = None) -> Any:
    """log π(response) per trajectory: the sum over the learner's decisions in it (one tensor)."""
    import torch

    decisions = learner_decisions(trajs, agent)
    logp, _ = action_logprobs(model, decisions, grad=grad, model=ref)
    index = torch.tensor([d.traj for d in decisions], dtype=torch.long, device=logp.device)
    return torch.zeros(len(trajs), dtype=logp.dtype, device=logp.device).index_add(0, index, logp)
