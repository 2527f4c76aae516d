"""``ppo``: independent PPO (clipped surrogate, GAE, critic) for neural learners.

The trainer contract: ``update(trajectories)`` takes finished games recorded by
:func:`arena.playing.match.play_games` and updates every learner whose name sits in a seat. Seats held
by anything else (scripted agents, past snapshots in a league) are read, not trained: their
advantages are estimated with the facing learner's *opponent critic*, fitted here on their
rewards, which is what Advantage Alignment needs.

Everything policy-gradient shares this file: REINFORCE is the same update with one epoch, no
clipping and Monte-Carlo advantages (``lam=1``); Advantage Alignment only reshapes the
advantages (:meth:`PPOTrainer.shape_advantages`). Hyperparameters live in one dataclass.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import Game
from arena.hookspecs import hookimpl
from arena.trainer import Trainer, TrainerEntry, Trajectory


@dataclass
class PGConfig:
    lr: float = 3e-3
    gamma: float = 0.96
    lam: float = 0.95
    """GAE lambda; 1.0 gives Monte-Carlo return minus the critic baseline."""
    epochs: int = 4
    minibatches: int = 1
    clip: float | None = 0.2
    """PPO ratio clip; ``None`` is the plain (on-policy) policy-gradient loss."""
    entropy: float = 0.01
    value_coef: float = 0.5
    grad_clip: float = 1.0
    reward_scale: float = 1.0
    whiten: bool = True
    """Normalise advantages over the batch (before Advantage Alignment's term, as the released code)."""
    advantage: str = "gae"
    """``gae`` (critic) or ``group``: discounted return-to-go minus the leave-one-out mean of the
    other games' return-to-go at the same decision index (the AdAlign LLM code's baseline; no
    critic, exact for fixed-horizon games whose value depends on the round); ``trajectory``: the
    ablation of turn-level credit, one advantage per seat and game (its whole return minus the
    critic's value at its first decision) on every decision of that game."""
    warmup: int = 0
    """Updates at the start that fit only the critics (the actor waits for useful advantages)."""
    seed: int = 0
    is_cap: float = 2.0
    """Asynchronous training (stale games): cap of the behaviour importance weight
    ``pi_prox / pi_behaviour`` of the decoupled PPO objective."""


@dataclass
class Segment:
    """One seat's decisions in one game, aligned by decision index."""

    traj: int
    seat: int
    obs: np.ndarray
    mask: np.ndarray
    actions: np.ndarray
    log_probs: np.ndarray
    rewards: np.ndarray
    owner: int | None
    """Index of the learner in this seat, or ``None`` for a fixed co-player."""
    critic: int = -1
    """Learner whose critic scores this seat (its own, or its opponent critic)."""
    staleness: int = 0
    """The game's :attr:`Trajectory.staleness` (learner versions behind)."""
    values: np.ndarray | None = None
    advantages: np.ndarray | None = None
    targets: np.ndarray | None = None
    shaped: np.ndarray | None = None


def gae(rewards: np.ndarray, values: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """Generalised advantage estimates for one finished episode (value after the end is 0)."""
    adv = np.zeros(len(rewards))
    last = 0.0
    for t in reversed(range(len(rewards))):
        nxt = values[t + 1] if t + 1 < len(values) else 0.0
        delta = rewards[t] + gamma * nxt - values[t]
        last = delta + gamma * lam * last
        adv[t] = last
    return adv


def group_advantages(segments: list[Segment], gamma: float) -> None:
    """Return-to-go minus the leave-one-out mean of the other segments' at the same index."""
    T = max(len(s.rewards) for s in segments)
    G = np.full((len(segments), T), np.nan)
    for i, s in enumerate(segments):
        g = 0.0
        for t in reversed(range(len(s.rewards))):
            g = s.rewards[t] + gamma * g
            G[i, t] = g
    present = ~np.isnan(G)
    total, count = np.nansum(G, axis=0), present.sum(axis=0)
    for i, s in enumerate(segments):
        n = len(s.rewards)
        others = np.maximum(count[:n] - 1, 1)
        s.advantages = G[i, :n] - (total[:n] - G[i, :n]) / others
        s.targets = G[i, :n]


class PPOTrainer(Trainer):
    """Independent (naive) learners: each maximises its own return."""

    name = "ppo"
    config_class: type[PGConfig] = PGConfig

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        from arena.plugins.agents.neural import NeuralAgent, require_torch

        self.torch = require_torch()
        fields = {f.name for f in dataclasses.fields(self.config_class)}
        unknown = sorted(set(params) - fields)
        if unknown:
            raise ArenaError(
                f"trainer '{self.name}' has no parameter {', '.join(map(repr, unknown))}; "
                f"parameters: {', '.join(sorted(fields))}"
            )
        self.config = self.config_class(**params)
        if not learners:
            raise ArenaError(f"trainer '{self.name}' needs at least one learner")
        for agent in learners:
            if not isinstance(agent, NeuralAgent):
                raise ArenaError(f"trainer '{self.name}' trains neural agents; '{agent.name}' is not one")
        names = [a.name for a in learners]
        if len(set(names)) != len(names):
            raise ArenaError(f"trainer '{self.name}': learner names must be unique, got {names}")
        self.game = game
        self.learners = list(learners)
        self.optimizers = [self.torch.optim.Adam(a.net.parameters(), lr=self.config.lr) for a in self.learners]
        self.generator = self.torch.Generator().manual_seed(self.config.seed)
        self.updates = 0

    # -- batching --------------------------------------------------------------------------------
    def segments(self, trajectories: Sequence[Trajectory]) -> list[list[Segment]]:
        """Per game, one segment per seat that made choice decisions."""
        index = {a.name: i for i, a in enumerate(self.learners)}
        scale = self.config.reward_scale
        out = []
        for k, traj in enumerate(trajectories):
            owners = [index.get(name) for name in traj.seats]
            if all(o is None for o in owners):
                continue
            first = next(o for o in owners if o is not None)
            segs = []
            for seat in range(len(traj.seats)):
                steps = traj.for_player(seat)
                kept, rewards, carry = [], [], 0.0
                for s in steps:  # text turns (talk) are not trained; their reward joins a neighbour
                    if s.observation.decision != "choice":
                        carry += s.reward
                        if kept:
                            rewards[-1] += carry
                            carry = 0.0
                        continue
                    kept.append(s)
                    rewards.append(s.reward + carry)
                    carry = 0.0
                if not kept:
                    continue
                if carry:
                    rewards[-1] += carry
                n_act = self.learners[0].num_actions
                mask = np.zeros((len(kept), n_act), dtype=bool)
                for t, s in enumerate(kept):
                    mask[t, s.observation.legal_actions] = True
                seg = Segment(
                    traj=k,
                    seat=seat,
                    obs=np.stack([np.asarray(s.observation.tensor, dtype=np.float32) for s in kept]),
                    mask=mask,
                    actions=np.array([int(s.action) for s in kept]),
                    log_probs=np.array([np.nan if s.log_prob is None else s.log_prob for s in kept]),
                    rewards=np.asarray(rewards, dtype=float) * scale,
                    owner=owners[seat],
                )
                seg.critic = seg.owner if seg.owner is not None else first
                seg.staleness = int(getattr(traj, "staleness", 0))
                segs.append(seg)
            out.append(segs)
        return out

    def _score(self, games: list[list[Segment]]) -> None:
        """Critic values for every segment: one batched forward per (learner, critic)."""
        torch = self.torch
        groups: dict[tuple[int, bool], list[Segment]] = {}
        for segs in games:
            for s in segs:
                groups.setdefault((s.critic, s.owner is not None), []).append(s)
        with torch.no_grad():
            for (li, own), segs in groups.items():
                agent = self.learners[li]
                x = torch.as_tensor(np.concatenate([s.obs for s in segs]), device=agent.device)
                v = (agent.value(x) if own else agent.opp_value(x)).cpu().numpy()
                at = 0
                for s in segs:
                    s.values = v[at : at + len(s.rewards)]
                    at += len(s.rewards)

    def advantages(self, games: list[list[Segment]]) -> None:
        cfg = self.config
        if cfg.advantage not in ("gae", "group", "trajectory"):
            raise ArenaError(
                f"trainer '{self.name}': advantage must be 'gae', 'group' or 'trajectory', got {cfg.advantage!r}"
            )
        self._score(games)
        for segs in games:
            for s in segs:
                raw = gae(s.rewards, s.values, cfg.gamma, cfg.lam)
                s.targets = raw + s.values
                s.advantages = raw
        if cfg.advantage == "group":
            group_advantages([s for segs in games for s in segs], cfg.gamma)
        elif cfg.advantage == "trajectory":
            for segs in games:
                for s in segs:
                    s.advantages = np.full(len(s.rewards), float(np.sum(s.rewards)) - float(s.values[0]))
        if cfg.whiten:
            allv = np.concatenate([s.advantages for segs in games for s in segs])
            mu, sd = allv.mean(), allv.std() + 1e-8
            for segs in games:
                for s in segs:
                    s.advantages = (s.advantages - mu) / sd
        for segs in games:
            for s in segs:
                s.shaped = s.advantages
        self.shape_advantages(games)

    def shape_advantages(self, games: list[list[Segment]]) -> None:
        """Hook: rewrite ``seg.shaped`` (the advantage the actor is trained on). Naive: unchanged."""

    # -- update ----------------------------------------------------------------------------------
    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        games = self.segments(trajectories)
        if not games:
            raise ArenaError(
                f"trainer '{self.name}': no trajectory has a seat played by a learner "
                f"({', '.join(a.name for a in self.learners)})"
            )
        self.advantages(games)
        metrics: dict[str, float] = {}
        for li, agent in enumerate(self.learners):
            own = [s for segs in games for s in segs if s.owner == li]
            opp = [s for segs in games for s in segs if s.owner is None and s.critic == li]
            if not own:
                continue
            m = self._update_learner(li, own, opp)
            metrics.update({f"{agent.name}/{k}": v for k, v in m.items()})
        self.updates += 1
        return metrics

    # -- resume --------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Optimiser moments, the minibatch generator and the update count (weights live in the agents)."""
        return {
            "optimizers": [o.state_dict() for o in self.optimizers],
            "generator": self.generator.get_state(),
            "updates": self.updates,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for opt, s in zip(self.optimizers, state["optimizers"]):
            opt.load_state_dict(s)
        self.generator.set_state(state["generator"])
        self.updates = int(state["updates"])

    def _cat(self, segs: list[Segment], attr: str, dtype=None):
        a = np.concatenate([getattr(s, attr) for s in segs])
        return self.torch.as_tensor(a if dtype is None else a.astype(dtype), device=self.learners[0].device)

    def _update_learner(self, li: int, own: list[Segment], opp: list[Segment]) -> dict[str, float]:
        torch, cfg = self.torch, self.config
        agent, opt = self.learners[li], self.optimizers[li]
        x, mask = self._cat(own, "obs"), self._cat(own, "mask")
        act = self._cat(own, "actions").long()
        adv = self._cat(own, "shaped", np.float32)
        ret = self._cat(own, "targets", np.float32)
        old = self._cat(own, "log_probs", np.float32)
        with torch.no_grad():
            current = agent.log_probs(x, mask).gather(1, act[:, None]).squeeze(1)
        old = torch.where(torch.isnan(old), current, old)
        weight_stats: dict[str, float] = {}
        if any(s.staleness for s in own):  # decoupled PPO (AReaL): clip around pi_prox, reweight pi_behaviour
            old, adv, weight_stats = self._decoupled(own, old, current, adv)
        ox = self._cat(opp, "obs") if opp else None
        oret = self._cat(opp, "targets", np.float32) if opp else None
        n = len(act)
        stats = {"pg_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "clip_frac": 0.0}
        count = 0
        for _ in range(cfg.epochs):
            perm = torch.randperm(n, generator=self.generator)
            for idx in perm.chunk(max(1, cfg.minibatches)):
                logp_all = agent.log_probs(x[idx], mask[idx])
                logp = logp_all.gather(1, act[idx, None]).squeeze(1)
                ratio = (logp - old[idx]).exp()
                a = adv[idx]
                if cfg.clip is None:
                    pg = -(ratio * a).mean()
                    clipped = torch.zeros(())
                else:
                    pg = -torch.min(ratio * a, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * a).mean()
                    clipped = ((ratio - 1).abs() > cfg.clip).float().mean()
                p = logp_all.exp()
                ent = -(p * logp_all.masked_fill(~mask[idx], 0.0)).sum(-1).mean()
                vloss = (agent.value(x[idx]) - ret[idx]).pow(2).mean()
                if ox is not None:
                    vloss = vloss + (agent.opp_value(ox) - oret).pow(2).mean()
                if self.updates < cfg.warmup:
                    pg, ent = pg.detach(), ent.detach()
                loss = pg + cfg.value_coef * vloss - cfg.entropy * ent
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(agent.net.parameters(), cfg.grad_clip)
                opt.step()
                for k, v in (("pg_loss", pg), ("value_loss", vloss), ("entropy", ent), ("clip_frac", clipped)):
                    stats[k] += float(v.detach())
                count += 1
        out = {k: v / max(1, count) for k, v in stats.items()}
        out["return"] = float(np.mean([s.rewards.sum() for s in own]) / cfg.reward_scale)
        out["advantage"] = float(adv.mean())
        out.update(weight_stats)
        return out

    def _decoupled(self, own: list[Segment], behaviour, current, adv):
        """For decisions of stale games: the proximal policy ``pi_prox`` is the learner now (before
        this update), the clip is around it, and the advantage carries the truncated importance
        weight ``w = min(pi_prox / pi_behaviour, is_cap)``. Fresh games (staleness 0) keep
        ``pi_prox = pi_behaviour`` and ``w = 1``: exactly the synchronous update."""
        torch = self.torch
        stale = torch.as_tensor(
            np.concatenate([np.full(len(s.actions), s.staleness > 0) for s in own]), device=adv.device
        )
        raw = torch.exp(current - behaviour)
        w = torch.where(stale, raw.clamp(max=self.config.is_cap), torch.ones_like(raw))
        prox = torch.where(stale, current, behaviour)
        sel = raw[stale]
        stats = {
            "is_weight_mean": float(w[stale].mean()),
            "is_weight_max": float(sel.max()),
            "is_capped_frac": float((sel > self.config.is_cap).float().mean()),
            "kl_behaviour": float((behaviour - current)[stale].mean()),
        }
        return prox, adv * w, stats

    def save(self, directory: str | Path) -> None:
        for agent in self.learners:
            agent.save(Path(directory) / agent.name)


def make_ppo(game: Game, learners: Sequence[Any], **params: Any) -> PPOTrainer:
    return PPOTrainer(game, learners, **params)


@hookimpl
def arena_trainers() -> list[TrainerEntry]:
    return [
        TrainerEntry(
            "ppo",
            make_ppo,
            "independent PPO (clipped surrogate, GAE critic) for neural agents",
            dataclasses.asdict(PGConfig()),
        )
    ]
