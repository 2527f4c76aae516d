"""Compile a tree-view game once into flat arrays, so solvers run on vectors, not Python trees.

Histories are enumerated depth-first and stored breadth-ordered: every depth level is one
contiguous range of node ids and the children of a node are contiguous inside the next level.
A CFR iteration or an exact best response is then a loop over levels of a gather, a multiply
and a ``bincount`` (sums into parents), whatever the game.

Information sets are grouped by player and their actions laid out as *slots*: player ``p``'s
slots form one contiguous range and the slots of one infoset are contiguous, so a policy is a
flat vector ``sigma[slot]`` and per-infoset sums are segment sums too. Chance probabilities
live in the same ``probs`` buffer after the slots, so the probability of the edge into node
``h`` is always ``probs[edge[h]]``.
"""

from __future__ import annotations

import os
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import CHANCE, TERMINAL, Action, Game, State, require_tree

DEFAULT_MAX_NODES = 3_000_000
BYTES_PER_NODE = 120  # arrays kept per history by the tree and by one solver (measured, rounded up)


@dataclass
class Tree:
    """A game tree as flat arrays (see the module docstring for the layout)."""

    game_name: str
    num_players: int
    parent: np.ndarray  # (N,) parent node id, -1 at the root
    player: np.ndarray  # (N,) acting player, CHANCE or TERMINAL
    edge: np.ndarray  # (N,) index into probs of the edge from the parent
    utility: np.ndarray  # (n, N) returns at terminals, 0 elsewhere
    chance_probs: np.ndarray  # (C,) probabilities of chance edges (probs[S:S+C]); probs[-1] == 1
    levels: list[tuple[int, int]]
    info_player: np.ndarray  # (I,)
    info_start: np.ndarray  # (I,) first slot of each infoset
    info_size: np.ndarray  # (I,) number of legal actions
    info_node: np.ndarray  # (I,) one history of the infoset (a representative)
    info_level: np.ndarray  # (I,) number of the player's own earlier decisions (perfect recall)
    info_keys: list[str]
    slot_info: np.ndarray  # (S,) infoset of each slot
    slot_action: np.ndarray  # (S,) game action id of each slot
    player_slots: list[tuple[int, int]]
    player_infos: list[tuple[int, int]]
    paths: list[tuple]  # (I,) actions from the root to the representative history
    compile_seconds: float = 0.0
    _derived: dict[str, Any] = field(default_factory=dict, repr=False)

    # -- sizes -----------------------------------------------------------------------------------
    @property
    def num_nodes(self) -> int:
        return int(self.parent.shape[0])

    @property
    def num_slots(self) -> int:
        return int(self.slot_info.shape[0])

    @property
    def num_infosets(self) -> int:
        return int(self.info_player.shape[0])

    @property
    def nbytes(self) -> int:
        arrays = [v for v in vars(self).values() if isinstance(v, np.ndarray)]
        arrays += [v for v in self._derived.values() if isinstance(v, np.ndarray)]
        return int(sum(a.nbytes for a in arrays))

    def size_report(self) -> dict[str, Any]:
        return {
            "game": self.game_name,
            "histories": self.num_nodes,
            "terminals": int((self.player == TERMINAL).sum()),
            "infosets": self.num_infosets,
            "infoset_actions": self.num_slots,
            "depth": len(self.levels) - 1,
            "megabytes": round(self.nbytes / 2**20, 2),
            "compile_seconds": round(self.compile_seconds, 3),
        }

    # -- derived index arrays the passes need ------------------------------------------------------
    def derived(self) -> dict[str, Any]:
        """Per-level segment layouts and per-player edge lists, computed once on first use."""
        if self._derived:
            return self._derived
        d: dict[str, Any] = {}
        S = self.num_slots
        owner = np.full(self.num_nodes, -1, dtype=np.int64)  # player whose choice is the edge into h
        nonroot = self.parent >= 0
        owner[nonroot] = self.player[self.parent[nonroot]]
        owner[owner < 0] = -1
        d["owner"] = owner
        d["edge"] = self.edge
        d["owner_mask"] = np.stack([owner == p for p in range(self.num_players)])
        # Edge indices with player p's own edges sent to the constant-1 entry of probs: one
        # gather gives the factors of p's opponents' (and chance's) reach.
        one = S + self.chance_probs.size - 1
        d["opp_edge"] = np.stack([np.where(owner == p, one, self.edge) for p in range(self.num_players)])
        lv = []
        for depth in range(1, len(self.levels)):
            s, e = self.levels[depth]
            par = self.parent[s:e]
            ps, pe = self.levels[depth - 1]
            lv.append((s, e, par, ps, pe, par - ps))
        d["levels"] = lv
        player_edges = []
        for p in range(self.num_players):
            child = np.flatnonzero(owner == p)
            s0, _ = self.player_slots[p]
            player_edges.append((child, self.parent[child], self.edge[child] - s0))
        d["player_edges"] = player_edges
        d["slot_node"] = self.info_node[self.slot_info]
        d["own_paths"] = [self._own_paths(p, owner) for p in range(self.num_players)]
        d["slot_nact"] = self.info_size[self.slot_info].astype(np.float64)
        d["probs"] = np.concatenate([np.zeros(S), self.chance_probs])
        self._derived.update(d)
        return self._derived

    def _own_paths(self, p: int, owner: np.ndarray) -> np.ndarray:
        """For each of player ``p``'s infosets, the probs indices of ``p``'s own earlier actions
        (padded with the constant-1 index): the product over a row is ``p``'s own reach."""
        i0, i1 = self.player_infos[p]
        one = self.num_slots + self.chance_probs.size - 1
        cur = self.info_node[i0:i1].copy()
        cols = []
        while cur.size and (cur > 0).any():
            cols.append(np.where(owner[cur] == p, self.edge[cur], one))
            cur = np.maximum(self.parent[cur], 0)
        cols = [c for c in cols if (c != one).any()]
        return np.stack(cols, axis=1) if cols else np.full((i1 - i0, 1), one)

    def probs_with(self, sigma: np.ndarray) -> np.ndarray:
        """The edge-probability buffer for policy ``sigma`` (slots first, then chance, then 1)."""
        probs = self.derived()["probs"].copy()
        probs[: self.num_slots] = sigma
        return probs

    def uniform_policy(self) -> np.ndarray:
        return 1.0 / self.derived()["slot_nact"]

    def state_of(self, infoset: int, game: Game) -> State:
        """A fresh state at the representative history of an infoset (replayed from the root)."""
        state = game.new_initial_state()
        for a in self.paths[infoset]:
            state.apply_action(a)
        return state


# -- compilation ---------------------------------------------------------------------------------
def compile_tree(game: Game, max_nodes: int | None = None) -> Tree:
    """Enumerate every history of ``game`` once. Refuses (ArenaError) above ``max_nodes``
    histories or when the arrays would not fit in available memory."""
    require_tree(game)
    max_nodes = _node_budget(max_nodes)
    start = time.perf_counter()
    found = _enumerate(game, max_nodes)
    return _assemble(game, found, time.perf_counter() - start)


@dataclass
class _Histories:
    """What the depth-first enumeration finds, in discovery order: per node its parent, depth,
    acting player, ``slot_ref`` (under a decision: the action's position among the legal ones;
    under chance: the outcome's index into ``chance_probs``) and infoset; per infoset its key,
    legal actions, player, first node, the player's earlier decisions and the path to it."""

    parent: list[int] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    player: list[int] = field(default_factory=list)
    slot_ref: list[int] = field(default_factory=list)
    node_info: list[int] = field(default_factory=list)
    util: dict[int, list[float]] = field(default_factory=dict)
    chance_probs: list[float] = field(default_factory=list)
    keys: dict[tuple[int, str], int] = field(default_factory=dict)
    info_actions: list[tuple[int, ...]] = field(default_factory=list)
    info_player: list[int] = field(default_factory=list)
    info_node: list[int] = field(default_factory=list)
    info_level: list[int] = field(default_factory=list)
    paths: list[tuple[Action, ...]] = field(default_factory=list)

    def infoset(self, game: Game, state: State, player: int, h: int, level: int, path: tuple[Action, ...]) -> int:
        """The infoset of decision node ``h`` (registered on first sight), checked for perfect
        recall: every history of it has the same legal actions and own-decision count."""
        key = state.information_state_key(player)
        legal = tuple(state.legal_actions(player))
        info = self.keys.get((player, key))
        if info is None:
            info = self.keys[(player, key)] = len(self.info_actions)
            self.info_actions.append(legal)
            self.info_player.append(player)
            self.info_node.append(h)
            self.info_level.append(level)
            self.paths.append(path)
        elif self.info_actions[info] != legal or self.info_level[info] != level:
            raise ArenaError(
                f"game '{game.spec.full_name}': info state {key!r} is reached with different legal "
                "actions or own histories, so its keys are not perfect-recall; no tree view"
            )
        return info


_Visit = tuple[State, int, int, int, tuple[int, ...], tuple[Action, ...]]
"""A history to enumerate: state, parent id, depth, slot_ref, own-decision counts, path."""


def _enumerate(game: Game, max_nodes: int) -> _Histories:
    """Every history of ``game``, depth-first (children in action order)."""
    found = _Histories()
    stack: list[_Visit] = [(game.new_initial_state(), -1, 0, -1, (0,) * game.spec.num_players, ())]
    while stack:
        state, par, dep, ref, own, path = stack.pop()
        h = len(found.parent)
        if h >= max_nodes:
            raise ArenaError(
                f"game '{game.spec.full_name}' has more than {max_nodes:,} histories: its tree (about "
                f"{max_nodes * BYTES_PER_NODE / 2**30:.1f} GiB or more) is too large to enumerate; use a sampling "
                "solver instead (arena solve --algo os-mccfr or es-mccfr)"
            )
        cur = state.current_player()
        found.parent.append(par)
        found.depth.append(dep)
        found.slot_ref.append(ref)
        found.player.append(cur)
        found.node_info.append(-1)
        if cur == TERMINAL:
            found.util[h] = [float(x) for x in state.returns()]
            continue
        if cur == CHANCE:
            outcomes = state.chance_outcomes()
            refs: Sequence[int] = range(len(found.chance_probs), len(found.chance_probs) + len(outcomes))
            found.chance_probs += [float(p) for _, p in outcomes]
            moves: Sequence[Action] = [a for a, _ in outcomes]
        elif cur < 0:
            raise ArenaError(
                f"game '{game.spec.full_name}' has simultaneous nodes; the tree compiler needs "
                f"a turn-based game (player {cur} at history {list(path)})"
            )
        else:
            found.node_info[h] = found.infoset(game, state, cur, h, own[cur], path)
            moves = found.info_actions[found.node_info[h]]
            refs = range(len(moves))
            own = tuple(c + (i == cur) for i, c in enumerate(own))
        stack.extend(reversed([(_child(state, a), h, dep + 1, k, own, path + (a,)) for k, a in zip(refs, moves)]))
    return found


def _child(state: State, action: Action) -> State:
    child = state.clone()
    child.apply_action(action)
    return child


def _assemble(game: Game, found: _Histories, seconds: float) -> Tree:
    """Reorder the depth-first nodes by depth (stable, so siblings stay contiguous) and lay out slots."""
    n = game.spec.num_players
    depth = np.asarray(found.depth)
    order = np.argsort(depth, kind="stable")
    new_id = np.empty_like(order)
    new_id[order] = np.arange(order.size)
    parent = np.asarray(found.parent)[order]
    parent = np.where(parent >= 0, new_id[np.maximum(parent, 0)], -1)
    player = np.asarray(found.player)[order].astype(np.int64)
    depth = depth[order]

    slots = _SlotLayout(found)
    node_info = np.asarray(found.node_info)[order]
    node_info = np.where(node_info >= 0, slots.new_info[np.maximum(node_info, 0)], -1)
    edge = _edges(parent, player, node_info, np.asarray(found.slot_ref)[order], slots, len(found.chance_probs))

    utility = np.zeros((n, parent.size))
    for h, r in found.util.items():
        utility[:, new_id[h]] = r
    bounds = np.flatnonzero(np.r_[True, depth[1:] != depth[:-1], True])
    iorder = slots.order
    ranges = [slots.player_range(p) for p in range(n)]
    inv_keys = {v: k for (_, k), v in found.keys.items()}
    return Tree(
        game_name=game.spec.full_name,
        num_players=n,
        parent=parent.astype(np.int64),
        player=player,
        edge=edge,
        utility=utility,
        chance_probs=np.asarray(found.chance_probs + [1.0]),
        levels=[(int(bounds[i]), int(bounds[i + 1])) for i in range(len(bounds) - 1)],
        info_player=slots.info_player,
        info_start=slots.starts,
        info_size=slots.sizes,
        info_node=new_id[np.asarray(found.info_node, dtype=np.int64)[iorder]] if iorder.size else np.zeros(0, np.int64),
        info_level=np.asarray(found.info_level, dtype=np.int64)[iorder] if iorder.size else np.zeros(0, np.int64),
        info_keys=[inv_keys[int(i)] for i in iorder],
        slot_info=np.repeat(np.arange(iorder.size), slots.sizes),
        slot_action=np.asarray([a for i in iorder for a in found.info_actions[i]], dtype=np.int64),
        player_slots=[slots for _, slots in ranges],
        player_infos=[infos for infos, _ in ranges],
        paths=[found.paths[int(i)] for i in iorder],
        compile_seconds=seconds,
    )


class _SlotLayout:
    """Infosets grouped by player (stable: discovery order inside a player) and their actions
    laid out as contiguous slots."""

    def __init__(self, found: _Histories) -> None:
        iplayer = np.asarray(found.info_player, dtype=np.int64)
        self.order = np.argsort(iplayer, kind="stable")
        """Discovery index of each infoset, in layout order."""
        self.new_info = np.empty_like(self.order)
        """Layout index of each infoset, by discovery index."""
        self.new_info[self.order] = np.arange(self.order.size)
        self.info_player = iplayer[self.order]
        self.sizes = np.asarray([len(found.info_actions[i]) for i in self.order], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)
        self.num_slots = int(self.sizes.sum())

    def player_range(self, p: int) -> tuple[tuple[int, int], tuple[int, int]]:
        """Player ``p``'s infosets and slots, as ``(first, end)`` ranges (empty: ``(0, 0)``)."""
        ids = np.flatnonzero(self.info_player == p)
        if not ids.size:
            return (0, 0), (0, 0)
        i0, i1 = int(ids[0]), int(ids[-1]) + 1
        return (i0, i1), (int(self.starts[i0]), int(self.starts[i1 - 1] + self.sizes[i1 - 1]))


def _edges(
    parent: np.ndarray, player: np.ndarray, node_info: np.ndarray, slot_ref: np.ndarray, slots: _SlotLayout, chance: int
) -> np.ndarray:
    """The index of every node's incoming edge into ``probs = [slots..., chance..., 1.0]``: its
    slot under a decision, its chance outcome under chance, the constant 1 at the root."""
    S = slots.num_slots
    edge = np.full(parent.size, S + chance, dtype=np.int64)
    has_parent = parent >= 0
    ppl = np.where(has_parent, player[np.maximum(parent, 0)], TERMINAL)
    dec = has_parent & (ppl >= 0)
    edge[dec] = slots.starts[node_info[parent[dec]]] + slot_ref[dec]
    ch = has_parent & (ppl == CHANCE)
    edge[ch] = S + slot_ref[ch]
    return edge


def _node_budget(max_nodes: int | None) -> int:
    """Histories we may enumerate: the caller's cap, and what half the free memory can hold."""
    cap = DEFAULT_MAX_NODES if max_nodes is None else int(max_nodes)
    try:
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        cap = min(cap, max(1000, free // 2 // (BYTES_PER_NODE * 8)))  # x8: Python objects while enumerating
    except (ValueError, OSError, AttributeError):
        pass
    return cap


_CACHE: "weakref.WeakKeyDictionary[Game, Tree]" = weakref.WeakKeyDictionary()


def get_tree(game: Game, max_nodes: int | None = None) -> Tree:
    """The compiled tree of ``game``, compiled once per game object."""
    tree = _CACHE.get(game)
    if tree is None:
        tree = _CACHE[game] = compile_tree(game, max_nodes)
    return tree


# -- the two passes every solver needs -----------------------------------------------------------
Array = Any
"""A numpy array, or a torch tensor under the CFR plugin's torch backend."""


class NumpyOps:
    """Array operations the passes use; the torch backend provides the same names."""

    name = "numpy"

    @staticmethod
    def segsum(x: Array, starts: Array, seg: Array, n: int) -> Array:
        """Sums of the ``n`` contiguous segments beginning at ``starts`` (``seg``: segment id of
        every element, for backends without reduceat)."""
        return np.add.reduceat(x, starts, axis=-1)

    @staticmethod
    def scatter_sum(index: Array, weights: Array, n: int) -> Array:
        return np.bincount(index, weights=weights, minlength=n)

    @staticmethod
    def clip0(x: Array) -> Array:
        return np.maximum(x, 0.0)

    @staticmethod
    def where(c: Array, a: Array, b: Array) -> Array:
        return np.where(c, a, b)

    @staticmethod
    def asarray(x: Any, dtype: Any = None) -> Array:
        return np.asarray(x, dtype=dtype)

    @staticmethod
    def to_numpy(x: Array) -> np.ndarray:
        return np.asarray(x)


def forward(tree: Tree, f: Array, arrays: dict[str, Any] | None = None) -> Array:
    """Reach of every history: the product of the edge factors ``f`` (one per node, the
    probability of the edge into it) along its path. Mask ``f`` to 1 on some players' edges to
    get other players' (and chance's) reach."""
    d = arrays or tree.derived()
    out = f * 1.0
    if isinstance(out, np.ndarray):  # in place: the passes are dominated by per-call overhead
        for s, e, par, *_ in d["levels"]:
            np.multiply(out[par], f[s:e], out=out[s:e])
        return out
    for s, e, par, *_ in d["levels"]:
        out[s:e] = out[par] * f[s:e]
    return out


def backward(tree: Tree, f: Array, values: Array, ops: Any = NumpyOps, arrays: dict[str, Any] | None = None) -> Array:
    """Expected values bottom-up: ``values`` (one player's terminal utilities) is filled in
    place, every node getting the ``f``-weighted sum of its children. ``ops``: the array
    operations of a non-numpy backend (the names :class:`NumpyOps` has)."""
    d = arrays or tree.derived()
    if isinstance(values, np.ndarray):
        weighted = np.empty_like(values)
        for s, e, _, ps, pe, local in reversed(d["levels"]):
            np.multiply(f[s:e], values[s:e], out=weighted[s:e])
            values[ps:pe] += np.bincount(local, weighted[s:e], pe - ps)
        return values
    for s, e, _, ps, pe, local in reversed(d["levels"]):
        values[ps:pe] += ops.scatter_sum(local, f[s:e] * values[s:e], pe - ps)
    return values


def edge_factors(tree: Tree, sigma: np.ndarray) -> np.ndarray:
    """Per-node probability of the edge into it under slot policy ``sigma``."""
    return tree.probs_with(sigma)[tree.edge]
