"""Where games run: in this process, in a local process pool, or on Ray rollout workers
(actors, :mod:`arena.playing.ray_executor`).

Why one small interface: tournaments and leagues plan *what* to play; an executor decides
*where*. A :class:`GameTask` names everything by spec (game name, agent specs, seed, game
indices), so it travels to another process or machine and the worker rebuilds the game and
agents there (cached per worker, so a solver agent solves once). Every game's randomness comes
from ``(seed, index)`` (see :func:`arena.playing.match.game_rng`), hence the same seeds give the same
results whichever executor ran them.

    with make_executor({"kind": "process", "workers": 2}) as ex:   # arena.playing.executors
        ex.run(tasks, on_result)          # on_result(task, GameResult) as each game arrives
        pending = ex.submit(tasks)        # or: start now, collect later (asynchronous rollouts)
        ex.collect(pending, on_result)
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing as mp
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Mapping, Sequence

from arena.errors import ArenaError
from arena.loading import load_agent, load_checkpoint, load_game
from arena.playing.array_match import array_face_for, play_array_tables
from arena.playing.array_match import log as play_log
from arena.playing.match import ARRAY_BATCH, array_results, play_games, relaxed_gc, seat_order

OnResult = Callable[["GameTask", Any], None]


@dataclass(frozen=True)
class Checkpoint:
    """A seat filled from an agent checkpoint directory (:func:`arena.loading.save_checkpoint`)
    at a version. Workers keep the agent they built and rebuild it only when the version
    changes — how a learner's new weights reach rollout workers after each update."""

    path: str
    version: int = 0
    slot: str | None = None
    """The seat's identity across versions (a live learner's checkpoints live in one directory
    per version); a worker keeps one agent per slot and replaces it when the version changes."""


@dataclass(frozen=True)
class GameTask:
    """Games of one seating: ``seats[p]`` is the agent spec (or :class:`Checkpoint`) in seat
    ``p``, named ``labels[p]``."""

    game: str
    seats: tuple[Any, ...]
    labels: tuple[str, ...]
    seed: int
    indices: tuple[int, ...]
    timeout: float | None = None
    record: bool = False
    key: Any = None
    """Opaque to the executor (the tournament keeps its match ids here)."""
    trajectories: bool = False
    """Ship the games' trajectories back (training); otherwise they stay on the worker."""
    rotate: bool = False
    """Game ``i`` seats ``seats`` rotated by ``i mod n`` (a rotated series in one batch)."""


_AGENTS: dict[tuple, tuple[int, Any]] = {}
_GAMES: dict[str, Any] = {}
_LENT: set[int] = set()
"""Agents the caller owns (:func:`remember_agent`): used here, never closed here."""


def _agent_key(game_name: str, spec: Any, label: str) -> tuple:
    if isinstance(spec, Checkpoint):
        return (game_name, f"checkpoint:{spec.slot or spec.path}", label)
    return (game_name, json.dumps(spec, sort_keys=True, default=str), label)


def _version(spec: Any) -> int:
    return spec.version if isinstance(spec, Checkpoint) else 0


def remember_agent(game: Any, game_name: str, spec: Any, label: str, agent: Any) -> None:
    """Reuse a game and agent already built in this process (the tournament loads each once to
    check it; a league's live learners are used as they are), so in-process runs build nothing twice."""
    _GAMES.setdefault(game_name, game)
    _AGENTS[_agent_key(game_name, spec, label)] = (_version(spec), agent)
    _LENT.add(id(agent))


Fetch = Callable[[Checkpoint], str]
"""Where a worker finds a checkpoint's files (a local copy of what the driver broadcast)."""


def _agent(
    game: Any, game_name: str, spec: Any, label: str, fetch: Fetch | None = None, keys: dict[Any, tuple] | None = None
) -> Any:
    """The agent for a seat, built once per process (or per checkpoint version). ``keys``: the
    seat keys already worked out in this executor run, by ``id(spec)`` — the run's tasks hold
    their specs, so an id cannot be reused while it lasts, and a slice of a tournament has
    hundreds of tasks with the same few specs (each key is a sorted JSON dump)."""
    known = keys.get((id(spec), game_name, label)) if keys is not None else None
    key = known if known is not None else _agent_key(game_name, spec, label)
    if keys is not None:
        keys[(id(spec), game_name, label)] = key
    held = _AGENTS.get(key)
    if held is not None and held[0] == _version(spec):
        return held[1]
    if held is not None and isinstance(spec, Checkpoint) and id(held[1]) not in _LENT:
        reload = getattr(held[1], "reload_weights", None)  # optional: new weights into a running engine
        if callable(reload) and reload(fetch(spec) if fetch is not None else spec.path):
            _AGENTS[key] = (_version(spec), held[1])
            return held[1]
    if isinstance(spec, Checkpoint):
        agent = load_checkpoint(fetch(spec) if fetch is not None else spec.path, game)
    else:
        agent = load_agent(spec, game)
    agent.name = label
    if held is not None and held[1] is not agent and id(held[1]) not in _LENT:
        held[1].close()  # an older version of this seat's agent
    _AGENTS[key] = (_version(spec), agent)
    return agent


def run_task(
    task: GameTask,
    on_result: Callable[[Any], None] | None = None,
    fetch: Fetch | None = None,
    keys: dict[Any, tuple] | None = None,
) -> list[Any]:
    """Play one task here and return its :class:`~arena.playing.match.GameResult` list (trajectories
    only when the task asks for them). Used by every executor, locally or remotely; ``keys``:
    see :func:`_agent` (a dict shared by the tasks of one run, never kept beyond it)."""
    if task.game not in _GAMES:
        _GAMES[task.game] = load_game(task.game)
    game = _GAMES[task.game]
    agents = [_agent(game, task.game, s, lbl, fetch, keys) for s, lbl in zip(task.seats, task.labels)]
    results = play_games(
        game,
        agents,
        seed=task.seed,
        indices=list(task.indices),
        rotate_seats=task.rotate,
        timeout=task.timeout,
        record=task.record or task.trajectories,
        on_result=on_result,
    )
    if not task.trajectories:
        for r in results:
            r.trajectory = None
    return results


def run_tasks(
    tasks: Sequence[GameTask], on_result: OnResult | None = None, keys: dict[Any, tuple] | None = None
) -> list[tuple[GameTask, list[Any]]]:
    """:func:`run_task` for each task, in order, except that consecutive tasks of one game and seed
    whose agents all decide from arrays play as one batch on the game's array face
    (:func:`arena.playing.array_match.play_array_tables`, up to :data:`ARRAY_BATCH` games): a
    league step's games against each opponent are small matches, and a batch costs numpy about
    the same whatever its size. The results are each task's, as :func:`run_task` gives them."""
    out: list[tuple[GameTask, list[Any]]] = []
    group: list[tuple[GameTask, list[Any]]] = []

    def flush() -> None:
        if len(group) == 1:
            task = group[0][0]
            out.append((task, run_task(task, partial(on_result, task) if on_result else None, keys=keys)))
        elif group:
            out.extend(_run_together(group, on_result))
        group.clear()

    for task in tasks:
        agents = _arrays_ready(task, keys)
        size = sum(len(t.indices) for t, _ in group) + len(task.indices)
        if group and (agents is None or size > ARRAY_BATCH or _together(group[0][0]) != _together(task)):
            flush()
        if agents is None:
            out.append((task, run_task(task, partial(on_result, task) if on_result else None, keys=keys)))
        else:
            group.append((task, agents))
    flush()
    return out


def _together(task: GameTask) -> tuple:
    return (task.game, task.seed, task.record or task.trajectories)


def _arrays_ready(task: GameTask, keys: dict[Any, tuple] | None) -> list[Any] | None:
    """The task's agents when its games can play on the array face with others', else None."""
    if task.timeout is not None or len(task.indices) > ARRAY_BATCH:
        return None
    if task.game not in _GAMES:
        _GAMES[task.game] = load_game(task.game)
    game = _GAMES[task.game]
    agents = [_agent(game, task.game, s, lbl, None, keys) for s, lbl in zip(task.seats, task.labels)]
    face, _ = array_face_for(game, agents, task.record or task.trajectories, None)
    return agents if face is not None else None


def _run_together(group: list[tuple[GameTask, list[Any]]], on_result: OnResult | None) -> list[tuple[GameTask, list]]:
    """One array batch for the group's tasks (same game, seed and recording)."""
    lead = group[0][0]
    game = _GAMES[lead.game]
    n = game.spec.num_players
    tables = [(agents, list(t.indices), [seat_order(n, r, t.rotate) for r in range(n)]) for t, agents in group]
    play_log.debug("match on %s: array path (%d matches in one batch)", game.spec.full_name, len(group))
    cols = play_array_tables(game, game.array_face(), tables, lead.seed, lead.record or lead.trajectories)
    out = []
    for (task, _), c in zip(group, cols):
        results = list(array_results(c))
        for r in results:
            if on_result is not None:
                on_result(task, r)
            if not task.trajectories:
                r.trajectory = None
        out.append((task, results))
    return out


class Pending:
    """Tasks handed to an executor whose results have not been collected yet
    (:meth:`Executor.submit`); what it holds is the executor's business."""

    def __init__(self, tasks: Sequence[GameTask], handle: Any = None) -> None:
        self.tasks = list(tasks)
        self.handle = handle


class Executor:
    """Runs :class:`GameTask` lists; subclasses decide where.

    ``run`` plays and waits. ``submit`` starts the tasks and returns at once (the games are
    played with the agents the specs name *now*: a checkpoint version, a live agent's current
    weights) and ``collect`` hands each result over later: how a league plays the next step's
    rollouts while its learner updates on this step's (asynchronous training)."""

    kind = "base"

    def run(self, tasks: Sequence[GameTask], on_result: OnResult) -> None:
        self.collect(self.submit(tasks), on_result)

    def submit(self, tasks: Sequence[GameTask]) -> Pending:
        raise NotImplementedError

    def collect(self, pending: Pending, on_result: OnResult) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Release workers."""

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class InProcessExecutor(Executor):
    """Plays in this process; each game is handed over the moment it finishes. ``submit``
    plays at once (the live agents change after it returns) and ``collect`` replays the results."""

    kind = "inprocess"

    def run(self, tasks: Sequence[GameTask], on_result: OnResult) -> None:
        keys: dict[Any, tuple] = {}  # lives as long as ``tasks`` (which hold the specs it is keyed by)
        with relaxed_gc():  # once around all tasks: restoring the threshold after each set off a collection
            run_tasks(tasks, on_result, keys)  # (measured: half a PPO league's rollout time on Kuhn)

    def submit(self, tasks: Sequence[GameTask]) -> Pending:
        with relaxed_gc():
            return Pending(tasks, run_tasks(tasks))

    def collect(self, pending: Pending, on_result: OnResult) -> None:
        for task, results in pending.handle:
            for res in results:
                on_result(task, res)


class ProcessPoolExecutor(Executor):
    """A local pool of worker processes (spawned, so no state leaks from the parent)."""

    kind = "process"

    def __init__(self, workers: int = 2) -> None:
        self._pool = cf.ProcessPoolExecutor(max_workers=max(1, workers), mp_context=mp.get_context("spawn"))

    def submit(self, tasks: Sequence[GameTask]) -> Pending:
        return Pending(tasks, {self._pool.submit(run_task, t): t for t in tasks})

    def collect(self, pending: Pending, on_result: OnResult) -> None:
        futures = pending.handle
        try:
            for fut in cf.as_completed(futures):
                task = futures[fut]
                for res in fut.result():
                    on_result(task, res)
        except BaseException:
            for f in futures:
                f.cancel()
            raise

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class ExecutorConfig:
    """``executor:`` section of tournament/league configs. The same keys serve every kind
    (what a kind cannot use, it ignores), so moving a config from a laptop to a cluster means
    changing ``kind`` and ``address`` only."""

    kind: str = "inprocess"
    workers: int = 2
    address: str | None = None
    """Ray: a running cluster (``HOST:PORT`` of its head, ``ray://HOST:PORT``, ``auto``); unset: a
    local one started for the run."""
    chunk: int | None = None
    """Games per task (the unit shipped to a worker; also the commit granularity for pools).
    Unset: :data:`POOL_CHUNK` for pools and Ray (small tasks keep workers evenly busy) and
    :data:`IN_PROCESS_CHUNK` in process, where a task is only a batch of ``play_games`` and each
    call has a fixed cost (same games either way: every game draws from its own stream)."""
    num_cpus: float = 1.0
    """Ray: CPUs each rollout worker reserves."""
    num_gpus: float = 0.0
    """Ray: GPUs (or a fraction) each rollout worker reserves."""
    resources: dict[str, float] = field(default_factory=dict)
    """Ray: custom resources each rollout worker needs (e.g. ``{node_a: 1}`` pins it to nodes started
    with ``--resources '{"node_a": 1}'``)."""
    agents: dict[str, Any] = field(default_factory=dict)
    """Ray: per-agent requests, ``LABEL: {workers, num_cpus, num_gpus, resources}``. Every task with
    a seat of that agent (or of its snapshots, ``LABEL@STEP``) runs on a pool of its own workers
    with those resources, e.g. the LLM learner's games on GPU workers, scripted opponents' elsewhere."""
    max_failures: int = 3
    """Ray: times a task may lose its worker (killed, out of memory) before the run stops with an
    error; each loss starts a replacement worker and resubmits the task."""
    start_timeout: float = 120.0
    """Ray: seconds to wait for workers to be placed before failing (a request no node can meet)."""
    log_to_driver: bool = True
    """Ray: workers' stdout/stderr are printed by the driver, prefixed with the worker and node."""


KINDS = ("inprocess", "process", "ray")
POOL_CHUNK = 64
IN_PROCESS_CHUNK = 1024


def task_games(cfg: ExecutorConfig) -> int:
    """Games per task for ``cfg`` (its ``chunk``, else the kind's default)."""
    if cfg.chunk is not None:
        return cfg.chunk
    return IN_PROCESS_CHUNK if cfg.kind == "inprocess" else POOL_CHUNK


POOL_KEYS = ("workers", "num_cpus", "num_gpus", "resources")


def check_config(cfg: ExecutorConfig) -> None:
    """Fail before any work starts on a config no executor can serve."""
    if cfg.kind not in KINDS:
        raise ArenaError(f"unknown executor kind '{cfg.kind}'; known: {', '.join(KINDS)}")
    if cfg.workers < 1 or (cfg.chunk is not None and cfg.chunk < 1):
        raise ArenaError("executor.workers and executor.chunk must be at least 1")
    if cfg.num_cpus < 0 or cfg.num_gpus < 0 or cfg.max_failures < 0 or cfg.start_timeout <= 0:
        raise ArenaError("executor.num_cpus, num_gpus and max_failures must be >= 0 and start_timeout > 0")
    for label, req in dict(cfg.agents or {}).items():
        if not isinstance(req, Mapping):
            raise ArenaError(f"executor.agents.{label}: expected a mapping of {', '.join(POOL_KEYS)}")
        bad = sorted(set(req) - set(POOL_KEYS))
        if bad:
            raise ArenaError(f"executor.agents.{label}: unknown key(s) {', '.join(bad)}; keys: {', '.join(POOL_KEYS)}")
