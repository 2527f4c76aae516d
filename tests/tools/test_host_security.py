"""Negative tests: bad requests are refused with a status and a logged reason, and the match
goes on to its end and into the store."""

from __future__ import annotations

import time
import urllib.error
import urllib.request

import pytest

from arena.evaluation.store import RunStore
from arena.tools.host.client import HostError, JoinClient
from support.host import HostProcess


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
    host = HostProcess(
        [
            "--game",
            "kuhn_poker",
            "--seats",
            "human",
            "cfr:algo=cfr+,iterations=50",
            "--games",
            "2",
            "--seed",
            "2",
            "--out",
            str(run),
            "--move-time",
            "60",
            "--default-action",
            "first",
        ],
        2,
        subprocess_env,
    )
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
                    _status(wrong.open),  # wrong token: stream
                    _status(lambda: wrong.act(turn, action=legal[0])),  # wrong token: move
                    _status(JoinClient(host.url, host.tokens[0]).open),  # seat already connected
                    _status(lambda: me.send({"turn": turn, "action": legal[0], "seat": 1})),  # another seat
                    _status(lambda: me.act(turn + 1000, action=legal[0])),  # a turn that is not open
                    _status(lambda: me.send(b'{"turn": ' + b"1" * (1 << 20) + b"}")),  # 1 MB message
                    _status(lambda: me.send(b'{"turn": 1, "action": ')),  # invalid JSON
                    _status(lambda: me.act(turn, action=99)),  # illegal action
                    # pathological JSON: each a 400 with a reason, never a traceback
                    _status(lambda: me.send(b"[" * 16000)),  # 16,000-deep nesting
                    _status(lambda: me.send(b'{"turn": 1, "action": ' + b"7" * 5000 + b"}")),  # 5,000 digits
                    _status(lambda: me.send(b'{"turn": %d, "turn": 0, "action": 0}' % turn)),  # duplicate key
                    _status(lambda: me.send(b'{"turn": 1, "text": "\xff\xfe"}')),  # invalid UTF-8
                    _status(lambda: me.send(b'{"turn": NaN, "action": 0}')),  # not a JSON number
                ]
                for path in ("/pyproject.toml", "/tools/host/server.py", "/../../etc/passwd", "/web/app.js"):
                    assert _get(host.url + path) == 404, path
            me.act(turn, action=legal[-1])
            refused.append(_status(lambda: me.act(turn, action=legal[-1])))  # out of turn: already moved
        assert host.wait() == 0, host.stderr
    finally:
        host.stop()
    codes = [c for c, _ in refused]
    assert codes[:13] == [403, 403, 409, 403, 409, 413, 400, 422, 400, 400, 400, 400, 400]
    assert set(codes[13:]) == {409} and len(codes) >= 15  # one per move of ours, two games
    assert [r for _, r in refused[8:13]] == [
        "invalid JSON: nested deeper than 4 levels",
        "invalid JSON: an integer of 5000 digits (at most 20)",
        "invalid JSON: duplicate key 'turn'",
        "invalid JSON: not UTF-8 (byte 21)",
        "invalid JSON: NaN is not a JSON number",
    ]
    assert "Traceback" not in host.stderr and "internal error" not in host.stderr
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
    host = HostProcess(
        ["--game", "kuhn_poker", "--seats", "human", "random", "--no-store", "--move-time", "30"], 2, subprocess_env
    )
    try:
        me = host.client(0).open()
        turn = next(e for e in me.events(timeout=30) if e["type"] == "turn")
        req = urllib.request.Request(
            f"{host.url}/api/act?token={host.tokens[0]}",
            method="POST",
            data=b'{"turn": %d, "action": 0}' % turn["turn"],
            headers={"Content-Type": "text/plain"},
        )  # what a cross-site form could send
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


def _open_idle(url: str, n: int, limit: float) -> tuple[list, float]:
    from urllib.parse import urlsplit

    from arena.tools.bench.host import open_idle

    u = urlsplit(url)
    return open_idle(u.hostname, u.port, n, limit)


def test_500_idle_connections_do_not_stall_players_and_floods_are_rate_limited(tmp_path, subprocess_env):
    """500 connections opened at once (backlog 5 made them wait for SYN retransmits) are up at once and
    the player's moves stay fast while they sit idle; the server closes them after idle_timeout.
    A flood of requests from one address gets 429 + Retry-After after the burst, each logged,
    and the match goes on once the client slows down."""
    host = HostProcess(
        [
            "rate_limit=5",
            "rate_burst=10",
            "idle_timeout=3",
            "--game",
            "kuhn_poker",
            "--seats",
            "human",
            "random",
            "--games",
            "2",
            "--no-store",
            "--move-time",
            "60",
        ],
        2,
        subprocess_env,
    )
    socks = []
    try:
        socks, opened = _open_idle(host.url, 500, limit=5.0)
        assert opened < 0.5, opened  # backlog 5: about 1 s (SYN retransmits), here ~0.03 s
        me = host.client(0).open()
        wrong = JoinClient(host.url, "not-a-token")
        flood: list[tuple[int, str]] = []
        latencies = []
        for ev in me.events(timeout=60):
            if ev["type"] != "turn":
                continue
            if not flood:
                flood = [_status(lambda: wrong.act(ev["turn"], action=0)) for _ in range(30)]
                time.sleep(2.5)  # the bucket refills at 5/s
            t0 = time.monotonic()
            me.act(ev["turn"], action=ev["actions"][0]["action"])
            latencies.append(time.monotonic() - t0)
        assert host.wait() == 0, host.stderr
        assert me.received[-1]["type"] == "series_over"
        assert max(latencies) < 1.0, latencies
        codes = [c for c, _ in flood]
        assert set(codes) == {403, 429} and codes.count(429) >= 15 and codes[:8] == [403] * 8
        assert "too many requests from this address (limit 5/s, bursts of 10)" in dict(map(reversed, flood))
        assert sum("rejected (429)" in line for line in host.err) == codes.count(429)
        closed = 0
        for s in socks[:20]:  # idle ones were closed by the server after idle_timeout
            s.setblocking(True)
            s.settimeout(5)
            try:
                closed += s.recv(1) == b""
            except OSError:
                closed += 1
        assert closed == 20
        assert "Traceback" not in host.stderr
    finally:
        for s in socks:
            s.close()
        host.stop()


def test_retry_after_header_on_429(tmp_path, subprocess_env):
    host = HostProcess(
        [
            "rate_limit=1",
            "rate_burst=2",
            "--game",
            "kuhn_poker",
            "--seats",
            "human",
            "random",
            "--no-store",
            "--move-time",
            "30",
            "--games",
            "1",
        ],
        2,
        subprocess_env,
    )
    try:
        statuses = []
        for _ in range(4):
            req = urllib.request.Request(f"{host.url}/api/whoami", headers={"Authorization": "Bearer x"})
            try:
                urllib.request.urlopen(req, timeout=10)
            except urllib.error.HTTPError as exc:
                statuses.append((exc.code, exc.headers.get("Retry-After")))
        assert statuses[:2] == [(403, None), (403, None)] and statuses[2][0] == 429
        assert statuses[2][1] is not None and 1 <= int(statuses[2][1]) <= 2
    finally:
        host.stop()


def test_players_behind_one_address_finish_while_a_third_client_floods(tmp_path, subprocess_env):
    """Rate limits are per credential: two people on one address (as behind one NAT) play a
    whole series while a third client on that address sends 500 hostile requests (wrong tokens,
    no token). The flood is refused with 429s from the address's bucket; no request of the
    players is, and whoami still answers them during the flood."""
    import threading

    host = HostProcess(
        [
            "rate_limit=5",
            "rate_burst=10",
            "--game",
            "kuhn_poker",
            "--seats",
            "human",
            "human",
            "--games",
            "10",
            "--no-store",
            "--move-time",
            "60",
        ],
        2,
        subprocess_env,
    )
    players = [host.client(0).open(), host.client(1).open()]
    refused: list[int] = []
    started = threading.Event()

    def flood() -> None:
        wrong, anonymous = JoinClient(host.url, "not-a-token"), JoinClient(host.url, "")
        started.set()
        for k in range(500):
            try:
                (wrong.act(1, action=0) if k % 2 else anonymous.whoami())
            except HostError as exc:
                refused.append(exc.status)

    def play(me: JoinClient, errors: list) -> None:
        moves = 0
        try:
            for ev in me.events(timeout=60):
                if ev["type"] == "turn":
                    moves += 1
                    deadline = time.monotonic() + 30  # interleave: each move waits for 50 more hostile requests
                    while len(refused) < min(500, 50 * moves) and time.monotonic() < deadline:
                        time.sleep(0.01)
                    me.act(ev["turn"], action=ev["actions"][0]["action"])
        except HostError as exc:  # a refused move: what the per-address limit used to do
            errors.append(exc.status)

    errors: list[int] = []
    try:
        hostile = threading.Thread(target=flood, daemon=True)
        hostile.start()
        started.wait(10)
        while len(refused) < 50:  # the address's burst is spent
            time.sleep(0.01)
        assert [p.whoami()["seat"] for p in players] == [0, 1]  # answered during the flood
        threads = [threading.Thread(target=play, args=(p, errors), daemon=True) for p in players]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        hostile.join(120)
        assert host.wait() == 0, host.stderr
        assert not errors and all(p.received[-1]["type"] == "series_over" for p in players)
        assert len(refused) == 500 and refused.count(429) >= 400 and 0 not in refused, {
            c: refused.count(c) for c in set(refused)
        }
        assert sum("rejected (429)" in line for line in host.err) == refused.count(429)  # only the flood's
        assert "too many requests from this address" in "".join(host.err)
    finally:
        for p in players:
            p.close()
        host.stop()
