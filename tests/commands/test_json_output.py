"""``--json`` means one JSON document on stdout and nothing else (progress, logs and tables go
to stderr), for every command that offers the flag and for every benchmark. The commands are
found from the parser, so a new one without a case here fails; each runs on tiny inputs as a
user runs it, a process of the ``arena`` command. (``arena match --json`` streams its report one
line per game, but the lines make one document: README, "Using arena".)"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess

import pytest

from arena.cli import build_parser
from arena.config import load_config
from arena.evaluation.tournament import TournamentConfig, run_tournament
from support import arena_cmd

TOURNAMENT = """
game: kuhn_poker
agents: [random, {name: random, label: other}]
format: {kind: round_robin, games: 2}
out: kuhn
"""
WEREWOLF = """
game: werewolf(players=5)
agents: [{name: werewolf_scripted, label: a}, {name: werewolf_scripted, label: b},
         {name: werewolf_scripted, label: c}, {name: werewolf_scripted, label: d},
         {name: werewolf_scripted, label: e}]
format: {kind: round_robin, games: 1}
out: werewolf
"""
LEAGUE = """
game: kuhn_poker
steps: 1
out: league
population: [{label: random, agent: random}, {label: other, agent: random}]
evaluation: {every: 1, games: 2, ratings: {bootstrap: 0}}
"""
SOLVE = "game: kuhn_poker\nalgo: es-mccfr\niterations: 20\nlog_every: 20\nout: solve\n"

COMMANDS = {
    "plugins": [],
    "games": [],
    "describe": ["kuhn_poker"],
    "match": ["--game", "kuhn_poker", "--agents", "random", "random", "--games", "5"],
    "tournament": ["tournament.yaml", "out=kuhn-again"],
    "leaderboard": ["kuhn"],
    "werewolf-report": ["werewolf"],
    "league": ["league.yaml"],
    "solve": ["--game", "kuhn_poker", "--algo", "cfr+", "--iterations", "10"],
    "sweep": ["solve.yaml", "seeds=0", "--no-plot"],
}
"""Each command's tiny run (in a directory holding the files and runs of ``workdir``)."""

BENCHMARKS = {
    "alphazero": ["--batches", "1", "--batch", "2", "--simulations", "2", "--every", "1", "--eval-games", "2"],
    "array-games": [
        *("--games", "300", "--state-games", "100", "--baseline-games", "50", "--batch", "64", "--repeats", "1")
    ],
    "arenarl-learning": ["--seeds", "0", "--iterations", "1", "--tasks", "1", "--group", "2", "--out", "arenarl"],
    "arenarl-signal": ["--shapes", "pairs", "--sizes", "4", "--groups", "2", "--out", "arenarl-signal"],
    "cfr": ["--game", "kuhn_poker", "--rounds", "1", "--block", "2", "--py-iterations", "1", "--large-game", ""],
    "cfr-br": ["--game", "kuhn_poker", "--iterations", "1"],
    "cfr-curves": ["--game", "kuhn_poker", "--iterations", "4", "--log-every", "2", "--out", "curves"],
    "bandits": ["--games", "3", "--seeds", "0,1", "--horizons", "5", "--agents", "ucb1,thompson"],
    "cli": ["--games", "50", "--baseline-games", "20", "--rounds", "1"],
    "coop": ["--seeds", "1", "--games", "20", "--batch", "10", "--methods", "ippo,qmix", "--games-list", "climbing"],
    "host-connections": ["--connections", "8", "--repeats", "1"],
    "judge-topology": ["--sizes", "4", "--groups", "2"],
    "language-baselines": ["--games", "4"],
    "language-games": ["--games", "4", "--baseline-games", "2", "--repeats", "1"],
    "llm": ["--backends", "transformers", "--game", "kuhn_poker", "--games", "2", "--single-games", "1", "--no-flops"],
    "llm-league": [
        *("--k", "1,2", "--max-full", "1", "--params", "1M", "--batch", "4", "--repeats", "1", "--no-update")
    ],
    "match": ["--games", "50", "--baseline-games", "10", "--repeats", "1"],
    "monopoly-deal": ["--games", "4", "--baseline-games", "2", "--repeats", "1"],
    "mcts": [
        *("--games", "2", "--leduc-games", "2", "--ttt-simulations", "4"),
        *("--c4-simulations", "4", "--leduc-simulations", "4"),
    ],
    "monopoly-deal-agents": ["--games", "4", "--iterations", "10"],
    "psro": ["--game", "kuhn_poker", "--iterations", "1", "--sims-per-entry", "5"],
    "preference-cycle": ["--methods", "sppo", "--seeds", "0", "--iterations", "1", "--prompts", "1", "--warmup", "2"],
    "rating": ["--agents", "4", "--seeds", "1"],
    "solver-suite": [
        *("--games", "kuhn_4p", "--methods", "cfr,vad-cfr", "--iterations", "2", "--log-every", "1"),
        *("--psro-games", "kuhn_poker", "--meta-solvers", "uniform,shor", "--psro-iterations", "2", "--out", "suite"),
    ],
    "rating-coverage": ["--agents", "4", "--tournaments", "1", "--bootstrap", "10", "--formats", "round_robin"],
    "tournament-scale": ["--sizes", "200,400"],
    "train-throughput": ["--cases", "ppo_kuhn", "--workers", "1", "--steps", "2", "--games", "8", "--repeats", "1"],
}
"""Each benchmark at the smallest settings it offers."""

NEEDS = {
    "psro": "cvxpy",
    "train-throughput": "ray",
    "llm": "transformers",
    "llm-league": "peft",
    "arenarl-learning": "transformers",
    "arenarl-signal": "transformers",
    "preference-cycle": "transformers",
}
"""Optional libraries a benchmark cannot run without (``pip install 'arena-rl[bench]'``)."""


def sub_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The sub-command parsers of ``parser``, each completed (asked for its arguments)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {name: p.complete() for name, p in action.choices.items()}
    return {}


def takes_json(parser: argparse.ArgumentParser) -> bool:
    return any("--json" in action.option_strings for action in parser._actions)


@pytest.fixture(scope="module")
def commands():
    return sub_parsers(build_parser())


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """The configs the cases name, and the finished runs ``leaderboard`` and ``werewolf-report`` read."""
    root = tmp_path_factory.mktemp("json")
    for name, text in (("tournament", TOURNAMENT), ("werewolf", WEREWOLF), ("league", LEAGUE), ("solve", SOLVE)):
        (root / f"{name}.yaml").write_text(text)
    for name, out in (("tournament", "kuhn"), ("werewolf", "werewolf")):
        run_tournament(load_config(TournamentConfig, root / f"{name}.yaml", [f"out={root / out}"]), quiet=True)
    return root


def only_json(stdout: str, what: str) -> object:
    """The one JSON document ``stdout`` holds; anything else fails the test."""
    try:
        return json.loads(stdout)
    except json.JSONDecodeError as exc:
        pytest.fail(f"{what}: stdout is not one JSON document ({exc}):\n{stdout[:2000]}")


def run_json(argv: list[str], cwd, env) -> object:
    """Run ``arena ARGV --json`` and return what it printed."""
    out = subprocess.run(arena_cmd() + argv + ["--json"], capture_output=True, text=True, cwd=cwd, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return only_json(out.stdout, f"arena {' '.join(argv)} --json")


def test_every_command_with_json_has_a_case(commands):
    assert {name for name, p in commands.items() if takes_json(p)} == set(COMMANDS)


def test_every_benchmark_takes_json_and_has_a_case(commands):
    benchmarks = sub_parsers(commands["bench"])
    assert all(takes_json(p) for p in benchmarks.values())
    assert set(benchmarks) == set(BENCHMARKS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_prints_only_json(command, workdir, subprocess_env):
    run_json([command, *COMMANDS[command]], workdir, subprocess_env)


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_benchmark_prints_only_json(name, workdir, subprocess_env):
    needs = NEEDS.get(name)
    if needs and importlib.util.find_spec(needs) is None:
        pytest.skip(f"arena bench {name} needs {needs}, which is not installed")
    figures = run_json(["bench", name, *BENCHMARKS[name]], workdir, subprocess_env)
    assert isinstance(figures, dict) and "machine_load_at_start" in figures


def test_a_stray_line_fails():
    """The check can fail: a progress line before the document, or a table after it."""
    doc = json.dumps({"games": 2}, indent=2)
    assert only_json(doc + "\n", "doc") == {"games": 2}
    for stray in ("match: 2/2 games\n" + doc, doc + "\nwrote report.md\n"):
        with pytest.raises(pytest.fail.Exception, match="not one JSON document"):
            only_json(stray, "stray")
