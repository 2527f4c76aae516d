"""Exact head-to-head evaluation of policy agents on a small game by walking the whole game tree.

Why not sample: a win rate from 400 sampled Kuhn hands has a standard error of ~2.5 points,
too coarse for before/after comparisons of a few points. Walking every chance outcome and
weighting by both policies gives the exact expected return and win probability (wins count
1, ties 1/2) in a fraction of a second for Kuhn poker (30 decision nodes, 12 infosets).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from arena.agent import Observation
from arena.errors import ArenaError
from arena.game import Game, State

PolicyFn = Callable[[Observation], Mapping[int, float]]


def uniform_policy(obs: Observation) -> dict[int, float]:
    acts = obs.legal_actions
    return {a: 1.0 / len(acts) for a in acts}


def cached(agent_policy: PolicyFn) -> PolicyFn:
    """Ask once per information set (a policy may depend only on what its player knows)."""
    memo: dict[str, Mapping[int, float]] = {}

    def ask(obs: Observation) -> Mapping[int, float]:
        key = obs.info_state
        if key not in memo:
            memo[key] = agent_policy(obs)
        return memo[key]

    return ask


def head_to_head(game: Game, policies: list[PolicyFn], max_nodes: int = 200_000) -> tuple[list[float], list[float]]:
    """Exact (expected return, score) per seat when seat ``p`` plays ``policies[p]``; the score
    is P(win) + P(tie)/2, a win being the strictly highest return."""
    n = game.spec.num_players
    ev, score = [0.0] * n, [0.0] * n
    budget = [max_nodes]

    def walk(state: State, prob: float) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            raise ArenaError(f"exact evaluation: '{game.spec.full_name}' has more than {max_nodes} nodes")
        if prob == 0.0:
            return
        if state.is_terminal():
            r = [float(x) for x in state.returns()]
            best = max(r)
            winners = [i for i, x in enumerate(r) if x == best]
            for i in range(n):
                ev[i] += prob * r[i]
                if i in winners:
                    score[i] += prob * (1.0 if len(winners) == 1 else 0.5)
            return
        if state.is_chance_node():
            for a, p in state.chance_outcomes():
                child = state.clone()
                child.apply_action(a)
                walk(child, prob * p)
            return
        p = state.current_player()
        if p < 0:
            raise ArenaError("exact evaluation needs a turn-based game")
        obs = Observation(state, p, None, game.spec.full_name)
        for a, q in policies[p](obs).items():
            if q > 0:
                child = state.clone()
                child.apply_action(a)
                walk(child, prob * q)

    walk(game.new_initial_state(), 1.0)
    return ev, score


def vs_random(game: Game, agent: Any) -> dict[str, float]:
    """The agent's exact mean return and win rate against uniform random, averaged over seats."""
    pol = cached(agent.policy)
    n = game.spec.num_players
    ret, win = 0.0, 0.0
    for seat in range(n):
        ev, score = head_to_head(game, [pol if p == seat else uniform_policy for p in range(n)])
        ret += ev[seat] / n
        win += score[seat] / n
    return {"return_vs_random": ret, "winrate_vs_random": win}
