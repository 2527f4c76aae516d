"""``arena join``: a person plays a hosted Kuhn hand through a real pseudo-terminal, with the
same prompts as ``arena play``; bad input to ``arena join``/``arena host`` is one line, exit 2."""

from __future__ import annotations

import subprocess

import pexpect

from arena.evaluation.store import RunStore
from support import arena_cmd
from support.host import HostProcess


def test_terminal_client_plays_a_hosted_kuhn_hand(tmp_path, subprocess_env):
    run = tmp_path / "run"
    host = HostProcess(
        ["--game", "kuhn_poker", "--seats", "human", "cfr:algo=cfr+,iterations=50", "--seed", "3", "--out", str(run)],
        2,
        subprocess_env,
    )
    cmd = arena_cmd() + ["join", host.url, "--token", host.tokens[0]]
    child = pexpect.spawn(cmd[0], cmd[1:], env=subprocess_env, encoding="utf-8", timeout=60)
    try:
        child.expect("you are player 0; others: cfr")
        child.expect("Your move: ")
        assert "--- your turn (player 0) ---" in child.before and "You hold the" in child.before
        assert "Moves: [1] check  [2] bet" in child.before
        child.sendline("dance")
        child.expect("Invalid move 'dance'")
        child.expect("Your move: ")
        child.sendline("2")  # bet, by number
        while child.expect(["Your move: ", "Result: you"]) == 0:
            child.sendline("call")
        child.expect(r"The host's series is over \(1 game\(s\)\); your total: ([-+]\d+)")
        total = float(child.match.group(1))
        child.expect(pexpect.EOF)
    finally:
        child.close()
    try:
        assert child.exitstatus == 0
        assert host.wait() == 0, host.stderr
    finally:
        host.stop()
    with RunStore.open_existing(run) as store:
        (record,) = store.matches()
    assert record.returns[0] == total and record.transcript


def test_join_with_a_wrong_token_is_one_line_and_exit_2(tmp_path, subprocess_env):
    host = HostProcess(["--game", "kuhn_poker", "--seats", "human", "random", "--no-store"], 2, subprocess_env)
    try:
        r = subprocess.run(
            arena_cmd() + ["join", host.url, "--token", "wrong"],
            capture_output=True,
            text=True,
            env=subprocess_env,
            timeout=60,
        )
    finally:
        host.stop()
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"arena: error: host {host.url} refused or dropped the connection: unknown or missing join token"
    ]


def test_host_bad_input_is_one_line_and_exit_2(tmp_path, subprocess_env):
    bad = tmp_path / "bad.yaml"
    bad.write_text("game: kuhn_poker\nseats: [human, random]\nmove_tme: 3\n")
    r = subprocess.run(arena_cmd() + ["host", str(bad)], capture_output=True, text=True, env=subprocess_env, timeout=60)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"arena: error: {bad}: unknown key 'move_tme' (known keys: game, seats, "
        "games, seed, move_time, default_action, default_text, join_timeout, "
        "bind, port, public_host, out, transcripts, linger, tokens, rate_limit, "
        "rate_burst, idle_timeout)"
    ]
    r = subprocess.run(
        arena_cmd() + ["join", "http://127.0.0.1:9"], capture_output=True, text=True, env=subprocess_env, timeout=60
    )
    assert r.returncode == 2 and "needs --token" in r.stderr and len(r.stderr.strip().splitlines()) == 1
