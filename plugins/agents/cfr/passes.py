"""The numpy solver's tree passes, each one sparse matrix-vector product, in place.

:func:`arena.exact.tree.forward`/:func:`~arena.exact.tree.backward` walk the tree level by level: two or three
numpy calls per level, ~60 per player update on Leduc's 12 levels, most on a few dozen to a few
hundred histories, so per-call overhead was most of a CFR iteration. Here each pass is one CSR
product ``y += A·x`` (scipy's ``csr_matvec``, which finishes row after row, ``y[i] = y[i] +
Σ_j A[i,j]·x[j]``) with ``x`` and ``y`` the same buffer and the rows ordered so that a row only
reads rows finished before it: one call runs a whole pass. The matrix's ``data`` is the buffer
the edge probabilities are gathered into each iteration; its structure is built once.

- forward (opponents' reach), rows = the nodes with children, in node order: row ``h`` holds
  ``f[h]`` at column ``parent[h]`` (the root reads a constant 1 after the rows), so
  ``reach[h] = f[h]·reach[parent[h]]``; terminals' reach is never read, so it has no rows;
- backward (values), rows = the nodes with children, deepest first: row ``h`` holds ``f[c]`` at
  ``c``'s column for each child ``c`` in node order, and the terminals' columns hold player
  ``p``'s utilities (constant), so ``V[h] = 0 + Σ_c f[c]·V[c]`` in the children's order;
- counterfactual values, one row per slot of player ``p``: ``Q[slot] = Σ reach[parent]·V[child]``
  over the slot's edges in node order;
- per-infoset sums of a slot vector, row ``I`` summing slots ``[a+1, ..., b-1, a]``.

The products and sums are those of the level passes (``np.bincount`` sums from 0 in element
order) in the same order, so the iterates are bit-for-bit the same (tests/plugins/agents/test_cfr.py); the
per-infoset sums match ``np.add.reduceat`` bit for bit for infosets of up to 8 actions (it
adds the first element to a pairwise sum of the rest, which differs from a running sum above
8) and to rounding above (Liar's dice, up to 13 actions: exploitability equal to 5e-16 over 50
iterations). ``csr_matvec`` lives in scipy's private ``_sparsetools`` (there since scipy 0.14);
without it the solver runs the level passes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.exact.tree import Tree
from arena.game import TERMINAL

try:
    from scipy.sparse._sparsetools import csr_matvec
except ImportError:  # pragma: no cover - a scipy without it: the solver uses the level passes
    csr_matvec = None


class Passes:
    """One solver's sparse passes on buffers made once; the arrays returned are reused by the
    next call."""

    def __init__(self, tree: Tree, arrays: dict[str, Any]) -> None:
        assert csr_matvec is not None
        self.matvec = csr_matvec
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
