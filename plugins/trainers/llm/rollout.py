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
from arena.playing.match import game_rng, sample_chance
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


def own_decisions(game: Game, trajectories: Sequence[Trajectory], name: str) -> tuple[list[tuple[State, Any]], int]:
    """``(state, step)`` for every step the seat called ``name`` took, in order, with the state
    rebuilt by :func:`replay`; and the number of games that could not be replayed (skipped)."""
    out: list[tuple[State, Any]] = []
    skipped = 0
    for traj in trajectories:
        states = replay(game, traj)
        if states is None:
            skipped += 1
            continue
        out += [(st, step) for st, step in zip(states, traj.steps) if traj.seats[step.player] == name]
    return out, skipped


def playout_values(
    game: Game,
    starts: Sequence[tuple[State, Any, int]],
    agent: Agent,
    seed: int,
    cache: bool = True,
    streams: Sequence[int] | None = None,
) -> np.ndarray:
    """For each (state, action, player): the player's return after taking ``action`` in ``state``
    and letting ``agent`` play every seat to the end (one sampled continuation each)."""
    finals = playout_finals(game, starts, agent, seed, cache, streams)
    return np.array([float(f.returns()[p]) for f, (_, _, p) in zip(finals, starts)])


def playout_finals(
    game: Game,
    starts: Sequence[tuple[State, Any, int]],
    agent: Agent,
    seed: int,
    cache: bool = True,
    streams: Sequence[int] | None = None,
) -> list[State]:
    """For each (state, action, player): the finished state after taking ``action`` in ``state``
    (``None``: no action, the agent decides there too) and letting ``agent`` play every seat to
    the end (what a judge compares). ``cache: False``
    asks the agent for every move in one ``act_batch`` per round instead of caching its policy per
    information set: what long games with free text need (few prompts ever repeat, and a text
    turn has no policy to cache). Each playout draws chance outcomes and the agent's samples from
    its own stream; ``streams`` (one id per start) gives starts with the same id the *same*
    stream — common random numbers, so two actions compared from one state differ by the action
    and not by the luck of their playouts."""
    scored = cache and agent.has_policy and getattr(agent, "mode", "scored") == "scored"
    policies: dict[tuple, Any] | None = {} if scored else None
    rng = np.random.default_rng(seed)
    base = int(np.random.default_rng([seed, 1]).integers(2**31))
    live: list[tuple[int, State, Any]] = []
    for i, (state, action, player) in enumerate(starts):
        s = state.clone()
        if action is not None:  # None: the playout starts at the decision itself (a state value)
            s.apply_action(action)
        g = game_rng(int(rng.integers(2**31)), i) if streams is None else game_rng(base, int(streams[i]))
        sample_chance(s, g)
        live.append((i, s, g))
    finals: list[State] = [x[1] for x in live]
    while live:
        pending = [(i, s, g) for i, s, g in live if not s.is_terminal()]
        if not pending:
            break
        obs = [Observation(s, s.current_player(), g, game.spec.full_name) for _, s, g in pending]
        actions = _act(agent, obs, policies)
        for (i, s, g), a in zip(pending, actions):
            s.apply_action(a)
            sample_chance(s, g)
        live = pending
    return finals


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


def final_state(game: Game, traj: Trajectory) -> State | None:
    """The finished state of ``traj`` (rebuilt like :func:`replay`), or None if it diverges."""
    if replay(game, traj) is None:  # checks every recorded observation
        return None
    rng = game_rng(traj.seed, traj.game_index)
    state = game.new_initial_state(seed=rng.bits())
    sample_chance(state, rng)
    for step in traj.steps:
        state.apply_action(step.action)
        sample_chance(state, rng)
    return state if state.is_terminal() else None


def branch(
    game: Game, items: Sequence[tuple[Trajectory, int]], agent: Agent, copies: int, seed: int
) -> list[list[tuple[Trajectory, State]] | None]:
    """For each recorded (trajectory, seat): ``copies`` new rollouts from the same start state —
    the state before the seat's first decision, rebuilt by :func:`replay` (same task instance,
    same deal) — with ``agent`` playing every decision from there, each copy with its own random
    stream; all copies of all items advance in lockstep (one ``act_batch_info`` call per round).
    Returns per item the copies' (trajectory, finished state), or None when the game cannot be
    rebuilt or another agent holds a later decision (the agent must hold every remaining seat)."""
    from arena.trainer import Step

    copies_of: list[list[tuple[State, Any, list]] | None] = [None] * len(items)
    for i, (traj, player) in enumerate(items):
        k = next((j for j, s in enumerate(traj.steps) if s.player == player), None)
        states = replay(game, traj) if k is not None else None
        if states is None or k is None:
            continue
        copies_of[i] = [
            (states[k].clone(), game_rng(seed, i * copies + c), list(traj.steps[:k])) for c in range(copies)
        ]
    while True:
        pending = []
        for i, group in enumerate(copies_of):
            if group is None:
                continue
            seats = items[i][0].seats
            mine = seats[items[i][1]]
            todo = [x for x in group if not x[0].is_terminal()]
            if any(x[0].current_player() < 0 or seats[x[0].current_player()] != mine for x in todo):
                copies_of[i] = None  # a simultaneous node or another agent's decision
                continue
            pending += todo
        if not pending:
            break
        obs = [Observation(s, s.current_player(), g, game.spec.full_name) for s, g, _ in pending]
        if hasattr(agent, "act_batch_info"):
            actions, infos = agent.act_batch_info(obs)
        else:
            actions, infos = list(agent.act_batch(obs)), [{} for _ in obs]
        for (s, g, steps), o, a, info in zip(pending, obs, actions, infos):
            o.freeze()
            steps.append(
                Step(o.player, o, a, info.get("log_prob"), 0.0, {k: v for k, v in info.items() if k != "log_prob"})
            )
            s.apply_action(a)
            sample_chance(s, g)
    out: list[list[tuple[Trajectory, State]] | None] = []
    for i, group in enumerate(copies_of):
        if group is None:
            out.append(None)
            continue
        traj = items[i][0]
        out.append(
            [
                (Trajectory(traj.game_index, g.seed, list(traj.seats), steps, list(s.returns())), s)
                for s, g, steps in group
            ]
        )
    return out
