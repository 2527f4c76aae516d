"""Leaderboard outputs of a real run: Markdown/CSV/JSON agree, PNGs are images, TensorBoard
scalars are readable, and `arena leaderboard` reproduces the tournament's table."""

import csv
import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout

import matplotlib.image as mpimg
import pytest

from arena.cli import main
from arena.reporting import read_scalars
from support import REPO


def arena(*argv):
    """The CLI in this process (the subprocess path is covered by test_tournament/test_store)."""
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            rc = main(list(argv))
    finally:
        os.chdir(cwd)
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("lb") / "run"
    rc, stdout, stderr = arena(
        "tournament",
        "configs/tournament/kuhn_round_robin.yaml",
        f"out={out}",
        "format.games=60",
        "ratings.snapshot_every=90",
    )
    assert rc == 0, stderr
    assert "rank" in stdout and "nash" in stdout and "360 games played now" in stdout
    return out


def test_files_agree(run_dir):
    js = json.loads((run_dir / "leaderboard.json").read_text())
    rows = list(csv.DictReader((run_dir / "leaderboard.csv").open()))
    md = (run_dir / "leaderboard.md").read_text()
    assert js["games"] == 360 and [r["agent"] for r in rows] == [r["agent"] for r in js["rows"]]
    assert js["rows"][0]["agent"] == "nash"  # the Nash policy heads a complete Kuhn round robin
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
    rc, stdout, stderr = arena("leaderboard", str(run_dir), "--json")
    assert rc == 0, stderr
    assert json.loads(stdout)["rows"] == json.loads((run_dir / "leaderboard.json").read_text())["rows"]
    rc, stdout, stderr = arena("leaderboard", str(run_dir))
    assert rc == 0 and "ranked by nash" in stdout
    rc, stdout, stderr = arena("leaderboard", str(run_dir / "nope"))
    assert rc == 2 and stderr.strip().startswith("arena: error: run directory not found")
