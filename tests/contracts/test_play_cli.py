"""``arena play`` driven through a real pseudo-terminal by a scripted person."""

from __future__ import annotations

import pexpect

from support import arena_cmd


def test_human_plays_a_kuhn_hand_with_an_invalid_input(subprocess_env):
    cmd = arena_cmd() + ["play", "--game", "kuhn_poker", "--opponent", "random", "--seat", "0", "--seed", "3"]
    child = pexpect.spawn(cmd[0], cmd[1:], env=subprocess_env, encoding="utf-8", timeout=60)
    try:
        child.expect("you are player 0")
        child.expect("Your move: ")
        assert "You hold the" in child.before and "Moves: [1]" in child.before
        child.sendline("dance")
        child.expect("Invalid move 'dance'")
        child.expect("Your move: ")
        child.sendline("1")  # by number
        moves = 1
        while True:
            i = child.expect(["Your move: ", "Play again"])
            if i == 1:
                break
            child.sendline("bet" if "bet" in child.before.split("Moves:")[-1] else "call")
            moves += 1
        transcript = child.before
        assert "game over" in transcript and "Result: you" in transcript
        assert "Games played: 1" in transcript
        child.sendline("n")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert 1 <= moves <= 2
