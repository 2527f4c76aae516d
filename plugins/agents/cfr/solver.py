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
from arena.exploitability import nash_conv, to_tabular
from arena.game import Game
from arena.policy import TabularPolicy
from arena.tree import Tree, backward, forward, get_tree

from .backends import NumpyBackend, get_backend, tree_arrays
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


class _Passes:
    """:func:`arena.tree.forward` and :func:`~arena.tree.backward` for one solver on numpy, into
    buffers (and slice views of them) made once: the same ufuncs on the same numbers in the same
    order — so the same iterates — without the ~200 array views and temporaries each iteration
    otherwise allocates (on Leduc an iteration is ~80 small array operations, and their Python
    overhead is most of its time). The arrays returned are reused by the next call."""

    def __init__(self, tree: Tree, arrays: dict[str, Any]) -> None:
        n = tree.num_nodes
        self.f, self.opp_f, self.reach, self.values, self.weighted = (np.empty(n) for _ in range(5))
        levels = arrays["levels"]
        self.down = [(par, np.empty(e - s), self.opp_f[s:e], self.reach[s:e]) for s, e, par, *_ in levels]
        self.up = [
            (self.f[s:e], self.values[s:e], self.weighted[s:e], self.values[ps:pe], local, pe - ps)
            for s, e, _, ps, pe, local in reversed(levels)
        ]

    def edge_factors(self, probs: np.ndarray, edge: np.ndarray) -> np.ndarray:
        """``probs[edge]``, into the buffer :meth:`backward` reads."""
        return np.take(probs, edge, out=self.f, mode="clip")  # valid indices: clip only skips buffering

    def forward(self, probs: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """``forward(tree, probs[idx])``."""
        np.take(probs, idx, out=self.opp_f, mode="clip")
        np.multiply(self.opp_f, 1.0, out=self.reach)
        for par, gathered, f, out in self.down:
            np.take(self.reach, par, out=gathered, mode="clip")
            np.multiply(gathered, f, out=out)
        return self.reach

    def backward(self, utility: np.ndarray) -> np.ndarray:
        """``backward(tree, f, utility.copy())`` with ``f`` from :meth:`edge_factors`."""
        np.copyto(self.values, utility)
        for f, v, w, parents, local, m in self.up:
            np.multiply(f, v, out=w)
            parents += np.bincount(local, w, m)
        return self.values


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
            self.layout.append(
                Layout(s0, s1, i0, i1, b.convert(local), b.convert(t.info_start[i0:i1] - s0), b.convert(nact), i1 - i0)
            )
        S = t.num_slots
        self.R = b.zeros(S)
        self.S = b.zeros(S)
        self.sigma = b.convert(t.uniform_policy())
        self.probs = b.copy(self.arrays["probs"])
        self.passes = _Passes(t, self.arrays) if isinstance(b, NumpyBackend) and b.dtype == np.float64 else None
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

    def regret_matching(self, lay: Layout, x, power: float = 1.0):
        """σ(I,a) ∝ [x(I,a)]^+ ** power, uniform where no entry is positive."""
        pos = self.ops.clip0(x)
        if power != 1.0:
            pos = pos**power
        tot = self.ops.segsum(pos, lay.starts, lay.local, lay.n)[lay.local]
        return self.ops.where(tot > 0, pos / self.ops.where(tot > 0, tot, 1.0), 1.0 / lay.nact)

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
        S = self.tree.num_slots
        self.probs[:S] = self.sigma
        f = self.probs[a["edge"]] if passes is None else passes.edge_factors(self.probs, a["edge"])
        steps = []
        for p in players:
            lay = self.layout[p]
            child, par, slot = a["player_edges"][p]
            if passes is None:
                opp = forward(self.tree, self.probs[a["opp_edge"][p]], a)
                V = backward(self.tree, f, ops.copy(a["utility"][p]), ops, a)
            else:
                opp = passes.forward(self.probs, a["opp_edge"][p])
                V = passes.backward(a["utility"][p])
            own = self.probs[a["own_paths"][p]].prod(1)[lay.local]
            Q = ops.scatter_sum(slot, opp[par] * V[child], lay.s1 - lay.s0)
            vI = ops.segsum(self.sigma[lay.s0 : lay.s1] * Q, lay.starts, lay.local, lay.n)
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
