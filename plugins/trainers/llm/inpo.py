"""``inpo``: Iterative Nash Policy Optimization (Zhang et al., arXiv 2407.00617).

No-regret online mirror descent against itself on the KL-regularised preference game: the
target of one iteration is

    π_{t+1}(y) ∝ π_ref(y)^{ητ} · π_t(y)^{1−ητ} · exp(η P(y ≻ π_t))

fitted with a pairwise loss, so no per-response win rate has to be estimated. One ``update``:

1. for every game the league played for the learner, a group of ``samples`` responses to the
   same prompt (:func:`preference_text.sampled_groups`: the recorded one plus new ones from π_t);
2. the judge compares every pair (y, y') of a group: margin m ∈ [−1, 1] (a sampled label is ±1);
3. ``epochs`` optimiser steps on ``(h_t(y, y') − η·m/2)²`` with
   ``h_t = log π(y)/π(y') − ητ·log π_ref(y)/π_ref(y') − (1−ητ)·log π_t(y)/π_t(y')``.

With a ±1 label this is the paper's ``(h_t(y_w, y_l) − η/2)²``; its minimiser over the label's
randomness is ``h_t(y, y') = η(P(y ≻ y') − ½)``, whose expectation over y' ~ π_t is the OMD step's
``η(P(y ≻ π_t) − P(y' ≻ π_t))``. π_ref is the learner at the start of training (a frozen copy);
π_t the weights at the start of each update. The last iterate converges to the regularised game's
equilibrium, which tends to the von Neumann winner as τ → 0.

``reference_every: N`` moves π_ref to the current weights every N updates: the regularised
game's equilibrium is then recomputed around the last one, and the sequence of these fixed
points converges to the unregularised game's equilibrium (the reference-reset scheme of R-NaD,
Perolat et al., *Mastering the Game of Stratego with Model-Free Multiagent Reinforcement
Learning*, arXiv 2206.15378; magnetic mirror descent with a moving magnet, Sokota et al.,
arXiv 2206.05825). With a fixed π_ref the last iterate stops at the regularised equilibrium,
whose distance to the winner is of order τ (on ``cyclic_preference`` from a uniform π_ref: L1
0.07 at τ = 0.02), and a smaller τ slows the contraction (rate about ητ per update) more than
sampling noise allows.
"""

from __future__ import annotations

from typing import Any, Sequence

from arena.errors import ArenaError
from arena.game import Game
from arena.loading import load_judge
from arena.rng import derive_seed
from arena.trainer import Trajectory

from .base import LLMTrainer
from .preference_text import pair_margins, response_logprobs, sampled_groups


class INPO(LLMTrainer):
    name = "inpo"
    defaults = {"eta": 4.0, "tau": 0.02, "samples": 4, "epochs": 4, "judge": "outcome", "reference_every": 0}

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        super().__init__(game, learners, **params)
        if int(self.p["samples"]) < 2:
            raise ArenaError(
                f"trainer 'inpo': samples must be at least 2 responses per prompt, got {self.p['samples']}"
            )
        eta, tau = float(self.p["eta"]), float(self.p["tau"])
        if not (eta > 0 and 0 <= eta * tau <= 1):
            raise ArenaError(f"trainer 'inpo': needs eta > 0 and 0 <= eta*tau <= 1, got eta={eta}, tau={tau}")
        if int(self.p["reference_every"]) < 0:
            raise ArenaError(f"trainer 'inpo': reference_every must be >= 0, got {self.p['reference_every']}")
        judge = self.p["judge"]
        self.judge = load_judge(dict(judge) if isinstance(judge, dict) else judge, game)
        self.reference = self.model.frozen_copy()

    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        import torch

        every = int(self.p["reference_every"])
        if every and self.updates and self.updates % every == 0:
            self.model.refresh(self.reference)  # the magnet moves to the current iterate
        seed = derive_seed(int(self.p["seed"]), "inpo", self.updates)
        groups, skipped = sampled_groups(self.game, self.agent, trajectories, int(self.p["samples"]), seed)
        margins = pair_margins(self.judge, groups)
        trajs = [c.trajectory for g in groups for c in g]
        first, i_idx, j_idx, target = 0, [], [], []
        for grp, m in zip(groups, margins):
            for (i, j), x in m.items():
                i_idx.append(first + i)
                j_idx.append(first + j)
                target.append(x)
            first += len(grp)
        self.updates += 1
        if not i_idx:
            return {"inpo/pairs": 0.0, "inpo/skipped_games": float(skipped)}
        eta, r = float(self.p["eta"]), float(self.p["eta"]) * float(self.p["tau"])
        with torch.no_grad():
            now = response_logprobs(self.model, self.agent, trajs, grad=False)
            ref = response_logprobs(self.model, self.agent, trajs, grad=False, ref=self.reference)
        ii, jj = torch.tensor(i_idx, device=now.device), torch.tensor(j_idx, device=now.device)
        anchor = r * (ref[ii] - ref[jj]) + (1 - r) * (now[ii] - now[jj])
        goal = torch.tensor(target, dtype=now.dtype, device=now.device) * eta / 2
        losses = []
        for _ in range(int(self.p["epochs"])):
            logp = response_logprobs(self.model, self.agent, trajs, grad=True)
            loss = ((logp[ii] - logp[jj] - anchor - goal) ** 2).mean()
            self.model.step(loss)
            losses.append(float(loss.detach()))
        self.model.sync()
        return {
            "inpo/loss_first": losses[0],
            "inpo/loss_last": losses[-1],
            "inpo/pairs": float(len(i_idx)),
            "inpo/mean_abs_margin": float(sum(abs(x) for x in target) / len(target)),
            "inpo/skipped_games": float(skipped),
        }

    def extra_state(self) -> dict[str, Any]:
        return {"judge": self.judge.state_dict(), "reference": self.reference.state_dict()}

    def load_extra_state(self, state: dict[str, Any]) -> None:
        self.judge.load_state_dict(state.get("judge", {}))
        if state.get("reference"):
            self.reference.load_state_dict(state["reference"])


def make_inpo(game: Game, learners: Sequence[Any], **params: Any) -> INPO:
    return INPO(game, learners, **params)
