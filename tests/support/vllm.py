"""Shared by the vLLM tests: fixed observations to score, and running a script that starts a
vLLM engine in its own subprocess (vLLM starts worker processes and wants a ``__main__``
guard) and process group (so the workers go down with it)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

TESTS = Path(__file__).resolve().parents[1]  # the suite's root: scripts import `support` from there


def observations(game, n):
    """``n`` decisions of ``game``: fresh deals, every other one after a first move."""
    from arena.agent import Observation
    from arena.playing.match import game_rng, sample_chance

    out = []
    for i in range(n):
        s = game.new_initial_state()
        sample_chance(s, game_rng(7, i))
        if i % 2:
            s.apply_action(s.legal_actions()[0])
            sample_chance(s, game_rng(7, i))
        out.append(Observation(s, s.current_player(), np.random.default_rng(i), game.spec.full_name))
    return out


def run_engine_script(tmp: Path, source: str, model_dir: Path, timeout: float = 840) -> dict:
    """Run ``source`` as ``python script MODEL_DIR OUT_JSON`` and return the JSON it wrote."""
    script, out, log = tmp / "run.py", tmp / "out.json", tmp / "vllm.log"
    script.write_text(source)
    env = dict(
        os.environ,
        VLLM_CPU_KVCACHE_SPACE="1",
        TOKENIZERS_PARALLELISM="false",
        PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    )
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            [sys.executable, str(script), str(model_dir), str(out)],
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    if proc.returncode != 0 or not out.exists():
        pytest.fail(f"vllm subprocess failed ({proc.returncode}):\n{log.read_text()[-3000:]}")
    return json.loads(out.read_text())
