"""PSRO on the compiled game tree: exact best responses, exact meta-game payoffs, exact mixtures.

Why on the tree: every population member is a slot vector over its player's infoset actions
(:mod:`arena.exact.tree`), so a payoff entry is one backward pass, a best response is
:func:`arena.exact.exploitability.best_response` (ties spread uniformly over optimal actions, as the
SHOR-PSRO paper does), and a meta-mixture becomes one behaviour policy by weighting each
member's action probabilities with the player's own reach under that member (what OpenSpiel's
``PolicyAggregator`` computes by tree walks) — all as array operations.
"""

from __future__ import annotations

from itertools import product
from typing import Sequence

import numpy as np

from arena.exact.exploitability import best_response, correlated_best_response, nash_conv, policy_value
from arena.exact.tree import Tree, backward, get_tree
from arena.game import Game


class TreeOracle:
    """Populations of slot-vector policies for one tree-view game."""

    def __init__(self, game: Game, tree: Tree | None = None, ties: str = "uniform") -> None:
        self.game = game
        self.tree = tree or get_tree(game)
        self.ties = ties
        self.n = self.tree.num_players
        self.slots = self.tree.player_slots
        d = self.tree.derived()
        self._own_paths = d["own_paths"]

    # -- policies ---------------------------------------------------------------------------------
    def uniform(self, p: int) -> np.ndarray:
        s0, s1 = self.slots[p]
        return self.tree.uniform_policy()[s0:s1].copy()

    def joint(self, parts: Sequence[np.ndarray]) -> np.ndarray:
        """One slot vector from one per-player segment each (players' slots are contiguous, in order)."""
        sigma = np.empty(self.tree.num_slots)
        for p, part in enumerate(parts):
            s0, s1 = self.slots[p]
            sigma[s0:s1] = part
        return sigma

    def own_reach(self, p: int, part: np.ndarray) -> np.ndarray:
        """Player ``p``'s own reach probability of each of its infosets under ``part``."""
        probs = self.tree.probs_with(self.joint([part if q == p else self.uniform(q) for q in range(self.n)]))
        return probs[self._own_paths[p]].prod(axis=1)

    def aggregate(self, p: int, members: Sequence[np.ndarray], weights: np.ndarray) -> np.ndarray:
        """The behaviour policy of playing member k with probability ``weights[k]`` for the whole
        game: sigma(I,a) = sum_k w_k r_k(I) pi_k(I,a) / sum_k w_k r_k(I)."""
        i0, _ = self.tree.player_infos[p]
        s0, s1 = self.slots[p]
        local = self.tree.slot_info[s0:s1] - i0
        num = np.zeros(s1 - s0)
        den = np.zeros(s1 - s0)
        for w, m in zip(weights, members):
            if w <= 0:
                continue
            r = w * self.own_reach(p, m)[local]
            num += r * m
            den += r
        out = self.uniform(p)
        ok = den > 0
        out[ok] = num[ok] / den[ok]
        return out

    # -- oracle and payoffs -------------------------------------------------------------------------
    def best_response(self, p: int, others: np.ndarray) -> tuple[float, np.ndarray]:
        """Exact best response of ``p`` to the joint policy ``others`` (its own slots are ignored)."""
        value, br = best_response(self.tree, others, p, self.ties)
        s0, s1 = self.slots[p]
        return value, br[s0:s1].copy()

    def response_to_joint(
        self, p: int, pops: Sequence[Sequence[np.ndarray]], weights: np.ndarray, floor: float = 1e-10
    ) -> tuple[float, np.ndarray]:
        """Exact best response of ``p`` to the others playing a joint distribution ``weights``
        over their populations (axes: the other players in seat order), correlated as drawn."""
        others = [q for q in range(self.n) if q != p]
        profiles, ws = [], []
        for idx in zip(*np.nonzero(weights > floor)):
            pick = dict(zip(others, idx))
            profiles.append(self.joint([self.uniform(q) if q == p else pops[q][pick[q]] for q in range(self.n)]))
            ws.append(float(weights[idx]))
        w = np.asarray(ws)
        return correlated_best_response(self.tree, profiles, w / w.sum(), p, self.ties)

    def joint_responses(
        self, pops: Sequence[Sequence[np.ndarray]], joint: np.ndarray, kind: str, meta: Sequence[np.ndarray]
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """JPSRO's best responses to a joint distribution over the populations and each player's
        exact gap. CCE: one response to the others' marginal, gap = its value minus the joint's.
        CE: a response to the others' conditional for every recommended member, gap = the
        probability-weighted sum of their gains; the member with the largest gain joins."""
        brs, gaps = [], []
        for p in range(self.n):
            if kind == "cce":
                value, br = self.response_to_joint(p, pops, joint.sum(axis=p))
                brs.append(br)
                gaps.append(max(0.0, value - float(np.sum(joint * meta[p]))))
                continue
            marg = joint.sum(axis=tuple(q for q in range(self.n) if q != p))
            best, total = (-1.0, self.uniform(p)), 0.0
            for k in np.flatnonzero(marg > 1e-10):
                cond = np.take(joint, k, axis=p) / marg[k]
                value, br = self.response_to_joint(p, pops, cond)
                gain = marg[k] * max(0.0, value - float(np.sum(cond * np.take(meta[p], k, axis=p))))
                total += gain
                best = max(best, (gain, br), key=lambda t: t[0])
            brs.append(best[1])
            gaps.append(total)
        return brs, np.asarray(gaps)

    def values(self, parts: Sequence[np.ndarray]) -> np.ndarray:
        """Every player's expected return under one profile of members."""
        f = self.tree.probs_with(self.joint(parts))[self.tree.edge]
        return np.asarray([backward(self.tree, f, self.tree.utility[p].copy())[0] for p in range(self.n)])

    def extend_meta_games(self, pops: Sequence[Sequence[np.ndarray]], old: list[np.ndarray] | None) -> list[np.ndarray]:
        """Meta-game tensors for populations ``pops``, reusing the entries of ``old``."""
        shape = tuple(len(pp) for pp in pops)
        out = [np.zeros(shape) for _ in range(self.n)]
        old_shape = old[0].shape if old is not None else None
        for idx in product(*(range(k) for k in shape)):
            if old_shape is not None and all(i < k for i, k in zip(idx, old_shape)):
                for p in range(self.n):
                    out[p][idx] = old[p][idx]
                continue
            v = self.values([pops[p][i] for p, i in enumerate(idx)])
            for p in range(self.n):
                out[p][idx] = v[p]
        return out

    # -- evaluation ---------------------------------------------------------------------------------
    def mixture_policy(self, pops: Sequence[Sequence[np.ndarray]], mixtures: Sequence[np.ndarray]) -> np.ndarray:
        return self.joint([self.aggregate(p, pops[p], mixtures[p]) for p in range(self.n)])

    def nash_conv(self, sigma: np.ndarray) -> float:
        return nash_conv(self.game, sigma, self.tree)

    def value(self, sigma: np.ndarray) -> list[float]:
        return policy_value(self.game, sigma, self.tree)
