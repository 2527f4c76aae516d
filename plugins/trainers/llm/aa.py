"""``llm_advantage_alignment``: Advantage Alignment for language agents (arXiv 2511.19405).

Per game and seat, rewards are grouped into time steps (a run of free-text turns closed by a
choice: Trust-and-Split's talk plus its split is one step; in the IPD every move is one), scaled
by ``reward_scale``, and turned into discounted returns-to-go G_t. The advantage is group
relative with no critic: ``A_t = G_t - mean of G_t over the other games of the batch`` (leave
one out, per seat and time index); ``whiten`` centres every A of the batch and divides it by
``max(std, 1)``: unit scale while play is mixed, so that ``beta`` means the same whatever the
payoffs, but never an amplification once nearly every game is the same (dividing by a tiny std
blew one deviation in a cooperative batch up to unit scale and knocked a learned tit-for-tat
back to defection in one update; docs/results/llm_training.md). The
AA credit uses the co-player's advantage on the same game:
``A*_t = A_t + beta * gamma_aa * (sum_{k<t} gamma_aa^(t-k) A_k) * A^other_t`` (the
``discounted`` kernel of :mod:`arena.plugins.trainers.advantage_alignment`), broadcast to every
decision of the step and trained with :func:`tokens.clipped_pg_update`. ``beta: 0`` is the
naive REINFORCE learner with the same baseline (the comparison in docs/results/llm_training.md).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import Game
from arena.plugins.trainers.advantage_alignment import KERNELS, aligned_advantages
from arena.trainer import Trajectory

from .base import PG_DEFAULTS, LLMTrainer
from .tokens import learner_decisions

AA_DEFAULTS = {
    **PG_DEFAULTS,
    "beta": 0.5,
    "gamma": 0.9,
    "gamma_aa": 0.9,
    "kernel": "discounted",
    "reward_scale": 0.2,
    "whiten": False,
}


def time_steps(traj: Trajectory, player: int) -> tuple[list[int], list[float]]:
    """Each of ``player``'s steps' time index, and the reward of each time index."""
    index, rewards, t = [], [], 0
    for s in traj.for_player(player):
        index.append(t)
        if len(rewards) <= t:
            rewards.append(0.0)
        rewards[t] += s.reward
        if s.observation.decision == "choice":
            t += 1
    return index, rewards


def returns_to_go(rewards: Sequence[float], gamma: float) -> np.ndarray:
    g, out = 0.0, np.zeros(len(rewards))
    for t in range(len(rewards) - 1, -1, -1):
        g = rewards[t] + gamma * g
        out[t] = g
    return out


def leave_one_out(returns: list[np.ndarray]) -> list[np.ndarray]:
    """G_t minus the mean of G_t over the other sequences that reach time t (0 when none does)."""
    T = max((len(r) for r in returns), default=0)
    total, count = np.zeros(T), np.zeros(T)
    for r in returns:
        total[: len(r)] += r
        count[: len(r)] += 1
    out = []
    for r in returns:
        n = count[: len(r)] - 1
        others = np.where(n > 0, (total[: len(r)] - r) / np.maximum(n, 1), r)
        out.append(r - others)
    return out


class LLMAdvantageAlignment(LLMTrainer):
    name = "llm_advantage_alignment"
    defaults = AA_DEFAULTS

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        super().__init__(game, learners, **params)
        if self.p["kernel"] not in KERNELS:
            raise ArenaError(f"trainer 'llm_advantage_alignment': kernel must be one of {', '.join(KERNELS)}")
        if game.spec.num_players != 2:
            raise ArenaError("trainer 'llm_advantage_alignment' needs a two-player game")

    def credits(self, trajectories: Sequence[Trajectory]) -> dict[tuple[int, int], np.ndarray]:
        """A*_t per (trajectory, learner seat)."""
        gamma, scale = float(self.p["gamma"]), float(self.p["reward_scale"])
        adv: dict[tuple[int, int], np.ndarray] = {}
        for p in range(2):
            keys = list(range(len(trajectories)))
            rets = [returns_to_go(np.array(time_steps(trajectories[t], p)[1]) * scale, gamma) for t in keys]
            for t, a in zip(keys, leave_one_out(rets)):
                adv[(t, p)] = a
        if self.p["whiten"] and adv:
            flat = np.concatenate(list(adv.values()))
            mu, sd = flat.mean(), max(float(flat.std()), 1.0)
            adv = {k: (a - mu) / sd for k, a in adv.items()}
        out = {}
        for (t, p), own in adv.items():
            if trajectories[t].seats[p] != self.agent.name:
                continue
            other = adv[(t, 1 - p)]
            T = min(len(own), len(other))
            shaped = own.copy()
            shaped[:T] = aligned_advantages(
                own[:T], other[:T], float(self.p["beta"]), float(self.p["gamma_aa"]), self.p["kernel"]
            )
            out[(t, p)] = shaped
        return out

    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        credit = self.credits(trajectories)
        decisions = learner_decisions(trajectories, self.agent)
        advantages = []
        for d in decisions:
            steps = trajectories[d.traj].steps[: d.step]  # the step's time index: choices made before it
            t = sum(1 for s in steps if s.player == d.player and s.observation.decision == "choice")
            c = credit[(d.traj, d.player)]
            advantages.append(float(c[t]) if t < len(c) else 0.0)
        stats = self.policy_gradient_step(decisions, advantages)
        rets = [sum(tr.returns[p] for p in range(2) if tr.seats[p] == self.agent.name) for tr in trajectories]
        return {**{f"aa/{k}": v for k, v in stats.items()}, "aa/return": float(np.mean(rets)) if rets else 0.0}


def make_llm_aa(game: Game, learners: Sequence[Any], **params: Any) -> LLMAdvantageAlignment:
    return LLMAdvantageAlignment(game, learners, **params)
