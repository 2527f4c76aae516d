"""``arena solve`` end to end in a subprocess: JSON result, the files it writes, the policy file
evaluated by OpenSpiel, and one-line errors for bad input."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

ARENA = [str(Path(sys.executable).parent / "arena")]


def run(*args, check=True):
    proc = subprocess.run(ARENA + list(args), capture_output=True, text=True, timeout=240)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_solve_writes_policy_curve_and_tensorboard_and_openspiel_agrees(tmp_path):
    import pyspiel
    from open_spiel.python.algorithms import exploitability as os_expl

    from arena.plugins.agents.cfr.openspiel_io import to_openspiel_policy
    from arena.policy import TabularPolicy

    out = tmp_path / "leduc"
    proc = run(
        "solve",
        "--game",
        "leduc_poker",
        "--algo",
        "cfr+",
        "--iterations",
        "40",
        "--out",
        str(out),
        "--json",
        "--log-every",
        "10",
    )
    result = json.loads(proc.stdout)
    assert set(result) == {"game", "algo", "iterations", "nash_conv", "exploitability", "seconds"}
    assert (result["game"], result["algo"], result["iterations"]) == ("leduc_poker", "cfr+", 40)
    assert result["exploitability"] == pytest.approx(result["nash_conv"] / 2)
    rows = list(csv.DictReader(open(out / "curve.csv")))
    assert [int(r["iteration"]) for r in rows] == [1, 10, 20, 30, 40]
    assert float(rows[0]["nash_conv"]) == pytest.approx(4.747222222222222)
    assert float(rows[-1]["exploitability"]) == pytest.approx(result["exploitability"])
    assert (out / "curve.png").stat().st_size > 1000
    assert list((out / "tb").glob("events.out.tfevents.*"))
    policy = TabularPolicy.load(out / "policy.json")
    assert policy.game == "leduc_poker" and len(policy) == 936
    game = pyspiel.load_game("leduc_poker")
    assert os_expl.exploitability(game, to_openspiel_policy(game, policy)) == pytest.approx(
        result["exploitability"], abs=1e-9
    )


def test_solve_sampling_and_progress_text(tmp_path):
    proc = run("solve", "--game", "kuhn_poker", "--algo", "es-mccfr", "--iterations", "300", "--log-every", "100")
    assert "iteration 100: exploitability" in proc.stderr
    assert "kuhn_poker es-mccfr: 300 iterations" in proc.stdout
    result = json.loads(
        run(
            "solve",
            "--game",
            "kuhn_poker(players=3)",
            "--algo",
            "vad-cfr",
            "--iterations",
            "50",
            "--json",
            "--set",
            "warmup=10",
        ).stdout
    )
    assert result["game"] == "kuhn_poker(players=3)" and result["exploitability"] < 2.0625 / 3


def test_bad_input_is_one_line_exit_2_in_a_subprocess():
    proc = run("solve", "--game", "no_such_game", check=False)
    assert proc.returncode == 2 and "no_such_game" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args,message",
    [
        (["--game", "kuhn_poker", "--set", "alpha=2"], "does not take parameters"),
        (["--game", "kuhn_poker", "--set", "alpha"], "is not KEY=VALUE"),
        (["--game", "kuhn_poker", "--iterations", "0"], "iterations must be at least 1"),
        (["--game", "kuhn_poker", "--device", "tpu"], "unknown device"),
        (["--game", "kuhn_poker", "--algo", "es-mccfr", "--device", "cuda"], "applies to the tree solvers"),
        (["--game", "liars_dice", "--max-nodes", "500"], "os-mccfr or es-mccfr"),
    ],
)
def test_bad_input_is_one_line_exit_2(args, message, capsys):
    from arena.cli import main

    assert main(["solve", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_bench_cfr_runs_and_reports_a_ratio():
    proc = run(
        "bench",
        "cfr",
        "--game",
        "kuhn_poker",
        "--rounds",
        "2",
        "--block",
        "5",
        "--py-iterations",
        "1",
        "--large-game",
        "",
        "--json",
    )
    figures = json.loads(proc.stdout)
    assert figures["nash_conv_abs_difference"] < 1e-9
    assert figures["speedup_vs_openspiel_cpp"] > 0 and figures["histories"] == 58
    assert figures["cpu_speedup_vs_openspiel_cpp"] > 0


def test_bench_cfr_curves_runs_parameter_variants_beside_the_defaults(tmp_path):
    """A ``--variant`` is the named algorithm with those parameters (here DCFR(1.5, 0, 2) spelled
    out, which is DCFR's default: the same exploitability), reported under its own label."""
    proc = run(
        "bench", "cfr-curves", "--game", "kuhn_poker", "--iterations", "30", "--log-every", "30",
        "--out", str(tmp_path), "--variant", "dcfr:alpha=1.5,beta=0,gamma=2", "--json",
    )  # fmt: skip
    figures = json.loads(proc.stdout)
    assert figures["dcfr[alpha=1.5,beta=0,gamma=2]_exploitability"] == figures["dcfr_exploitability"]
    assert "vad-cfr_exploitability" in figures and (tmp_path / "cfr_curves.csv").exists()
    bad = run("bench", "cfr-curves", "--out", str(tmp_path), "--variant", "dcfr", check=False)
    assert bad.returncode != 0 and "--variant takes ALGO:KEY=VALUE" in bad.stderr
