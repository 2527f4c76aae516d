"""``python -m arena.tools.neupl_gap``: per-seed gaps to the exact best response, aggregated."""

from __future__ import annotations

import json

from arena.tools.neupl_gap import main


def test_a_short_run_reports_gaps_per_seed_and_over_seeds(capsys):
    args = ["--seeds", "0,1", "--basis-size", "2", "--iterations", "30", "--mixtures", "3", "--batch", "4", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["seed"] for r in out["seeds"]] == [0, 1]
    for r in out["seeds"]:
        assert 0.0 <= r["mean_gap"] <= r["max_gap"] < r["untrained_max_gap"]
    assert out["max_gap"]["n"] == 2 and out["max_gap"]["max"] == max(r["max_gap"] for r in out["seeds"])
