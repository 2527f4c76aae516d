"""The hosted session in-process: reconnecting to a seat, the move clock, resuming a run, config errors."""

from __future__ import annotations

import io

import pytest

from arena.errors import ConfigError
from arena.evaluation.store import RunStore
from arena.tools.host.client import JoinClient
from arena.tools.host.session import HostConfig, run_host
from support import REPO
from support.host import InProcessHost, connect, kuhn


def test_a_dropped_player_reconnects_to_the_same_seat_and_finishes(tmp_path):
    host = InProcessHost(kuhn(tmp_path))
    first = JoinClient(host.url, host.tokens[0]).open()
    turn = next(e for e in first.events(timeout=30) if e["type"] == "turn")
    first.close()  # the network drops mid-decision
    again = connect(JoinClient(host.url, host.tokens[0]))
    replay = []
    for ev in again.events(timeout=30):
        replay.append(ev)
        if ev["type"] == "turn":
            again.act(ev["turn"], action=ev["actions"][0]["action"])
    result = host.join()
    assert replay[0]["type"] == "hello" and replay[-1]["type"] == "series_over"
    turns = [e for e in replay if e["type"] == "turn"]
    assert turns[0] == turn  # the open decision was replayed to the new connection
    assert [e["by"] for e in replay if e["type"] == "moved"] == ["you"] * len(turns)
    assert len(result.results) == 1 and result.results[0].forfeit is None


def test_the_clock_plays_the_default_action_and_the_game_goes_on(tmp_path):
    host = InProcessHost(kuhn(tmp_path, move_time=0.5, default_action="first"))
    client = JoinClient(host.url, host.tokens[0]).open()
    events = list(client.events(timeout=30))  # never answers
    host.join()
    moved = [e for e in events if e["type"] == "moved"]
    assert moved and all(e["by"] == "clock" and e["action"] == 0 for e in moved)  # first legal: check or fold
    assert events[-1]["type"] == "series_over"
    with RunStore.open_existing(tmp_path / "run") as store:
        (record,) = store.matches()
    assert record.forfeit_player is None  # a timed-out person is not a forfeit: the game was played


def test_a_fixed_seed_resumes_and_never_counts_a_game_twice(tmp_path):
    cfg = kuhn(tmp_path, seats=["human", "random"], games=2, move_time=0.2, default_action="first")
    host = InProcessHost(cfg)
    list(JoinClient(host.url, host.tokens[0]).open().events(timeout=30))
    assert len(host.join().results) == 2
    again = InProcessHost(cfg)  # same seed, same directory: nothing left to play, nobody needs to join
    assert len(again.join().results) == 0 and "already in the store" in again.out.getvalue()
    with RunStore.open_existing(tmp_path / "run") as store:
        assert store.count() == 2


@pytest.mark.parametrize(
    "change, message",
    [
        ({"seats": ["human"]}, "key 'seats': game 'kuhn_poker' has 2 seats, 1 given"),
        ({"seats": ["random", "random"]}, "no seat is 'human'"),
        ({"seats": ["human:colour=red", "random"]}, "a human seat takes only 'name'"),
        ({"default_action": "resign"}, "key 'default_action': must be one of random, first"),
        ({"move_time": 0}, "key 'move_time': must be positive"),
    ],
)
def test_bad_host_configs_are_one_clear_error(tmp_path, change, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_host(kuhn(tmp_path, **change), out=io.StringIO())


@pytest.mark.parametrize("path", sorted(REPO.glob("configs/host/*.yaml")))
def test_shipped_host_configs_are_valid(path):
    from arena.config import load_config
    from arena.loading import load_game
    from arena.tools.host.session import check, human_seat

    cfg = load_config(HostConfig, path)
    check(cfg, load_game(cfg.game).spec.num_players)
    assert any(human_seat(s) for s in cfg.seats)
