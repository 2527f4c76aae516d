"""Plays games between agents, many at once, in lockstep.

Each step every unfinished game advances by one decision; each agent receives all of its
pending decisions in a single ``act_batch`` call (the same agent object in several seats gets
one call). Every game owns a random generator derived from ``(seed, game index)``: chance
outcomes and the agents' sampling use it, so the same seed gives the same results whatever
the batch size, the order of games or the executor.

An illegal action, an exception or a timeout forfeits the game for the agent at fault; the
reason is recorded and the other games go on. An agent may give up a decision on purpose (its
info dict names ``forfeit``: the reason); what a harness did to reach an action — invalid
attempts, retries, substituted moves (info keys in :data:`HARNESS_KEYS`) — is counted per seat
into ``GameResult.info["harness"]``, so no report hides it.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from arena.agent import Agent, Observation
from arena.errors import ArenaError
from arena.game import Game, State
from arena.playing.array_match import ArrayResults, choose_face, play_array_batch
from arena.rng import GameRandom, start_games
from arena.trainer import Step, Trajectory


@dataclass
class Forfeit:
    player: int
    agent: str
    reason: str


@dataclass(slots=True)
class GameResult:
    index: int
    seed: int
    seats: list[str]
    """Agent name per seat (player id)."""
    returns: list[float]
    length: int
    duration: float
    forfeit: Forfeit | None = None
    trajectory: Trajectory | None = None
    transcript: list[str] | None = None
    info: dict[str, Any] = field(default_factory=dict)
    """Game-specific outcome details (e.g. Werewolf's roles and winning side)."""


HARNESS_KEYS = ("invalid_attempts", "retries", "substituted")
"""Decision-info keys the runner counts per seat: answers that named no legal move, re-asks,
and moves the harness substituted for the agent's own (``substituted`` is a bool)."""


def game_rng(seed: int, index: int) -> GameRandom:
    """The randomness of game ``index`` in a run seeded ``seed``."""
    return GameRandom(seed, index)


def seat_order(num_players: int, index: int, rotate: bool) -> list[int]:
    """Which agent (by position in the agents list) sits in each seat of game ``index``."""
    if not rotate:
        return list(range(num_players))
    r = index % num_players
    return [(p + r) % num_players for p in range(num_players)]


def sample_chance(state: State, rng: GameRandom) -> None:
    """Resolve chance nodes by inverse-CDF sampling (one uniform draw per node)."""
    while state.is_chance_node():
        outcomes = state.chance_outcomes()
        u, acc = rng.uniform(), 0.0
        chosen = outcomes[-1][0]
        for action, prob in outcomes:
            acc += prob
            if u < acc:
                chosen = action
                break
        state.apply_action(chosen)


class _Log:
    """What a recorded game keeps: its steps, each player's last step (index, and the player's
    return before it: the step's reward is paid at the player's next step or the end) and a
    text transcript."""

    __slots__ = ("steps", "last_step", "transcript")

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.last_step: dict[int, tuple[int, float]] = {}
        self.transcript: list[str] = []


class _Slot:
    """Book-keeping for one game in the batch."""

    __slots__ = (
        "index",
        "state",
        "rng",
        "seats",
        "agents",
        "start",
        "length",
        "log",
        "pending",
        "done",
        "returns",
        "forfeit",
        "harness",
    )

    def __init__(
        self,
        index: int,
        state: State,
        rng: GameRandom,
        seats: list[int],
        agents: list[Agent],
        record: bool,
        start: float,
    ) -> None:
        self.index, self.state, self.rng, self.seats, self.agents = index, state, rng, seats, agents
        self.start = start
        self.length = 0
        self.done = False
        self.returns: list[float] | None = None
        self.forfeit: Forfeit | None = None
        self.harness: dict[int, list[int]] | None = None  # seat -> HARNESS_KEYS counts
        self.pending: dict[int, Any] | None = None  # simultaneous moves collected so far
        self.log = _Log() if record else None


_Decision = tuple[_Slot, int, Observation]
"""A decision waiting for its agent: the game, the deciding player, what the player sees."""


def play_games(
    game: Game,
    agents: Sequence[Agent],
    num_games: int = 1,
    seed: int = 0,
    rotate_seats: bool = False,
    timeout: float | None = None,
    record: bool = False,
    batch_size: int | None = None,
    first_index: int = 0,
    indices: Sequence[int] | None = None,
    on_result: Callable[[GameResult], None] | None = None,
    on_batch: Callable[[list[GameResult]], None] | None = None,
    collect: bool = True,
    on_columns: Callable[[ArrayResults], None] | None = None,
) -> list[GameResult]:
    """Play ``num_games`` games (or the given game ``indices``) and return one result each.

    ``agents[k]`` plays seat ``k`` (rotated per game when ``rotate_seats``). ``batch_size`` games
    are in flight at once (default :data:`DEFAULT_BATCH`). ``timeout`` is the
    seconds an agent's ``act_batch`` call may take before all its games in that call are
    forfeited and the agent is dropped from the rest of the run. ``record`` keeps trajectories
    (observations, actions, log-probs, rewards) and a text transcript per game. ``on_result``
    is called as each game finishes (the run store commits there); ``on_batch`` with each batch's
    results in game order once the batch is done. ``collect=False`` keeps no results (returns
    ``[]``): a long match then holds one batch in memory, not one object per game. When the game
    has an array face and every agent decides from arrays, batches run on the face
    (:mod:`arena.playing.array_match`, same results); ``arena --debug`` logs which path ran.
    ``on_columns`` takes those batches as columns (:class:`~arena.playing.array_match.ArrayResults`)
    in place of ``on_batch``, which then hears only ``State``-path batches: no
    :class:`GameResult` is built for a batch that ``on_result`` and ``collect`` do not ask for.
    """
    n = game.spec.num_players
    if len(agents) != n:
        raise ArenaError(f"game '{game.spec.full_name}' needs {n} agents, got {len(agents)}")
    # a range, not a list: a 10⁶-game match would otherwise hold 10⁶ int objects (~36 MB)
    todo: Sequence[int] = list(indices) if indices is not None else range(first_index, first_index + num_games)
    face = choose_face(game, agents, record, timeout)
    batch_size = batch_size or (ARRAY_BATCH if face is not None else DEFAULT_BATCH)
    results: list[GameResult] = []
    hung: set[int] = set()
    ahead = [DRAW_AHEAD]
    with relaxed_gc():
        for start in range(0, len(todo), batch_size):
            chunk = todo[start : start + batch_size]
            if face is not None:
                cols = _array_batch(game, face, agents, chunk, seed, rotate_seats, record)
                wanted = on_columns is None or on_result is not None or collect
                done = array_results(cols) if wanted else []
                if on_result is not None:
                    for res in done:
                        on_result(res)
                if on_columns is not None:  # in place of on_batch
                    on_columns(cols)
                    results += done if collect else []
                    continue
            else:
                done = _play_batch(game, agents, chunk, seed, rotate_seats, timeout, record, hung, on_result, ahead)
            if on_batch is not None:
                on_batch(done)
            if collect:
                results += done
    return results


DEFAULT_BATCH = 256
"""Games in flight at once. Larger batches help LLM/neural agents (set ``batch_size``); for cheap
agents ~256 keeps the working set in cache."""

ARRAY_BATCH = 4096
"""Games in flight at once on the array path (:mod:`arena.playing.array_match`): numpy's cost is
per step of the batch, so bigger batches are cheaper per game; results do not depend on it."""

DRAW_AHEAD = 8
"""Uniforms per game drawn ahead for a run's first batch (:func:`arena.rng.start_games`); later
batches draw as many as the previous batch's games used (up to :data:`MAX_DRAW_AHEAD`). Only
speed depends on it: the values are the streams' own."""
MAX_DRAW_AHEAD = 64


def _array_batch(
    game: Game,
    face: Any,
    agents: Sequence[Agent],
    indices: Sequence[int],
    seed: int,
    rotate: bool,
    record: bool,
) -> ArrayResults:
    """One batch on the game's array face (:func:`arena.playing.array_match.play_array_batch`)."""
    orders = [seat_order(len(agents), r, rotate) for r in range(len(agents))]
    return play_array_batch(game, face, agents, indices, seed, orders, record)


def array_result(cols: ArrayResults, row: int) -> GameResult:
    """Row ``row`` of an array-path batch as the :class:`GameResult` the ``State`` path makes."""
    f = cols.forfeits.get(row)
    returns = cols.forfeit_returns[row] if f is not None else cols.returns[row].tolist()
    return GameResult(
        int(cols.indices[row]),
        cols.seed,
        cols.names[int(cols.seating[row])][:],
        returns,
        int(cols.lengths[row]),
        float(cols.durations[row]),
        Forfeit(*f) if f is not None else None,
        cols.trajectories[row] if cols.trajectories is not None else None,
        cols.transcripts[row] if cols.transcripts is not None else None,
        cols.info.get(row, {}),
    )


class BatchResults(Sequence[GameResult]):
    """An array-path batch's :class:`GameResult` objects, built when first read: a batch event's
    observer that only counts the games (``len``, the progress bar) makes none."""

    def __init__(self, cols: ArrayResults) -> None:
        self.cols = cols
        self._built: list[GameResult] | None = None

    def __len__(self) -> int:
        return len(self.cols)

    def _all(self) -> list[GameResult]:
        if self._built is None:
            self._built = array_results(self.cols)
        return self._built

    def __getitem__(self, i: Any) -> Any:
        return self._all()[i]

    def __iter__(self) -> Iterator[GameResult]:
        return iter(self._all())


def array_results(cols: ArrayResults) -> list[GameResult]:
    """Every game of an array-path batch as a :class:`GameResult`, in game order (the Python
    values converted once per batch, not per game)."""
    out = []
    names, forfeits, info = cols.names, cols.forfeits, cols.info
    for b, (i, s, ret, steps, t) in enumerate(
        zip(
            cols.indices.tolist(),
            cols.seating.tolist(),
            cols.returns.tolist(),
            cols.lengths.tolist(),
            cols.durations.tolist(),
        )
    ):
        if (forfeits and b in forfeits) or cols.trajectories is not None:
            out.append(array_result(cols, b))
        else:
            out.append(GameResult(i, cols.seed, names[s][:], ret, steps, t, None, info=info.get(b, {})))
    return out


def _next_ahead(rngs: Sequence[GameRandom], ahead: int) -> int:
    """How many uniforms to draw ahead for the next batch: what this batch's hungriest game used,
    or twice as many when some game used them all."""
    if not rngs or ahead == 0:
        return ahead
    left = min(r.left_ahead() for r in rngs)
    return min(MAX_DRAW_AHEAD, 2 * ahead) if left == 0 else ahead - left


@contextlib.contextmanager
def relaxed_gc(young: int = 50_000) -> Iterator[None]:
    """The runner allocates many short-lived acyclic objects; with the default thresholds the
    cyclic GC rescans the whole heap over and over (measured: ~1.5x slower on Kuhn poker).
    Callers that play many small batches (a tournament's tasks) hold it around all of them:
    restoring the default threshold after each batch set off a collection over everything the
    batch allocated (measured: 6% of a 10⁵-game tournament). ``young``: the youngest
    generation's threshold (objects allocated and still alive since its last collection) — a
    caller that holds many objects for a while (a tournament's plan slice of records) sets it
    above what it holds, so they are freed before any collection scans them."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], young), old[1], old[2])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def _play_batch(
    game: Game,
    agents: Sequence[Agent],
    indices: Sequence[int],
    seed: int,
    rotate: bool,
    timeout: float | None,
    record: bool,
    hung: set[int],
    on_result: Callable[[GameResult], None] | None,
    ahead: list[int] | None = None,
) -> list[GameResult]:
    """One batch in lockstep. ``ahead[0]``: uniforms per game to draw ahead (updated for the
    next batch)."""
    n = game.spec.num_players
    finished: dict[int, GameResult] = {}
    # Per-game work is a few microseconds for cheap games, so everything invariant is hoisted:
    # seatings per rotation, what a finished game's result needs.
    seatings = [(order, [agents[k] for k in order]) for order in (seat_order(n, r, rotate) for r in range(n))]
    make_result = _Finisher(game, seed, seatings)

    def finish(slot: _Slot) -> None:
        res = make_result(slot)
        finished[slot.index] = res
        if on_result is not None:
            on_result(res)

    rngs, first_bits = start_games(seed, indices, ahead[0] if ahead else 0)
    active = _start(game, zip(indices, rngs, first_bits), seatings, record, finish)
    # One pass per step over the games in flight, then one act_batch call per agent.
    fresh = True  # the first pass: every game sits at a decision node, nothing to advance
    while active:
        active, batches, by_seat = _step(active, fresh, n, game.spec.full_name, finish)
        fresh = False
        for group in _cobatched(batches.values(), hung):
            if len(group) == 1:
                _decide(group[0][0], group[0][1], timeout, hung, record)
            else:
                _decide_together(group, timeout, hung, record)
        # Simultaneous decisions seat by seat: every game's players draw from its stream in seat
        # order, whatever the batch's seatings (one call per agent would let the first game's
        # seating set the order for all, so a game would depend on its batch).
        for key in sorted(by_seat, key=lambda k: k[0]):
            decisions = by_seat[key]
            _decide(decisions[0][0].agents[key[0]], decisions, timeout, hung, record)
    if ahead:
        ahead[0] = _next_ahead(rngs, ahead[0])
    return [finished[i] for i in indices]


def _start(
    game: Game,
    starts: Iterable[tuple[int, GameRandom, int]],
    seatings: Sequence[tuple[list[int], list[Agent]]],
    record: bool,
    finish: Callable[[_Slot], None],
) -> list[_Slot]:
    """The batch's games (``(index, stream, state seed)`` each), past their opening chance
    nodes; a game over before its first decision is finished at once. Returns the others."""
    n = game.spec.num_players
    new_state = game.new_initial_state
    perf_counter = time.perf_counter
    starters = any(type(a).game_started is not Agent.game_started for _, seated in seatings for a in seated)
    active: list[_Slot] = []
    for i, rng, bits in starts:
        state = new_state(seed=bits)
        order, seated = seatings[i % n]
        slot = _Slot(i, state, rng, order, seated, record, perf_counter())
        if starters:
            for p, agent in enumerate(seated):
                agent.game_started(i, p)
        if state.is_chance_node():
            sample_chance(state, rng)
        if state.is_terminal():
            slot.done, slot.returns = True, [float(x) for x in state.returns()]
            finish(slot)
        else:
            active.append(slot)
    return active


def _step(
    active: list[_Slot], fresh: bool, n: int, name: str, finish: Callable[[_Slot], None]
) -> tuple[list[_Slot], dict[int, list[_Decision]], dict[tuple[int, int], list[_Decision]]]:
    """One pass over the games in flight: advance each past the moves just applied (a joint
    move, chance) unless ``fresh``, finish it or queue its next decision(s). Returns the games
    still in flight, the turn-based decisions per agent (by id) and the simultaneous ones per
    (seat, agent id)."""
    plain = State.decision_kind
    batches: dict[int, list[_Decision]] = {}
    by_seat: dict[tuple[int, int], list[_Decision]] = {}
    still = []
    for slot in active:
        st = slot.state
        if not (slot.done or fresh):
            if slot.pending and all(p in slot.pending for p in st.acting_players()):
                joint = [slot.pending.get(p, 0) for p in range(n)]
                slot.pending = None
                st.apply_actions(joint)
            if st.is_chance_node():
                sample_chance(st, slot.rng)
            if st.is_terminal():
                slot.done = True
                slot.returns = [float(x) for x in st.returns()]
        if slot.done:
            finish(slot)
            continue
        still.append(slot)
        p = st.current_player()
        if p >= 0:
            agent = slot.agents[p]
            batch = batches.get(id(agent))
            if batch is None:
                batch = batches[id(agent)] = []
            # Games without text decisions: the legal moves are needed anyway (the check
            # in _decide), so fill them in now rather than through the lazy properties.
            legal = st.legal_actions(p) if type(st).decision_kind is plain else None
            if legal is not None and type(legal) is not list:
                legal = list(legal)
            batch.append((slot, p, Observation(st, p, slot.rng, name, legal)))
            continue
        if slot.pending is None:
            slot.pending = {}
        for p in st.acting_players():
            if p not in slot.pending:
                by_seat.setdefault((p, id(slot.agents[p])), []).append((slot, p, Observation(st, p, slot.rng, name)))
    return still, batches, by_seat


def _cobatched(batches: Iterable[list[_Decision]], hung: set[int]) -> list[list[tuple[Agent, list[_Decision]]]]:
    """Each agent's decisions of this step, agents that share a :meth:`Agent.cobatch_key` in one group."""
    groups: dict[Any, list[tuple[Agent, list[_Decision]]]] = {}
    for decisions in batches:
        agent = decisions[0][0].agents[decisions[0][1]]
        key = None
        if type(agent).cobatch_key is not Agent.cobatch_key and id(agent) not in hung:
            key = agent.cobatch_key()
        groups.setdefault(("alone", id(agent)) if key is None else ("together", key), []).append((agent, decisions))
    return list(groups.values())


def _decide_together(
    group: list[tuple[Agent, list[_Decision]]], timeout: float | None, hung: set[int], record: bool
) -> None:
    """One ``act_together`` call for agents that decide together, then each agent's actions applied
    (or its games forfeited) exactly as if it had answered alone."""
    lead = group[0][0]
    parts = [(agent, [d[2] for d in decisions]) for agent, decisions in group]
    answers: list[Any]
    try:
        answers = list(_within(lambda: type(lead).act_together(parts), timeout, f"arena-agents-{lead.name}"))
        if len(answers) != len(parts):
            raise ArenaError(f"act_together returned {len(answers)} answers for {len(parts)} agents")
    except BaseException as exc:  # every agent of the call forfeits for the same reason
        answers = [exc] * len(parts)
    for (agent, decisions), answer in zip(group, answers):
        _decide(agent, decisions, timeout, hung, record, answer)


def _decide(
    agent: Agent,
    decisions: list[_Decision],
    timeout: float | None,
    hung: set[int],
    record: bool,
    answered: Any = None,
) -> None:
    """One ``act_batch`` call for one agent (or its part of an ``act_together`` call, ``answered``:
    its (actions, infos) or the exception that call raised); apply its actions or forfeit its games."""
    observations = [d[2] for d in decisions]
    if id(agent) in hung:
        for slot, p, _ in decisions:
            _forfeit(slot, p, agent, "timeout: the agent hung earlier in this run and was dropped")
        return
    try:
        if isinstance(answered, BaseException):
            raise answered
        actions, infos = answered if answered is not None else _call(agent, observations, timeout, record)
        if len(actions) != len(observations):
            raise ArenaError(f"act_batch returned {len(actions)} actions for {len(observations)} observations")
        if record and infos is None:
            raise ArenaError("act_batch_info returned no info dicts (one dict per observation)")
    except TimeoutError:
        hung.add(id(agent))
        for slot, p, _ in decisions:
            _forfeit(slot, p, agent, f"timeout: no answer within {timeout}s")
        return
    except Exception as exc:
        reason = "exception: " + traceback.format_exception_only(type(exc), exc)[-1].strip()
        for slot, p, _ in decisions:
            _forfeit(slot, p, agent, reason)
        return
    if infos is not None:
        _count_harness(decisions, infos)
    if not record or infos is None:  # the common case, kept lean: no info dicts, no trajectories
        for k, ((slot, p, obs), action) in enumerate(zip(decisions, actions)):
            if slot.done:
                continue
            if not (type(action) is int and action in obs.legal_actions):
                problem = _check_action(obs, action)
                if problem and infos is not None:
                    problem = _given_up(infos[k]) or problem
                if problem:
                    _forfeit(slot, p, agent, problem)
                    continue
                if isinstance(action, np.integer):
                    action = int(action)
            slot.length += 1
            if slot.pending is not None:
                slot.pending[p] = action
            else:
                slot.state.apply_action(action)
        return
    for (slot, p, obs), action, info in zip(decisions, actions, infos):
        if slot.done:
            continue
        if not (type(action) is int and action in obs.legal_actions):  # fast path for the common case
            problem = _check_action(obs, action)
            if problem:
                problem = _given_up(info) or problem
                _forfeit(slot, p, agent, problem)
                continue
            if isinstance(action, np.integer):
                action = int(action)
        if slot.log is not None:
            _record(slot.log, slot.state, p, obs, action, info, agent)
        slot.length += 1
        if slot.pending is not None:
            slot.pending[p] = action
        else:
            slot.state.apply_action(action)


def _count_harness(decisions: list[_Decision], infos: list[dict]) -> None:
    """Fold the decisions' :data:`HARNESS_KEYS` into their games' per-seat counts."""
    for (slot, p, _), info in zip(decisions, infos):
        if not info or not ("invalid_attempts" in info or "retries" in info or "substituted" in info):
            continue
        if slot.harness is None:
            slot.harness = {}
        counts = slot.harness.setdefault(p, [0, 0, 0])
        counts[0] += int(info.get("invalid_attempts") or 0)
        counts[1] += int(info.get("retries") or 0)
        counts[2] += 1 if info.get("substituted") else 0


def _given_up(info: dict | None) -> str | None:
    """The reason an agent gave for giving up a decision (info ``forfeit``), as a forfeit reason."""
    reason = info.get("forfeit") if info else None
    return f"no legal move: {reason}" if reason else None


def _call(
    agent: Agent, observations: list[Observation], timeout: float | None, record: bool = True
) -> tuple[list, list[dict] | None]:
    if timeout is None:
        if not record and type(agent).act_batch_info is Agent.act_batch_info:
            return agent.act_batch(observations), None  # the info dicts would only be dropped
        return agent.act_batch_info(observations)
    return _within(lambda: agent.act_batch_info(observations), timeout, f"arena-agent-{agent.name}")


def _within(call: Callable[[], Any], timeout: float | None, name: str) -> Any:
    """``call()``, on a worker thread when there is a ``timeout`` (TimeoutError past it)."""
    if timeout is None:
        return call()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["out"] = call()
        except BaseException as exc:  # handed back to the caller's thread
            box["err"] = exc

    worker = threading.Thread(target=target, daemon=True, name=name)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise TimeoutError
    if "err" in box:
        raise box["err"]
    return box["out"]


def _check_action(obs: Observation, action: Any) -> str | None:
    if obs.decision == "text":
        if not isinstance(action, str):
            return f"illegal action: expected text at a text decision, got {action!r}"
        if len(action) > obs.max_text_length:
            return f"illegal action: text of {len(action)} characters exceeds the limit {obs.max_text_length}"
        return None
    if (
        isinstance(action, (bool, str))
        or not isinstance(action, (int, np.integer))
        or int(action) not in obs.legal_actions
    ):
        return f"illegal action {action!r}; legal: {obs.legal_actions}"
    return None


def _record(log: _Log, state: State, p: int, obs: Observation, action: Any, info: dict, agent: Agent) -> None:
    returns = state.returns() if not state.is_chance_node() else None
    if p in log.last_step and returns is not None:
        k, before = log.last_step[p]
        log.steps[k].reward = float(returns[p]) - before
    label = action if isinstance(action, str) else obs.label_of(int(action))
    log.transcript.append(f"player {p} ({agent.name}): {label}")
    obs.freeze()
    log.steps.append(
        Step(p, obs, action, info.get("log_prob"), 0.0, {k: v for k, v in info.items() if k != "log_prob"})
    )
    log.last_step[p] = (len(log.steps) - 1, float(returns[p]) if returns is not None else 0.0)


def _forfeit(slot: _Slot, p: int, agent: Agent, reason: str) -> None:
    if slot.done:
        return
    slot.done = True
    slot.forfeit = Forfeit(p, agent.name, reason)
    slot.returns = None


class _Finisher:
    """Turns finished slots into :class:`GameResult` objects; what does not change within a batch
    (seat names per seating, which agents watch game ends, whether the state reports outcome
    details) is worked out once, not per game."""

    def __init__(self, game: Game, seed: int, seatings: Sequence[tuple[list[int], list[Agent]]]) -> None:
        self.game, self.seed = game, seed
        self.names = {id(seated): [a.name for a in seated] for _, seated in seatings}
        self.watchers = {
            id(seated): [(p, a) for p, a in enumerate(seated) if type(a).game_finished is not Agent.game_finished]
            for _, seated in seatings
        }
        self.info_of: dict[type, bool] = {}

    def __call__(self, slot: _Slot) -> GameResult:
        state, forfeit = slot.state, slot.forfeit
        if forfeit is not None:
            returns = state.forfeit_returns(forfeit.player, self.game.spec)
        else:
            returns = slot.returns or [float(x) for x in state.returns()]
        log, trajectory = slot.log, None
        if log is not None:
            for p, (k, before) in log.last_step.items():
                log.steps[k].reward = float(returns[p]) - before
            trajectory = Trajectory(slot.index, self.seed, [a.name for a in slot.agents], log.steps, list(returns))
            if forfeit is not None:
                log.transcript.append(f"player {forfeit.player} forfeits: {forfeit.reason}")
            log.transcript.append(f"result: {returns}")
        watchers = self.watchers.get(id(slot.agents))
        if watchers is None:  # a seating not known to the batch (not made by the runner)
            watchers = [(p, a) for p, a in enumerate(slot.agents) if type(a).game_finished is not Agent.game_finished]
        for p, agent in watchers:  # views only for agents that look
            agent.game_finished(slot.index, p, returns, Observation(state, p, slot.rng, self.game.spec.full_name))
        info: dict[str, Any] = {}
        if forfeit is None:
            kind = type(state)
            reports = self.info_of.get(kind)
            if reports is None:
                reports = self.info_of[kind] = kind.outcome_info is not State.outcome_info
            if reports:
                info = state.outcome_info()
        if slot.harness is not None:
            seats = range(len(returns))
            info = {
                **info,
                "harness": {k: [slot.harness.get(p, [0, 0, 0])[j] for p in seats] for j, k in enumerate(HARNESS_KEYS)},
            }
        names = self.names.get(id(slot.agents))
        return GameResult(
            slot.index,
            self.seed,
            names[:] if names is not None else [a.name for a in slot.agents],
            list(returns),
            slot.length,
            time.perf_counter() - slot.start,
            forfeit,
            trajectory,
            log.transcript if log is not None else None,
            info,
        )
