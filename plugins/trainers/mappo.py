"""``mappo``: PPO with a centralised critic (Yu, Velu, Vinitsky, Gao, Wang, Bayen, Wu, *The
Surprising Effectiveness of PPO in Cooperative Multi-Agent Games*, arXiv 2103.01955).

The actors are the learners' own networks, acting on their own observations, updated exactly as
by ``ppo``; only the advantages differ: they come from one critic the trainer owns, shared by
all seats, that reads the joint observation (every seat's observation tensor of the round) plus
the seat's one-hot id ("agent-specific global state"). It exists during training only, so play
stays decentralised. For simultaneous-move games, where every seat decides every round.

The critic's weights and optimiser are part of ``state_dict``, so a resumed run is exact.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import Game
from arena.hookspecs import hookimpl
from arena.trainer import TrainerEntry, Trajectory

from .ppo import PGConfig, PPOTrainer, Segment


class MAPPOTrainer(PPOTrainer):
    name = "mappo"

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        super().__init__(game, learners, **params)
        if not game.spec.simultaneous:
            raise ArenaError(f"trainer 'mappo' is for simultaneous-move games; '{game.spec.full_name}' is not one")
        nn = self.torch.nn
        self.n = game.spec.num_players
        size = self.n * int(np.prod(game.spec.observation_shape)) + self.n
        self.torch.manual_seed(self.config.seed)
        self.critic = nn.Sequential(nn.Linear(size, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
        self.critic_opt = self.torch.optim.Adam(self.critic.parameters(), lr=self.config.lr)
        self._batch: list[tuple[np.ndarray, Segment]] = []

    def joint_inputs(self, segs: list[Segment]) -> list[np.ndarray]:
        """Per seat, its critic input at every round: all seats' observations and its one-hot id."""
        if len(segs) != self.n or len({len(s.rewards) for s in segs}) != 1:
            raise ArenaError("trainer 'mappo': every seat must decide in every round (simultaneous moves)")
        t = len(segs[0].rewards)
        joint = np.concatenate([s.obs.reshape(t, -1) for s in segs], axis=1)
        eye = np.eye(self.n, dtype=np.float32)
        return [np.concatenate([joint, np.repeat(eye[s.seat][None], t, axis=0)], axis=1) for s in segs]

    def _score(self, games: list[list[Segment]]) -> None:
        """Values from the centralised critic (kept for its own fit after the actors' update)."""
        torch = self.torch
        self._batch = [(x, s) for segs in games for x, s in zip(self.joint_inputs(segs), segs)]
        with torch.no_grad():
            for x, s in self._batch:
                s.values = self.critic(torch.as_tensor(x, dtype=torch.float32)).squeeze(-1).numpy().astype(float)

    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        metrics = super().update(trajectories)
        torch, cfg = self.torch, self.config
        x = torch.as_tensor(np.concatenate([x for x, _ in self._batch]), dtype=torch.float32)
        y = torch.as_tensor(np.concatenate([s.targets for _, s in self._batch]), dtype=torch.float32)
        loss = torch.zeros(())
        for _ in range(cfg.epochs):
            loss = (self.critic(x).squeeze(-1) - y).pow(2).mean()
            self.critic_opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.critic.parameters(), cfg.grad_clip)
            self.critic_opt.step()
        metrics["central_value_loss"] = float(loss.detach())
        return metrics

    def state_dict(self) -> dict[str, Any]:
        out = super().state_dict()
        out.update(critic=self.critic.state_dict(), critic_opt=self.critic_opt.state_dict())
        return out

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.critic.load_state_dict(state["critic"])
        self.critic_opt.load_state_dict(state["critic_opt"])


def make_mappo(game: Game, learners: Sequence[Any], **params: Any) -> MAPPOTrainer:
    return MAPPOTrainer(game, learners, **params)


@hookimpl
def arena_trainers() -> list[TrainerEntry]:
    return [
        TrainerEntry(
            "mappo",
            make_mappo,
            "MAPPO: PPO actors with one centralised critic over the joint observation (simultaneous games)",
            dataclasses.asdict(PGConfig()),
        )
    ]
