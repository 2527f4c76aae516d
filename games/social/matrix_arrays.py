"""The array face (:mod:`arena.arrays`) of the iterated matrix games (prisoner's dilemma, stag
hunt, chicken): every round a simultaneous node, then, with ``discount < 1``, a chance node that
stops the game with probability ``1 - discount`` (one uniform: continue when below ``discount``).
Returns, info-state keys, observation tensors and outcome facts are those of :class:`MatrixState`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.arrays import ArrayFace, ArrayGames, ArrayRandom, cdf_pick
from arena.game import SIMULTANEOUS, TERMINAL


def round_over(rng: ArrayRandom, rows: np.ndarray, rounds: np.ndarray, game: Any) -> np.ndarray:
    """bool per row: the game ends after ``rounds`` played, at ``game.horizon`` or, with
    ``game.discount < 1``, by the stopping chance node (one uniform from each going game's
    stream: it goes on when below ``discount``), as the ``State``'s round games end."""
    over = rounds >= game.horizon
    if game.discount < 1.0 and (~over).any():
        stop = cdf_pick(rng.uniform(rows[~over]), [game.discount, 1.0 - game.discount]) == 1
        over[np.flatnonzero(~over)[stop]] = True
    return over


class MatrixFace(ArrayFace):
    """Info states are whole histories: code ``(moves in base 4 as 2a + b, rounds played, player)``."""

    def __init__(self, game: Any) -> None:
        self.game = game
        self.num_players, self.num_actions = 2, 2
        self.matrix = np.asarray(game.matrix, dtype=np.float64)
        self._dense: dict[int, int] = {}
        self._keys: list[str] = []
        self._tensors: list[np.ndarray] = []

    def reset(self, rng: ArrayRandom) -> "MatrixGames":
        return MatrixGames(self, rng)

    def info_state_key(self, index: int) -> str:
        return self._keys[index]

    def tensors(self, indices: np.ndarray) -> np.ndarray:
        return (
            np.stack([self._tensors[i] for i in indices.tolist()])
            if len(indices)
            else np.zeros((0, self.game.memory, 5), np.float32)
        )

    def dense(self, history: np.ndarray, rounds: np.ndarray, player: int) -> np.ndarray:
        """Dense indices of the histories' info states for ``player`` (new ones added)."""
        codes = np.zeros(len(rounds), dtype=np.int64)
        for r in range(history.shape[1]):  # moves as base-4 digits 2·row + column (0 once not played)
            codes = codes * 4 + np.where(r < rounds, 2 * history[:, r, 0] + history[:, r, 1], 0)
        codes = (codes * (history.shape[1] + 1) + rounds) * 2 + player
        uniq, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        out = np.empty(len(uniq), dtype=np.int64)
        for j, (code, f) in enumerate(zip(uniq.tolist(), first.tolist())):
            d = self._dense.get(code)
            if d is None:
                d = self._add(code, history[f, : rounds[f]].tolist(), player)
            out[j] = d
        return out[inverse]

    def _add(self, code: int, moves: list[list[int]], player: int) -> int:
        state = self.game.new_initial_state()
        state.history = [tuple(j) for j in moves]
        state.round = len(moves)
        d = self._dense[code] = len(self._keys)
        self._keys.append(state.information_state_key(player))
        self._tensors.append(state.observation_tensor(player))
        return d


class MatrixGames(ArrayGames):
    def __init__(self, face: MatrixFace, rng: ArrayRandom) -> None:
        self.face, self.rng = face, rng
        b, horizon = len(rng), face.game.horizon
        self.history = np.zeros((b, horizon, 2), dtype=np.int64)
        self.rounds = np.zeros(b, dtype=np.int64)
        self.totals = np.zeros((b, 2), dtype=np.float64)
        self.player = np.full(b, SIMULTANEOUS, dtype=np.int64)

    def legal_mask(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        return np.ones((len(rows), 2), dtype=bool)

    def step(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """``actions``: ``[R, 2]`` joint moves."""
        a, b = actions[:, 0], actions[:, 1]
        m = self.face.matrix
        r = self.rounds[rows]
        self.history[rows, r] = actions
        self.totals[rows, 0] += m[a, b]
        self.totals[rows, 1] += m[b, a]
        self.rounds[rows] = r = r + 1
        self.player[rows] = np.where(round_over(self.rng, rows, r, self.face.game), TERMINAL, SIMULTANEOUS)

    def returns(self) -> np.ndarray:
        return self.totals

    def info_states(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        if player is None:
            raise ValueError("a simultaneous game's info states need the player")
        return self.face.dense(self.history[rows], self.rounds[rows], player)

    def observations(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        return self.face.tensors(self.info_states(rows, player))

    def outcome_info(self, row: int) -> dict[str, Any]:
        """:meth:`MatrixState.outcome_info`: each player's share of cooperative moves, rounds played."""
        k = int(self.rounds[row])
        h = self.history[row, :k].astype(float)
        coop = (1.0 - h.mean(axis=0)).tolist() if k else [0.0, 0.0]
        return {"cooperation": coop, "rounds": k}
