"""Monte-Carlo CFR (Lanctot et al. 2009) for games too large to enumerate: outcome sampling
and external sampling, on game states directly (no compiled tree), with tables keyed by
info-state key. Updates alternate over players; each ``iterate()`` is one traversal per player.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.errors import ArenaError
from arena.game import CHANCE, TERMINAL, Game, State
from arena.policy import TabularPolicy


class _Node:
    __slots__ = ("actions", "regret", "avg")

    def __init__(self, actions: list[int]) -> None:
        self.actions = actions
        self.regret = np.zeros(len(actions))
        self.avg = np.zeros(len(actions))

    def policy(self) -> np.ndarray:
        pos = np.maximum(self.regret, 0.0)
        tot = pos.sum()
        return pos / tot if tot > 0 else np.full(len(self.actions), 1.0 / len(self.actions))


class MCCFR:
    """Base: the tables, sampling helpers and the average policy."""

    name = "mccfr"

    def __init__(self, game: Game, seed: int = 0) -> None:
        if game.spec.text_decisions:
            raise ArenaError(f"game '{game.spec.full_name}' has text decisions; MCCFR needs discrete actions")
        self.game = game
        self.n = game.spec.num_players
        self.rng = np.random.default_rng(seed)
        self.nodes: dict[str, _Node] = {}
        self.t = 0

    def node(self, state: State, player: int) -> _Node:
        key = state.information_state_key(player)
        node = self.nodes.get(key)
        if node is None:
            node = self.nodes[key] = _Node(list(state.legal_actions(player)))
        return node

    def sample(self, probs: np.ndarray) -> int:
        if len(probs) == 1:  # a forced move draws nothing: the random stream stays that of the choices
            return 0
        return int(
            min(np.searchsorted(np.cumsum(probs), self.rng.random() * probs.sum(), side="right"), len(probs) - 1)
        )

    @staticmethod
    def child(state: State, action: int) -> State:
        nxt = state.clone()
        nxt.apply_action(action)
        return nxt

    def chance(self, state: State) -> tuple[State, float]:
        outcomes = state.chance_outcomes()
        if not outcomes:
            raise ArenaError(f"game '{self.game.spec.full_name}' has a chance node without explicit outcomes")
        probs = np.asarray([p for _, p in outcomes])
        k = self.sample(probs)
        return self.child(state, outcomes[k][0]), float(probs[k] / probs.sum())

    def iterate(self, iterations: int = 1) -> None:
        for _ in range(iterations):
            self.t += 1
            for p in range(self.n):
                self.traverse(self.game.new_initial_state(seed=int(self.rng.integers(2**31))), p)

    def traverse(self, state: State, player: int) -> Any:
        raise NotImplementedError

    def average_policy(self) -> TabularPolicy:
        table = {}
        for key, node in self.nodes.items():
            tot = node.avg.sum()
            probs = node.avg / tot if tot > 0 else np.full(len(node.actions), 1.0 / len(node.actions))
            table[key] = {a: float(p) for a, p in zip(node.actions, probs)}
        return TabularPolicy(self.game.spec.full_name, table)


class ExternalSampling(MCCFR):
    """Sample chance and opponents, enumerate the traverser's actions. "Simple" averaging: on
    player i's pass, player i+1's average is updated where it is sampled (on-policy, so
    unbiased; with two players every opponent node).

    ``probe_after=k`` bounds the cost, which is exponential in the traverser's decisions along a
    history: past its first ``k`` decisions in a traversal the traverser samples one action from
    its current policy and follows it, and values each other action by a *probe* (one history
    sampled from the current policy, no updates; Gibson et al. 2012). Every action's value stays
    an unbiased estimate, every node reached is updated, and a traversal costs at most ``2^k``
    paths with a probe per action along them. ``None`` (the default) enumerates everywhere."""

    name = "es-mccfr"

    def __init__(self, game: Game, seed: int = 0, probe_after: int | None = None) -> None:
        super().__init__(game, seed)
        if probe_after is not None and (not isinstance(probe_after, int) or probe_after < 1):
            raise ArenaError(f"es-mccfr: probe_after must be a positive integer, not {probe_after!r}")
        self.probe_after = probe_after

    def traverse(self, state: State, player: int, depth: int = 0) -> float:
        cur = state.current_player()
        if cur == TERMINAL:
            return float(state.returns()[player])
        if cur == CHANCE:
            return self.traverse(self.chance(state)[0], player, depth)
        node = self.node(state, cur)
        sigma = node.policy()
        if cur != player:
            if cur == (player + 1) % self.n:
                node.avg += sigma
            return self.traverse(self.child(state, node.actions[self.sample(sigma)]), player, depth)
        if len(sigma) > 1 and self.probe_after is not None and depth >= self.probe_after:
            i = self.sample(sigma)
            values = np.asarray(
                [
                    self.traverse(self.child(state, a), player, depth)
                    if j == i
                    else self.probe(self.child(state, a), player)
                    for j, a in enumerate(node.actions)
                ]
            )
        else:
            deeper = depth + (len(sigma) > 1)
            values = np.asarray([self.traverse(self.child(state, a), player, deeper) for a in node.actions])
        v = float(sigma @ values)
        node.regret += values - v
        return v

    def probe(self, state: State, player: int) -> float:
        """One history from ``state`` with every player on its current policy: an unbiased
        estimate of the value there, without updates."""
        while True:
            cur = state.current_player()
            if cur == TERMINAL:
                return float(state.returns()[player])
            if cur == CHANCE:
                state = self.chance(state)[0]
                continue
            node = self.node(state, cur)
            state = self.child(state, node.actions[self.sample(node.policy())])


class OutcomeSampling(MCCFR):
    """Sample one terminal history per traversal; the traverser explores with probability
    ``epsilon``; regrets are importance-weighted by the sample probability (chance after the
    node cancels: it is sampled by its own probability, as in OpenSpiel), and the traverser's
    average is updated with its own reach over the sample probability (``averaging=stochastic``,
    stochastically weighted averaging) or with its current policy at every visit
    (``averaging=simple``: biased, but its weights do not explode in long games with many
    chance nodes, where stochastic weights span dozens of orders of magnitude)."""

    name = "os-mccfr"

    def __init__(self, game: Game, seed: int = 0, epsilon: float = 0.6, averaging: str = "stochastic") -> None:
        super().__init__(game, seed)
        if averaging not in ("stochastic", "simple"):
            raise ArenaError(f"os-mccfr: averaging must be 'stochastic' or 'simple', not {averaging!r}")
        self.epsilon = epsilon
        self.simple = averaging == "simple"

    def traverse(
        self, state: State, player: int, own: float = 1.0, opp: float = 1.0, sample: float = 1.0
    ) -> tuple[float, float]:
        """Returns (u_player(z) / q(z), π^σ(h→z)) for the sampled terminal z (π with chance)."""
        cur = state.current_player()
        if cur == TERMINAL:
            return float(state.returns()[player]) / sample, 1.0
        if cur == CHANCE:
            nxt, p = self.chance(state)
            u, tail = self.traverse(nxt, player, own, opp * p, sample * p)
            return u, tail * p
        node = self.node(state, cur)
        sigma = node.policy()
        k = len(sigma)
        if cur == player:
            q = self.epsilon / k + (1 - self.epsilon) * sigma
            i = self.sample(q)
            u, tail = self.traverse(self.child(state, node.actions[i]), player, own * sigma[i], opp, sample * q[i])
            w = u * opp
            regret = -w * tail * sigma[i] * np.ones(k)
            regret[i] = w * tail * (1 - sigma[i])
            node.regret += regret
            node.avg += sigma if self.simple else (own / sample) * sigma
            return u, tail * sigma[i]
        i = self.sample(sigma)
        u, tail = self.traverse(self.child(state, node.actions[i]), player, own, opp * sigma[i], sample * sigma[i])
        return u, tail * sigma[i]


SAMPLERS = {"es-mccfr": ExternalSampling, "os-mccfr": OutcomeSampling}
