"""The array face (:mod:`arena.arrays`) of the Coin Game (:mod:`arena.games.social.coin`), any
``size``, ``horizon``, ``discount`` and ``memory``: B games as numpy arrays.

Every round is a simultaneous node (both players move at once, four moves each, all legal),
then, with ``discount < 1``, the chance node that stops the game with probability
``1 - discount`` (one uniform from the game's stream: continue when below ``discount``, as the
matrix face does). The start cells, the first coin's colour and cell, and every respawn are the
game's hidden randomness: a :class:`~arena.games.social.coin.CoinState` draws them from its own
``numpy.random.default_rng(seed)``, seeded with the game's first draw (``GameRandom.bits``), so
the face runs the same generators as arrays (:class:`~arena.games.social.pcg64_arrays.PCG64Arrays`)
and draws what the state draws, in the same order. Returns, info-state keys, observation tensors
(the egocentric planes and, with ``memory``, the pickup counts) and outcome facts are the
``State``'s.

An info state is the whole move history with the positions, far too many to table, so the face
has no tables (``tabled = False``): each row's key and tensor are computed from its arrays when
asked. It records (``records``): :meth:`CoinGames.state_at` rebuilds a game's ``State`` from its
arrays for the runner to render a recorded step's observation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.arrays import ArrayFace, ArrayGames, ArrayRandom, kth_true
from arena.game import SIMULTANEOUS, TERMINAL
from arena.rng import _GOLDEN, _mix

from .base import RoundState
from .coin import MOVES, CoinState
from .matrix_arrays import round_over
from .pcg64_arrays import PCG64Arrays

_DR = np.array([m[0] for m in MOVES], dtype=np.int64)
_DC = np.array([m[1] for m in MOVES], dtype=np.int64)


def state_seeds(rng: ArrayRandom) -> np.ndarray:
    """Each game's first draw, ``GameRandom.bits()``: the seed the runner gives ``new_initial_state``."""
    with np.errstate(over="ignore"):
        return _mix(rng.keys + np.uint64(1) + np.uint64(_GOLDEN)) >> np.uint64(33)


class CoinFace(ArrayFace):
    """The Coin Game ``game`` as arrays (no tables: keys and tensors per row)."""

    tabled = False
    records = True
    """Trajectories may be recorded: :meth:`CoinGames.state_at` gives the runner each game's
    ``State`` as it stands, and the returns are the ``State``'s running totals."""

    def __init__(self, game: Any) -> None:
        self.game = game
        self.num_players, self.num_actions = 2, 4
        self.size, self.horizon, self.memory = game.size, game.horizon, game.memory

    def reset(self, rng: ArrayRandom) -> "CoinGames":
        return CoinGames(self, rng)


class CoinGames(ArrayGames):
    face: CoinFace

    def __init__(self, face: CoinFace, rng: ArrayRandom) -> None:
        self.face, self.rng = face, rng
        b, n, horizon = len(rng), face.size, face.horizon
        self.gen = PCG64Arrays(state_seeds(rng))
        """Each game's ``CoinState.rng``."""
        everyone = np.arange(b)
        cells = self.gen.choice2(everyone, n * n)
        self.pos = np.stack([cells // n, cells % n], axis=2)
        """``int64 [B, 2, 2]``: each player's (row, column)."""
        self.colour = self.gen.integers(everyone, 2)
        self.coin = np.zeros((b, 2), dtype=np.int64)
        self._respawn(everyone)
        self.picks = np.zeros((b, 2, 2), dtype=np.int64)
        """``[B, player, own?0:1]``: coins taken, as ``CoinState.picks``."""
        self.moves = np.zeros((b, horizon, 2), dtype=np.int64)
        self.taken = np.full((b, horizon, 2), -1, dtype=np.int64)
        """Per round, the colour of the coin each player took (-1: none), as ``CoinState.taken``."""
        self.rounds = np.zeros(b, dtype=np.int64)
        self.totals = np.zeros((b, 2), dtype=np.float64)
        self.player = np.full(b, SIMULTANEOUS, dtype=np.int64)

    def _respawn(self, rows: np.ndarray) -> None:
        """``CoinState._free_cell`` for ``rows``: a uniform pick among the cells no player is on,
        in row-major order."""
        n = self.face.size
        flat = self.pos[rows, :, 0] * n + self.pos[rows, :, 1]
        free = np.ones((len(rows), n * n), dtype=bool)
        free[np.arange(len(rows))[:, None], flat] = False
        k = self.gen.integers(rows, free.sum(axis=1))
        cell = kth_true(free, k)
        self.coin[rows] = np.stack([cell // n, cell % n], axis=1)

    def legal_mask(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        return np.ones((len(rows), 4), dtype=bool)

    def step(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """``actions``: ``[R, 2]`` joint moves; then the respawns and any stopping chance."""
        n, game = self.face.size, self.face.game
        actions = np.asarray(actions, dtype=np.int64)
        whole = len(rows) == len(self.player) > 0 and bool((np.diff(rows) == 1).all()) and rows[0] == 0
        at: Any = slice(None) if whole else rows  # every game, in order (no discount): views, not copies
        pos = self.pos[at]
        pos[:, :, 0] = (pos[:, :, 0] + _DR[actions]) % n
        pos[:, :, 1] = (pos[:, :, 1] + _DC[actions]) % n
        if not whole:
            self.pos[rows] = pos
        r = self.rounds[at]
        self.moves[rows, r] = actions
        colour, coin = self.colour[at], self.coin[at]
        on = (pos[:, :, 0] == coin[:, None, 0]) & (pos[:, :, 1] == coin[:, None, 1])  # [R, 2]: on the coin
        self.taken[rows, r] = np.where(on, colour[:, None], -1)
        red = colour == 0
        grabs = [on[:, 0] & ~red, on[:, 1] & red]  # each player took the other's coin
        totals = self.totals[at]
        totals[:, 0] += on[:, 0] - 2.0 * grabs[1]  # +1 per coin; -2 when the other takes mine
        totals[:, 1] += on[:, 1] - 2.0 * grabs[0]
        picks = self.picks[at]
        picks[:, 0, 0] += on[:, 0] & red
        picks[:, 1, 0] += on[:, 1] & ~red
        picks[:, 0, 1] += grabs[0]
        picks[:, 1, 1] += grabs[1]
        if not whole:
            self.totals[rows], self.picks[rows] = totals, picks
        took = on[:, 0] | on[:, 1]
        if took.any():
            movers = rows[took]
            self.colour[movers] = 1 - self.colour[movers]
            self._respawn(movers)
        self.rounds[rows] = r = r + 1
        self.player[rows] = np.where(round_over(self.rng, rows, r, game), TERMINAL, SIMULTANEOUS)

    def returns(self) -> np.ndarray:
        return self.totals

    def info_states(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        raise NotImplementedError("the Coin Game's face has no info-state tables (tabled = False): use info_state_keys")

    def info_state_keys(self, rows: np.ndarray, player: int | None = None) -> list[str]:
        """``CoinState.information_state_key``: the moves so far, the positions and the coin."""
        if player is None:
            raise ValueError("a simultaneous game's info states need the player")
        out = []
        rounds, moves = self.rounds[rows].tolist(), self.moves[rows].tolist()
        pos, coin, colour = self.pos[rows].tolist(), self.coin[rows].tolist(), self.colour[rows].tolist()
        for k, m, (p0, p1), c, col in zip(rounds, moves, pos, coin, colour):
            history = ";".join(f"{a},{b}" for a, b in m[:k])
            out.append(
                f"p{player} r{k} [{history}] pos=[({p0[0]}, {p0[1]}), ({p1[0]}, {p1[1]})] coin=({c[0]}, {c[1]})/{col}"
            )
        return out

    def observations(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        """``float32 [R, 4 or 8, size, size]``: ``CoinState.observation_tensor``, rolled so the
        observer sits at the centre cell; with ``memory``, four constant planes of pickup counts."""
        if player is None:
            raise ValueError("a simultaneous game's observations need the player")
        n, k = self.face.size, self.face.memory
        idx = np.arange(len(rows))
        me = self.pos[rows, player]
        shift = n // 2 - me  # [R, 2]: the roll that puts the observer at the centre
        out = np.zeros((len(rows), 8 if k else 4, n, n), dtype=np.float32)
        out[idx, 0, n // 2, n // 2] = 1
        other = (self.pos[rows, 1 - player] + shift) % n
        out[idx, 1, other[:, 0], other[:, 1]] = 1
        coin = (self.coin[rows] + shift) % n
        out[idx, np.where(self.colour[rows] == player, 2, 3), coin[:, 0], coin[:, 1]] = 1
        if k:
            out[:, 4:] = self._pickup_counts(rows, player)[:, :, None, None]
        return out

    def _pickup_counts(self, rows: np.ndarray, player: int) -> np.ndarray:
        """``[R, 4]``: the last ``memory`` rounds' pickups from ``player``'s side, counted in
        ``PICKUP_EVENTS`` order (I took my coin, the other's; the other took its own, mine)."""
        r = self.rounds[rows][:, None]
        steps = np.arange(self.face.horizon)[None, :]
        window = (steps < r) & (steps >= r - self.face.memory)
        taken = self.taken[rows]
        me, other = taken[:, :, player], taken[:, :, 1 - player]
        events = [me == player, me == 1 - player, other == 1 - player, other == player]
        return np.stack([(e & window).sum(axis=1) for e in events], axis=1).astype(np.float32)

    def outcome_info(self, row: int) -> dict[str, Any]:
        """``CoinState.outcome_info``: each player's share of own-colour coins (NaN before any), counts."""
        picks = self.picks[row]
        total = picks.sum(axis=1)
        own_rate = [float(picks[p][0] / total[p]) if total[p] else float("nan") for p in range(2)]
        return {"own_coin_rate": own_rate, "own_picks": picks[:, 0].tolist(), "other_picks": picks[:, 1].tolist()}

    def state_at(self, row: int, game: Any = None) -> Any:
        """Game ``row``'s ``CoinState`` as it stands, built from its arrays (its hidden generator
        aside: the state is for rendering an observation, not for playing on)."""
        game, k = self.face.game, int(self.rounds[row])
        state = CoinState.__new__(CoinState)
        RoundState.__init__(state, game)
        state.pos = [tuple(p) for p in self.pos[row].tolist()]
        state.coin, state.coin_colour = tuple(self.coin[row].tolist()), int(self.colour[row])
        state.picks = self.picks[row].copy()
        state.taken = [tuple(t) for t in self.taken[row, :k].tolist()]
        state.history = [tuple(m) for m in self.moves[row, :k].tolist()]
        state.round, state.totals = k, self.totals[row].copy()
        state._stopped = bool(self.player[row] == TERMINAL and k < game.horizon)
        return state
