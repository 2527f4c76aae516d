"""``arenarl``: tournament-ranked policy gradient (ArenaRL, arXiv 2601.06487).

For tasks with no verifiable reward, rollouts are scored *against each other*. One ``update``:

1. every game the league played for the learner is a task instance; the learner's seat in it
   is branched into a **group** of ``group`` rollouts from the same start state (the recorded
   rollout, which is the anchor, plus ``group − 1`` new ones sampled by the current policy,
   :func:`rollout.branch`: same deal, same prompt);
2. each group is ranked by the configured ``topology`` (:mod:`arena.evaluation.judge_ranking`: anchor, seeded
   single elimination, Swiss, round robin, adaptive) with the configured **judge**
   (:mod:`arena.judge`; every group's pairings of a round go to the judge in one call);
3. rank → reward ``1 − k/(N−1)`` → z-scored advantage (N = 4: [1.16, 0.39, −0.39, −1.16]);
   with ``advantage: margin`` the same comparisons' margins instead, fitted in least squares
   to one strength per rollout (:func:`arena.evaluation.judge_ranking.margin_strengths`) and
   z-scored — a rank spaces rollouts evenly however far apart they are, so a group with one
   good rollout among near-equal ones gives the near-equal ones large, noise-ordered advantages;
   with ``scoring: pointwise`` the judge scores each rollout alone and the advantage is the
   group-normalised score (GRPO; the baseline ArenaRL argues against, and — with a noiseless
   ``scorer`` judge — the "true scalar reward" reference); a group whose every comparison
   is a tie gets zero advantages (its order would only be the bracket's tie-breaking);
4. every decision of a rollout gets its advantage in the shared clipped policy-gradient step of
   the LLM trainers (:meth:`LLMTrainer.policy_gradient_step`; ``kl`` > 0 adds a KL to the
   initial policy).

The learner must hold every seat that decides after its first decision (one-player tasks, or
self-play); other games are skipped and counted (``arenarl/skipped_games``). A judge that
crashes or returns NaN stops the update with one line (:class:`arena.judge.JudgeError`); the
league keeps every committed step.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.evaluation.judge_ranking import (
    ADVANTAGE_MAPS,
    TOPOLOGIES,
    group_zscore,
    rank_groups,
    ranking_advantages,
)
from arena.game import Game
from arena.judge import Candidate, checked_compare, checked_score
from arena.loading import load_judge
from arena.trainer import Trajectory

from .base import PG_DEFAULTS, LLMTrainer
from .preference_text import sampled_groups
from .tokens import learner_decisions

SCORING = ("rank", "pointwise")


class ArenaRL(LLMTrainer):
    name = "arenarl"
    defaults = {
        **PG_DEFAULTS,
        "group": 8,
        "judge": "outcome",
        "topology": "single_elimination",
        "scoring": "rank",
        "budget": None,
        "advantage": "rank",
        "repeats": 1,
    }

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        super().__init__(game, learners, **params)
        if int(self.p["group"]) < 2:
            raise ArenaError(
                f"trainer 'arenarl': group must be at least 2 rollouts per task instance, got {self.p['group']}"
            )
        if self.p["topology"] not in TOPOLOGIES:
            raise ArenaError(
                f"trainer 'arenarl': topology must be one of {', '.join(TOPOLOGIES)}, not {self.p['topology']!r}"
            )
        if self.p["scoring"] not in SCORING:
            raise ArenaError(
                f"trainer 'arenarl': scoring must be one of {', '.join(SCORING)}, not {self.p['scoring']!r}"
            )
        if self.p["advantage"] not in ADVANTAGE_MAPS:
            raise ArenaError(
                f"trainer 'arenarl': advantage must be one of {', '.join(ADVANTAGE_MAPS)}, not {self.p['advantage']!r}"
            )
        judge = self.p["judge"]
        self.judge = load_judge(dict(judge) if isinstance(judge, dict) else judge, game)
        if self.p["scoring"] == "pointwise" and not self.judge.pointwise:
            raise ArenaError(f"trainer 'arenarl': judge '{self.judge.name}' only compares pairs; use scoring: rank")

    def groups(self, trajectories: Sequence[Trajectory]) -> tuple[list[list[Candidate]], int]:
        """One group per game the learner played (its first seat): the recorded rollout first."""
        seed = int(self.p["seed"]) * 1_000_003 + self.updates
        return sampled_groups(self.game, self.agent, trajectories, int(self.p["group"]), seed)

    def advantages(self, groups: list[list[Candidate]]) -> tuple[list[np.ndarray], int]:
        """Per group, the advantage of each member; and the comparisons spent."""
        if self.p["scoring"] == "pointwise":
            flat = [c for g in groups for c in g]
            scores = checked_score(self.judge, flat)
            out, k = [], 0
            for g in groups:
                out.append(group_zscore(scores[k : k + len(g)]))
                k += len(g)
            return out, 0

        def compare(batch: Sequence[tuple[int, int, int]]) -> list[float]:
            return checked_compare(self.judge, [(groups[g][i], groups[g][j]) for g, i, j in batch])

        knobs = (
            {"budget": int(self.p["budget"])}
            if self.p["budget"] is not None and self.p["topology"] == "adaptive"
            else {}
        )
        ranks = rank_groups(
            [len(g) for g in groups],
            compare,
            str(self.p["topology"]),
            seed=int(self.p["seed"]) * 7_919 + self.updates,
            repeats=int(self.p["repeats"]),
            **knobs,
        )
        # a group the judge could not tell apart at all (every margin 0) carries no signal: its
        # order would only be the bracket's tie-breaking, so it gets zero advantages
        kind = str(self.p["advantage"])
        return (
            [ranking_advantages(r, len(g), kind) for r, g in zip(ranks, groups)],
            sum(r.comparisons for r in ranks),
        )

    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        groups, skipped = self.groups(trajectories)
        if not groups:
            self.updates += 1
            return {"arenarl/groups": 0.0, "arenarl/skipped_games": float(skipped)}
        advs, spent = self.advantages(groups)
        trajs, adv_of = [], []
        for g, a in zip(groups, advs):
            for c, x in zip(g, a):
                trajs.append(c.trajectory)
                adv_of.append(float(x))
        decisions = learner_decisions(trajs, self.agent)
        stats = self.policy_gradient_step(decisions, [adv_of[d.traj] for d in decisions])
        out = {f"arenarl/{k}": v for k, v in stats.items()}
        out.update(
            {
                "arenarl/groups": float(len(groups)),
                "arenarl/group_size": float(np.mean([len(g) for g in groups])),
                "arenarl/comparisons": float(spent),
                "arenarl/skipped_games": float(skipped),
            }
        )
        out.update({f"arenarl/judge_{k}": float(v) for k, v in self.judge.stats().items()})
        return out

    def extra_state(self) -> dict[str, Any]:
        return {"judge": self.judge.state_dict()}

    def load_extra_state(self, state: dict[str, Any]) -> None:
        self.judge.load_state_dict(state.get("judge", {}))


def make_arenarl(game: Game, learners: Sequence[Any], **params: Any) -> ArenaRL:
    return ArenaRL(game, learners, **params)
