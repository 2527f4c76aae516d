"""The array face (:mod:`arena.arrays`) of OpenSpiel's tic-tac-toe and connect four, as the
OpenSpiel adapter loads them (``openspiel:tic_tac_toe``, ``openspiel:connect_four`` with any
``rows``, ``columns`` and ``x_in_row`` whose ``(rows + 1) · columns`` fits 64 bits).

The rules are OpenSpiel's, written again over numpy arrays: player 0 (x) and player 1 (o) take
turns; a tic-tac-toe move marks an empty cell (action = row · 3 + column), a connect-four move
drops a disc into a column that is not full (action = column). A line of three (``x_in_row``)
wins +1 against -1; a full board is a draw. Neither game has chance.

An info state is the whole move history (OpenSpiel's key: the actions joined by ``", "``), too many
to table for connect four, so the face has no tables (``tabled = False``): each row's key and
observation tensor (OpenSpiel's ``observation_tensor``, the board as three planes) are computed
from its arrays when asked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.arrays import ArrayFace, ArrayFaceEntry, ArrayRandom, HistoryGames
from arena.game import TERMINAL
from arena.hookspecs import hookimpl


class BoardFace(ArrayFace):
    """A two-player board of ``rows × columns`` cells, ``x_in_row`` to win; ``gravity``: a move
    names a column and lands on its lowest empty cell (connect four), else it names a cell.
    ``planes``: the cell value (0 empty, 1 player 0, 2 player 1) of each observation plane."""

    tabled = False
    records = True
    """Trajectories may be recorded on the face: :meth:`BoardGames.history` replays a game, and
    its returns are 0 until the end, as the ``State``'s."""

    def __init__(self, rows: int, columns: int, x_in_row: int, gravity: bool, planes: tuple[int, int, int]) -> None:
        self.num_players = 2
        self.rows, self.columns, self.x_in_row, self.gravity = rows, columns, x_in_row, gravity
        self.num_actions = columns if gravity else rows * columns
        self.planes = np.asarray(planes, dtype=np.int8)
        if (rows + 1) * columns > 64:
            raise ValueError(f"a {rows} x {columns} board does not fit a 64-bit bit set with a spare row")
        self.steps = (1, rows + 1, rows, rows + 2)
        """Bit distance between neighbours on a line: up a column, along a row, the two diagonals."""

    def reset(self, rng: ArrayRandom) -> "BoardGames":
        return BoardGames(self, rng)


def tic_tac_toe_face(game: Any) -> BoardFace:
    """OpenSpiel's tic-tac-toe: its observation planes are empty, o (player 1), x (player 0)."""
    return BoardFace(3, 3, 3, gravity=False, planes=(0, 2, 1))


def connect_four_face(game: Any) -> BoardFace | None:
    """OpenSpiel's connect four (planes: player 0, player 1, empty; row 0 at the bottom), or
    ``None`` with ``egocentric_obs_tensor`` (planes by the player to move) or a board whose
    ``(rows + 1) · columns`` exceeds 64 bits."""
    params = game.pyspiel_game.get_parameters()
    rows, columns = int(params["rows"]), int(params["columns"])
    if params.get("egocentric_obs_tensor", False) or (rows + 1) * columns > 64:
        return None
    return BoardFace(rows, columns, int(params["x_in_row"]), gravity=True, planes=(1, 2, 0))


class BoardGames(HistoryGames):
    def __init__(self, face: BoardFace, rng: ArrayRandom) -> None:
        self.face, self.rng = face, rng
        b, cells = len(rng), face.rows * face.columns
        self.board = np.zeros((b, face.rows, face.columns), dtype=np.int8)
        """Cell values: 0 empty, 1 player 0, 2 player 1 (row 0 is connect four's bottom row)."""
        self.height = np.zeros((b, face.columns), dtype=np.int64)
        self.bits = np.zeros((b, 2), dtype=np.uint64)
        """Each player's cells as a bit set (:meth:`_line_through`)."""
        self.hist = np.zeros((b, cells), dtype=np.int64)
        self.hlen = np.zeros(b, dtype=np.int64)
        self.player = np.zeros(b, dtype=np.int64)
        self._returns = np.zeros((b, 2), dtype=np.float64)

    def legal_mask(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        if self.face.gravity:
            return self.height[rows] < self.face.rows
        return (self.board[rows] == 0).reshape(len(rows), -1)

    def step(self, rows: np.ndarray, actions: np.ndarray) -> None:
        face, a = self.face, np.asarray(actions, dtype=np.int64)
        p = self.player[rows]
        if face.gravity:
            r, c = self.height[rows, a], a
            self.height[rows, a] = r + 1
        else:
            r, c = a // face.columns, a % face.columns
        self.board[rows, r, c] = p + 1
        self.hist[rows, self.hlen[rows]] = a
        self.hlen[rows] += 1
        won = self._line_through(rows, r, c, p)
        full = self.hlen[rows] == face.rows * face.columns
        self.player[rows] = np.where(won | full, TERMINAL, 1 - p)
        if won.any():
            k = np.flatnonzero(won)
            self._returns[rows[k], p[k]] = 1.0
            self._returns[rows[k], 1 - p[k]] = -1.0

    def _line_through(self, rows: np.ndarray, r: np.ndarray, c: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Whether each row's mover, having just played ``(r, c)``, now has ``x_in_row`` in a line
        (any line is the new one: the game ends at the first). Each player's cells are a bit set,
        cell ``(r, c)`` at bit ``c · (rows + 1) + r``: the spare bit atop each column stops lines
        from wrapping, so a line along step ``s`` is a bit that survives ``x_in_row - 1`` shifts."""
        face = self.face
        bits = self.bits[rows, p] | np.left_shift(np.uint64(1), (c * (face.rows + 1) + r).astype(np.uint64))
        self.bits[rows, p] = bits
        won = np.zeros(len(rows), dtype=bool)
        for step in face.steps:
            line = bits
            for k in range(1, face.x_in_row):
                line = line & (bits >> np.uint64(k * step))
            won |= line != 0
        return won

    def info_state_keys(self, rows: np.ndarray, player: int | None = None) -> list[str]:
        """OpenSpiel's key, the same for both players: the moves so far joined by ``", "``."""
        return [", ".join(map(str, h[:n])) for h, n in zip(self.hist[rows].tolist(), self.hlen[rows].tolist())]

    def observations(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        """``float32 [R, 3 · rows · columns]``: one plane per cell value, as OpenSpiel orders them."""
        board = self.board[rows]
        planes = board[:, None, :, :] == self.face.planes[None, :, None, None]
        return planes.reshape(len(rows), -1).astype(np.float32)

    def info_states(self, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        raise NotImplementedError("a board face has no info-state tables (tabled = False): use info_state_keys")


@hookimpl
def arena_array_faces() -> list[ArrayFaceEntry]:
    return [
        ArrayFaceEntry("openspiel:tic_tac_toe", tic_tac_toe_face, "OpenSpiel's tic-tac-toe as numpy arrays"),
        ArrayFaceEntry("openspiel:connect_four", connect_four_face, "OpenSpiel's connect four as numpy arrays"),
    ]
