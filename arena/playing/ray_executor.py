"""Rollouts on Ray: long-lived rollout workers (actors) that keep their agents across tasks.

Why actors, not stateless tasks: an agent that holds a model (a network, a vLLM engine on a
GPU) is expensive to build, so a worker builds it once and replays many tasks with it,
rebuilding only when the learner publishes a new version. Each worker reserves what its
agents need (``num_cpus``, ``num_gpus``, custom ``resources``), so Ray places a GPU-holding
agent on a GPU node; ``executor.agents`` gives one agent (and its snapshots) a pool of its own.

Weights travel by version through Ray's object store: the driver reads a checkpoint directory
once per version, ``ray.put``\\ s its files once, and every worker that needs it fetches the
one object (no shared filesystem needed, no copy per task).

Failures: a worker that dies (SIGKILL, out of memory, a lost node) is replaced and its tasks
are resubmitted; the games of a task are returned together, so a task either lands whole or is
played again, and the store keeps each game once. A task that keeps killing its worker stops
the run with one line after ``max_failures`` losses. An unreachable address or a request no
node can meet fails before any game is planned, instead of waiting for ever.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from arena.errors import ArenaError
from arena.playing.executor import Checkpoint, Executor, ExecutorConfig, GameTask, OnResult, Pending, run_task


class RolloutWorker:
    """One rollout process (a Ray actor): plays tasks with the agents it keeps."""

    def __init__(self, pool: str, index: int) -> None:
        import ray

        self.pool, self.index = pool, index
        self.node = ray.get_runtime_context().get_node_id()
        self.pid = os.getpid()
        self.root = Path(tempfile.mkdtemp(prefix="arena-worker-"))
        self.fetched: dict[str, tuple[str, Path]] = {}
        print(
            f"arena rollout worker {pool}/{index} started on node {self.node[:12]} (pid {self.pid})",
            file=sys.stderr,
            flush=True,
        )

    def ready(self) -> tuple[str, int]:
        return self.node, self.pid

    def _fetch(self, blobs: Mapping[str, Any], ck: Checkpoint) -> str:
        """A local copy of the checkpoint the driver broadcast (one per slot, replaced by version)."""
        import ray

        ref = blobs.get(ck.path)
        if ref is None:
            return ck.path
        slot = ck.slot or ck.path
        held = self.fetched.get(slot)
        if held is not None and held[0] == ck.path:
            return str(held[1])
        files = ray.get(ref)
        local = self.root / f"{len(os.listdir(self.root))}-{Path(ck.path).name}"
        for rel, data in files.items():
            target = local / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if held is not None:
            shutil.rmtree(held[1], ignore_errors=True)
        self.fetched[slot] = (ck.path, local)
        print(
            f"arena rollout worker {self.pool}/{self.index}: loaded {slot} version {ck.version}",
            file=sys.stderr,
            flush=True,
        )
        return str(local)

    def run(self, task: GameTask, blobs: Mapping[str, Any]) -> list[Any]:
        results = run_task(task, fetch=lambda ck: self._fetch(blobs, ck))
        for r in results:  # where each game ran (stored with the game)
            r.info = dict(r.info or {}, node=self.node, worker=f"{self.pool}/{self.index}/{self.pid}")
        return results


def _files(path: str) -> dict[str, bytes]:
    root = Path(path)
    if not root.is_dir():
        raise ArenaError(f"executor: checkpoint directory {root} is missing")
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _fmt(req: Mapping[str, float]) -> str:
    return "{" + ", ".join(f"{k}: {v:g}" for k, v in req.items()) + "}"


def probe_address(address: str) -> None:
    """Fail at once, in one line, when nothing listens at a ``HOST:PORT`` address (``ray.init``
    would otherwise retry for minutes)."""
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise ArenaError(f"executor.address {address!r} is not HOST:PORT, ray://HOST:PORT or auto")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise ArenaError(
            f"executor: cannot reach the Ray cluster at {address} ({exc.strerror or exc}); "
            "start one with `ray start --head` or fix executor.address"
        ) from None


@dataclass
class _Pool:
    name: str
    size: int
    num_cpus: float
    num_gpus: float
    resources: dict[str, float]
    actors: list[Any] = field(default_factory=list)
    turn: int = 0

    def need(self) -> dict[str, float]:
        out = {
            "CPU": float(self.num_cpus),
            "GPU": float(self.num_gpus),
            **{k: float(v) for k, v in self.resources.items()},
        }
        return {k: v for k, v in out.items() if v > 0}


class RayExecutor(Executor):
    """Rollout workers on a local Ray cluster (started for the run) or on a running one (``address``)."""

    kind = "ray"

    def __init__(self, cfg: ExecutorConfig) -> None:
        try:
            import ray
        except ImportError:
            raise ArenaError("executor kind 'ray' needs Ray: pip install 'arena-rl[ray]'") from None
        self._ray = ray
        self.cfg = cfg
        self.pools: dict[str, _Pool] = {
            "default": _Pool("default", cfg.workers, cfg.num_cpus, cfg.num_gpus, dict(cfg.resources or {}))
        }
        for label, req in dict(cfg.agents or {}).items():
            r = dict(req)
            self.pools[label] = _Pool(
                label,
                int(r.get("workers", 1)),
                float(r.get("num_cpus", cfg.num_cpus)),
                float(r.get("num_gpus", 0.0)),
                dict(r.get("resources", {})),
            )
        self._owns = not ray.is_initialized()
        if self._owns:
            kwargs: dict[str, Any] = {"log_to_driver": cfg.log_to_driver, "configure_logging": False}
            if cfg.address:
                probe_address(cfg.address)
                kwargs["address"] = cfg.address
            else:  # a local cluster just big enough for the workers asked for
                kwargs["include_dashboard"] = False
                kwargs["num_cpus"] = max(1, int(sum(p.size * p.num_cpus for p in self.pools.values()) + 0.999))
            try:
                ray.init(**kwargs)
            except Exception as exc:  # connection refused, bad address
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise ArenaError(f"executor: cannot start/connect Ray (address={cfg.address!r}): {first}") from None
        self._actor_cls = ray.remote(RolloutWorker)
        self._blobs: dict[str, tuple[str, Any]] = {}
        """slot -> (checkpoint path, object ref of its files): the newest version of each seat."""
        self._failures: dict[int, int] = {}
        try:
            for pool in self.pools.values():  # an impossible request fails now, in one line, not after a hang
                self._check_feasible(pool)
            self._start(self.pools["default"])
        except BaseException:
            self.close()
            raise

    # -- workers -------------------------------------------------------------------------------------
    def _check_feasible(self, pool: _Pool) -> None:
        ray = self._ray
        need = pool.need()
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        if any(all(n["Resources"].get(k, 0.0) >= v for k, v in need.items()) for n in nodes):
            return
        offer = (
            "; ".join(f"node {n['NodeID'][:8]} " + _fmt({k: n["Resources"].get(k, 0.0) for k in need}) for n in nodes)
            or "no live nodes"
        )
        where = "" if pool.name == "default" else f" for agent '{pool.name}'"
        raise ArenaError(
            f"executor: no node of the Ray cluster can host a rollout worker{where} needing "
            f"{_fmt(need)} (nodes offer: {offer}); change executor num_cpus/num_gpus/resources "
            "or add a node that has them"
        )

    def _new_actor(self, pool: _Pool, index: int) -> Any:
        opts: dict[str, Any] = {
            "num_cpus": pool.num_cpus,
            "num_gpus": pool.num_gpus,
            "max_restarts": 0,
            "scheduling_strategy": "SPREAD",
        }
        if pool.resources:
            opts["resources"] = dict(pool.resources)
        return self._actor_cls.options(**opts).remote(pool.name, index)

    def _wait_ready(self, pool: _Pool, actors: Sequence[Any]) -> None:
        ray = self._ray
        refs = [a.ready.remote() for a in actors]
        done, waiting = ray.wait(refs, num_returns=len(refs), timeout=self.cfg.start_timeout)
        if waiting:
            for a in actors:
                ray.kill(a)
            free = _fmt({k: ray.available_resources().get(k, 0.0) for k in pool.need()})
            raise ArenaError(
                f"executor: only {len(done)} of {len(refs)} rollout workers could be placed within "
                f"{self.cfg.start_timeout:g} s (each needs {_fmt(pool.need())}; the cluster has "
                f"{free} free); lower executor.workers or the request, or add nodes"
            )
        from ray.exceptions import RayActorError

        try:
            ray.get(done)
        except RayActorError as exc:  # a worker that never ran: say why in one line, not Ray's traceback
            text = str(exc)
            hint = (
                "; a worker cancelled before it ran most likely means the cluster and this driver run in "
                "different Ray auth modes (RAY_AUTH_MODE token vs disabled; docs/distributed.md, Authentication)"
                if "cancelled before it started" in text
                else ""
            )
            first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
            raise ArenaError(f"executor: a rollout worker died before it started ({first}){hint}") from None

    def _pool(self, task: GameTask) -> _Pool:
        pool = self.pools["default"]
        for label in task.labels:
            base = label.split("@", 1)[0]
            if base in self.pools and base != "default":
                pool = self.pools[base]
                break
        if not pool.actors:
            self._start(pool)
        return pool

    def _start(self, pool: _Pool) -> None:
        actors = [self._new_actor(pool, i) for i in range(pool.size)]
        self._wait_ready(pool, actors)
        pool.actors = actors

    def _replace(self, pool: _Pool, dead: Any) -> None:
        for i, a in enumerate(pool.actors):
            if a is dead:
                fresh = self._new_actor(pool, i)
                self._wait_ready(pool, [fresh])
                pool.actors[i] = fresh

    # -- weights -------------------------------------------------------------------------------------
    def _broadcast(self, task: GameTask) -> dict[str, Any]:
        """Object refs of the checkpoints this task's seats load (put once per version)."""
        out = {}
        for seat in task.seats:
            if not isinstance(seat, Checkpoint):
                continue
            slot = seat.slot or seat.path
            held = self._blobs.get(slot)
            if held is None or held[0] != seat.path:
                held = (seat.path, self._ray.put(_files(seat.path)))
                self._blobs[slot] = held
            out[seat.path] = held[1]
        return out

    # -- running -------------------------------------------------------------------------------------
    def _send(self, task: GameTask) -> tuple[Any, tuple[GameTask, _Pool, Any]]:
        pool = self._pool(task)
        actor = pool.actors[pool.turn % len(pool.actors)]
        pool.turn += 1
        return actor.run.remote(task, self._broadcast(task)), (task, pool, actor)

    def submit(self, tasks: Sequence[GameTask]) -> Pending:
        return Pending(tasks, dict(self._send(t) for t in tasks))

    def collect(self, pending: Pending, on_result: OnResult) -> None:
        from ray.exceptions import RayActorError, RayTaskError, WorkerCrashedError

        ray = self._ray
        inflight: dict[Any, tuple[GameTask, _Pool, Any]] = pending.handle
        try:
            while inflight:
                done, _ = ray.wait(list(inflight), num_returns=1)
                ref = done[0]
                task, pool, actor = inflight.pop(ref)
                try:
                    results = ray.get(ref)
                except RayTaskError as exc:  # the games raised: the agent's own error, as in-process
                    raise exc.cause if isinstance(exc.cause, BaseException) else exc from None
                except (RayActorError, WorkerCrashedError) as exc:
                    n = self._failures.get(id(task), 0) + 1
                    self._failures[id(task)] = n
                    if n > self.cfg.max_failures:
                        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                        raise ArenaError(
                            f"executor: rollout workers died {n} times running {task.game} games "
                            f"{task.indices[0]}..{task.indices[-1]} of {' vs '.join(task.labels)} "
                            f"(max_failures {self.cfg.max_failures}; last: {cause[:200]})"
                        ) from None
                    print(
                        f"arena: rollout worker {pool.name} lost ({type(exc).__name__}); replacing it and "
                        f"replaying {len(task.indices)} games",
                        file=sys.stderr,
                        flush=True,
                    )
                    self._replace(pool, actor)
                    new_ref, meta = self._send(task)
                    inflight[new_ref] = meta
                    continue
                for res in results:
                    on_result(task, res)
        except BaseException:
            for r in inflight:
                try:
                    ray.cancel(r)
                except Exception:  # already finished or its worker is gone
                    pass
            raise

    def close(self) -> None:
        ray = self._ray
        if not ray.is_initialized():
            return
        for pool in self.pools.values():
            for a in pool.actors:
                try:
                    ray.kill(a)
                except Exception:  # already dead
                    pass
            pool.actors = []
        self._blobs.clear()
        if self._owns:
            ray.shutdown()
