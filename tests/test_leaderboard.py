"""Leaderboard outputs of a real run: Markdown/CSV/JSON agree, PNGs are images, TensorBoard
scalars are readable, and `arena leaderboard` reproduces the tournament's table."""
import csv
import json
import subprocess
import sys
from pathlib import Path

import matplotlib.image as mpimg
import pytest

from arena.logging import read_scalars

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("lb") / "run"
    p = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", "configs/tournament/kuhn_round_robin.yaml",
                        f"out={out}", "format.games=60", "ratings.snapshot_every=90"],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert "rank" in p.stdout and "nash" in p.stdout and "360 games played now" in p.stdout
    return out


def test_files_agree(run_dir):
    js = json.loads((run_dir / "leaderboard.json").read_text())
    rows = list(csv.DictReader((run_dir / "leaderboard.csv").open()))
    md = (run_dir / "leaderboard.md").read_text()
    assert js["games"] == 360 and [r["agent"] for r in rows] == [r["agent"] for r in js["rows"]]
    assert js["rows"][0]["agent"] == "nash"            # the Nash policy heads a complete Kuhn round robin
    for r, c in zip(js["rows"], rows):
        assert float(c["rating"]) == pytest.approx(r["rating"])
        assert r["wins"] + r["draws"] + r["losses"] == r["games"] == 240
        assert r["lo"] <= r["rating"] <= r["hi"]
        assert f"| {r['rank']} | {r['agent']} | {r['rating']:.1f} |" in md
    assert sum(r["alpha_rank"] for r in js["rows"]) == pytest.approx(1.0)
    assert js["format"] == "round_robin" and len(js["payoff"]) == 3


def test_pngs_and_tensorboard(run_dir):
    for name in ("payoff.png", "ratings.png"):
        img = mpimg.imread(run_dir / name)
        assert img.ndim == 3 and img.shape[0] > 100
    scalars = read_scalars(run_dir / "tb")
    assert {"rating/bt/nash", "rating/bt/random", "final/bt/always_bet"} <= set(scalars)
    assert [s for s, _ in scalars["rating/bt/nash"]] == [90, 180, 270, 360]


def test_leaderboard_command_reproduces(run_dir):
    p = subprocess.run([sys.executable, "-m", "arena.cli", "leaderboard", str(run_dir), "--json"],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["rows"] == json.loads((run_dir / "leaderboard.json").read_text())["rows"]
    p = subprocess.run([sys.executable, "-m", "arena.cli", "leaderboard", str(run_dir / "nope")],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and p.stderr.strip().startswith("arena: error: run directory not found")
