"""CFR on a compiled tree: every iteration is a forward pass (reach), a backward pass (values)
and a few segment sums, for any rule in :mod:`rules`, on numpy or torch.

Alternating updates (OpenSpiel's default) traverse once per player, each with the policy the
previous players just updated; simultaneous updates compute every player's regrets from the
same policy in one traversal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.errors import ArenaError
from arena.exact.exploitability import nash_conv, to_tabular
from arena.exact.tree import Tree, backward, forward, get_tree
from arena.game import Game
from arena.policy import TabularPolicy

from .backends import NumpyBackend, get_backend, tree_arrays
from .passes import Passes, csr_matvec
from .rules import ALGORITHMS, Rule


def make_rule(algo: str, **params: Any) -> Rule:
    if algo not in ALGORITHMS:
        raise ArenaError(f"unknown CFR algorithm {algo!r}; choose from {', '.join(ALGORITHMS)}")
    try:
        return ALGORITHMS[algo](**params)
    except TypeError:
        raise ArenaError(f"algorithm '{algo}' does not take parameters {sorted(params)}") from None


@dataclass
class Layout:
    """One player's slots and infosets, in backend arrays."""

    s0: int
    s1: int
    i0: int
    i1: int
    local: Any  # slot -> infoset index relative to i0
    starts: Any  # infoset -> first slot relative to s0
    nact: Any  # slot -> number of actions of its infoset
    n: int
    p: int = 0
    uniform: Any = None  # slot -> 1 / number of actions of its infoset


class TreeSolver:
    """A CFR-family solver on ``tree``; ``iterate()`` runs iterations, ``average()`` gives the
    average policy as a slot vector (numpy)."""

    def __init__(
        self,
        game: Game,
        rule: Rule,
        alternating: bool = True,
        device: str | None = None,
        tree: Tree | None = None,
        max_nodes: int | None = None,
    ) -> None:
        self.game = game
        self.tree = tree or get_tree(game, max_nodes)
        self.rule = rule
        self.alternating = alternating
        self.ops = get_backend(device)
        b, t = self.ops, self.tree
        self.arrays = tree_arrays(t, b)
        self.arrays["utility"] = b.convert(t.utility)
        self.layout = []
        for p in range(t.num_players):
            (s0, s1), (i0, i1) = t.player_slots[p], t.player_infos[p]
            local = t.slot_info[s0:s1] - i0
            nact = t.info_size[t.slot_info[s0:s1]].astype(np.float64)
            starts = b.convert(t.info_start[i0:i1] - s0)
            self.layout.append(
                Layout(s0, s1, i0, i1, b.convert(local), starts, b.convert(nact), i1 - i0, p, b.convert(1.0 / nact))
            )
        S = t.num_slots
        self.R = b.zeros(S)
        self.S = b.zeros(S)
        self.probs = b.copy(self.arrays["probs"])
        self.sigma = self.probs[:S]  # a view: the passes read the policy the rules write
        self.sigma[:] = b.convert(t.uniform_policy())
        numpy64 = isinstance(b, NumpyBackend) and b.dtype == np.float64
        self.passes = Passes(t, self.arrays) if numpy64 and csr_matvec is not None else None
        """Sparse one-call passes (numpy, float64); ``None``: the level-by-level passes of
        :mod:`arena.exact.tree` on the backend's arrays (torch)."""
        self.t = 0
        rule.init(self)

    # -- helpers the rules call ------------------------------------------------------------------
    def zeros(self, n: int):
        return self.ops.zeros(n)

    def where(self, c, a, b):
        return self.ops.where(c, a, b)

    def minimum(self, a, b):
        return self.ops.minimum(a, b)

    def segmax(self, lay: Layout, x):
        return self.ops.segmax(x, lay.starts, lay.local, lay.n)

    def segsum(self, lay: Layout, x):
        """Per-infoset sums of one player's slot vector ``x``."""
        if self.passes is not None:
            return self.passes.segsum(lay.p, x)
        return self.ops.segsum(x, lay.starts, lay.local, lay.n)

    def regret_matching(self, lay: Layout, x, power: float = 1.0):
        """σ(I,a) ∝ [x(I,a)]^+ ** power, uniform where no entry is positive."""
        pos = self.ops.clip0(x)
        if power != 1.0:
            pos = pos**power
        return self.ops.normalize(pos, self.segsum(lay, pos)[lay.local], lay.uniform)

    # -- iterations ------------------------------------------------------------------------------
    def iterate(self, iterations: int = 1) -> None:
        for _ in range(iterations):
            self.t += 1
            if self.alternating:
                for p in range(self.tree.num_players):
                    self._update([p])
            else:
                self._update(list(range(self.tree.num_players)))

    def _update(self, players: list[int]) -> None:
        a, ops, passes = self.arrays, self.ops, self.passes
        if passes is None:
            f = self.probs[a["edge"]]
        else:
            passes.edge_factors(self.probs)
        steps = []
        for p in players:
            lay = self.layout[p]
            if passes is None:
                child, par, slot = a["player_edges"][p]
                opp = forward(self.tree, self.probs[a["opp_edge"][p]], a)
                V = backward(self.tree, f, ops.copy(a["utility"][p]), ops, a)
                Q = ops.scatter_sum(slot, opp[par] * V[child], lay.s1 - lay.s0)
            else:
                opp = passes.forward(p, self.probs)
                Q = passes.counterfactual(p, opp, passes.backward(p))
            if passes is None:
                own = self.probs[a["own_paths"][p]].prod(1)[lay.local]
            else:
                own = passes.own_reach(p, self.probs)
            vI = self.segsum(lay, self.sigma[lay.s0 : lay.s1] * Q)
            steps.append((p, Q - vI[lay.local], own))
        for p, r, own in steps:
            self.rule.step(self, p, r, own, self.t)

    # -- results ---------------------------------------------------------------------------------
    def average(self) -> np.ndarray:
        """The average policy (the one that converges) as a numpy slot vector."""
        t, ops = self.tree, self.ops
        S = ops.to_numpy(self.S)
        tot = np.add.reduceat(S, t.info_start)[t.slot_info] if t.num_slots else S
        fallback = ops.to_numpy(self.sigma) if self.rule.average_fallback == "current" else t.uniform_policy()
        return np.where(tot > 0, S / np.where(tot > 0, tot, 1.0), fallback)

    def current(self) -> np.ndarray:
        return self.ops.to_numpy(self.sigma).copy()

    def average_policy(self) -> TabularPolicy:
        return to_tabular(self.tree, self.average())

    def nash_conv(self) -> float:
        return nash_conv(self.game, self.average(), self.tree)
