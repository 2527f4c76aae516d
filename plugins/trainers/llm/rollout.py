"""Rebuilding recorded states and playing them out: what SPPO needs to estimate P(a beats pi_t | s).

``replay`` rebuilds the state before each recorded decision: the match runner draws chance
outcomes from the game's counter stream (``GameRandom.uniform``) and ``llm`` agents sample
from the separate numpy stream, so replaying the recorded actions with the same stream
reproduces the game exactly; every rebuilt state is checked against the recorded observation
text and a mismatch skips the game (e.g. an agent that drew from the counter stream).

``playout_values`` plays many continuations at once in lockstep, one batched ``act_batch``
call per round, so an LLM policy sees the whole batch.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.agent import Agent, Observation, sample_from
from arena.game import Game, State
from arena.match import game_rng, sample_chance
from arena.trainer import Trajectory


def replay(game: Game, traj: Trajectory) -> list[State] | None:
    """The state before each step of ``traj`` (clones), or None if the replay diverges."""
    rng = game_rng(traj.seed, traj.game_index)
    state = game.new_initial_state(seed=rng.bits())
    sample_chance(state, rng)
    out = []
    for step in traj.steps:
        if state.is_terminal() or state.current_player() != step.player:
            return None
        if state.observation_text(step.player) != step.observation.text:
            return None
        out.append(state.clone())
        state.apply_action(step.action)
        sample_chance(state, rng)
    return out


def playout_values(game: Game, starts: Sequence[tuple[State, int, int]], agent: Agent, seed: int) -> np.ndarray:
    """For each (state, action, player): the player's return after taking ``action`` in ``state``
    and letting ``agent`` play every seat to the end (one sampled continuation each)."""
    scored = agent.has_policy and getattr(agent, "mode", "scored") == "scored"
    policies: dict[tuple, Any] | None = {} if scored else None
    rng = np.random.default_rng(seed)
    live: list[tuple[int, State, Any]] = []
    values = np.zeros(len(starts))
    for i, (state, action, player) in enumerate(starts):
        s = state.clone()
        s.apply_action(action)
        g = game_rng(int(rng.integers(2**31)), i)
        sample_chance(s, g)
        live.append((i, s, g))
    while live:
        pending = [(i, s, g) for i, s, g in live if not s.is_terminal()]
        for i, s, g in live:
            if s.is_terminal():
                values[i] = float(s.returns()[starts[i][2]])
        if not pending:
            break
        obs = [Observation(s, s.current_player(), g, game.spec.full_name) for _, s, g in pending]
        actions = _act(agent, obs, policies)
        for (i, s, g), a in zip(pending, actions):
            s.apply_action(a)
            sample_chance(s, g)
        live = pending
    return values


def _act(agent: Agent, obs: list[Observation], policies: dict | None) -> list:
    """Sample each playout's move. A scored agent's (frozen) policy is asked once per distinct
    prompt and sampled here: thousands of playouts visit only a few information sets."""
    if policies is None:
        return list(agent.act_batch(obs))
    out = []
    for o in obs:
        key = (o.text, tuple(o.action_labels))
        if key not in policies:
            policies[key] = agent.policy(o)
        out.append(sample_from(policies[key], o))
    return out
