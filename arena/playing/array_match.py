"""The match runner's array path: a batch of games stepped as numpy arrays (:mod:`arena.arrays`).

:func:`arena.playing.match.play_games` takes it when the game has an array face and every agent
decides from arrays, and nothing needs a ``State``: no timeout is set, no agent watches games
start or end, and trajectories are recorded only on a face that can (``ArrayFace.records``) for
agents whose decisions carry no info dicts (``act_batch_info`` not overridden: log-probs, token
ids) or that give them on arrays too (``act_arrays_info``: the neural agent's log-probs). The results are the ``State`` path's: the same streams, the same lockstep steps (each agent
answers all of its games' pending decisions of a step in one call), the same forfeits for an
agent that raises or plays an illegal move, the same trajectories and transcripts. Which path ran,
and why, is logged (``arena --debug``).
"""

from __future__ import annotations

import logging
import time
import traceback
import weakref
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from arena.agent import Agent, Observation
from arena.arrays import ArrayFace, ArrayGames, ArrayRandom, acts_on_arrays
from arena.game import SIMULTANEOUS, TERMINAL, Game
from arena.rng import GameRandom
from arena.trainer import Step, Trajectory

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
    if any(_watches(a) for a in agents):
        return None, "an agent watches games start or end"
    if record and not face.records:
        return None, "trajectories are recorded and the face cannot record them"
    talkers = [
        a.name
        for a in agents
        if type(a).act_batch_info is not Agent.act_batch_info and not callable(getattr(a, "act_arrays_info", None))
    ]
    if record and talkers:
        return None, f"trajectories are recorded and agent(s) {', '.join(sorted(set(talkers)))} report decision info"
    if timeout is not None:
        return None, "a timeout is set"
    return face, "every agent decides from arrays"


def _watches(agent: Agent) -> bool:
    """Whether ``agent`` hears games start or end: its ``watches_games`` when it says (an agent
    whose hooks do something only sometimes), else whether it overrides the hooks."""
    says = getattr(agent, "watches_games", None)
    if says is not None:
        return bool(says)
    return type(agent).game_started is not Agent.game_started or type(agent).game_finished is not Agent.game_finished


def choose_face(game: Game, agents: Sequence[Agent], record: bool, timeout: float | None) -> ArrayFace | None:
    """:func:`array_face_for`, saying which path runs and why."""
    face, why = array_face_for(game, agents, record, timeout)
    log.debug("match on %s: %s path (%s)", game.spec.full_name, "array" if face is not None else "State", why)
    return face


@dataclass
class ArrayResults:
    """One array-path batch as columns, in game order: what its
    :class:`~arena.playing.match.GameResult` objects would hold, without building one per game
    (:func:`arena.playing.match.array_results` builds them where a caller needs them)."""

    game: Game
    seed: int
    indices: np.ndarray
    """``int64 [B]``: the game indices."""
    seating: np.ndarray
    """``int64 [B]``: which of :attr:`names` seats each game (``index % num_players``)."""
    names: list[list[str]]
    """Agent name per seat, per seating."""
    returns: np.ndarray
    """``float64 [B, num_players]``; a forfeited game's row holds its forfeit returns."""
    lengths: np.ndarray
    durations: np.ndarray
    forfeits: dict[int, Forfeited] = field(default_factory=dict)
    """Row -> the forfeit, for forfeited games only."""
    forfeit_returns: dict[int, list[float]] = field(default_factory=dict)
    """Row -> ``State.forfeit_returns`` as the game gives them (a forfeited game's reported returns)."""
    info: dict[int, dict[str, Any]] = field(default_factory=dict)
    """Row -> ``State.outcome_info``, for the games that report any."""
    trajectories: list[Trajectory] | None = None
    transcripts: list[list[str]] | None = None
    """Per game, when the batch was recorded (``play_games(record=True)``)."""

    def __len__(self) -> int:
        return len(self.indices)


def play_array_batch(
    game: Game,
    face: ArrayFace,
    agents: Sequence[Agent],
    indices: Sequence[int],
    seed: int,
    seatings: Sequence[list[int]],
    record: bool = False,
) -> ArrayResults:
    """One batch on the face, as columns. ``seatings[i % n]`` is the agents-list position in each
    seat of game ``i``. ``record``: trajectories and transcripts as the ``State`` path keeps them."""
    return play_array_tables(game, face, [(agents, indices, seatings)], seed, record)[0]


def play_array_tables(
    game: Game,
    face: ArrayFace,
    tables: Sequence[tuple[Sequence[Agent], Sequence[int], Sequence[list[int]]]],
    seed: int,
    record: bool = False,
) -> list[ArrayResults]:
    """The games of several matches of one run seed in one batch on the face: ``tables`` holds
    each match's ``(agents, indices, seatings)`` (as :func:`play_array_batch` takes them; indices
    distinct across matches); the results are each match's columns, as if it had played alone.
    An agent object in several matches decides for all of its games in one call per step (a
    league learner's games against each opponent: one forward pass, not one per opponent)."""
    start = time.perf_counter()
    n = game.spec.num_players
    agents: list[Agent] = []
    names: list[list[str]] = []
    seat_pos, idx, seating, bounds, firsts = [], [], [], [0], []
    for t_agents, t_indices, t_seatings in tables:
        ix = np.asarray(list(t_indices), dtype=np.int64)
        firsts.append(len(names))
        seat_pos.append(len(agents) + np.asarray(t_seatings, dtype=np.int64)[ix % n])
        seating.append(len(names) + ix % n)
        names += [[t_agents[k].name for k in order] for order in t_seatings]
        agents += list(t_agents)
        idx.append(ix)
        bounds.append(bounds[-1] + len(ix))
    all_idx = np.concatenate(idx)
    games = face.reset(ArrayRandom(seed, all_idx.tolist()))
    table = _Table(agents, np.concatenate(seat_pos), len(all_idx))
    if record:
        table.recorder = _Recorder(game, games, all_idx, seed)
    while True:
        if table.forfeits:
            games.player[list(table.forfeits)] = TERMINAL  # finished for the loop; its returns are the forfeit's
        now = time.perf_counter()
        table.ended[np.isnan(table.ended) & (games.player == TERMINAL)] = now
        turn, joint = np.flatnonzero(games.player >= 0), np.flatnonzero(games.player == SIMULTANEOUS)
        if not len(turn) and not len(joint):
            break
        if len(turn):
            table.turn_step(games, turn)
        if len(joint):
            table.joint_step(games, joint, n)
    out = _columns(game, games, table, all_idx, seed, names, np.concatenate(seating), start)
    if len(tables) == 1:
        return [out]
    return [_rows(out, lo, hi, first, len(t[2])) for t, lo, hi, first in zip(tables, bounds, bounds[1:], firsts)]


def _rows(out: ArrayResults, lo: int, hi: int, first: int, count: int) -> ArrayResults:
    """Games ``lo:hi`` of a merged batch as their own match's columns (its seatings are
    ``out.names[first : first + count]``)."""
    inside = lambda d: {b - lo: v for b, v in d.items() if lo <= b < hi}  # noqa: E731
    return ArrayResults(
        out.game,
        out.seed,
        out.indices[lo:hi],
        out.seating[lo:hi] - first,
        out.names[first : first + count],
        out.returns[lo:hi],
        out.lengths[lo:hi],
        out.durations[lo:hi],
        inside(out.forfeits),
        inside(out.forfeit_returns),
        inside(out.info),
        out.trajectories[lo:hi] if out.trajectories is not None else None,
        out.transcripts[lo:hi] if out.transcripts is not None else None,
    )


def _columns(
    game: Game,
    games: ArrayGames,
    table: "_Table",
    idx: np.ndarray,
    seed: int,
    names: list[list[str]],
    seating: np.ndarray,
    start: float,
) -> ArrayResults:
    out = ArrayResults(
        game,
        seed,
        idx,
        seating,
        names,
        games.returns().astype(np.float64),
        table.length,
        table.ended - start,
        dict(sorted(table.forfeits.items())),
    )
    for b, f in out.forfeits.items():
        ret = out.forfeit_returns[b] = game.new_initial_state().forfeit_returns(f[0], game.spec)
        out.returns[b] = ret
    if type(games).outcome_info is not ArrayGames.outcome_info:
        for b in range(len(idx)):
            if b not in out.forfeits and (info := games.outcome_info(b)):
                out.info[b] = info
    if table.recorder is not None:
        table.recorder.finish(out)
    return out


class _Table:
    """Who sits where in each game of the batch, and what the runner keeps per game."""

    def __init__(self, agents: Sequence[Agent], seat_pos: np.ndarray, size: int) -> None:
        self.agents, self.seat_pos = agents, seat_pos  # [B, n]: agents-list position per seat
        self.owners: dict[int, list[int]] = {}
        for k, a in enumerate(agents):  # one call per agent object, whichever seats it holds
            self.owners.setdefault(id(a), []).append(k)
        self.length = np.zeros(size, dtype=np.int64)
        self.ended = np.full(size, np.nan)
        self.forfeits: dict[int, Forfeited] = {}
        self.recorder: _Recorder | None = None

    def turn_step(self, games: ArrayGames, rows: np.ndarray) -> None:
        """Each agent decides all of its games' turns in one call; the legal moves are applied."""
        pos = self.seat_pos[rows, games.player[rows]]
        moving, actions = [], []
        for positions in self.owners.values():
            mine = rows[pos == positions[0] if len(positions) == 1 else np.isin(pos, positions)]
            if len(mine):
                legal, chosen = _decide(self.agents[positions[0]], games, mine, self, None)
                moving.append(mine[legal])
                actions.append(chosen)
        done = np.concatenate(moving)
        if len(done):
            games.step(done, np.concatenate(actions))
            self.length[done] += 1

    def joint_step(self, games: ArrayGames, rows: np.ndarray, n: int) -> None:
        """Simultaneous moves seat by seat, as the ``State`` path asks them (every game's players
        draw in seat order); a game whose move was forfeited is not stepped."""
        joint = np.zeros((len(rows), n), dtype=np.int64)
        ok = np.ones(len(rows), dtype=bool)
        for p in range(n):
            pos = self.seat_pos[rows, p]
            for positions in self.owners.values():
                sel = np.flatnonzero(ok & np.isin(pos, positions))
                if len(sel):
                    legal, chosen = _decide(self.agents[positions[0]], games, rows[sel], self, p)
                    joint[sel[legal], p] = chosen
                    ok[sel[~legal]] = False
        if ok.any():
            games.step(rows[ok], joint[ok])
            self.length[rows[ok]] += n


def _decide(
    agent: Agent, games: ArrayGames, rows: np.ndarray, table: _Table, player: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """One ``act_arrays`` call: the rows whose action is legal and those actions (recorded when
    the batch is); the others forfeit."""
    forfeits = table.forfeits
    who = games.player[rows] if player is None else np.full(len(rows), player)
    infos = None
    try:
        if table.recorder is not None and callable(getattr(agent, "act_arrays_info", None)):
            act = agent.act_arrays_info  # type: ignore[attr-defined]
            actions, infos = act(games, rows) if player is None else act(games, rows, player)
            actions = np.asarray(actions)
            if infos is not None and len(infos) != len(rows):
                raise ValueError(f"act_arrays_info returned {len(infos)} info dicts for {len(rows)} decisions")
        else:
            act = agent.act_arrays  # type: ignore[attr-defined]
            actions = np.asarray(act(games, rows) if player is None else act(games, rows, player))
        if actions.shape != rows.shape or actions.dtype.kind not in "iu":
            raise ValueError(f"act_arrays returned {actions.shape} {actions.dtype} for {len(rows)} decisions")
    except Exception as exc:
        reason = "exception: " + traceback.format_exception_only(type(exc), exc)[-1].strip()
        for b, p in zip(rows.tolist(), who.tolist()):
            forfeits[b] = (int(p), agent.name, reason)
        return np.zeros(len(rows), dtype=bool), np.zeros(0, dtype=np.int64)
    mask = games.legal_mask(rows, player)
    inside = (actions >= 0) & (actions < mask.shape[1])
    legal = inside & mask[np.arange(len(rows)), np.where(inside, actions, 0)]
    for b, p, a, m in zip(rows[~legal].tolist(), who[~legal].tolist(), actions[~legal].tolist(), mask[~legal]):
        forfeits[b] = (int(p), agent.name, f"illegal action {a!r}; legal: {np.flatnonzero(m).tolist()}")
    if table.recorder is not None and legal.any():
        kept = None if infos is None else [infos[k] for k in np.flatnonzero(legal).tolist()]
        table.recorder.record(rows[legal], who[legal], actions[legal], agent.name, player, kept)
    return legal, actions[legal]


_VIEWS: "weakref.WeakKeyDictionary[ArrayFace, dict[tuple[Any, int], tuple[dict[str, Any], dict[int, str]]]]" = (
    weakref.WeakKeyDictionary()
)
"""Per face: a recorded observation's cached values (``Observation.freeze``) per (info state, player)."""


def _face_tensors(games: ArrayGames, rows: np.ndarray, player: int | None) -> np.ndarray | None:
    """The rows' observation tensors from a face without tables, or ``None`` if it has none."""
    try:
        return np.asarray(games.observations(rows, player), dtype=np.float32)
    except NotImplementedError:
        return None


class _Recorder:
    """The ``State`` path's trajectories and transcripts (``arena.playing.match._record``), kept
    on the face: one :class:`~arena.trainer.Step` per legal decision, its observation's renderings
    worked out once per information state (a game that reached it replayed into a ``State``),
    rewards from the face's returns (a step's reward is its player's gain until their next step
    or the end)."""

    def __init__(self, game: Game, games: ArrayGames, idx: np.ndarray, seed: int) -> None:
        self.game, self.games, self.idx, self.seed = game, games, idx, seed
        b = len(idx)
        self.steps: list[list[Step]] = [[] for _ in range(b)]
        self.last: list[dict[int, tuple[int, float]]] = [{} for _ in range(b)]
        self.transcripts: list[list[str]] = [[] for _ in range(b)]
        self.streams: list[GameRandom | None] = [None] * b
        self.views = _VIEWS.setdefault(games.face, {})

    def record(
        self,
        rows: np.ndarray,
        who: np.ndarray,
        actions: np.ndarray,
        agent: str,
        player: int | None,
        infos: list[dict[str, Any]] | None = None,
    ) -> None:
        """Decisions about to be applied: ``actions`` (legal) by players ``who`` in games ``rows``,
        with the agent's info dict of each (``act_arrays_info``: a ``log_prob`` and extras, kept
        as the ``State`` path keeps them)."""
        returns = self.games.returns()[rows].tolist()
        games = self.games
        tabled = games.face.tabled  # without tables: keys, each view worked out and not kept
        states = games.info_states(rows, player).tolist() if tabled else games.info_state_keys(rows, player)
        tensors = None if tabled else _face_tensors(games, rows, player)
        name, views, streams = self.game.spec.full_name, self.views, self.streams
        for j, (b, p, a, s, ret) in enumerate(zip(rows.tolist(), who.tolist(), actions.tolist(), states, returns)):
            view, labels = views.get((s, p)) or self._view(b, p, s, tabled, None if tensors is None else tensors[j])
            stream = streams[b]
            if stream is None:
                stream = streams[b] = GameRandom(self.seed, int(self.idx[b]))
            obs = Observation(None, p, stream, name)  # type: ignore[arg-type]  # frozen: no state
            obs.__dict__.update(view)
            steps, last = self.steps[b], self.last[b]
            if p in last:
                k, before = last[p]
                steps[k].reward = ret[p] - before
            self.transcripts[b].append(f"player {p} ({agent}): {labels[a]}")
            info = infos[j] if infos is not None else None
            if info:
                steps.append(
                    Step(p, obs, a, info.get("log_prob"), 0.0, {x: v for x, v in info.items() if x != "log_prob"})
                )
            else:
                steps.append(Step(p, obs, a, None, 0.0, {}))
            last[p] = (len(steps) - 1, ret[p])

    def _view(
        self, b: int, p: int, s: Any, keep: bool, tensor: np.ndarray | None = None
    ) -> tuple[dict[str, Any], dict[int, str]]:
        """What ``Observation.freeze`` keeps of info state ``s`` (and each legal action's label),
        from game ``b``'s ``State`` (:meth:`~arena.arrays.ArrayGames.state_at`). A face without
        tables gives the key ``s`` and the ``tensor`` from its arrays, as the state would."""
        state = self.games.state_at(b, self.game)
        obs = Observation(state, p, None, self.game.spec.full_name)
        if not keep:
            obs.__dict__["info_state"] = s
            if tensor is not None:
                obs.__dict__["tensor"] = tensor
        view = dict(obs.freeze().__dict__)
        if isinstance(view.get("tensor"), np.ndarray):
            view["tensor"].setflags(write=False)  # one array for every step at this info state
        out = (view, dict(zip(view["legal_actions"], view["action_labels"])))
        if keep:
            self.views[(s, p)] = out
        return out

    def finish(self, out: ArrayResults) -> None:
        """The final rewards, each game's :class:`~arena.trainer.Trajectory` and transcript's end."""
        out.trajectories, out.transcripts = [], self.transcripts
        returns = out.returns.tolist()
        for b, (i, steps, last) in enumerate(zip(self.idx.tolist(), self.steps, self.last)):
            f = out.forfeits.get(b)
            final = out.forfeit_returns[b] if f is not None else returns[b]
            for p, (k, before) in last.items():
                steps[k].reward = float(final[p]) - before
            seats = out.names[int(out.seating[b])][:]
            out.trajectories.append(Trajectory(i, self.seed, seats, steps, list(final)))
            if f is not None:
                self.transcripts[b].append(f"player {f[0]} forfeits: {f[2]}")
            self.transcripts[b].append(f"result: {final}")
