"""End to end: ``arena host`` in a real subprocess, scripted players joining over HTTP."""

from __future__ import annotations

import json
import random
import re
import subprocess
import threading

from arena.evaluation.store import RunStore
from support import arena_cmd
from support.host import HostProcess, play_seat

CFR = "cfr:algo=cfr+,iterations=200"


def test_kuhn_human_vs_cfr_over_the_network_lands_in_the_store(tmp_path, subprocess_env):
    run = tmp_path / "run"
    host = HostProcess(
        [
            "--game",
            "kuhn_poker",
            "--seats",
            "human",
            CFR,
            "--games",
            "2",
            "--seed",
            "5",
            "--out",
            str(run),
            "--move-time",
            "60",
        ],
        2,
        subprocess_env,
    )
    try:
        assert host.url.startswith("http://127.0.0.1:")  # loopback unless --bind says otherwise
        assert set(host.tokens) == {0} and host.names[1].startswith("cfr")
        events = play_seat(host.client(0), lambda ev: {"action": ev["actions"][-1]["action"]})  # bet / call
        assert host.wait() == 0, host.stderr
    finally:
        host.stop()
    kinds = [e["type"] for e in events]
    assert kinds[0] == "hello" and kinds[-1] == "series_over" and kinds.count("game_over") == 2
    overs = [e for e in events if e["type"] == "game_over"]
    with RunStore.open_existing(run) as store:
        records = store.matches()
        assert [r.returns for r in records] == [o["returns"] for o in overs]
        assert all(r.seats == ["human", "cfr(algo=cfr+,iterations=200)"] for r in records)
        transcript = (run / records[0].transcript).read_text()
    assert transcript.startswith("player 0 (human): bet") and "result:" in transcript
    assert events[-1]["total"] == sum(o["you"] for o in overs)
    # rated like any other match: the leaderboard command reads the run directory
    board = subprocess.run(
        arena_cmd() + ["leaderboard", str(run), "--json"],
        capture_output=True,
        text=True,
        env=subprocess_env,
        timeout=120,
    )
    assert board.returncode == 0, board.stderr
    rows = {r["agent"]: r for r in json.loads(board.stdout)["rows"]}
    assert rows["human"]["games"] == 2 and rows["cfr(algo=cfr+,iterations=200)"]["games"] == 2
    assert (run / "leaderboard.md").exists()


OWN_ONLY = {  # lines of a Werewolf view that only the named role may ever receive
    "Werewolf": [re.compile(r"The werewolves are"), re.compile(r"as the werewolves' target")],
    "Seer": [re.compile(r"you inspect player_")],
    "Doctor": [re.compile(r"you protect player_")],
}


def _speaker(seat: int, seed: int):
    rng = random.Random(seed)

    def choose(ev):
        if ev["decision"] == "text":
            return {"text": f"I accuse player_{rng.choice([q for q in range(7) if q != seat])}."}
        return {"action": rng.choice(ev["actions"])["action"]}

    return choose


def test_werewolf_two_humans_five_agents_each_sees_only_its_own_role(tmp_path, subprocess_env):
    run = tmp_path / "ww"
    seats = ["human:name=ann", "werewolf_scripted", "human:name=bob"] + ["werewolf_scripted"] * 4
    host = HostProcess(
        ["--game", "werewolf(talk=text)", "--seats", *seats, "--seed", "11", "--out", str(run)], 7, subprocess_env
    )
    received: dict[int, list] = {}
    try:
        assert set(host.tokens) == {0, 2}
        threads = [
            threading.Thread(target=lambda p=p: received.setdefault(p, play_seat(host.client(p), _speaker(p, p))))
            for p in (0, 2)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert host.wait() == 0, host.stderr
    finally:
        host.stop()
    with RunStore.open_existing(run) as store:
        (record,) = store.matches()
    roles = record.info["roles"]
    assert record.seats[0] == "ann" and record.seats[2] == "bob"
    for p in (0, 2):
        events = received[p]
        assert events[-1]["type"] == "series_over"
        end = next(i for i, e in enumerate(events) if e["type"] == "game_over")
        during = [e["text"] for e in events[:end] if "text" in e]
        assert any(f"You are player_{p}, a {roles[p]}." in t for t in during)
        for t in during:
            assert {int(q) for q in re.findall(r"You are player_(\d+)", t)} <= {p}
            for role, patterns in OWN_ONLY.items():
                if roles[p] != role:
                    assert not any(pat.search(t) for pat in patterns), (p, roles[p], t)
        assert all(e.get("player", p) == p for e in events)  # every turn was this seat's own
        turns = [e["turn"] for e in events if e["type"] == "turn"]
        moved = [(e["turn"], e["by"]) for e in events if e["type"] == "moved"]
        assert turns and moved == [(t, "you") for t in turns]  # every move of ours was taken, none by the clock
        # the game's own end-of-game reveal is public: both seats get the same roles line
        assert "Game over. Roles: " in events[end]["text"]
    assert record.returns[0] in (-1.0, 0.0, 1.0) and len(record.returns) == 7
