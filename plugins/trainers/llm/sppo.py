"""``sppo``: Self-Play Preference Optimization with preferences read from game outcomes.

One ``update`` is one SPPO iteration with a frozen pi_t (the weights at its start):

1. the prompts x are the learner's recorded decisions (their states are rebuilt by
   :func:`rollout.replay`);
2. per decision, K candidate responses (the legal actions' texts; all of them when
   ``candidates`` is 0 or at least the number of legal actions, else K sampled from pi_t);
3. P̂(y ≻ pi_t | x) = (1 + Q(x, y) / U) / 2 with Q estimated by ``rollouts`` playouts of pi_t
   against itself after playing y, U the game's largest absolute payoff (the per-decision
   form of the note, §2), averaged over every recorded state that shows the same prompt;
4. ``epochs`` Adam steps on the SPPO regression
   ``(log pi_theta(y|x) - log pi_t(y|x) - eta (P̂ - 1/2))^2`` over all (x, y), with log pi the
   agent's action log-probability (the label softmax in scored mode; the label's sequence
   log-prob in generated mode).

Games without outcomes would need a judge agent for P; this trainer needs a turn-based game
with returns, which is what the acceptance (Kuhn poker) uses.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import Game
from arena.trainer import Trajectory

from .base import LLMTrainer
from .rollout import playout_values, replay


class SPPO(LLMTrainer):
    name = "sppo"
    defaults = {"eta": 1.0, "candidates": 0, "rollouts": 4, "epochs": 8}

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        super().__init__(game, learners, **params)
        if game.spec.num_players != 2 or not game.spec.zero_sum:
            raise ArenaError("trainer 'sppo' reads preferences from outcomes of a two-player zero-sum game")
        if int(self.p["rollouts"]) < 1:
            raise ArenaError("trainer 'sppo': rollouts must be at least 1")
        self.scale = max(abs(game.spec.min_utility), abs(game.spec.max_utility)) or 1.0

    def _candidates(self, obs: Any, rng: np.random.Generator) -> list[int]:
        k = int(self.p["candidates"])
        acts = list(obs.legal_actions)
        if k <= 0 or k >= len(acts):
            return acts
        pol = self.agent.policy(obs) if self.agent.mode == "scored" else {a: 1 / len(acts) for a in acts}
        w = np.array([pol[a] for a in acts]) + 1e-9
        return [acts[i] for i in rng.choice(len(acts), size=k, replace=False, p=w / w.sum())]

    def preferences(self, trajectories: Sequence[Trajectory]) -> tuple[dict, int]:
        """{(prompt text, label tuple): (observation, {action: P̂})} and the number of games skipped."""
        rng = np.random.default_rng([int(self.p["seed"]), self.updates])
        starts, keys, seen = [], [], {}
        skipped = 0
        m = int(self.p["rollouts"])
        for traj in trajectories:
            states = replay(self.game, traj)
            if states is None:
                skipped += 1
                continue
            for st, step in zip(states, traj.steps):
                if traj.seats[step.player] != self.agent.name or step.observation.decision != "choice":
                    continue
                obs = step.observation
                key = (obs.text, tuple(obs.action_labels))
                seen.setdefault(key, obs)
                for a in self._candidates(obs, rng):
                    for _ in range(m):
                        starts.append((st, a, step.player))
                        keys.append((key, a))
        values = playout_values(self.game, starts, self.agent, seed=int(rng.integers(2**31))) if starts else []
        sums: dict[tuple, list[float]] = {}
        for (key, a), v in zip(keys, values):
            sums.setdefault((key, a), []).append(v)
        prefs: dict[tuple, tuple[Any, dict[int, float]]] = {}
        for (key, a), vs in sums.items():
            q = float(np.mean(vs)) / self.scale
            prefs.setdefault(key, (seen[key], {}))[1][a] = (1.0 + q) / 2.0
        return prefs, skipped

    def _logpi(self, items: list[tuple[Any, dict[int, float]]], grad: bool, model: Any = None) -> Any:
        """log pi(y|x) for every (x, candidate y) in ``items`` order, one tensor."""
        import torch

        pairs, spans = [], []
        for obs, cands in items:
            prompt = self.agent.backend.prompt_ids(self.agent.prompts.build(obs))
            labels = obs.action_labels
            conts = [self.agent.backend.encode(self.agent.prompts.continuation(lbl)) for lbl in labels]
            spans.append((len(pairs), len(labels), [obs.legal_actions.index(a) for a in cands]))
            pairs += [(prompt, c) for c in conts]
        seq = self.model.logprobs(pairs, grad=grad, model=model)
        out = []
        for start, n, idx in spans:
            row = seq[start:start + n]
            if self.agent.mode == "scored":
                row = torch.log_softmax(row / max(self.agent.temperature, 1e-6), dim=0)
            out.append(row[torch.tensor(idx, dtype=torch.long)])
        return torch.cat(out)

    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        import torch

        prefs, skipped = self.preferences(trajectories)
        if not prefs:
            self.updates += 1
            return {"sppo/prompts": 0.0, "sppo/skipped_games": float(skipped)}
        items = [prefs[k] for k in sorted(prefs)]
        eta = float(self.p["eta"])
        target = torch.tensor([eta * (p - 0.5) for _, c in items for p in c.values()], dtype=torch.float32)
        with torch.no_grad():
            ref = self._logpi(items, grad=False)
        target = target.to(ref.device)  # device: cuda
        losses = []
        for _ in range(int(self.p["epochs"])):
            logp = self._logpi(items, grad=True)
            loss = ((logp - ref - target) ** 2).mean()
            self.model.step(loss)
            losses.append(float(loss.detach()))
        self.model.sync()
        self.updates += 1
        p_hat = [p for _, c in items for p in c.values()]
        return {"sppo/loss_first": losses[0], "sppo/loss_last": losses[-1], "sppo/prompts": float(len(items)),
                "sppo/p_hat_spread": float(np.mean(np.abs(np.array(p_hat) - 0.5))),
                "sppo/skipped_games": float(skipped)}


def make_sppo(game: Game, learners: Sequence[Any], **params: Any) -> SPPO:
    return SPPO(game, learners, **params)
