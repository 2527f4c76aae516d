"""The match runner's array path: a batch of games stepped as numpy arrays (:mod:`arena.arrays`).

:func:`arena.playing.match.play_games` takes it when the game has an array face and every agent
decides from arrays, and nothing needs a ``State``: no trajectories or transcripts are kept, no
timeout is set, no agent watches games start or end. The results are the ``State`` path's: the
same streams, the same lockstep steps (each agent answers all of its games' pending decisions of
a step in one call), the same forfeits for an agent that raises or plays an illegal move. Which
path ran is logged (``arena --debug``).
"""

from __future__ import annotations

import logging
import time
import traceback
from typing import Sequence

import numpy as np

from arena.agent import Agent
from arena.arrays import ArrayFace, ArrayGames, ArrayRandom, acts_on_arrays
from arena.game import Game

log = logging.getLogger("arena.playing")

Forfeited = tuple[int, str, str]
"""A forfeit on the array path: the player, the agent's name, the reason."""


def array_face_for(
    game: Game, agents: Sequence[Agent], record: bool, timeout: float | None
) -> tuple[ArrayFace | None, str]:
    """The face to play on, or ``None`` with the reason the ``State`` path runs instead."""
    face = game.array_face()
    if face is None:
        return None, f"game '{game.spec.full_name}' has no array face"
    slow = [a.name for a in agents if not acts_on_arrays(a)]
    if slow:
        return None, f"agent(s) {', '.join(sorted(set(slow)))} need a State"
    if any(
        type(a).game_started is not Agent.game_started or type(a).game_finished is not Agent.game_finished
        for a in agents
    ):
        return None, "an agent watches games start or end"
    if record:
        return None, "trajectories are recorded"
    if timeout is not None:
        return None, "a timeout is set"
    return face, "every agent decides from arrays"


def choose_face(game: Game, agents: Sequence[Agent], record: bool, timeout: float | None) -> ArrayFace | None:
    """:func:`array_face_for`, saying which path runs and why."""
    face, why = array_face_for(game, agents, record, timeout)
    log.debug("match on %s: %s path (%s)", game.spec.full_name, "array" if face is not None else "State", why)
    return face


def play_array_batch(
    game: Game,
    face: ArrayFace,
    agents: Sequence[Agent],
    indices: Sequence[int],
    seed: int,
    seatings: Sequence[list[int]],
) -> list[tuple[int, list[str], list[float], int, float, Forfeited | None]]:
    """One batch on the face: per game in ``indices`` order, what its
    :class:`~arena.playing.match.GameResult` holds (index, seat names, returns, length, seconds,
    forfeit). ``seatings[i % n]`` is the agents-list position in each seat of game ``i``."""
    start = time.perf_counter()
    n = game.spec.num_players
    games = face.reset(ArrayRandom(seed, indices))
    idx = np.asarray(list(indices), dtype=np.int64)
    seat_pos = np.asarray(seatings, dtype=np.int64)[idx % n]  # [B, n]: agents position per seat
    length = np.zeros(len(idx), dtype=np.int64)
    ended = np.full(len(idx), np.nan)
    forfeits: dict[int, Forfeited] = {}
    owners: dict[int, list[int]] = {}
    for k, a in enumerate(agents):  # one call per agent object, whichever seats it holds
        owners.setdefault(id(a), []).append(k)
    while True:
        live = np.flatnonzero(games.player >= 0)
        if forfeits:
            live = live[[int(b) not in forfeits for b in live.tolist()]]
        now = time.perf_counter()
        ended[np.isnan(ended) & (games.player < 0)] = now
        for b in forfeits:
            ended[b] = now if np.isnan(ended[b]) else ended[b]
        if not len(live):
            break
        pos = seat_pos[live, games.player[live]]
        moving, actions = [], []
        for positions in owners.values():
            rows = live[np.isin(pos, positions)]
            if len(rows):
                legal, chosen = _decide(agents[positions[0]], games, rows, forfeits)
                moving.append(rows[legal])
                actions.append(chosen)
        rows = np.concatenate(moving) if moving else live[:0]
        if len(rows):
            games.step(rows, np.concatenate(actions))
            length[rows] += 1
    returns = games.returns().astype(np.float64).tolist()  # Python floats, one conversion per batch
    names = [[agents[k].name for k in order] for order in seatings]
    out = []
    for b, (i, ret, steps, t) in enumerate(zip(idx.tolist(), returns, length.tolist(), (ended - start).tolist())):
        f = forfeits.get(b) if forfeits else None
        if f is not None:
            ret = game.new_initial_state().forfeit_returns(f[0], game.spec)
        out.append((i, names[i % n][:], ret, steps, t, f))
    return out


def _decide(
    agent: Agent, games: ArrayGames, rows: np.ndarray, forfeits: dict[int, Forfeited]
) -> tuple[np.ndarray, np.ndarray]:
    """One ``act_arrays`` call: the rows whose action is legal and those actions; the others forfeit."""
    try:
        actions = np.asarray(agent.act_arrays(games, rows))  # type: ignore[attr-defined]
        if actions.shape != rows.shape or actions.dtype.kind not in "iu":
            raise ValueError(f"act_arrays returned {actions.shape} {actions.dtype} for {len(rows)} decisions")
    except Exception as exc:
        reason = "exception: " + traceback.format_exception_only(type(exc), exc)[-1].strip()
        for b in rows.tolist():
            forfeits[b] = (int(games.player[b]), agent.name, reason)
        return np.zeros(len(rows), dtype=bool), np.zeros(0, dtype=np.int64)
    mask = games.legal_mask(rows)
    inside = (actions >= 0) & (actions < mask.shape[1])
    legal = inside & mask[np.arange(len(rows)), np.where(inside, actions, 0)]
    for b, a, m in zip(rows[~legal].tolist(), actions[~legal].tolist(), mask[~legal]):
        forfeits[b] = (int(games.player[b]), agent.name, f"illegal action {a!r}; legal: {np.flatnonzero(m).tolist()}")
    return legal, actions[legal]
