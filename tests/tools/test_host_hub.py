"""The hub's checks without a network: tokens, seats, turns, text limits, the clock."""

from __future__ import annotations

import threading

import pytest

from arena.tools.host.hub import Hub, new_token
from arena.tools.host.protocol import Move, Rejection, TurnView, parse_move


def _ask(hub: Hub, seat: int, event: dict) -> tuple[threading.Thread, dict]:
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("action", hub.ask(seat, TurnView.observation(event))))
    t.start()
    while hub.seats[seat].turn is None:
        threading.Event().wait(0.01)
    return t, box


SPEAK = {"player": 1, "decision": "text", "max_text_length": 10, "text": "Your turn to speak.", "actions": []}
VOTE = {
    "player": 0,
    "decision": "choice",
    "text": "Vote.",
    "actions": [{"action": 3, "label": "vote player_3"}, {"action": 5, "label": "vote player_5"}],
}


def test_a_text_decision_takes_only_text_within_the_limit():
    hub = Hub("g", ["a", "b"], {0: "a", 1: "b"}, move_time=10)
    t, box = _ask(hub, 1, SPEAK)
    tok = hub.seats[1].token
    turn = hub.seats[1].turn.id
    for move, status, words in [
        (Move(turn, action=0), 422, "takes text"),
        (Move(turn, text="x" * 11), 422, "exceeds the limit 10"),
        (Move(turn, text="hi"), None, None),
    ]:
        if status is None:
            assert hub.submit(tok, move) == {"ok": True, "turn": turn}
        else:
            with pytest.raises(Rejection, match=words) as info:
                hub.submit(tok, move)
            assert info.value.status == status
    t.join(5)
    assert box["action"] == "hi"
    assert [s for s, _ in hub.rejections] == [422, 422]
    assert hub.seats[0].events[-1]["type"] == "hello"  # seat 0 heard nothing of seat 1's turn


def test_one_seat_cannot_answer_another_seats_turn():
    hub = Hub("g", ["a", "b"], {0: "a", 1: "b"}, move_time=10)
    t, box = _ask(hub, 0, VOTE)
    turn = hub.seats[0].turn.id
    with pytest.raises(Rejection, match="not your turn") as info:
        hub.submit(hub.seats[1].token, Move(turn, action=3))  # seat 1's token, seat 0's turn id
    assert info.value.status == 409
    with pytest.raises(Rejection, match="grants seat 1, not seat 0"):
        hub.submit(hub.seats[1].token, Move(turn, action=3, seat=0))
    hub.submit(hub.seats[0].token, Move(turn, action=5))
    t.join(5)
    assert box["action"] == 5 and len(hub.rejections) == 2


def test_the_clock_answers_with_the_configured_default():
    hub = Hub("g", ["a"], {0: "a"}, move_time=0.05, default_action="first", default_text="...")
    t, box = _ask(hub, 0, VOTE)
    t.join(5)
    assert box["action"] == 3 and hub.seats[0].events[-1] == {
        "type": "moved",
        "turn": 1,
        "action": 3,
        "label": "vote player_3",
        "by": "clock",
    }
    t, box = _ask(hub, 0, dict(SPEAK, player=0))
    t.join(5)
    assert box["action"] == "..."


@pytest.mark.parametrize(
    "raw, words",
    [
        (b"{", "invalid JSON"),
        (b"\xff\xfe", "invalid JSON"),
        (b"[1]", "JSON object"),
        (b'{"turn": 1}', "exactly one of"),
        (b'{"turn": 1, "action": 1, "text": "x"}', "exactly one of"),
        (b'{"turn": true, "action": 1}', "'turn' must be an integer"),
        (b'{"turn": 1, "action": "1"}', "'action' must"),
        (b'{"turn": 1, "text": 5}', "'text' must"),
        (b'{"turn": 1, "action": 1, "as": 2}', "unknown field 'as'"),
    ],
)
def test_malformed_moves_are_400_with_a_reason(raw, words):
    with pytest.raises(Rejection, match=words) as info:
        parse_move(raw)
    assert info.value.status == 400


def test_unknown_tokens_are_refused():
    hub = Hub("g", ["a"], {0: "a"}, tokens={0: "secret"})
    assert hub.seat_of("secret").seat == 0
    for bad in (None, "", "secre", "secret2"):
        with pytest.raises(Rejection, match="unknown or missing join token"):
            hub.seat_of(bad)


def test_generated_tokens_never_look_like_a_command_line_option():
    tokens = [new_token() for _ in range(2000)]  # about 31 would start with '-' if unchecked
    assert not [t for t in tokens if t.startswith("-")] and len(set(tokens)) == 2000
    assert all(len(t) == 24 for t in tokens)


def test_views_and_turns_carry_the_structured_view_and_the_renderer_is_served():
    import json
    import urllib.request

    import arena
    from arena.errors import ArenaError
    from arena.game import Game
    from arena.tools.host.server import HostServer
    from arena.tools.host.session import renderer_source

    game = arena.load_game("kuhn_poker")
    state = game.new_initial_state()
    state.apply_action(2)
    state.apply_action(0)
    js = renderer_source(game)
    assert "arenaTable.register" in js and renderer_source(arena.load_game("ipd")) == ""
    hub = Hub("kuhn_poker", ["a", "b"], {0: "a"}, move_time=10, renderer=js)
    hub.start_game(state, 0)
    state.apply_action(1)  # player 0 bets
    hub.refresh()
    view = hub.seats[0].events[-1]
    assert view["type"] == "view" and view["struct"] == {**state.observation_struct(0), "log_start": 0}
    state.apply_action(1)  # player 1 calls
    hub.refresh()
    later = hub.seats[0].events[-1]["struct"]
    assert later["log"] == ["your opponent: call"] and later["log_start"] == 1  # only the new event
    assert later["showdown"] and later["over"]
    seen = json.dumps({k: v for k, v in view["struct"].items() if k != "deck"})
    assert view["struct"]["hand"] == [{"rank": "King"}] and "Jack" not in seen  # seat 1's card
    assert hub.seats[0].events[0]["renderer"] is True
    server = HostServer(hub).start()
    try:
        with urllib.request.urlopen(server.url() + "/game.js") as r:
            assert r.read().decode() == js and r.headers["Content-Type"].startswith("text/javascript")
    finally:
        server.close()

    class Broken(Game):
        web_renderer = ("arena.games", "no_such_renderer.js")
        spec = game.spec

    with pytest.raises(ArenaError, match="web_renderer arena.games/no_such_renderer.js cannot be read"):
        renderer_source(Broken())
