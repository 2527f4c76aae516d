"""``selfplay_rlvr``: SPIRAL-style self-play RL with verifiable game outcomes.

One shared policy plays every seat (or faces league snapshots: only the learner's own seats
are trained). Each of its decisions gets the Monte-Carlo return of its seat, plus
``invalid_penalty`` per invalid generation attempt, minus a baseline:

- ``baseline: rae`` — role-conditioned advantage estimation: one EMA per (game, role),
  ``b <- alpha*b + (1-alpha)*R``, read before it is updated, starting at 0 (SPIRAL, alpha 0.95);
- ``shared`` — the same EMA but one per game (the ablation: it mixes the seats' different
  expected returns, e.g. Kuhn's -1/18 for the first player);
- ``none`` — raw returns.

``credit`` (:mod:`.credit`) replaces that one return per game: ``trajectory`` (the default) is the
above; ``turn`` gives each decision its own turn-level advantage from a group of playouts from the
decision's state, ``critic`` from a learned value head on the policy model (turn-level GAE with
``gamma``/``lam``; ``baseline`` then only names the logged EMA).

The update is :func:`tokens.clipped_pg_update` (clipped ratio, ``epochs`` passes, optional KL to
the initial model). After SPIRAL (*SPIRAL: Self-Play on Zero-Sum Games Incentivizes Reasoning
via Multi-Agent Multi-Turn Reinforcement Learning*, arXiv 2506.24119).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import Game
from arena.trainer import Trajectory

from .base import PG_DEFAULTS, LLMTrainer
from .credit import CREDIT_DEFAULTS, Credit
from .tokens import learner_decisions

BASELINES = ("rae", "shared", "none")


class RoleBaseline:
    """EMA baselines keyed by (game, role) — or by game alone when ``per_role`` is False."""

    def __init__(self, alpha: float = 0.95, per_role: bool = True) -> None:
        self.alpha, self.per_role = alpha, per_role
        self.values: dict[str, float] = {}

    def key(self, game: str, role: int) -> str:
        return f"{game}/{role}" if self.per_role else game

    def advantage(self, game: str, role: int, ret: float) -> float:
        """``ret - b`` with the baseline read before it moves (then ``b`` is updated)."""
        k = self.key(game, role)
        b = self.values.get(k, 0.0)
        self.values[k] = self.alpha * b + (1 - self.alpha) * ret
        return ret - b


class SelfPlayRLVR(LLMTrainer):
    name = "selfplay_rlvr"
    defaults = {
        **PG_DEFAULTS,
        **CREDIT_DEFAULTS,
        "baseline": "rae",
        "alpha": 0.95,
        "epochs": 2,
        "invalid_penalty": -1.5,
    }

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        super().__init__(game, learners, **params)
        if self.p["baseline"] not in BASELINES:
            raise ArenaError(
                f"trainer 'selfplay_rlvr': baseline must be one of {', '.join(BASELINES)}, not {self.p['baseline']!r}"
            )
        if game.spec.num_players > 2:  # one player: plain RL on the game's return (e.g. a bandit)
            raise ArenaError("trainer 'selfplay_rlvr' needs a one- or two-player game")
        self.baseline = RoleBaseline(float(self.p["alpha"]), per_role=self.p["baseline"] == "rae")
        self.credit = Credit(self.name, game, self.agent, self.model, self.p)

    def returns(self, trajectories: Sequence[Trajectory]) -> dict[tuple[int, int], float]:
        """Shaped return per (trajectory, seat of the learner): outcome + invalid penalties."""
        out: dict[tuple[int, int], float] = {}
        pen = float(self.p["invalid_penalty"])
        for t, traj in enumerate(trajectories):
            for p, name in enumerate(traj.seats):
                if name != self.agent.name:
                    continue
                bad = sum(int(s.extra.get("invalid_attempts", 0) or 0) for s in traj.for_player(p))
                out[(t, p)] = float(traj.returns[p]) + pen * bad
        return out

    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        game = self.game.spec.full_name
        rets = self.returns(trajectories)
        adv_of: dict[tuple[int, int], float] = {}
        for key in sorted(rets):  # trajectory order, then seat: deterministic EMA updates
            ret = rets[key]
            adv_of[key] = ret if self.p["baseline"] == "none" else self.baseline.advantage(game, key[1], ret)
        decisions = learner_decisions(trajectories, self.agent)
        credit_stats: dict[str, float] = {}
        if self.credit.mode == "trajectory":
            advantages = [adv_of[(d.traj, d.player)] for d in decisions]
        else:
            advantages, credit_stats = self.credit.advantages(trajectories, decisions, float(self.p["invalid_penalty"]))
        stats = self.policy_gradient_step(decisions, advantages)
        out = {f"rlvr/{k}": v for k, v in stats.items()}
        out.update(credit_stats)
        for role in range(self.game.spec.num_players):
            r = [v for (t, p), v in rets.items() if p == role]
            if r:
                out[f"rlvr/return_p{role}"] = float(np.mean(r))
            out[f"rlvr/baseline_p{role}"] = self.baseline.values.get(self.baseline.key(game, role), 0.0)
        inv = [d.invalid for d in decisions]
        out["rlvr/invalid_rate"] = float(np.mean([x > 0 for x in inv])) if inv else 0.0
        return out

    def extra_state(self) -> dict[str, Any]:
        return {"baseline": dict(self.baseline.values), "credit": self.credit.state_dict()}

    def load_extra_state(self, state: dict[str, Any]) -> None:
        self.baseline.values = dict(state.get("baseline", {}))
        self.credit.load_state_dict(state.get("credit", {}))


def make_selfplay_rlvr(game: Game, learners: Sequence[Any], **params: Any) -> SelfPlayRLVR:
    return SelfPlayRLVR(game, learners, **params)
