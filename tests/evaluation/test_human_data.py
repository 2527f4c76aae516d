"""A person's decisions at a hosted table, recorded and exported: every decision a scripted
person makes over HTTP is stored with exactly what the host showed them; the records survive a
killed host (and a resumed series adds only the missing games); ``arena export --source human``
gives SFT rows and DPO pairs in an agent's prompt, split into train and held-out by game."""

from __future__ import annotations

import json
import signal

import pytest

from arena.cli import main
from arena.evaluation.human_data import agreement, human_decisions, part_of
from arena.evaluation.store import RunStore
from arena.loading import load_agent, load_game
from arena.tools.host.client import HostError
from support.host import HostProcess, InProcessHost, kuhn, play_seat

CFR = "cfr:algo=cfr+,iterations=200"


def style(ev):
    """A consistent person: bets or calls with the King, checks then calls with the Queen,
    checks the Jack and folds it to a bet."""
    labels = {a["label"]: a["action"] for a in ev["actions"]}
    card = next(c for c in ("Jack", "Queen", "King") if f"hold the {c}" in ev["text"])
    first = "check" in labels
    bold = card == "King" or (card == "Queen" and not first)
    want = ("bet" if first else "call") if bold else ("check" if first else "fold")
    return {"action": labels[want]}


@pytest.fixture(scope="module")
def hosted(tmp_path_factory):
    """12 hosted Kuhn games of the scripted person against CFR+, over loopback HTTP."""
    tmp = tmp_path_factory.mktemp("hosted")
    host = InProcessHost(kuhn(tmp, seats=["human:name=ann", CFR], games=12, seed=3, linger=0.2, rate_limit=0))
    from arena.tools.host.client import JoinClient

    events = play_seat(JoinClient(host.url, host.tokens[0]), style)
    host.join()
    return tmp / "run", events


def test_every_decision_is_stored_with_what_the_person_saw(hosted):
    run, events = hosted
    turns = [e for e in events if e["type"] == "turn"]
    moved = {e["turn"]: e for e in events if e["type"] == "moved"}
    rows = list(human_decisions(run, holdout=0.0))
    assert len(rows) == len(turns) > 12  # at least one decision a game, and some second ones
    for row, turn in zip(rows, turns):  # store order is game order; within a game, step order
        assert row["observation"] == turn["text"] and row["agent"] == "ann" and row["seat"] == 0
        assert row["legal"] == [a["label"] for a in turn["actions"]]
        assert row["legal_actions"] == [a["action"] for a in turn["actions"]]
        assert {k: v for k, v in row["observation_struct"].items() if k != "log"} == turn["struct"]
        assert row["action_id"] == style(turn)["action"] == moved[turn["turn"]]["action"]
        assert row["action"] == moved[turn["turn"]]["label"] and row["by"] == "you"
    with RunStore.open_existing(run) as store:
        records = {r.id: r for r in store.matches()}
    assert {r["match_id"] for r in rows} == set(records)
    for r in rows:  # the seat's return in that game rides along
        assert r["return"] == records[r["match_id"]].returns[0]
    # the LLM exports of the same run are untouched by people's rows
    assert main(["export", str(run), "--format", "jsonl", "--out", "-"]) == 2  # "holds no LLM decisions"


def test_held_out_split_is_by_game_and_stable(hosted):
    run, _ = hosted
    train = list(human_decisions(run, holdout=0.5, part="train"))
    held = list(human_decisions(run, holdout=0.5, part="heldout"))
    assert train and held
    assert not {r["match_id"] for r in train} & {r["match_id"] for r in held}
    assert all(part_of(r["match_id"], 0.5) == "heldout" for r in held)
    assert len(train) + len(held) == len(list(human_decisions(run, holdout=0.5)))
    # a larger holdout only moves games into held-out, never out of it
    assert {r["match_id"] for r in held} <= {r["match_id"] for r in human_decisions(run, 0.8, "heldout")}


def test_export_sft_and_dpo_rows_in_the_agents_prompt(hosted, tmp_path, capsys):
    pytest.importorskip("transformers")
    from arena.tools.tiny_model import tiny_model_dir

    run, _ = hosted
    spec = f"llm:model={tiny_model_dir()},mode=scored"
    agent = load_agent(spec, load_game("kuhn_poker"))
    decisions = list(human_decisions(run, holdout=0.5, part="train"))
    base = ["export", str(run), "--source", "human", "--holdout", "0.5", "--agent", spec]
    sft, dpo, sampled = tmp_path / "sft.jsonl", tmp_path / "dpo.jsonl", tmp_path / "sampled.jsonl"
    assert main(base + ["--format", "trl-prompt", "--out", str(sft)]) == 0
    assert main(base + ["--format", "trl-preference", "--rejected", "agent", "--out", str(dpo)]) == 0
    assert main(base + ["--format", "trl-preference", "--out", str(sampled)]) == 0  # sampled: the default
    sft_rows = [json.loads(line) for line in sft.open()]
    assert [r["completion"] for r in sft_rows] == [d["action"] for d in decisions]
    for r, d in zip(sft_rows, decisions):  # the prompt is the agent's own for that observation
        assert r["prompt"] == agent.prompts.build(_obs(d)) and r["part"] == "train"
        assert d["observation"] in r["prompt"]
    agreed, total = agreement(run, agent, holdout=0.5, part="train")
    pairs = [json.loads(line) for line in dpo.open()]
    assert len(pairs) == total - agreed  # one pair where the agent's own move differs, none where it agrees
    by_key = {(d["match_id"], d["step"]): d for d in decisions}
    for p in pairs:
        d = by_key[(p["match_id"], p["step"])]
        assert p["chosen"] == d["action"] != p["rejected"] and p["rejected"] in d["legal"]
        assert p["rejected_by"] == agent.name and p["source"] == "human"
    drawn = [json.loads(line) for line in sampled.open()]
    assert len(drawn) == len(decisions)  # every Kuhn decision has another legal move
    assert all(p["chosen"] != p["rejected"] and p["rejected_by"] == "sampled" for p in drawn)
    capsys.readouterr()
    for args, says in [
        (["--format", "trl-preference"], "needs --agent"),
        (["--agent", "random", "--format", "trl-prompt"], "agent 'random' reports no prompt"),
        (["--format", "jsonl", "--holdout", "1.5"], "--holdout must be in [0, 1)"),
    ]:
        assert main(["export", str(run), "--source", "human", *args, "--out", "-"]) == 2
        assert says in capsys.readouterr().err


def _obs(row):
    from arena.evaluation.human_data import observation_of

    return observation_of(row)


def test_a_killed_host_keeps_every_finished_game_and_resumes(tmp_path, subprocess_env):
    run = tmp_path / "run"
    args = ["--game", "kuhn_poker", "--seats", "human", CFR, "--games", "5", "--seed", "9", "--out", str(run)]
    host = HostProcess(args, 2, subprocess_env)
    client, finished = host.client(0), 0
    try:
        for ev in client.events(timeout=60):
            if ev["type"] == "game_over":
                finished += 1
            elif ev["type"] == "turn":
                if finished == 3:  # mid-way through game 4, with a decision open: kill -9
                    host.proc.send_signal(signal.SIGKILL)
                    host.proc.wait(10)
                    break
                client.act(ev["turn"], **style(ev))
    except HostError:
        pass
    finally:
        client.close()
        host.stop()
    with RunStore.open_existing(run) as store:
        kept = store.matches()
    assert len(kept) == 3
    rows = list(human_decisions(run, holdout=0.0))
    assert {r["match_id"] for r in rows} == {r.id for r in kept} and all(r["by"] == "you" for r in rows)
    host = HostProcess(args, 2, subprocess_env)  # the same series again: plays only games 4 and 5
    try:
        play_seat(host.client(0), style)
        assert host.wait() == 0, host.stderr
    finally:
        host.stop()
    with RunStore.open_existing(run) as store:
        assert sorted(r.game_index for r in store.matches()) == [0, 1, 2, 3, 4]
    again = list(human_decisions(run, holdout=0.0))
    assert again[: len(rows)] == rows  # what was recorded stays as it was
    assert len({r["match_id"] for r in again}) == 5
