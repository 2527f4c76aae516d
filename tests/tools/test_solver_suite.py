"""`arena bench solver-suite`: every figure is OpenSpiel's NashConv of the policy file arena
wrote, and the solvers behind it are the published algorithms (CFR+ reproduces OpenSpiel's own
CFR+ on a held-out game)."""

from __future__ import annotations

import argparse
import json

import pytest

import arena
from arena.tools.bench.solver_suite import GAMES, add_arguments, run


def bench_args(**overrides) -> argparse.Namespace:
    """The bench's own defaults (its parser), with ``overrides``; CFR only unless asked."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([])
    for key, value in {"parts": "cfr", **overrides}.items():
        setattr(args, key, value)
    return args


def test_suite_figures_are_openspiels_on_the_exported_policies(tmp_path):
    out = run(bench_args(games="kuhn_4p", methods="cfr+,vad-cfr", iterations=20, log_every=10, out=str(tmp_path)))
    rows = json.loads((tmp_path / "solver_suite.json").read_text())
    assert [(r["game"], r["method"]) for r in rows] == [("kuhn_4p", "cfr+"), ("kuhn_4p", "vad-cfr")]
    assert out["max_abs_difference_vs_openspiel"] < 1e-9
    assert all((tmp_path / "policies" / f"kuhn_4p__{m}.json").exists() for m in ("cfr+", "vad-cfr"))
    assert out["kuhn_4p/vad-cfr_over_best_other_ratio"] == pytest.approx(
        out["kuhn_4p/vad-cfr_exploitability"] / out["kuhn_4p/cfr+_exploitability"]
    )
    assert (tmp_path / "solver_suite_curves.csv").read_text().count("\nkuhn_4p,cfr+,") == 3  # 1, 10, 20


def test_suite_cfr_plus_is_openspiels_cfr_plus(tmp_path):
    """On 3-player Kuhn (no exact regret ties for rounding to break) the suite's CFR+ after 20
    iterations has the exploitability of OpenSpiel's own ``CFRPlusSolver``."""
    import pyspiel

    out = run(bench_args(games="kuhn_poker(players=3)", methods="cfr+", iterations=20, log_every=0, out=str(tmp_path)))
    game = pyspiel.load_game("kuhn_poker(players=3)")
    theirs = pyspiel.CFRPlusSolver(game)
    for _ in range(20):
        theirs.evaluate_and_update_policy()
    reference = pyspiel.nash_conv(game, theirs.average_policy()) / 3
    assert out["kuhn_poker(players=3)/cfr+_exploitability"] == pytest.approx(reference, rel=1e-9)


def test_goofspiel_plays_as_a_turn_based_tree_through_a_game_valued_parameter():
    game = arena.load_game(GAMES["goofspiel_5"])
    assert game.spec.tree and not game.spec.simultaneous and game.spec.num_players == 2
    assert arena.load_game(game.spec.full_name).spec == game.spec  # workers rebuild it by name
    assert "num_cards=5" in str(game.pyspiel_game) and "points_order=descending" in str(game.pyspiel_game)


def test_unknown_game_is_one_clear_error(tmp_path):
    with pytest.raises(arena.ArenaError, match="leduc_9p"):
        run(bench_args(games="leduc_9p", methods="cfr", iterations=1, log_every=0, out=str(tmp_path)))


def test_psro_summary_compares_shor_at_the_same_population_size():
    from arena.tools.bench.solver_suite import summary

    def row(game, method, k, x):
        return {"game": game, "method": method, "iterations": k, "exploitability": x, "abs_difference": 0.0}

    rows = [
        row("g", "psro/uniform", 100, 0.2),
        row("g", "psro/alpharank", 32, 0.01),  # a smaller population: not compared
        row("g", "psro/shor", 100, 0.05),
        row("h", "psro/nash", 100, 0.0),  # solved exactly: SHOR can only lose
        row("h", "psro/shor", 100, 0.01),
    ]
    out = summary(rows, [], 1000)
    assert out["g/psro/shor_over_best_static_same_K_ratio"] == pytest.approx(0.25)
    assert out["h/psro/shor_over_best_static_same_K_ratio"] == float("inf")
    assert out["g/psro/alpharank_K"] == 32


def test_psro_part_exports_each_mixture_and_openspiel_agrees(tmp_path):
    out = run(
        bench_args(
            parts="psro",
            psro_games="kuhn_poker",
            meta_solvers="uniform,nash,shor",
            psro_iterations=3,
            psro_checkpoints="2",
            out=str(tmp_path),
        )
    )
    assert out["max_abs_difference_vs_openspiel"] < 1e-9
    assert [out[f"kuhn_poker/psro/{m}_K"] for m in ("uniform", "nash", "shor")] == [3, 3, 3]
    assert (tmp_path / "policies" / "psro_kuhn_poker__shor.json").exists()
    assert "kuhn_poker/psro/shor_over_best_static_same_K_ratio" in out
