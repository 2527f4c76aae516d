"""tools/gpu/run.py's CPU dry run: every section of the GPU measurement script runs at tiny sizes
with only the packages a bare GPU machine has (torch, transformers, peft, numpy, scipy, ...) and
the wheels tools/gpu/wheels.sh carries; the other packages arena can use are blocked, so the
script cannot come to depend on one the GPU machine lacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support import REPO

pytest.importorskip("peft")

ABSENT_ON_GPU = ["pettingzoo", "gymnasium", "shimmy", "ray", "vllm", "openai", "textarena", "cvxpy", "datasets"]
BLOCKER = f"""
import importlib.abc, sys
ABSENT = {ABSENT_ON_GPU!r}
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ABSENT:
            raise ImportError(f"{{name}} is not installed on the GPU machine")
sys.meta_path.insert(0, Absent())
"""


@pytest.mark.slow
def test_gpu_script_dry_run_on_cpu(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(BLOCKER)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, str(REPO / "tools" / "gpu" / "run.py"), "--cpu", "--out", str(tmp_path / "out")]
    done = subprocess.run([*cmd, "--params", "1M", "--k", "2"], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    results = json.loads((tmp_path / "out" / "gpu_results.json").read_text())
    assert results["cfr"]["numpy_nash_conv"] == pytest.approx(results["cfr"]["cpu_nash_conv"], abs=1e-9)
    assert results["ppo"]["cpu_steps_per_s"] > 0
    assert results["torch_face"]["leduc_poker_cpu_mlp_games_per_s"] > 0
    cases = {(c["kind"], c["k"]): c for c in results["llm_league"]["cases"]}
    assert set(cases) == {("adapters", 2), ("full", 2), ("full", 1), ("adapters", 8)}
    assert cases[("adapters", 2)]["parameter_bytes"] < cases[("full", 2)]["parameter_bytes"]
    assert 0 <= results["mismatch"]["mean_abs_logprob_gap"] < 0.1
    report = (tmp_path / "out" / "gpu_results.md").read_text()
    assert "| adapters | 2 |" in report and "cfr.speedup_ratio" in report


def test_sync_sites_name_the_line_that_synchronised(monkeypatch):
    """The sync watch attributes each synchronising call to the innermost frame of the repository."""
    import warnings

    import torch

    sys.path.insert(0, str(REPO / "tools" / "gpu"))
    try:
        import run as gpu_run
    finally:
        sys.path.pop(0)
    modes = []
    monkeypatch.setattr(torch.cuda, "set_sync_debug_mode", modes.append)

    def sync_twice():
        for _ in range(2):
            warnings.warn("called a synchronizing CUDA operation")
        warnings.warn(
            "Synchronization debug mode is a prototype feature and does not yet detect all synchronizing operations"
        )
        warnings.warn("an unrelated warning")
        return 7

    result, sites = gpu_run.sync_sites(sync_twice)
    assert result == 7 and modes == ["warn", 0]
    assert len(sites) == 1 and sites[0].startswith("tests/tools/test_gpu_script.py:") and "sync_twice" in sites[0]
    assert gpu_run.sync_sites(lambda: 1) == (1, [])
