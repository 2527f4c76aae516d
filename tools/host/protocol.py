"""The wire format between ``arena host`` and its clients, and the checks on what clients send.

Server → client: Server-Sent Events on ``GET /api/events`` (token in the ``Authorization:
Bearer`` header or, for the browser's EventSource, the ``token`` query parameter). Each event
is one JSON object with a ``type`` and a per-seat sequence number as its SSE ``id``; a client
that reconnects with ``Last-Event-ID`` (or ``?since=N``) gets everything after N, so a fresh
connection replays the whole series for that seat and rebuilds the screen.

Event types: ``hello`` (seat, seat names, game, series length, whether the game ships a table
renderer), ``game_start``, ``view`` (this seat's observation text, and its structured view
``struct`` when the game has one, its ``log`` holding only the entries not sent before, from
``log_start``), ``turn`` (an open decision: legal actions with labels or a
text limit, the structured view without its log, and the time limit), ``moved`` (the turn closed: the action
taken, by the player or by the clock), ``game_over`` (returns, final view and structured view),
``series_over`` (totals). ``GET /game.js`` is the game's table renderer (empty without one).

Client → server: ``POST /api/act`` with ``{"turn": id, "action": int}`` or
``{"turn": id, "text": str}`` (optionally ``"seat"``, which must be the token's own seat).
Bodies over :data:`MAX_BODY` bytes, invalid JSON and wrong shapes are rejected with an HTTP
status and a one-line reason (:class:`Rejection`); the match never notices. Hostile JSON is
refused before (or instead of) anything expensive: invalid UTF-8, nesting deeper than
:data:`MAX_DEPTH` (checked by a linear scan, so no parser recursion), integers longer than
:data:`MAX_INT_DIGITS` digits (Python's own limit would raise mid-parse), ``NaN``/``Infinity``
and duplicate keys (which one would count is parser-dependent) are each a 400.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from arena.agent import Observation
from arena.game import State

MAX_BODY = 16 * 1024
"""Largest accepted request body in bytes (a 280-character speech is well under 2 KB)."""

MAX_DEPTH = 4
"""Deepest JSON nesting accepted in a request (a move is one flat object)."""

MAX_INT_DIGITS = 20
"""Longest JSON integer accepted (turn ids and actions fit in 64 bits)."""


class Rejection(Exception):
    """A client request refused with an HTTP ``status`` and a one-line ``reason``."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class Move:
    """A parsed move request (not yet checked against the open turn)."""

    turn: int
    action: int | None = None
    text: str | None = None
    seat: int | None = None


def _nesting(text: str, limit: int) -> int:
    """Deepest ``[``/``{`` nesting outside strings, stopping once past ``limit``."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif ch in "]}":
            depth -= 1
    return deepest


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    dup = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
    if dup is not None:
        raise Rejection(400, f"invalid JSON: duplicate key '{dup[:40]}'")
    return dict(pairs)


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise Rejection(400, f"invalid JSON: an integer of {len(digits)} digits (at most {MAX_INT_DIGITS})")
    return int(digits)


def _no_constant(name: str) -> Any:
    raise Rejection(400, f"invalid JSON: {name} is not a JSON number")


def decode_json(raw: bytes) -> Any:
    """Strict, bounded JSON decoding of a request body, or :class:`Rejection` (400)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Rejection(400, f"invalid JSON: not UTF-8 (byte {exc.start})") from None
    if _nesting(text, MAX_DEPTH) > MAX_DEPTH:
        raise Rejection(400, f"invalid JSON: nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_int=_bounded_int, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise Rejection(400, f"invalid JSON: {exc}") from None
    except (RecursionError, ValueError) as exc:  # defence in depth; the checks above come first
        raise Rejection(400, f"invalid JSON: {str(exc)[:80]}") from None


def parse_move(raw: bytes) -> Move:
    """Decode a ``POST /api/act`` body, or raise :class:`Rejection` (400) saying what is wrong."""
    data = decode_json(raw)
    if not isinstance(data, dict):
        raise Rejection(400, "a move must be a JSON object")
    unknown = sorted(set(data) - {"turn", "action", "text", "seat"})
    if unknown:
        raise Rejection(400, f"unknown field '{unknown[0]}' (fields: turn, action, text, seat)")
    turn, action, text, seat = data.get("turn"), data.get("action"), data.get("text"), data.get("seat")
    if not _is_int(turn):
        raise Rejection(400, "field 'turn' must be an integer (the id of the open turn)")
    if (action is None) == (text is None):
        raise Rejection(400, "give exactly one of 'action' (an integer) or 'text' (a string)")
    if action is not None and not _is_int(action):
        raise Rejection(400, "field 'action' must be an integer")
    if text is not None and not isinstance(text, str):
        raise Rejection(400, "field 'text' must be a string")
    if seat is not None and not _is_int(seat):
        raise Rejection(400, "field 'seat' must be an integer")
    return Move(turn, action, text, seat)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def sse(seq: int, event: dict[str, Any]) -> bytes:
    """One Server-Sent Event carrying ``event`` as JSON."""
    return f"id: {seq}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n".encode()


def turn_event(turn: int, obs: Observation, time_limit: float | None) -> dict[str, Any]:
    """What a seat is told when it must decide (only its own observation)."""
    return {
        "type": "turn",
        "turn": turn,
        "player": obs.player,
        "decision": obs.decision,
        "text": obs.text,
        "struct": _without_log(obs.struct),
        "actions": [{"action": a, "label": lbl} for a, lbl in zip(obs.legal_actions, obs.action_labels)],
        "max_text_length": obs.max_text_length,
        "time_limit": time_limit,
    }


def _without_log(struct: dict[str, Any] | None) -> dict[str, Any] | None:
    """A turn's structured view without the event log (``view`` events carry it)."""
    return None if struct is None else {k: v for k, v in struct.items() if k != "log"}


class TurnView(State):
    """A client-side stand-in for the state at one ``turn`` event, so a client can build a real
    :class:`Observation` and reuse its move parsing and the terminal prompts of ``arena play``."""

    def __init__(self, event: dict[str, Any]) -> None:
        self.event = event
        self.labels = {int(a["action"]): str(a["label"]) for a in event.get("actions", [])}

    def decision_kind(self, player: int) -> str:
        return "text" if self.event.get("decision") == "text" else "choice"

    def legal_actions(self, player: int | None = None) -> list[int]:
        return list(self.labels)

    def action_label(self, player: int, action: int) -> str:
        return self.labels[action]

    def max_text_length(self, player: int) -> int:
        return int(self.event.get("max_text_length") or 0)

    def observation_text(self, player: int) -> str:
        return str(self.event.get("text", ""))

    def observation_struct(self, player: int) -> dict[str, Any] | None:
        struct = self.event.get("struct")
        return struct if isinstance(struct, dict) else None

    @classmethod
    def observation(cls, event: dict[str, Any]) -> Observation:
        return Observation(cls(event), int(event.get("player", 0)))
