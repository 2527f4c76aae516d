"""Where games run: in this process, in a local process pool, or on a Ray cluster.

Why one small interface: tournaments and leagues plan *what* to play; an executor decides
*where*. A :class:`GameTask` names everything by spec (game name, agent specs, seed, game
indices), so it travels to another process or machine and the worker rebuilds the game and
agents there (cached per worker, so a solver agent solves once). Every game's randomness comes
from ``(seed, index)`` (see :func:`arena.match.game_rng`), hence the same seeds give the same
results whichever executor ran them.

    with make_executor({"kind": "process", "workers": 2}) as ex:
        ex.run(tasks, on_result)          # on_result(task, GameResult) as each game arrives
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from arena.errors import ArenaError

OnResult = Callable[["GameTask", Any], None]


@dataclass(frozen=True)
class Checkpoint:
    """A seat filled from an agent checkpoint directory (:func:`arena.loading.save_checkpoint`)
    at a version. Workers keep the agent they built and rebuild it only when the version
    changes — how a learner's new weights reach rollout workers after each update."""

    path: str
    version: int = 0


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


def _agent_key(game_name: str, spec: Any, label: str) -> tuple:
    if isinstance(spec, Checkpoint):
        return (game_name, f"checkpoint:{spec.path}", label)
    return (game_name, json.dumps(spec, sort_keys=True, default=str), label)


def _version(spec: Any) -> int:
    return spec.version if isinstance(spec, Checkpoint) else 0


def remember_agent(game: Any, game_name: str, spec: Any, label: str, agent: Any) -> None:
    """Reuse a game and agent already built in this process (the tournament loads each once to
    check it; a league's live learners are used as they are), so in-process runs build nothing twice."""
    _GAMES.setdefault(game_name, game)
    _AGENTS[_agent_key(game_name, spec, label)] = (_version(spec), agent)


def _agent(game: Any, game_name: str, spec: Any, label: str) -> Any:
    from arena.loading import load_agent, load_checkpoint

    key = _agent_key(game_name, spec, label)
    held = _AGENTS.get(key)
    if held is not None and held[0] == _version(spec):
        return held[1]
    agent = load_checkpoint(spec.path, game) if isinstance(spec, Checkpoint) else load_agent(spec, game)
    agent.name = label
    if held is not None and held[1] is not agent:
        held[1].close()  # an older version of this seat's agent
    _AGENTS[key] = (_version(spec), agent)
    return agent


def run_task(task: GameTask, on_result: Callable[[Any], None] | None = None) -> list[Any]:
    """Play one task here and return its :class:`~arena.match.GameResult` list (trajectories
    only when the task asks for them). Used by every executor, locally or remotely."""
    from arena.loading import load_game
    from arena.match import play_games

    if task.game not in _GAMES:
        _GAMES[task.game] = load_game(task.game)
    game = _GAMES[task.game]
    agents = [_agent(game, task.game, s, lbl) for s, lbl in zip(task.seats, task.labels)]
    results = play_games(game, agents, seed=task.seed, indices=list(task.indices), rotate_seats=task.rotate,
                         timeout=task.timeout, record=task.record or task.trajectories, on_result=on_result)
    if not task.trajectories:
        for r in results:
            r.trajectory = None
    return results


class Executor:
    """Runs :class:`GameTask` lists; subclasses decide where."""

    kind = "base"

    def run(self, tasks: Sequence[GameTask], on_result: OnResult) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Release workers."""

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class InProcessExecutor(Executor):
    """Plays in this process; each game is handed over the moment it finishes."""

    kind = "inprocess"

    def run(self, tasks: Sequence[GameTask], on_result: OnResult) -> None:
        from functools import partial

        for task in tasks:
            run_task(task, on_result=partial(on_result, task))


class ProcessPoolExecutor(Executor):
    """A local pool of worker processes (spawned, so no state leaks from the parent)."""

    kind = "process"

    def __init__(self, workers: int = 2) -> None:
        import concurrent.futures as cf
        import multiprocessing as mp

        self._pool = cf.ProcessPoolExecutor(max_workers=max(1, workers), mp_context=mp.get_context("spawn"))

    def run(self, tasks: Sequence[GameTask], on_result: OnResult) -> None:
        import concurrent.futures as cf

        futures = {self._pool.submit(run_task, t): t for t in tasks}
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


class RayExecutor(Executor):
    """Ray tasks: a local cluster by default, or ``address`` of a running one (``ray://...``
    or ``auto``). Workers must have arena and the same plugins installed."""

    kind = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise ArenaError("executor kind 'ray' needs Ray: pip install 'arena-rl[ray]'") from None
        self._ray = ray
        self._owns = not ray.is_initialized()
        if self._owns:
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                      "configure_logging": False}
            if address:
                kwargs["address"] = address
            elif workers:
                kwargs["num_cpus"] = workers
            try:
                ray.init(**kwargs)
            except Exception as exc:  # connection refused, bad address
                raise ArenaError(f"cannot start/connect Ray (address={address!r}): {exc}") from None
        self._remote = ray.remote(run_task)

    def run(self, tasks: Sequence[GameTask], on_result: OnResult) -> None:
        ray = self._ray
        refs = {self._remote.remote(t): t for t in tasks}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                for res in ray.get(ref):
                    on_result(refs[ref], res)

    def close(self) -> None:
        if self._owns and self._ray.is_initialized():
            self._ray.shutdown()


@dataclass
class ExecutorConfig:
    """``executor:`` section of tournament/league configs."""

    kind: str = "inprocess"
    workers: int = 2
    address: str | None = None
    chunk: int = 64
    """Games per task (the unit shipped to a worker; also the commit granularity for pools)."""


KINDS = ("inprocess", "process", "ray")


def check_config(cfg: ExecutorConfig) -> None:
    """Fail before any work starts on a config no executor can serve."""
    if cfg.kind not in KINDS:
        raise ArenaError(f"unknown executor kind '{cfg.kind}'; known: {', '.join(KINDS)}")
    if cfg.workers < 1 or cfg.chunk < 1:
        raise ArenaError("executor.workers and executor.chunk must be at least 1")


def make_executor(cfg: ExecutorConfig | Mapping[str, Any] | None = None) -> Executor:
    if cfg is None:
        cfg = ExecutorConfig()
    elif isinstance(cfg, Mapping):
        cfg = ExecutorConfig(**dict(cfg))
    check_config(cfg)
    if cfg.kind == "inprocess":
        return InProcessExecutor()
    if cfg.kind == "process":
        return ProcessPoolExecutor(cfg.workers)
    return RayExecutor(cfg.address, cfg.workers)
