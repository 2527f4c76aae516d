"""Bad input to the CLI: one line naming the problem, exit status 2, no traceback, nothing written."""

from __future__ import annotations

import json
import subprocess

import pytest

from support import REPO, arena_cmd


def run(args, cwd, env):
    return subprocess.run(arena_cmd() + args, capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


CASES = {
    "unknown_key": ("game: kuhn_poker\nagents: [random, random]\ngamez: 3\n", [], "unknown key 'gamez'"),
    "wrong_type": ("game: kuhn_poker\nagents: [random, random]\ngames: lots\n", [], "key 'games'"),
    "missing_key": ("agents: [random, random]\n", [], "missing required key 'game'"),
    "bad_yaml": ("game: [kuhn_poker\nagents: x\n", [], "invalid YAML at line"),
    "not_mapping": ("- a\n- b\n", [], "top level must be a mapping"),
    "unknown_agent": ("game: kuhn_poker\nagents: [random, superbot]\n", [], "unknown agent 'superbot'"),
    "unknown_game": ("game: chess9000\nagents: [random, random]\n", [], "unknown game 'chess9000'"),
    "bad_agent_param": (
        "game: kuhn_poker\nagents: ['random:speed=3', random]\n",
        [],
        "agent 'random' has no parameter 'speed'",
    ),
    "bad_override": ("game: kuhn_poker\nagents: [random, random]\n", ["seed"], "override 'seed' is not key=value"),
    "override_type": ("game: kuhn_poker\nagents: [random, random]\n", ["games=abc"], "key 'games'"),
    "list_entry_override": (
        "game: kuhn_poker\nagents: [random, random]\n",
        ["agents.0.name=cfr"],
        "'agents' is a list, and an override cannot set one entry of a list",
    ),
    "seat_count": ("game: kuhn_poker\nagents: [random]\n", [], "has 2 seats but 1 agents"),
    "bad_openspiel": (
        "game: 'openspiel:no_such_game'\nagents: [random, random]\n",
        [],
        "OpenSpiel has no game 'no_such_game'",
    ),
    "missing_policy": (
        "game: kuhn_poker\nagents: ['fixed:path=nope.json', random]\n",
        [],
        "agent 'fixed': policy file not found: nope.json",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_match_config(case, tmp_path, subprocess_env):
    text, overrides, message = CASES[case]
    cfg = tmp_path / "match.yaml"
    cfg.write_text(text + "out: result.json\n" if not text.startswith("- ") else text)
    out = run(["match", str(cfg), *overrides], tmp_path, subprocess_env)
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error:"), out.stderr
    assert message in lines[0]
    if case in ("unknown_key", "wrong_type", "missing_key", "bad_yaml", "not_mapping"):
        assert str(cfg) in lines[0]  # names the file
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "result.json").exists()


def test_missing_config_file(tmp_path, subprocess_env):
    out = run(["match", "nowhere.yaml"], tmp_path, subprocess_env)
    assert out.returncode == 2 and out.stderr.strip() == "arena: error: config file not found: nowhere.yaml"


def test_debug_shows_traceback(tmp_path, subprocess_env):
    out = run(["--debug", "match", "nowhere.yaml"], tmp_path, subprocess_env)
    assert out.returncode != 0 and "Traceback" in out.stderr


def test_good_config_with_overrides_writes_results(tmp_path, subprocess_env):
    out = run(
        [
            "match",
            str(REPO / "configs/match/kuhn_random.yaml"),
            "games=20",
            "seed=4",
            f"out={tmp_path}/r.json",
            "--json",
        ],
        tmp_path,
        subprocess_env,
    )
    assert out.returncode == 0, out.stderr
    stdout, written = json.loads(out.stdout), json.loads((tmp_path / "r.json").read_text())
    assert stdout == written and written["games"] == 20 and written["seed"] == 4 and len(written["results"]) == 20


@pytest.mark.parametrize(
    "args, message",
    [
        (["describe", "nonesuch"], "unknown game 'nonesuch'"),
        (["match", "--game", "kuhn_poker", "--agents", "random", "random", "--games", "x"], "invalid int value"),
        (["play", "--game", "kuhn_poker", "--seat", "5"], "--seat must be between 0 and 1"),
        (["bench"], "name a benchmark"),
    ],
)
def test_bad_cli_arguments(args, message, tmp_path, subprocess_env):
    out = run(args, tmp_path, subprocess_env)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr
