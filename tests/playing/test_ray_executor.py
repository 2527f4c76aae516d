"""Rollouts on a real two-node Ray cluster on this machine: ``ray start --head`` plus a second
``ray start --address=...`` (separate raylets, one CPU each), shared by every test here.

- league rollouts land on both nodes (the stored worker/node ids say so), the driver is killed
  with SIGKILL mid-run and the same command resumes; asynchronous training (max_staleness 1)
  gives the same games and weights as in-process;
- with max_staleness 0, Ray actors give byte-identical weights and games to in-process (PPO on
  Kuhn, the LLM Advantage Alignment learner on the text IPD);
- a worker SIGKILLed mid-step is replaced, every planned game stored exactly once;
- bad input is one line: unreachable address, a request no node can meet, a worker that keeps dying,
  a driver whose Ray auth mode differs from the cluster's.

Workers load a tiny test plugin (an agent that SIGKILLs its own worker process) from a
directory on the cluster's PYTHONPATH.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow  # one two-node cluster start (~30 s on 2 loaded cores) for the module

from support import arena_cmd  # noqa: E402
from support.league import ppo_kuhn_league  # noqa: E402

PLUGIN = '''
"""Test plugin: an agent that plays the first legal action, but the first TIMES decisions it
sees inside a Ray worker SIGKILL that worker (counted with files under MARKER)."""
import os
import signal
from pathlib import Path

import arena
from arena.agent import Agent, AgentEntry


class Crash(Agent):
    def __init__(self, marker, times=1):
        self.marker, self.times = Path(marker), int(times)

    def act(self, obs):
        import ray
        if ray.is_initialized() and ray.get_runtime_context().worker.mode == ray.WORKER_MODE:
            self.marker.mkdir(parents=True, exist_ok=True)
            n = len(list(self.marker.iterdir()))
            if n < self.times:
                (self.marker / str(n)).touch()
                os.kill(os.getpid(), signal.SIGKILL)
        return obs.legal_actions[0]


@arena.hookimpl
def arena_agents():
    return [AgentEntry("crash", lambda game, marker, times=1: Crash(marker, times), "kills its Ray worker")]
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ours(tag: str) -> list[int]:
    """Pids of the processes of our cluster (their command lines name its temp dir)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if tag in (d / "cmdline").read_bytes().decode(errors="ignore"):
                    out.append(int(d.name))
            except OSError:
                continue
    return out


def _stop(tag: str) -> None:
    """TERM, then KILL, the processes of one cluster (only those whose command lines name its temp dir)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in _ours(tag):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        time.sleep(1)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    plugin = tmp_path_factory.mktemp("plugin")
    (plugin / "crash_agent.py").write_text(PLUGIN)
    info = plugin / "crash_agent-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: crash-agent\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[arena]\ncrash_agent = crash_agent\n")
    temp = tempfile.mkdtemp(prefix="arena-rc-", dir="/tmp")  # short: Ray's socket paths must fit
    port = _free_port()
    # Token authentication, as every Ray session of the suite (tests/conftest.py), with the
    # user's token (~/.ray/auth_token).
    env = dict(
        os.environ,
        RAY_AUTH_MODE="token",
        RAY_USAGE_STATS_ENABLED="0",
        PYTHONPATH=os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")]),
    )
    ray_bin = str(Path(sys.executable).parent / "ray")
    # the user's token, made when missing (what a new local ray.init does too)
    subprocess.run([ray_bin, "get-auth-token", "--generate"], env=env, check=True, capture_output=True, timeout=60)
    common = ["--num-cpus=1", f"--temp-dir={temp}", "--disable-usage-stats"]
    try:
        subprocess.run(
            [
                ray_bin,
                "start",
                "--head",
                f"--port={port}",
                "--include-dashboard=false",
                '--resources={"node_a": 1}',
                *common,
            ],
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        subprocess.run(
            [ray_bin, "start", f"--address=127.0.0.1:{port}", '--resources={"node_b": 1}', *common],
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        mp = pytest.MonkeyPatch()
        mp.syspath_prepend(str(plugin))
        from arena.registry import reset_registry

        reset_registry()
        ray.init(address=f"127.0.0.1:{port}", log_to_driver=True, configure_logging=False)
        yield {"address": f"127.0.0.1:{port}", "env": env, "temp": temp}
    finally:
        if ray.is_initialized():
            ray.shutdown()
        _stop(temp)
        try:
            mp.undo()
        except NameError:
            pass
        from arena.registry import reset_registry

        reset_registry()


def kuhn(out: Path, executor: dict, steps: int = 3, stale: int = 0, extra: list | None = None) -> dict:
    return ppo_kuhn_league(
        out,
        seed=5,
        steps=steps,
        games_per_step=48,
        before=extra,
        max_staleness=stale,
        torch_threads=1,
        executor=executor,
    )


def run(cfg: dict):
    from arena.config import load_config
    from arena.league import LeagueConfig, run_league

    return run_league(load_config(LeagueConfig, base=cfg), quiet=True)


def train_rows(run_dir: Path) -> dict:
    with sqlite3.connect(run_dir / "train" / "arena.sqlite") as c:
        return {r[0]: (r[1], r[2], json.loads(r[3])) for r in c.execute("SELECT id, seats, returns, info FROM matches")}


def same_games(a: dict, b: dict) -> bool:
    strip = lambda rows: {
        k: (s, r, {x: y for x, y in i.items() if x not in ("node", "worker")})  # noqa: E731
        for k, (s, r, i) in rows.items()
    }
    return strip(a) == strip(b)


def weights(run_dir: Path, label: str) -> str:
    ck = sorted((run_dir / "checkpoints").glob("step-*"))[-1] / "learners" / label
    return hashlib.sha256(
        b"".join(p.read_bytes() for p in sorted(ck.rglob("*.safetensors")) + sorted(ck.rglob("*.pt")))
    ).hexdigest()


def test_two_nodes_async_league_resumes_after_driver_sigkill(cluster, tmp_path):
    ref_dir = tmp_path / "ref"
    run(kuhn(ref_dir, {"kind": "inprocess", "chunk": 8}, steps=4, stale=1))
    out = tmp_path / "two_nodes"
    cfg = kuhn(out, {"kind": "ray", "address": cluster["address"], "workers": 2, "chunk": 8}, steps=4, stale=1)
    path = tmp_path / "league.yaml"
    path.write_text(yaml.safe_dump(cfg))
    cmd = arena_cmd() + ["league", str(path)]
    proc = subprocess.Popen(cmd, env=cluster["env"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:
        db = out / "arena.sqlite"
        try:
            with sqlite3.connect(db, timeout=1) as c:
                row = c.execute("SELECT value FROM meta WHERE key='league_step'").fetchone()
            if row and 1 <= int(row[0]) < 4:
                break
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
    proc.send_signal(signal.SIGKILL)  # the driver dies between steps, with the next step's rollouts in flight
    proc.wait()
    again = subprocess.run(cmd, env=cluster["env"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "resuming from step" in again.stderr + again.stdout
    rows = train_rows(out)
    assert len(rows) == 4 * 48  # every planned game once
    nodes = {info["node"] for _, _, info in rows.values()}
    assert len(nodes) == 2, nodes  # rollouts ran on both raylets
    assert {n["NodeID"] for n in ray.nodes() if n["Alive"]} >= nodes
    assert same_games(rows, train_rows(ref_dir))
    assert weights(out, "ppo") == weights(ref_dir, "ppo")


def test_ray_actors_equal_in_process_when_synchronous(cluster, tmp_path):
    ex = {"kind": "ray", "address": cluster["address"], "workers": 2, "chunk": 8}
    a, b = tmp_path / "inprocess", tmp_path / "ray"
    run(kuhn(a, {"kind": "inprocess", "chunk": 8}))
    run(kuhn(b, ex))
    assert same_games(train_rows(a), train_rows(b)) and len(train_rows(b)) == 3 * 48
    assert weights(a, "ppo") == weights(b, "ppo")


def test_llm_aa_ipd_ray_actors_equal_in_process(cluster, tmp_path):
    pytest.importorskip("transformers")
    from arena.tools.tiny_model import tiny_model_dir

    def cfg(out, executor):
        return {
            "game": "ipd(horizon=3,text=brief)",
            "seed": 2,
            "steps": 2,
            "out": str(out),
            "progress": False,
            "tensorboard": False,
            "plots": False,
            "torch_threads": 1,
            "executor": executor,
            "population": [
                {
                    "label": "aa",
                    "agent": {"name": "llm", "model": str(tiny_model_dir(1)), "temperature": 4},
                    "role": "learner",
                    "matchmaking": "self_play",
                    "games_per_step": 8,
                    "snapshot_every": 1,
                    "trainer": {
                        "name": "llm_advantage_alignment",
                        "params": {"torch_threads": 1, "lr": 0.01, "beta": 1.0},
                    },
                }
            ],
            "evaluation": {"every": 2, "games": 0},
        }

    a, b = tmp_path / "inprocess", tmp_path / "ray"
    run(cfg(a, {"kind": "inprocess", "chunk": 4}))
    run(cfg(b, {"kind": "ray", "address": cluster["address"], "workers": 2, "chunk": 4}))
    assert same_games(train_rows(a), train_rows(b)) and len(train_rows(b)) == 16
    assert weights(a, "aa") == weights(b, "aa")


def test_worker_killed_mid_step_is_replaced(cluster, tmp_path, capfd):
    marker = tmp_path / "kills"
    crash = {"label": "crash", "agent": {"name": "crash", "marker": str(marker), "times": 1}}
    out = tmp_path / "run"
    res = run(
        kuhn(out, {"kind": "ray", "address": cluster["address"], "workers": 2, "chunk": 4}, steps=2, extra=[crash])
    )
    assert len(list(marker.iterdir())) == 1  # a worker was killed while playing
    rows = train_rows(out)
    assert len(rows) == res.train_games == 2 * 48
    assert "replacing it and replaying" in capfd.readouterr().err


def test_worker_dying_repeatedly_is_one_line(cluster, tmp_path, capsys):
    from arena.cli import main

    crash = {"label": "crash", "agent": {"name": "crash", "marker": str(tmp_path / "kills"), "times": 99}}
    cfg = kuhn(
        tmp_path / "run",
        {"kind": "ray", "address": cluster["address"], "workers": 1, "chunk": 48, "max_failures": 1},
        steps=1,
        extra=[crash],
    )
    cfg["population"][-1]["opponents"] = ["crash"]
    path = tmp_path / "league.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert main(["league", str(path)]) == 2
    captured = capsys.readouterr().err
    err = [x for x in captured.strip().splitlines() if "died" in x and "RolloutWorker" not in x]
    assert len(err) == 1 and "rollout workers died 2 times" in err[0], captured


@pytest.mark.parametrize(
    "request_, message",
    [
        ({"num_gpus": 1}, "no node of the Ray cluster can host a rollout worker needing {CPU: 1, GPU: 1}"),
        ({"resources": {"node_c": 1}}, "needing {CPU: 1, node_c: 1}"),
        ({"agents": {"ppo": {"num_gpus": 2}}}, "for agent 'ppo' needing {CPU: 1, GPU: 2}"),
    ],
)
def test_unsatisfiable_request_is_one_line(cluster, tmp_path, capsys, request_, message):
    from arena.cli import main

    cfg = kuhn(tmp_path / "run", {"kind": "ray", "address": cluster["address"], **request_})
    path = tmp_path / "league.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert main(["league", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not (tmp_path / "run").exists()


def test_unreachable_address_is_one_line(tmp_path):
    cfg = kuhn(tmp_path / "run", {"kind": "ray", "address": f"127.0.0.1:{_free_port()}"})
    path = tmp_path / "league.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = subprocess.run(arena_cmd() + ["league", str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and "cannot reach the Ray cluster at 127.0.0.1:" in err[0], err
    assert not (tmp_path / "run").exists()


def test_pools_per_agent_land_where_their_resources_are(cluster, tmp_path):
    """The learner's games (and its snapshots') run on a pool pinned to node_b; the rest anywhere."""
    out = tmp_path / "run"
    res = run(
        kuhn(
            out,
            {
                "kind": "ray",
                "address": cluster["address"],
                "workers": 1,
                "chunk": 8,
                "num_cpus": 0.5,
                "agents": {"ppo": {"workers": 1, "num_cpus": 0.5, "resources": {"node_b": 1}}},
            },
            steps=1,
        )
    )
    node_b = next(n["NodeID"] for n in ray.nodes() if n["Alive"] and n["Resources"].get("node_b"))
    rows = train_rows(out)
    assert len(rows) == res.train_games == 48
    assert {i["node"] for _, _, i in rows.values()} == {node_b}
    assert all(i["worker"].startswith("ppo/") for _, _, i in rows.values())


AUTH_MISMATCH = """
import sys
import ray
from arena.errors import ArenaError
from arena.playing.executor import ExecutorConfig
from arena.playing.ray_executor import RayExecutor

ray.init(address="local", num_cpus=1, include_dashboard=False, configure_logging=False)  # token mode
ray.shutdown()
try:
    RayExecutor(ExecutorConfig(kind="ray", workers=1, address=sys.argv[1]))
except ArenaError as exc:
    print(exc)
    sys.exit(2)
"""


def test_auth_mode_mismatch_is_one_line(tmp_path):
    """A driver that has run a local cluster (token auth) joining a cluster started with
    RAY_AUTH_MODE=disabled: Ray cancels its workers; the executor says why in one line."""
    temp = tempfile.mkdtemp(prefix="arena-am-", dir="/tmp")
    port = _free_port()
    env = dict(os.environ, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    ray_bin = str(Path(sys.executable).parent / "ray")
    head = [ray_bin, "start", "--head", f"--port={port}", "--include-dashboard=false", "--num-cpus=1"]
    try:
        subprocess.run(
            [*head, f"--temp-dir={temp}", "--disable-usage-stats"],
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        script = tmp_path / "driver.py"
        script.write_text(AUTH_MISMATCH)
        driver_env = dict(os.environ, RAY_AUTH_MODE="token")
        proc = subprocess.run(
            [sys.executable, str(script), f"127.0.0.1:{port}"],
            env=driver_env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert proc.returncode == 2, proc.stderr[-2000:]
        out = proc.stdout.strip().splitlines()
        assert len(out) == 1 and "different Ray auth modes" in out[0], out
    finally:
        _stop(temp)
