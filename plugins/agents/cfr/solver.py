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
from arena.game import TERMINAL, Game
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
    p: int = 0
    uniform: Any = None  # slot -> 1 / number of actions of its infoset


class _Passes:
    """The numpy solver's tree passes as one sparse matrix-vector product each, in place.

    :func:`arena.tree.forward`/:func:`~arena.tree.backward` walk the tree level by level (two or
    three numpy calls per level: on Leduc's 12 levels ~60 calls per player update, each on a few
    dozen to a few thousand histories, so per-call overhead was most of an iteration). Here each
    pass is a CSR product ``y += A x`` with ``x`` and ``y`` the same buffer
    (:func:`scipy.sparse._sparsetools.csr_matvec`, which fills row after row): the rows are
    ordered so that every row reads only rows finished before it, so one call runs the whole
    pass, and the matrix's ``data`` is the buffer the edge probabilities are gathered into.

    - forward, rows in node order: row ``h`` holds ``f[h]`` at column ``parent[h]`` (the root
      reads a constant 1 kept after the nodes), so ``reach[h] = f[h]·reach[parent[h]]``;
    - backward, rows in reverse node order (values are kept reversed): row ``h`` holds ``f[c]``
      at column ``c`` for each child ``c`` in order, so ``V[h] = Σ_c f[c]·V[c]`` summed from 0 in
      the children's order — the sums :func:`numpy.bincount` formed;
    - counterfactual values, one row per slot of player ``p``: ``Q[slot] = Σ opp[parent]·V[child]``
      over the slot's edges in node order, as the ``bincount`` did.

    The same products and sums in the same order, so the iterates are bit-for-bit those of the
    level passes (tests/test_cfr.py). The arrays returned are reused by the next call.
    """

    def __init__(self, tree: Tree, arrays: dict[str, Any]) -> None:
        from scipy.sparse import _sparsetools

        self.matvec = _sparsetools.csr_matvec
        n = tree.num_nodes
        parent = tree.parent
        itype = np.int32 if n < 2**31 - 1 else np.int64
        # forward: the nodes that have children (only their reach is read), one entry per row, in
        # node order; column k holds the constant 1 the root reads
        inner = np.flatnonzero(tree.player != TERMINAL)
        k = inner.size
        compact = np.full(n, k)  # node -> its row (the root's parent -> the constant)
        compact[inner] = np.arange(k)
        self.f_rows = k + 1
        self.f_ptr = np.r_[np.arange(k + 1), k].astype(itype)
        self.f_col = np.where(parent[inner] >= 0, compact[np.maximum(parent[inner], 0)], k).astype(itype)
        self.f_edge = [opp[inner] for opp in arrays["opp_edge"]]
        self.f_data = np.empty(k)
        self.reach = np.zeros(k + 1)
        self.reach[k] = 1.0
        self.reach_nodes = self.reach[:k]
        # backward: rows are the nodes with children, last first; player p's values are kept in
        # that order, then p's (constant) utilities at the terminals
        term = np.flatnonzero(tree.player == TERMINAL)
        vcol = np.empty(n, dtype=np.int64)  # node -> its place in the values
        vcol[inner] = k - 1 - np.arange(k)
        vcol[term] = k + np.arange(term.size)
        rows = vcol[parent[1:]]  # the row of each non-root node's parent, children in node order
        kids = 1 + np.argsort(rows, kind="stable")  # node ids of the entries, row by row
        self.b_rows, self.b_cols = k, k + term.size
        self.b_ptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=k))].astype(itype)
        self.b_col = vcol[kids].astype(itype)
        self.b_edge = arrays["edge"][kids]
        self.b_data = np.empty(kids.size)
        self.values = [np.r_[np.zeros(k), u[term]] for u in tree.utility]
        self.values_inner = [v[:k] for v in self.values]
        # counterfactual values: player p's slots, entries its edges in node order
        self.q = []
        for (child, par, slot), (s0, s1) in zip(arrays["player_edges"], tree.player_slots):
            order = np.argsort(slot, kind="stable")
            m = s1 - s0
            ptr = np.r_[0, np.cumsum(np.bincount(slot, minlength=m))].astype(itype)
            self.q.append((m, ptr, vcol[child[order]].astype(itype), compact[par[order]], np.empty(slot.size)))
        # per-infoset sums of a player's slot vector: row i sums slots [a+1, ..., b-1, a], the
        # order in which add.reduceat sums a segment of up to 8 (a first, then the rest in order)
        self.sums = []
        self.own = []
        for p, ((s0, s1), (i0, i1)) in enumerate(zip(tree.player_slots, tree.player_infos)):
            starts = tree.info_start[i0:i1] - s0
            key = np.arange(s1 - s0, dtype=np.float64)
            key[starts] += tree.info_size[i0:i1] - 0.5
            ptr = np.r_[starts, s1 - s0].astype(itype)
            self.sums.append((i1 - i0, s1 - s0, ptr, np.argsort(key, kind="stable").astype(itype), np.ones(s1 - s0)))
            # own reach of each slot's infoset: a product down the columns of own_paths, per slot
            local = tree.slot_info[s0:s1] - i0
            self.own.append(np.ascontiguousarray(arrays["own_paths"][p][local].T))

    def edge_factors(self, probs: np.ndarray) -> None:
        """Gather the edge probabilities into the backward matrix."""
        np.take(probs, self.b_edge, out=self.b_data, mode="clip")  # valid indices: clip only skips buffering

    def forward(self, p: int, probs: np.ndarray) -> np.ndarray:
        """``forward(tree, probs[opp_edge[p]])`` at the nodes that have children (compact)."""
        np.take(probs, self.f_edge[p], out=self.f_data, mode="clip")
        self.reach_nodes.fill(0.0)
        self.matvec(self.f_rows, self.f_rows, self.f_ptr, self.f_col, self.f_data, self.reach, self.reach)
        return self.reach

    def backward(self, p: int) -> np.ndarray:
        """``backward(tree, f, utility[p].copy())`` with ``f`` from :meth:`edge_factors`, laid
        out as the backward matrix's columns."""
        self.values_inner[p].fill(0.0)
        values = self.values[p]
        self.matvec(self.b_rows, self.b_cols, self.b_ptr, self.b_col, self.b_data, values, values)
        return values

    def segsum(self, p: int, x: np.ndarray) -> np.ndarray:
        """``add.reduceat(x, starts)`` over player ``p``'s infosets (a new array; the same sums
        bit for bit where an infoset has at most 8 actions, else within rounding)."""
        m, k, ptr, col, ones = self.sums[p]
        out = np.zeros(m)
        self.matvec(m, k, ptr, col, ones, x, out)
        return out

    def own_reach(self, p: int, probs: np.ndarray) -> np.ndarray:
        """``probs[own_paths[p]].prod(1)[local]``: the same products in the same order."""
        return np.multiply.reduce(probs.take(self.own[p]), axis=0)

    def counterfactual(self, p: int, reach: np.ndarray, values: np.ndarray) -> np.ndarray:
        """``bincount(slot, reach[parent]·V[child])`` over player ``p``'s edges (a new array)."""
        m, ptr, col, par, data = self.q[p]
        np.take(reach, par, out=data, mode="clip")
        out = np.zeros(m)
        self.matvec(m, values.size, ptr, col, data, values, out)
        return out


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
