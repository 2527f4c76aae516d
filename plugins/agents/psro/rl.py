"""PSRO's RL oracle for any game: PPO best responses trained on the match runner, sampled payoffs.

Why the match runner and not a bespoke loop: rollouts then come from :func:`arena.playing.match.play_games`
(batched, seeded per game, the same code every other part of arena plays with) and the update is
the ``ppo`` trainer plugin through the trainer contract — the oracle only decides who sits where.
A best response of player ``p`` is a fresh ``neural`` agent in seat ``p`` facing, in every other
seat, a :class:`MixtureAgent` that draws one population member per game from that player's
meta-strategy (the original PSRO's RL oracle; OpenSpiel ``rl_oracle.py``). Meta-game entries are
means over ``payoff_games`` sampled games, so everything downstream is noisy.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.agent import Agent
from arena.errors import ArenaError
from arena.game import Game
from arena.mixture import MixtureAgent
from arena.playing.match import play_games


class RLOracle:
    """PPO best responses (``neural`` agents trained by the ``ppo`` trainer) and sampled payoffs."""

    exact = False

    def __init__(
        self,
        game: Game,
        seed: int = 0,
        br_games: int = 2000,
        br_batch: int = 100,
        payoff_games: int = 200,
        hidden: int = 64,
        ppo: dict[str, Any] | None = None,
    ) -> None:
        if game.spec.text_decisions:
            raise ArenaError(f"PSRO oracle 'ppo' needs choice decisions; '{game.spec.full_name}' has free text")
        self.game = game
        self.num_players = game.spec.num_players
        self.seed = int(seed)
        self.br_games, self.br_batch, self.payoff_games = int(br_games), int(br_batch), int(payoff_games)
        self.hidden = int(hidden)
        self.ppo = dict(ppo or {})
        self.trained = 0
        self.history: list[dict[str, float]] = []

    def _neural(self, name: str, seed: int) -> Agent:
        from arena.plugins.agents.neural import NeuralAgent

        agent = NeuralAgent(self.game, hidden=self.hidden, seed=seed)
        agent.name = name
        return agent

    def initial(self, p: int) -> Agent:
        return self._neural(f"p{p}-0", self.seed * 1000 + p)

    def train_best_response(
        self, p: int, opponents: Sequence[Agent], name: str, seed: int
    ) -> tuple[Agent, list[float]]:
        """A PPO learner in seat ``p`` against ``opponents`` (one agent per other seat, in order);
        returns it and its mean return per batch (the learning curve)."""
        from arena.registry import get_registry

        learner = self._neural(name, seed)
        trainer = get_registry().get("trainer", "ppo").factory(self.game, [learner], **{"seed": seed, **self.ppo})
        seats = list(opponents)
        seats.insert(p, learner)
        curve = []
        for b in range(max(1, self.br_games // self.br_batch)):
            res = play_games(self.game, seats, num_games=self.br_batch, seed=seed * 100_003 + b, record=True)
            trainer.update([r.trajectory for r in res])
            curve.append(float(np.mean([r.returns[p] for r in res])))
        return learner, curve

    def best_responses(self, pops: Sequence[Sequence[Agent]], mixtures: Sequence[np.ndarray]) -> list[Agent]:
        out = []
        k = len(pops[0])
        for p in range(self.num_players):
            opps = [MixtureAgent(pops[q], mixtures[q], f"mix{q}") for q in range(self.num_players) if q != p]
            self.trained += 1
            br, curve = self.train_best_response(p, opps, f"p{p}-{k}", self.seed * 1000 + 17 * self.trained + p)
            self.history.append({"player": p, "first_batch": curve[0], "last_batch": curve[-1]})
            out.append(br)
        return out

    def meta_games(self, pops: Sequence[Sequence[Agent]], old: list[np.ndarray] | None) -> list[np.ndarray]:
        from itertools import product

        shape = tuple(len(pp) for pp in pops)
        out = [np.zeros(shape) for _ in range(self.num_players)]
        old_shape = old[0].shape if old is not None else None
        for e, idx in enumerate(product(*(range(k) for k in shape))):
            if old_shape is not None and all(i < k for i, k in zip(idx, old_shape)):
                for p in range(self.num_players):
                    out[p][idx] = old[p][idx]
                continue
            seats = [pops[p][i] for p, i in enumerate(idx)]
            res = play_games(self.game, seats, num_games=self.payoff_games, seed=hash((self.seed, idx)) & 0x7FFFFFFF)
            mean = np.mean([r.returns for r in res], axis=0)
            for p in range(self.num_players):
                out[p][idx] = mean[p]
        return out

    def exploitability(self, pops, mixtures) -> None:
        return None
