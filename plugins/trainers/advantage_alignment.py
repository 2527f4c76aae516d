"""``advantage_alignment``: Advantage Alignment (AA) and its proximal form (PAA).

Duque et al., *Advantage Alignment Algorithms* (ICLR 2025). Each learner i trains on

    A*_t = A^i_t + beta * P^i_t * O^i_t,     O^i_t = sum_{j != i} A^j_t

where A are (whitened) GAE advantages of every seat on the same game, computed from detached
critics, and P^i_t is a memory of i's *past* advantages. The kernel is an option:

- ``discounted`` (default; the paper's stated form): P_t = gamma_aa * sum_{k<t} gamma_aa^(t-k) A_k
- ``mean``: P_t = (1/t) sum_{k<t} A_k (the Melting Pot / negotiation code)
- ``time_reg``: P_t = sum_{k<t} A_k / (1 + t)
- ``jit``: like ``discounted`` but with k <= t (the current own advantage included)

P_0 = 0 for every kernel except ``jit``. What P sums is an option too: ``past=advantage``
(default) is the paper's own advantages A_k; ``past=partner`` sums the credit of the co-players'
moves instead (:func:`partner_credit`), which keeps a learner from reading the punishment of
its own defection as a betrayal (configs/social/ipd_aa.yaml uses it; docs/results/social_dilemmas.md);
``past=reward`` sums the learner's one-step advantages ``r_k - mean r_k`` (:func:`reward_credit`),
strictly past, where return-based A_k also hold the learner's current move and the rest of the
game (configs/social/coin_aa_memory.yaml uses it). ``proximal=True`` (default) is PAA: the shaped
advantage goes into PPO's clipped surrogate; ``proximal=False`` is plain AA on the on-policy
REINFORCE-style loss (one epoch, no clip). ``beta=0`` is exactly the naive learner. With n
players the opponents' advantages are summed (the released code's all-ones-minus-identity).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import Game
from arena.hookspecs import hookimpl
from arena.trainer import TrainerEntry

from .ppo import PGConfig, PPOTrainer, Segment

KERNELS = ("discounted", "mean", "time_reg", "jit")
PASTS = ("advantage", "partner", "reward")
PARTNER_CELLS = ("round", "any")


def past_weight(own: np.ndarray, kernel: str, gamma: float) -> np.ndarray:
    """P_t for t = 0..T-1 from one seat's advantages ``own`` (see the module docstring)."""
    own = np.asarray(own, dtype=float)
    T = len(own)
    out = np.zeros(T)
    if kernel in ("discounted", "jit"):
        c = 0.0  # c_t = sum_{k<t} gamma^(t-k) A_k  via  c_t = gamma * (c_{t-1} + A_{t-1})
        for t in range(T):
            if t > 0:
                c = gamma * (c + own[t - 1])
            out[t] = gamma * c if kernel == "discounted" else gamma * (c + own[t])
        return out
    csum = np.concatenate([[0.0], np.cumsum(own)[:-1]])  # sum_{k<t} A_k
    t = np.arange(T, dtype=float)
    if kernel == "mean":
        return np.where(t > 0, csum / np.maximum(t, 1.0), 0.0)
    if kernel == "time_reg":
        return csum / (1.0 + t)
    raise ArenaError(f"advantage_alignment: unknown kernel {kernel!r}; kernels: {', '.join(KERNELS)}")


def aligned_advantages(
    own: np.ndarray,
    others: np.ndarray,
    beta: float,
    gamma: float,
    kernel: str = "discounted",
    past: np.ndarray | None = None,
) -> np.ndarray:
    """A*_t = A_t + beta * P_t * O_t for one seat (``others`` = the summed co-player advantages;
    P_t from ``past``, default the seat's own advantages ``own``)."""
    own = np.asarray(own, dtype=float)
    memory = past_weight(own if past is None else past, kernel, gamma)
    return own + beta * memory * np.asarray(others, dtype=float)


def partner_credit(segments: Sequence[Segment], by_round: bool = True) -> dict[int, np.ndarray]:
    """Per segment (keyed by ``id``): the credit of the co-players' moves at each decision,
    ``c_k = r_k - mean r_k`` over the *other* decisions of the same learner at the same index
    with the same observation and the same own action (0 where there is no other).
    ``by_round=False`` pools the decisions at every index (for games whose observation holds
    what the reward depends on, e.g. the Coin Game: matched by index, almost every decision
    there is alone in its cell and the credit is 0).

    Why: AA's shaping term comes from ``A_k * grad log pi_opp(b_k | s_k)``; any baseline that
    does not depend on the co-player's move ``b_k`` leaves that term unbiased, until the
    derivation drops the softmax normaliser of ``pi_opp`` — then only a credit that averages to
    zero over ``b_k`` keeps the dropped part at zero. The own advantage ``A_k`` does not: it
    also carries the learner's own move and, estimated from returns, the rest of the game, which
    the co-player's current advantage shares. With that memory a learner reads the punishment
    of its own defection as a betrayal and retaliates (docs/social_dilemmas.md, Findings); with
    this one only a co-player move worse than its usual move in that situation counts. Rewards
    are the only counterfactual-free signal of the co-player's move at ``k`` (the next state
    depends on both moves), so the credit is immediate."""
    cells: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
    for s in segments:
        for t in range(len(s.rewards)):
            key = (s.owner, t if by_round else -1, int(s.actions[t]), s.obs[t].tobytes())
            cells.setdefault(key, []).append((id(s), t))
    out = {id(s): np.zeros(len(s.rewards)) for s in segments}
    reward = {id(s): s.rewards for s in segments}
    for members in cells.values():
        if len(members) < 2:
            continue
        total = sum(float(reward[i][t]) for i, t in members)
        n = len(members)
        for i, t in members:
            r = float(reward[i][t])
            out[i][t] = r - (total - r) / (n - 1)
    return out


def reward_credit(segments: Sequence[Segment]) -> dict[int, np.ndarray]:
    """Per segment (keyed by ``id``): ``r_k`` minus the mean reward of the learners' *other*
    segments at the same index (leave-one-out) — a one-step advantage of what happened at
    ``k``, for ``past=reward``.

    Why: with advantages estimated from returns-to-go (``advantage=group``, or GAE with a high
    lambda) the paper's memory ``sum_{k<t} A_k`` holds the rewards at and after ``t`` too, so it
    moves with the learner's current move and with the rest of the game, which the co-player's
    advantage ``A^j_t`` shares; their product then has a large mean that pushes whatever was
    played in good games (measured in the IPD and the Coin Game, docs/results/social_dilemmas.md)
    instead of "help a co-player who has been good to me, hurt one who has not". Immediate
    rewards up to ``t - 1`` are the strictly past part of the learner's fortune."""
    T = max((len(s.rewards) for s in segments), default=0)
    total, count = np.zeros(T), np.zeros(T)
    for s in segments:
        n = len(s.rewards)
        total[:n] += s.rewards
        count[:n] += 1
    out = {}
    for s in segments:
        n = len(s.rewards)
        others = np.maximum(count[:n] - 1, 1)
        out[id(s)] = np.where(count[:n] > 1, s.rewards - (total[:n] - s.rewards) / others, 0.0)
    return out


@dataclass
class AAConfig(PGConfig):
    beta: float = 1.0
    """Shaping weight; 0 recovers the naive learner."""
    kernel: str = "discounted"
    gamma_aa: float | None = None
    """Discount of the past-advantage memory (default: ``gamma``)."""
    proximal: bool = True
    """PAA (clipped PPO surrogate) when true, on-policy AA when false."""
    past: str = "advantage"
    """What the memory P_t sums: ``advantage``, the learner's own advantages (the paper's form),
    ``partner``, the credit of the co-players' moves (:func:`partner_credit`), or ``reward``, the
    learner's one-step advantages (:func:`reward_credit`)."""
    partner_cells: str = "round"
    """Which decisions ``past=partner`` compares: ``round``, those at the same index (with the same
    observation and own move), or ``any``, those at any index."""


class AdvantageAlignmentTrainer(PPOTrainer):
    name = "advantage_alignment"
    config_class = AAConfig

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        proximal = params.get("proximal", True)
        if not proximal:  # plain AA: one on-policy pass of the policy-gradient loss
            params = {"epochs": 1, "clip": None, **params}
        super().__init__(game, learners, **params)
        if self.config.kernel not in KERNELS:
            raise ArenaError(
                f"trainer 'advantage_alignment': kernel must be one of {', '.join(KERNELS)}, got {self.config.kernel!r}"
            )
        if self.config.past not in PASTS:
            raise ArenaError(
                f"trainer 'advantage_alignment': past must be one of {', '.join(PASTS)}, got {self.config.past!r}"
            )
        if self.config.partner_cells not in PARTNER_CELLS:
            raise ArenaError(
                f"trainer 'advantage_alignment': partner_cells must be one of {', '.join(PARTNER_CELLS)}, "
                f"got {self.config.partner_cells!r}"
            )
        self.last_term = 0.0

    def shape_advantages(self, games: list[list[Segment]]) -> None:
        cfg = self.config
        g = cfg.gamma if cfg.gamma_aa is None else cfg.gamma_aa
        terms = []
        credit: dict[int, np.ndarray] = {}
        learner_segments = [s for segs in games for s in segs if s.owner is not None]
        if cfg.past == "partner":
            credit = partner_credit(learner_segments, cfg.partner_cells == "round")
        elif cfg.past == "reward":
            credit = reward_credit(learner_segments)
        if credit:
            if cfg.whiten:  # on the scale of the whitened advantages it multiplies
                sd = float(np.concatenate(list(credit.values())).std()) + 1e-8
                credit = {k: v / sd for k, v in credit.items()}
        for segs in games:
            for s in segs:
                if s.owner is None:
                    continue
                T = len(s.advantages)
                others = np.zeros(T)
                for o in segs:
                    if o is not s:
                        m = min(T, len(o.advantages))
                        others[:m] += o.advantages[:m]
                s.shaped = aligned_advantages(s.advantages, others, cfg.beta, g, cfg.kernel, credit.get(id(s)))
                terms.append(np.abs(s.shaped - s.advantages).mean())
        self.last_term = float(np.mean(terms)) if terms else 0.0

    def update(self, trajectories):
        metrics = super().update(trajectories)
        metrics["aa_term_abs"] = self.last_term
        return metrics


def make_aa(game: Game, learners: Sequence[Any], **params: Any) -> AdvantageAlignmentTrainer:
    return AdvantageAlignmentTrainer(game, learners, **params)


@hookimpl
def arena_trainers() -> list[TrainerEntry]:
    return [
        TrainerEntry(
            "advantage_alignment",
            make_aa,
            "Advantage Alignment (PAA by default; proximal=false for AA), 2 or n agents",
            dataclasses.asdict(AAConfig()),
        )
    ]
