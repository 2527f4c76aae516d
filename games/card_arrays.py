"""The array face (:mod:`arena.arrays`) of Kuhn poker (2+ players) and Leduc hold'em (2 players).

The rules are OpenSpiel's, written again over numpy arrays: the same deals (chance outcomes in
OpenSpiel's order, one uniform each), moves, legal actions and returns. Information-state keys
and tensors are OpenSpiel's own: the first time an information state turns up, one game that
reached it is replayed in ``pyspiel`` and its key and tensor are kept in the face's tables, so a
tabular policy keyed by ``State.information_state_key`` reads the same entries through either face.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.arrays import ArrayFace, ArrayRandom, HistoryGames, cdf_pick, kth_true
from arena.game import TERMINAL


class _CardFace(ArrayFace):
    """Tables of the information states met so far: sparse code → dense index, key, tensor."""

    def __init__(self, pyspiel_game: Any) -> None:
        self.pyspiel_game = pyspiel_game
        self.num_players = pyspiel_game.num_players()
        self.num_actions = pyspiel_game.num_distinct_actions()
        self._dense: dict[int, int] = {}
        self._keys: list[str] = []
        width = int(np.prod(pyspiel_game.information_state_tensor_shape()))
        self._tensors = np.zeros((16, width), dtype=np.float32)

    records = True  # returns are 0 until a game ends, as OpenSpiel's; histories are kept

    def info_state_key(self, index: int) -> str:
        return self._keys[index]

    def tensors(self, indices: np.ndarray) -> np.ndarray:
        return self._tensors[indices]

    def dense(self, codes: np.ndarray, hist: np.ndarray, hlen: np.ndarray, players: np.ndarray) -> np.ndarray:
        """Dense indices of info-state ``codes``; a code not seen before is added by replaying
        the first row that has it (its history ``hist[:hlen]``) in OpenSpiel."""
        uniq, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        out = np.empty(len(uniq), dtype=np.int64)
        for j, (code, f) in enumerate(zip(uniq.tolist(), first.tolist())):
            d = self._dense.get(code)
            if d is None:
                d = self._add(code, hist[f, : hlen[f]].tolist(), int(players[f]))
            out[j] = d
        return out[inverse]

    def _add(self, code: int, history: list[int], player: int) -> int:
        state = self.pyspiel_game.new_initial_state()
        for a in history:
            state.apply_action(a)
        d = self._dense[code] = len(self._keys)
        self._keys.append(state.information_state_string(player))
        if d == len(self._tensors):
            self._tensors = np.concatenate([self._tensors, np.zeros_like(self._tensors)])
        self._tensors[d] = state.information_state_tensor(player)
        return d


def _deal(rng: ArrayRandom, rows: np.ndarray, dealt: np.ndarray) -> np.ndarray:
    """One card per row from those not yet ``dealt`` (``bool [R, deck]``), as OpenSpiel's chance
    node lists them: the remaining cards ascending, equally likely."""
    left = dealt.shape[1] - dealt.sum(axis=1)
    cards = np.empty(len(rows), dtype=np.int64)
    for m in np.unique(left).tolist():
        sel = left == m
        k = cdf_pick(rng.uniform(rows[sel]), [1.0 / m] * m)
        cards[sel] = kth_true(~dealt[sel], k)
    dealt[np.arange(len(rows)), cards] = True
    return cards


# -- Kuhn poker ---------------------------------------------------------------------------------
class KuhnFace(_CardFace):
    """Kuhn poker with ``n`` players: ``n + 1`` cards, ante 1, pass (0) / bet (1) once round the table."""

    def reset(self, rng: ArrayRandom) -> "KuhnGames":
        return KuhnGames(self, rng)


class KuhnGames(HistoryGames):
    def __init__(self, face: KuhnFace, rng: ArrayRandom) -> None:
        self.face, self.rng = face, rng
        n, b = face.num_players, len(rng)
        self.n = n
        rows = np.arange(b)
        dealt = np.zeros((b, n + 1), dtype=bool)
        self.cards = np.stack([_deal(rng, rows, dealt) for _ in range(n)], axis=1)
        self.hist = np.zeros((b, 3 * n - 1), dtype=np.int64)
        self.hist[:, :n] = self.cards
        self.hlen = np.full(b, n, dtype=np.int64)
        self.moves = np.zeros(b, dtype=np.int64)
        self.bet_at = np.full(b, -1, dtype=np.int64)
        """Move number of the first bet, -1 while nobody has bet."""
        self.in_pot = np.zeros((b, n), dtype=bool)
        """Players who bet or called."""
        self.code = np.ones(b, dtype=np.int64)
        """The moves so far in binary after a leading 1."""
        self.player = np.zeros(b, dtype=np.int64)
        self._returns = np.zeros((b, n), dtype=np.float64)

    def legal_mask(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        return np.ones((len(rows), 2), dtype=bool)

    def step(self, rows: np.ndarray, actions: np.ndarray) -> None:
        n, a = self.n, np.asarray(actions, dtype=np.int64)
        p, m = self.player[rows], self.moves[rows]
        self.hist[rows, self.hlen[rows]] = a
        self.hlen[rows] += 1
        self.code[rows] = self.code[rows] * 2 + a
        bet = a == 1
        self.in_pot[rows[bet], p[bet]] = True
        first = bet & (self.bet_at[rows] < 0)
        self.bet_at[rows[first]] = m[first]
        m = m + 1
        self.moves[rows] = m
        at = self.bet_at[rows]
        over = np.where(at < 0, m == n, m == at + n)
        self.player[rows] = np.where(over, TERMINAL, m % n)
        if over.any():
            self._settle(rows[over])

    def _settle(self, rows: np.ndarray) -> None:
        """Showdown among those who bet or called (everyone when nobody bet): the pot to the highest card."""
        in_pot = self.in_pot[rows]
        nobody = ~in_pot.any(axis=1)
        contender = in_pot | nobody[:, None]
        winner = np.argmax(np.where(contender, self.cards[rows], -1), axis=1)
        paid = 1.0 + in_pot
        ret = -paid
        ret[np.arange(len(rows)), winner] += paid.sum(axis=1)
        self._returns[rows] = ret

    def info_states(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        p = self.player[rows]
        n = self.n
        codes = (self.code[rows] * (n + 1) + self.cards[rows, p]) * n + p
        return self.face.dense(codes, self.hist[rows], self.hlen[rows], p)


# -- Leduc hold'em ------------------------------------------------------------------------------
FOLD, CALL, RAISE = 0, 1, 2


class LeducFace(_CardFace):
    """Leduc hold'em, 2 players: 6 cards (card // 2 is the rank), ante 1, raises of 2 then 4,
    at most 2 raises a round; a pair with the public card wins, then the higher rank."""

    def reset(self, rng: ArrayRandom) -> "LeducGames":
        return LeducGames(self, rng)


class LeducGames(HistoryGames):
    def __init__(self, face: LeducFace, rng: ArrayRandom) -> None:
        self.face, self.rng = face, rng
        b = len(rng)
        rows = np.arange(b)
        self.dealt = np.zeros((b, 6), dtype=bool)
        self.cards = np.stack([_deal(rng, rows, self.dealt) for _ in range(2)], axis=1)
        self.public = np.full(b, -1, dtype=np.int64)
        self.hist = np.zeros((b, 11), dtype=np.int64)
        self.hist[:, :2] = self.cards
        self.hlen = np.full(b, 2, dtype=np.int64)
        self.round2 = np.zeros(b, dtype=bool)
        self.stakes = np.ones(b, dtype=np.int64)
        self.paid = np.ones((b, 2), dtype=np.int64)
        self.raises = np.zeros(b, dtype=np.int64)
        self.round_moves = np.zeros(b, dtype=np.int64)
        self.code = np.zeros(b, dtype=np.int64)
        """Every move so far in base 4, digit ``action + 1``."""
        self.player = np.zeros(b, dtype=np.int64)
        self._returns = np.zeros((b, 2), dtype=np.float64)

    def legal_mask(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        p = self.player[rows]
        out = np.ones((len(rows), 3), dtype=bool)
        out[:, FOLD] = self.paid[rows, p] < self.stakes[rows]
        out[:, RAISE] = self.raises[rows] < 2
        return out

    def step(self, rows: np.ndarray, actions: np.ndarray) -> None:
        a = np.asarray(actions, dtype=np.int64)
        p = self.player[rows]
        hlen, round2 = self.hlen[rows], self.round2[rows]  # each column read once, written once
        self.hist[rows, hlen] = a
        self.hlen[rows] = hlen + 1
        self.code[rows] = self.code[rows] * 4 + a + 1
        raised = a == RAISE
        stakes = self.stakes[rows] + raised * (2 + 2 * round2)  # raises of 2, then 4 in round 2
        self.stakes[rows] = stakes
        self.raises[rows] += raised
        folded = a == FOLD
        self.paid[rows, p] = np.where(folded, self.paid[rows, p], stakes)
        moves = self.round_moves[rows] + 1
        self.round_moves[rows] = moves
        self.player[rows] = 1 - p
        if folded.any():
            self._pay(rows[folded], 1 - p[folded])
        ended = (a == CALL) & (moves >= 2)
        if (showdown := ended & round2).any():
            self._showdown(rows[showdown])
        nxt = rows[ended & ~round2]
        if len(nxt):
            dealt = self.dealt[nxt]
            public = _deal(self.rng, nxt, dealt)
            self.public[nxt] = public
            self.dealt[nxt] = dealt
            self.hist[nxt, self.hlen[nxt]] = public
            self.hlen[nxt] += 1
            self.round2[nxt] = True
            self.raises[nxt] = 0
            self.round_moves[nxt] = 0
            self.player[nxt] = 0

    def _pay(self, rows: np.ndarray, winner: np.ndarray) -> None:
        """The pot to ``winner``: each player's return is what the other put in, or minus its own."""
        paid = self.paid[rows].astype(np.float64)
        k = np.arange(len(rows))
        ret = -paid
        ret[k, winner] = paid[k, 1 - winner]
        self._returns[rows] = ret
        self.player[rows] = TERMINAL

    def _showdown(self, rows: np.ndarray) -> None:
        rank = self.cards[rows] // 2
        pair = rank == (self.public[rows] // 2)[:, None]
        strength = pair * 10 + rank
        tie = strength[:, 0] == strength[:, 1]
        self._pay(rows, (strength[:, 1] > strength[:, 0]).astype(np.int64))
        self._returns[rows[tie]] = 0.0

    def info_states(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        p = self.player[rows]
        codes = ((self.code[rows] * 7 + self.public[rows] + 1) * 6 + self.cards[rows, p]) * 2 + p
        return self.face.dense(codes, self.hist[rows], self.hlen[rows], p)
