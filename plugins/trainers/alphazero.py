"""``alphazero``: fits an ``alphazero`` agent's network to its own search (Silver et al., Science
2018): the actor to the visit distribution ``pi`` of every searched decision (cross-entropy
over the legal actions), the critic to the game's outcome ``z`` for the player who decided
(squared error), plus L2 weight decay.

The games arrive from the league (self-play or any opponents: only the learner's decisions are
targets). They go into a FIFO replay buffer of ``buffer`` positions; each update takes
``steps`` minibatches of ``batch`` from it. The buffer, the optimiser's moments, the minibatch
generator and the update count are the trainer's ``state_dict``, so a killed league resumes to
the same numbers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import Game
from arena.hookspecs import hookimpl
from arena.trainer import Trainer, TrainerEntry, Trajectory


@dataclass
class AZConfig:
    lr: float = 3e-3
    weight_decay: float = 1e-4
    batch: int = 128
    steps: int = 20
    buffer: int = 8192
    seed: int = 0


class AlphaZeroTrainer(Trainer):
    name = "alphazero"

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        from arena.plugins.agents.alphazero import AlphaZeroAgent
        from arena.plugins.agents.neural import require_torch

        self.torch = torch = require_torch()
        known = {f.name for f in fields(AZConfig)}
        if set(params) - known:
            raise ArenaError(
                f"trainer 'alphazero' has no parameter {sorted(set(params) - known)}; parameters: {sorted(known)}"
            )
        if len(learners) != 1 or not isinstance(learners[0], AlphaZeroAgent):
            raise ArenaError(f"trainer 'alphazero' trains one alphazero agent, got {[a.name for a in learners]}")
        self.config, self.game, self.learners = AZConfig(**params), game, list(learners)
        self.agent = learners[0]
        net = self.agent.net.net
        self.optimizer = torch.optim.Adam(net.parameters(), lr=self.config.lr, weight_decay=self.config.weight_decay)
        self.generator = torch.Generator().manual_seed(self.config.seed)
        self.buffer: dict[str, Any] = {}
        self.updates = 0

    def positions(self, trajectories: Sequence[Trajectory]) -> dict[str, np.ndarray]:
        """The learner's searched decisions: observation, legal mask, visit distribution, outcome."""
        obs, mask, pi, z = [], [], [], []
        k = self.game.spec.num_distinct_actions
        for traj in trajectories:
            for step in traj.steps:
                if traj.seats[step.player] != self.agent.name or "pi" not in step.extra:
                    continue
                obs.append(np.asarray(step.observation.tensor, dtype=np.float32).reshape(-1))
                m = np.zeros(k, dtype=bool)
                m[step.observation.legal_actions] = True
                mask.append(m)
                pi.append(np.asarray(step.extra["pi"], dtype=np.float32))
                z.append(float(traj.returns[step.player]))
        if not obs:
            return {}
        return {"obs": np.stack(obs), "mask": np.stack(mask), "pi": np.stack(pi), "z": np.asarray(z, np.float32)}

    def _remember(self, new: dict[str, np.ndarray]) -> None:
        torch = self.torch
        for key, v in new.items():
            t = torch.as_tensor(v)
            old = self.buffer.get(key)
            self.buffer[key] = (t if old is None else torch.cat([old, t]))[-self.config.buffer :]

    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        torch, agent = self.torch, self.agent.net
        self._remember(self.positions(trajectories))
        size = len(self.buffer.get("z", []))
        shape = (-1, *agent.shape)
        stats = {"policy_loss": 0.0, "value_loss": 0.0}
        for _ in range(self.config.steps if size else 0):
            idx = torch.randint(0, size, (min(self.config.batch, size),), generator=self.generator)
            x = self.buffer["obs"][idx].reshape(shape)
            logp = agent.log_probs(x, self.buffer["mask"][idx])
            target = self.buffer["pi"][idx]
            ploss = -(target * logp.masked_fill(target <= 0, 0.0)).sum(-1).mean()
            vloss = (agent.value(x) - self.buffer["z"][idx]).pow(2).mean()
            self.optimizer.zero_grad()
            (ploss + vloss).backward()
            self.optimizer.step()
            stats["policy_loss"] += float(ploss.detach()) / self.config.steps
            stats["value_loss"] += float(vloss.detach()) / self.config.steps
        self.updates += 1
        return {**stats, "buffer": float(size)}

    def state_dict(self) -> dict[str, Any]:
        return {
            "optimizer": self.optimizer.state_dict(),
            "generator": self.generator.get_state(),
            "buffer": dict(self.buffer),
            "updates": self.updates,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        self.buffer = dict(state["buffer"])
        self.updates = int(state["updates"])

    def save(self, directory: str | Path) -> None:
        self.agent.save(Path(directory) / self.agent.name)


def make_alphazero_trainer(game: Game, learners: Sequence[Any], **params: Any) -> AlphaZeroTrainer:
    return AlphaZeroTrainer(game, learners, **params)


@hookimpl
def arena_trainers() -> list[TrainerEntry]:
    return [
        TrainerEntry(
            "alphazero",
            make_alphazero_trainer,
            "AlphaZero: fit an alphazero agent's network to its search (visit counts, outcomes), replay buffer",
            asdict(AZConfig()),
        )
    ]
