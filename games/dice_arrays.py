"""The array face (:mod:`arena.arrays`) of Liar's dice, two players, any ``numdice`` and
``dice_sides``, either of OpenSpiel's bidding rules.

The rules are OpenSpiel's ``liars_dice``, written again over numpy arrays: each player rolls its
dice (player 0's first, one chance node a die, faces listed 1..sides, one uniform each); then the
players bid in turn, each bid a higher action number than the last (``q-f``: at least ``q`` dice
in play show face ``f``; the highest face is wild), until one calls liar (action ``numdice ·
2 · sides``, not as the first move). The bidder wins (+1, the caller -1) when enough dice match,
else the caller does. Info-state keys and tensors are OpenSpiel's own, kept in tables as for the
card games (:mod:`arena.games.card_arrays`): a new info state is replayed once in ``pyspiel``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.arrays import ArrayRandom, HistoryGames, cdf_pick
from arena.game import TERMINAL
from arena.games.card_arrays import _CardFace


class LiarsDiceFace(_CardFace):
    """An info state's code: ``(bids so far as a bit set · sides^numdice + own sorted dice in base
    sides) · 2 + player`` (bids rise strictly, so the set is the sequence)."""

    records = True
    """Trajectories may be recorded on the face: :meth:`LiarsDiceGames.history` replays a game
    and its returns are 0 until the end, as the ``State``'s."""

    def __init__(self, pyspiel_game: Any) -> None:
        super().__init__(pyspiel_game)
        params = pyspiel_game.get_parameters()
        self.dice, self.sides = int(params["numdice"]), int(params["dice_sides"])
        self.total = 2 * self.dice
        self.liar = self.total * self.sides
        self.reset_face = params.get("bidding_rule", "reset-face") == "reset-face"

    @classmethod
    def for_game(cls, game: Any) -> "LiarsDiceFace | None":
        """The face of a loaded Liar's dice game, or ``None`` for other than two players with the
        same number of dice each, or when an info state's code would not fit in 63 bits."""
        g = game.pyspiel_game
        params = g.get_parameters()
        if g.num_players() != 2 or any(k.startswith("numdice") and k != "numdice" for k in params):
            return None
        dice, sides = int(params["numdice"]), int(params["dice_sides"])
        if 2 * dice * sides + dice * np.log2(max(sides, 2)) + 1 > 62:
            return None
        return cls(g)

    def reset(self, rng: ArrayRandom) -> "LiarsDiceGames":
        return LiarsDiceGames(self, rng)


class LiarsDiceGames(HistoryGames):
    def __init__(self, face: LiarsDiceFace, rng: ArrayRandom) -> None:
        self.face, self.rng = face, rng
        b, d, s = len(rng), face.dice, face.sides
        rows = np.arange(b)
        rolls = [cdf_pick(rng.uniform(rows), [1.0 / s] * s) for _ in range(face.total)]
        self.hist = np.zeros((b, face.total + face.liar + 1), dtype=np.int64)
        self.hist[:, : face.total] = np.stack(rolls, axis=1)
        self.hlen = np.full(b, face.total, dtype=np.int64)
        self.dice = np.sort(self.hist[:, : face.total].reshape(b, 2, d) + 1, axis=2)
        """``[B, 2, numdice]``: each player's dice, faces 1..sides, ascending."""
        weights = s ** np.arange(d - 1, -1, -1, dtype=np.int64)
        self.dice_code = ((self.dice - 1) * weights).sum(axis=2)
        self.bid = np.full(b, -1, dtype=np.int64)
        self.bids = np.zeros(b, dtype=np.int64)
        """The bids so far as a bit set."""
        self.player = np.zeros(b, dtype=np.int64)
        self._returns = np.zeros((b, 2), dtype=np.float64)

    def legal_mask(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        face = self.face
        out = np.arange(face.liar + 1)[None, :] > self.bid[rows, None]
        out[:, face.liar] = self.bid[rows] >= 0
        return out

    def step(self, rows: np.ndarray, actions: np.ndarray) -> None:
        face, a = self.face, np.asarray(actions, dtype=np.int64)
        self.hist[rows, self.hlen[rows]] = a
        self.hlen[rows] += 1
        called = a == face.liar
        bidding = rows[~called]
        self.bid[bidding] = a[~called]
        self.bids[bidding] |= np.left_shift(1, a[~called])
        self.player[bidding] = 1 - self.player[bidding]
        if called.any():
            self._resolve(rows[called])

    def _resolve(self, rows: np.ndarray) -> None:
        """Liar called by the player to move on the other's bid: count the matching dice."""
        face = self.face
        bid = self.bid[rows]
        if face.reset_face:
            quantity, show = bid // face.sides + 1, bid % face.sides + 1
        else:
            quantity, show = bid % face.total + 1, bid // face.total + 1
        dice = self.dice[rows].reshape(len(rows), face.total)
        matches = ((dice == show[:, None]) | (dice == face.sides)).sum(axis=1)
        caller = self.player[rows]
        winner = np.where(matches >= quantity, 1 - caller, caller)
        k = np.arange(len(rows))
        ret = np.full((len(rows), 2), -1.0)
        ret[k, winner] = 1.0
        self._returns[rows] = ret
        self.player[rows] = TERMINAL

    def info_states(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        p = self.player[rows]
        codes = (self.bids[rows] * self.face.sides**self.face.dice + self.dice_code[rows, p]) * 2 + p
        return self.face.dense(codes, self.hist[rows], self.hlen[rows], p)
