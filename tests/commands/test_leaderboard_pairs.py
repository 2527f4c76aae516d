"""``arena leaderboard RUN --export pairs``: every comparison a leaderboard rates, as LMArena's
``model_a,model_b,winner`` rows (ties as ``tie``); arena's Bradley–Terry fitted on those rows
alone gives the board's ratings, so a tool reading the file rates the same games."""

from __future__ import annotations

import csv
import json

import pytest

from arena.cli import main
from arena.config import load_config
from arena.evaluation.ratings.bradley_terry import bradley_terry
from arena.evaluation.store import RunStore
from arena.evaluation.tournament import TournamentConfig, run_tournament

CONFIG = """
game: ipd
agents: [tit_for_tat, always_cooperate, random]
format: {kind: round_robin, games: 20}
ratings: {outcome: win, bootstrap: 0}
seed: 0
"""
SCORE = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("pairs")
    (root / "t.yaml").write_text(CONFIG + f"out: {root / 'run'}\n")
    run_tournament(load_config(TournamentConfig, root / "t.yaml"), quiet=True)
    return root / "run"


def test_pairs_carry_every_comparison_the_board_rates(run, tmp_path, capsys):
    out = tmp_path / "pairs.csv"
    assert main(["leaderboard", str(run), "--export", "pairs", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    with RunStore.open_existing(run) as store:
        games = store.matches()
    assert len(rows) == len(games) == 120 and {r["winner"] for r in rows} == {"model_a", "model_b", "tie"}
    for row, game in zip(rows, games):  # plan order: one row per game of two different agents
        assert [row["model_a"], row["model_b"]] == game.seats
        a, b = game.returns
        assert row["winner"] == ("model_a" if a > b else "model_b" if b > a else "tie")
    assert main(["leaderboard", str(run), "--json"]) == 0
    board = {r["agent"]: r["rating"] for r in json.loads(capsys.readouterr().out)["rows"]}
    refit = bradley_terry([(r["model_a"], r["model_b"], SCORE[r["winner"]]) for r in rows], sorted(board), bootstrap=0)
    assert all(abs(refit.as_dict()[n][0] - board[n]) < 1e-9 for n in board)


def test_pairs_stream_to_stdout(run, capsys):
    assert main(["leaderboard", str(run), "--export", "pairs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "model_a,model_b,winner" and len(lines) == 121
