"""The array face of a game: B games at once as numpy arrays, optional beside :class:`~arena.game.State`.

Why: a small game's step is a few microseconds of Python per game through ``State``; a whole
batch stepped by numpy costs about the same per *batch*. A game that has the face returns an
:class:`ArrayFace` from :meth:`Game.array_face`; agents that can decide from arrays implement
``act_arrays(games, rows)`` (:func:`acts_on_arrays`), and the match runner then plays without
building a single ``State`` (``arena.playing.array_match``).

Chance and the agents' draws come from :class:`ArrayRandom`: the per-game SplitMix64 streams of
:mod:`arena.rng` (``GameRandom(seed, index)``) vectorised, draw for draw. A face resolves a chance
node with one uniform by inverse CDF over the outcomes in the order ``State.chance_outcomes``
lists them (what the runner's ``sample_chance`` does), so a game's outcome is the same whichever
face played it, given the same agent decisions.

Info states come two ways. A face with tables (``ArrayFace.tabled``, the card and matrix games)
numbers each info state the first time it turns up: :meth:`ArrayGames.info_states` gives those
numbers, and the face's tables give their keys and tensors, so an agent can cache per number. A
face whose info states are too many to table (connect four: an info state is the whole move
history) sets ``tabled = False``: it has no numbers, and its games compute each row's key
(:meth:`ArrayGames.info_state_keys`) and tensor (:meth:`ArrayGames.observations`) directly.

A plugin may attach a face to a game it does not define (an ``openspiel:`` game loaded through
the OpenSpiel adapter) with the ``arena_array_faces`` hook: an :class:`ArrayFaceEntry` named after
the game, whose factory builds the face for a loaded game (or ``None`` for parameters it does not
cover).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from arena.game import TERMINAL
from arena.rng import _GOLDEN, _MASK, _TO_UNIT, _mix


class ArrayRandom:
    """The streams of games ``indices`` of a run seeded ``seed``, positioned as the runner's after
    each game's first draw (the state seed, ``GameRandom.bits``): draw ``c`` of game ``b`` is
    SplitMix64's output for ``key[b] + c·golden``, as :meth:`arena.rng.GameRandom.uniform` makes it."""

    def __init__(self, seed: int, indices: Sequence[int]) -> None:
        self.seed = int(seed)
        self.indices = np.asarray(list(indices), dtype=np.int64)
        with np.errstate(over="ignore"):
            base = _mix(np.array([((self.seed & _MASK) + _GOLDEN) & _MASK], dtype=np.uint64))[0]
            idx = self.indices.astype(np.uint64)
            self.keys = _mix((base ^ idx) + np.uint64(_GOLDEN))
        self.counters = np.ones(len(self.indices), dtype=np.uint64)
        """Draws made per game (1: the state seed)."""

    def __len__(self) -> int:
        return len(self.indices)

    def uniform(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The next uniform in [0, 1) of each game in ``rows`` (distinct; all games when None)."""
        if rows is None:
            rows = np.arange(len(self.indices))
        with np.errstate(over="ignore"):
            c = self.counters[rows] + np.uint64(1)
            self.counters[rows] = c
            z = _mix(self.keys[rows] + c * np.uint64(_GOLDEN))
        return (z >> np.uint64(11)).astype(np.float64) * _TO_UNIT


def cdf_pick(u: np.ndarray, probs: Sequence[float]) -> np.ndarray:
    """Index of the outcome one uniform picks by inverse CDF, as the runner's ``sample_chance``:
    the first ``k`` with ``u < p_0 + ... + p_k`` (float sums in that order), else the last."""
    acc, edges = 0.0, []
    for p in probs:
        acc += p
        edges.append(acc)
    k = np.searchsorted(np.asarray(edges), u, side="right")  # how many edges are <= u
    return np.minimum(k, len(edges) - 1)


def kth_true(mask: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Column of the ``k``-th (0-based) True in each row of ``mask``: the number of columns whose
    running count of Trues is still <= k. Many rows of a narrow mask (legal actions, a deck) run
    column by column, 2-5x faster than a cumsum along rows; few rows, a cumsum."""
    if len(k) < 16 * mask.shape[1]:
        return (mask.cumsum(axis=1) <= k[:, None]).sum(axis=1)
    seen = np.zeros(len(k), dtype=np.int64)
    out = np.zeros(len(k), dtype=np.int64)
    for column in mask.T:
        seen += column
        out += seen <= k
    return out


def pick_uniform(mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The random agent's choice with one uniform: ``legal[min(int(u * k), k - 1)]`` (legal ascending)."""
    k = mask.sum(axis=1)
    return kth_true(mask, np.minimum((u * k).astype(np.int64), k - 1))


def pick_weighted(weights: np.ndarray, mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """:func:`arena.agent.sample_from` on arrays: weights over the legal actions (ascending),
    negatives as 0, ``target = u · total``, the first action whose running sum exceeds it; a
    zero total falls back to the uniform choice, a rounding miss to the last positive weight."""
    w = np.where(mask, np.maximum(weights, 0.0), 0.0)
    cum = np.add.accumulate(w, axis=1)
    total = cum[:, -1]
    target = u * total
    first = (cum <= target[:, None]).sum(axis=1)
    last_positive = w.shape[1] - 1 - np.argmax((w > 0)[:, ::-1], axis=1)
    out = np.where(first < w.shape[1], first, last_positive)
    zero = total <= 0
    if zero.any():
        out[zero] = pick_uniform(mask[zero], u[zero])
    return out


class ArrayGames:
    """B games of one game in flight. ``player[b]`` is the player to move in game ``b`` (chance is
    resolved inside :meth:`step`), ``SIMULTANEOUS`` when every player moves at once, ``TERMINAL``
    once it is over. ``rows`` arguments are distinct game numbers (positions in the batch);
    ``player`` arguments name the deciding player at a simultaneous node (None: the player to move)."""

    face: "ArrayFace"
    rng: ArrayRandom
    player: np.ndarray

    @property
    def done(self) -> np.ndarray:
        return self.player == TERMINAL

    def legal_mask(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        """``bool [R, num_actions]``: the legal actions of each row's player."""
        raise NotImplementedError

    def step(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """Apply each row's action (legal, by its player to move; ``[R, num_players]`` joint moves
        at simultaneous nodes), then any chance that follows."""
        raise NotImplementedError

    def returns(self) -> np.ndarray:
        """``float64 [B, num_players]``; meaningful for finished games."""
        raise NotImplementedError

    def info_states(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        """Each row's player's information state, as indices into the face's tables
        (:meth:`ArrayFace.info_state_key`, :meth:`observations`): stable for the face's lifetime.
        Only faces with tables (``face.tabled``) have them."""
        raise NotImplementedError

    def info_state_keys(self, rows: np.ndarray, player: int | None = None) -> list[str]:
        """Each row's player's ``State.information_state_key``: the table's keys of
        :meth:`info_states`, or computed per row by a face without tables."""
        key = self.face.info_state_key
        return [key(i) for i in self.info_states(rows, player).tolist()]

    def observations(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        """``float32 [R, ...]``: what ``State.observation_tensor`` gives each row's player."""
        return self.face.tensors(self.info_states(rows, player))

    def outcome_info(self, row: int) -> dict[str, Any] | None:
        """``State.outcome_info`` of a finished game, or None when the game reports none."""
        return None

    def history(self, row: int) -> list[int]:
        """Game ``row``'s actions so far, chance included, to replay into a ``State``
        (a face with :attr:`ArrayFace.records`)."""
        raise NotImplementedError

    def state_at(self, row: int, game: Any) -> Any:
        """Game ``row`` as a ``State`` of ``game`` as it stands, for the runner to render a
        recorded decision (a face with :attr:`ArrayFace.records`): :meth:`history` replayed into a
        new state, unless a face builds it from its arrays (a game with hidden randomness)."""
        state = game.new_initial_state()
        for a in self.history(row):
            state.apply_action(a)
        return state


class HistoryGames(ArrayGames):
    """Games that keep every action as a row of ``hist`` (``hlen[b]`` used) and their returns in
    ``_returns``: the board, card and dice faces share these two readers."""

    hist: np.ndarray
    hlen: np.ndarray
    _returns: np.ndarray

    def returns(self) -> np.ndarray:
        return self._returns

    def history(self, row: int) -> list[int]:
        return self.hist[row, : self.hlen[row]].tolist()


class ArrayFace:
    """What a game with the face provides (:meth:`arena.game.Game.array_face`)."""

    num_players: int
    num_actions: int
    records: bool = False
    """Whether the runner may record trajectories on the face: :meth:`ArrayGames.state_at`
    gives a game's ``State`` (by default its :meth:`ArrayGames.history` replayed), and :meth:`ArrayGames.returns` is ``State.returns`` during
    play too (a step's reward is the change in its player's return)."""
    tabled: bool = True
    """True: info states are numbered (:meth:`ArrayGames.info_states`) and their keys and tensors
    kept in the face's tables (:meth:`info_state_key`, :meth:`tensors`). False: the games compute
    keys and tensors per row (:meth:`ArrayGames.info_state_keys`, :meth:`ArrayGames.observations`)
    and have no ``info_states``."""

    def reset(self, rng: ArrayRandom) -> ArrayGames:
        """``len(rng)`` new games, past their opening chance nodes (drawn from ``rng``)."""
        raise NotImplementedError

    def info_state_key(self, index: int) -> str:
        """``State.information_state_key`` of an info state :meth:`ArrayGames.info_states` returned."""
        raise NotImplementedError

    def tensors(self, indices: np.ndarray) -> np.ndarray:
        raise NotImplementedError


@dataclass(frozen=True)
class ArrayFaceEntry:
    """A face for a game the plugin does not define (hook ``arena_array_faces``): ``name`` is the
    game's name without parameters (``openspiel:connect_four``); ``factory(game)`` builds the face
    of a loaded game, or returns ``None`` when the game's parameters are not covered."""

    name: str
    factory: Callable[[Any], ArrayFace | None]
    description: str = ""


def acts_on_arrays(agent: Any) -> bool:
    """True when ``agent`` decides from arrays: ``agent.act_arrays(games, rows, player=None) -> int
    array`` (one
    action per row, drawing any randomness from ``games.rng`` one uniform per decision as its
    ``act_batch`` would from each game's stream), and the agent says so now (``array_native``)."""
    act = getattr(agent, "act_arrays", None)
    return callable(act) and bool(getattr(agent, "array_native", True))
