"""Negative tests: bad requests are refused with a status and a logged reason, and the match
goes on to its end and into the store."""
from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from test_host_support import HostProcess

from arena.store import RunStore
from arena.tools.host.client import HostError, JoinClient


def _status(fn) -> tuple[int, str]:
    with pytest.raises(HostError) as info:
        fn()
    return info.value.status, info.value.reason


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_bad_requests_are_rejected_logged_and_the_match_continues(tmp_path, subprocess_env):
    run = tmp_path / "run"
    host = HostProcess(["--game", "kuhn_poker", "--seats", "human", "cfr:algo=cfr+,iterations=50", "--games", "2",
                        "--seed", "2", "--out", str(run), "--move-time", "60", "--default-action", "first"],
                       2, subprocess_env)
    try:
        me = host.client(0).open()
        wrong = JoinClient(host.url, "not-a-token")
        refused: list[tuple[int, str]] = []
        first_turn = True
        for ev in me.events(timeout=60):
            if ev["type"] != "turn":
                continue
            turn, legal = ev["turn"], [a["action"] for a in ev["actions"]]
            if first_turn:
                first_turn = False
                refused += [
                    _status(wrong.open),                                              # wrong token: stream
                    _status(lambda: wrong.act(turn, action=legal[0])),               # wrong token: move
                    _status(JoinClient(host.url, host.tokens[0]).open),               # seat already connected
                    _status(lambda: me.send({"turn": turn, "action": legal[0], "seat": 1})),  # another seat
                    _status(lambda: me.act(turn + 1000, action=legal[0])),            # a turn that is not open
                    _status(lambda: me.send(b'{"turn": ' + b"1" * (1 << 20) + b"}")),  # 1 MB message
                    _status(lambda: me.send(b'{"turn": 1, "action": ')),              # invalid JSON
                    _status(lambda: me.act(turn, action=99)),                         # illegal action
                ]
                for path in ("/pyproject.toml", "/tools/host/server.py", "/../../etc/passwd", "/web/app.js"):
                    assert _get(host.url + path) == 404, path
            me.act(turn, action=legal[-1])
            refused.append(_status(lambda: me.act(turn, action=legal[-1])))           # out of turn: already moved
        assert host.wait() == 0, host.stderr
    finally:
        host.stop()
    codes = [c for c, _ in refused]
    assert codes[:8] == [403, 403, 409, 403, 409, 413, 400, 422]
    assert set(codes[8:]) == {409} and len(codes) >= 10  # one per move of ours, two games
    assert "already has a connected client" in refused[2][1] and "grants seat 0, not seat 1" in refused[3][1]
    assert "not your turn" in refused[-1][1]
    log = [line for line in host.err if "rejected (" in line]
    assert len(log) == len(refused), host.stderr  # each one logged, on one line
    assert "not-a-token" not in host.stderr and host.tokens[0] not in host.stderr  # tokens never logged
    overs = [e for e in me.received if e["type"] == "game_over"]
    assert len(overs) == 2 and all(e["forfeit"] is None for e in overs)
    assert not [e for e in me.received if e.get("by") == "clock"]  # the legitimate moves all counted
    with RunStore.open_existing(run) as store:
        assert [r.returns for r in store.matches()] == [e["returns"] for e in overs]


def test_a_move_needs_the_authorization_header_not_a_query_token(tmp_path, subprocess_env):
    host = HostProcess(["--game", "kuhn_poker", "--seats", "human", "random", "--no-store", "--move-time", "30"],
                       2, subprocess_env)
    try:
        me = host.client(0).open()
        turn = next(e for e in me.events(timeout=30) if e["type"] == "turn")
        req = urllib.request.Request(f"{host.url}/api/act?token={host.tokens[0]}", method="POST",
                                     data=b'{"turn": %d, "action": 0}' % turn["turn"],
                                     headers={"Content-Type": "text/plain"})  # what a cross-site form could send
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=10)
        assert info.value.code == 403
        me.act(turn["turn"], action=0)  # the header works
        for ev in me.events(timeout=30):
            if ev["type"] == "turn":
                me.act(ev["turn"], action=ev["actions"][0]["action"])
        assert me.received[-1]["type"] == "series_over"
        assert not [e for e in me.received if e.get("by") == "clock"]
        assert host.wait() == 0
    finally:
        host.stop()
