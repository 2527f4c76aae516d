"""configs/league/llm_lora.yaml through ``arena league``: LLM learners that are LoRA adapters on one
shared base; snapshots, checkpoints and trainer states are adapters only; killed with SIGKILL
mid-step and rerun, the stores and every adapter's bytes equal an uninterrupted run's; on Ray only
adapters travel to the workers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("peft")

from arena.config import load_config  # noqa: E402
from arena.league import LeagueConfig, run_league  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402
from support import REPO  # noqa: E402
from support.league import kill_when, rows  # noqa: E402

STEPS = 4
GAMES = 12


def lora_league(out: Path, **top) -> dict:
    """The shipped config, smaller: two of its learners (main and the PFSP learner), few games."""
    cfg = yaml.safe_load((REPO / "configs" / "league" / "llm_lora.yaml").read_text())
    keep = [m for m in cfg["population"] if m["label"] in ("random", "main", "pfsp")]
    for m in keep:
        if m["label"] != "random":
            m["agent"] = {**m["agent"], "model": str(tiny_model_dir(1))}
            m["games_per_step"] = GAMES
    cfg.update(
        population=keep,
        out=str(out),
        steps=STEPS,
        progress=False,
        tensorboard=False,
        plots=False,
        evaluation={"every": 2, "games": 4, "ratings": {"bootstrap": 0}},
        **top,
    )
    return cfg


def adapter_bytes(run: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(run)): p.read_bytes() for p in sorted((run / "snapshots").rglob("adapter_model.safetensors"))
    }


@pytest.mark.slow
def test_lora_league_resumes_after_sigkill_with_identical_stores_and_adapters(tmp_path):
    crash, clean = tmp_path / "crash", tmp_path / "clean"
    cfg_file = tmp_path / "league.yaml"
    cfg_file.write_text(yaml.safe_dump(lora_league(crash)))
    cmd = [sys.executable, "-m", "arena.cli", "league", str(cfg_file), "--quiet"]
    env = dict(os.environ, PYTHONHASHSEED="0")
    killed = kill_when(cmd, crash / "arena.sqlite", lambda c: c >= 1, env=env, settle=0.5, timeout=300)
    assert killed < STEPS  # half a second into the next step
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    run_league(load_config(LeagueConfig, None, base=lora_league(clean)), quiet=True)

    for sub in ("train", "."):
        assert rows(clean / sub / "arena.sqlite") == rows(crash / sub / "arena.sqlite")
    snaps = adapter_bytes(clean)
    assert {Path(k).parent.name for k in snaps} == {"main@2", "main@4", "pfsp@2", "pfsp@4"}
    assert snaps == adapter_bytes(crash)
    # adapters only: no snapshot or checkpoint holds a model's weights, and one is far smaller
    model_bytes = sum(p.stat().st_size for p in tiny_model_dir(1).glob("*.safetensors"))
    for d in [*(crash / "snapshots").iterdir(), *(crash / "checkpoints").glob("step-*/learners/*")]:
        assert not list(d.glob("model*.safetensors"))
        assert (d / "adapter_model.safetensors").stat().st_size < 0.5 * model_bytes
    board = (crash / "leaderboard.md").read_text()
    assert "main@4" in board and "random" in board


@pytest.mark.slow
def test_on_ray_only_adapters_travel(tmp_path, monkeypatch):
    """Asynchronous (``max_staleness: 1``) on a Ray worker: every live version and snapshot it is
    sent is an adapter directory."""
    pytest.importorskip("ray")
    from arena.playing import ray_executor

    sent: list[dict[str, bytes]] = []
    real = ray_executor._files

    def recorded(path: str) -> dict[str, bytes]:
        files = real(path)
        sent.append(files)
        return files

    monkeypatch.setattr(ray_executor, "_files", recorded)
    cfg = lora_league(tmp_path / "ray", executor={"kind": "ray", "workers": 1, "log_to_driver": False}, max_staleness=1)
    cfg["steps"] = 2
    run_league(load_config(LeagueConfig, None, base=cfg), quiet=True)
    assert sent, "the learners travelled to the Ray worker"
    model_bytes = sum(p.stat().st_size for p in tiny_model_dir(1).glob("*.safetensors"))
    for files in sent:
        assert "adapter_model.safetensors" in files and not any(n.startswith("model") for n in files)
        assert sum(len(b) for b in files.values()) < 0.5 * model_bytes
    live = list((tmp_path / "ray" / "live").rglob("adapter_model.safetensors"))
    assert live and not list((tmp_path / "ray" / "live").rglob("model*.safetensors"))
