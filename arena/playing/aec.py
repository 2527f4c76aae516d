"""The PettingZoo AEC face, derived from any arena :class:`~arena.game.State` machine.

Player ``i`` is agent ``player_i``; chance nodes are sampled with the env's generator, seeded by
``reset(seed=...)`` and *continued* by ``reset()`` without a seed (Gymnasium's convention: an
unseeded reset starts the next episode of the same stream, so a seeded run of many episodes is
reproducible);
the legal moves are the ``action_mask`` in the observation dict; rewards are the change in
each player's return at every step (so games with intermediate rewards pay as they go); at a
simultaneous node the acting players choose in seat order and no choice is visible to the
others until all are in.

:func:`make_env` returns the env inside PettingZoo's ``OrderEnforcingWrapper`` (``step`` before
``reset`` is PettingZoo's clear error, not an AttributeError); :func:`make_parallel_env` is
PettingZoo's ``aec_to_parallel`` of it, for games whose every decision is simultaneous
(``GameSpec.simultaneous``: one cycle of the AEC env is one joint move).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.conversions import aec_to_parallel
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from arena.errors import ArenaError
from arena.game import Game, State


class ArenaAECEnv(AECEnv):
    def __init__(self, game: Game, render_mode: str | None = None) -> None:
        super().__init__()
        spec = game.spec
        if spec.text_decisions:
            raise ArenaError(
                f"game '{spec.full_name}' has free-text decisions, which a PettingZoo env cannot "
                "express; load it with its talk switched off or structured"
            )
        self.game = game
        self.render_mode = render_mode
        self.metadata = {
            "name": spec.full_name,
            "render_modes": ["human", "ansi"],
            "is_parallelizable": bool(spec.simultaneous),
        }
        self.possible_agents = [f"player_{i}" for i in range(spec.num_players)]
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        n_actions = spec.num_distinct_actions
        self._observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(-np.inf, np.inf, shape=spec.observation_shape, dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, shape=(n_actions,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self._action_spaces = {a: spaces.Discrete(n_actions) for a in self.possible_agents}
        self.state_: State | None = None
        self._rng = np.random.default_rng()

    # spaces must be the same object on every call
    @functools.lru_cache(maxsize=None)
    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    @functools.lru_cache(maxsize=None)
    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    @property
    def _state(self) -> State:
        """The game in progress (PettingZoo's order enforcement makes ``reset`` come first)."""
        if self.state_ is None:
            raise ArenaError("the env has no game in progress: call reset() first")
        return self.state_

    # -- lifecycle ---------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        state = self.state_ = self.game.new_initial_state(seed=int(self._rng.integers(2**31)))
        self._resolve_chance()
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._paid = np.zeros(len(self.possible_agents))
        self._pending: dict[int, int] = {}
        if state.is_terminal():  # a game can end before anyone decides (e.g. an abstraction that auto-plays)
            returns = np.asarray(state.returns(), dtype=np.float64)
            self.rewards = {a: float(returns[self._index[a]]) for a in self.agents}
            self._cumulative_rewards = dict(self.rewards)
            self._paid = returns.copy()
            self.terminations = {a: True for a in self.agents}
        self._select()

    def _resolve_chance(self) -> None:
        s = self._state
        while s.is_chance_node():
            outcomes = s.chance_outcomes()
            probs = np.array([p for _, p in outcomes], dtype=float)
            s.apply_action(outcomes[int(self._rng.choice(len(outcomes), p=probs / probs.sum()))][0])

    def _acting(self) -> list[int]:
        s = self._state
        return s.acting_players() if not s.is_terminal() else []

    def _select(self) -> None:
        waiting = [p for p in self._acting() if p not in self._pending]
        if waiting:
            self.agent_selection = self.possible_agents[waiting[0]]
        elif not hasattr(self, "agent_selection") or self.agent_selection not in self.agents:
            self.agent_selection = self.agents[0] if self.agents else self.possible_agents[0]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        p = self._index[agent]
        mask = np.zeros(self.game.spec.num_distinct_actions, dtype=np.int8)
        if p in self._acting() and p not in self._pending:
            mask[self._state.legal_actions(p)] = 1
        obs = np.asarray(self._state.observation_tensor(p), dtype=np.float32).reshape(self.game.spec.observation_shape)
        return {"observation": obs, "action_mask": mask}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        p = self._index[agent]
        action = int(action)
        s = self._state
        legal = s.legal_actions(p)
        if action not in legal:
            raise ValueError(f"illegal action {action} for {agent} in {self.game.spec.full_name}; legal: {legal}")
        self._cumulative_rewards[agent] = 0.0
        if s.is_simultaneous_node():
            self._pending[p] = action
            if all(q in self._pending for q in self._acting()):
                joint = [self._pending.get(q, 0) for q in range(len(self.possible_agents))]
                self._pending = {}
                s.apply_actions(joint)
        else:
            s.apply_action(action)
        self._resolve_chance()
        returns = np.asarray(s.returns(), dtype=np.float64) if not self._pending else self._paid
        for a in self.agents:
            q = self._index[a]
            self.rewards[a] = float(returns[q] - self._paid[q])
        self._paid = returns.copy()
        if s.is_terminal():
            for a in self.agents:
                self.terminations[a] = True
        self._select()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # -- rendering ---------------------------------------------------------------------------
    def render(self) -> str | None:
        if self.state_ is None:
            return None
        lines = [f"[{a}] {self.state_.observation_text(self._index[a])}" for a in self.possible_agents]
        text = "\n".join(lines)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def make_env(game: Game, render_mode: str | None = None) -> AECEnv:
    """The AEC env of ``game`` in PettingZoo's order enforcement (what ``arena.make_env`` returns)."""
    return OrderEnforcingWrapper(ArenaAECEnv(game, render_mode=render_mode))


def make_parallel_env(game: Game, render_mode: str | None = None) -> Any:
    """The PettingZoo parallel env of a simultaneous-move ``game`` (``aec_to_parallel``)."""
    if not game.spec.simultaneous:
        raise ArenaError(
            f"game '{game.spec.full_name}' has turn-based decisions; a parallel env needs every "
            "player to move at every decision (GameSpec.simultaneous) — use arena.make_env"
        )
    return aec_to_parallel(make_env(game, render_mode))
