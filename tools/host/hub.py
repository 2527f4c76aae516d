"""Seats, tokens, turns and per-seat event logs, shared by the match thread and the HTTP threads.

The match (runner) thread opens turns and publishes views; HTTP threads connect streams and
submit moves. Everything is guarded by one condition variable. Every refused request goes
through :meth:`Hub.reject`, which logs it and keeps it in :attr:`Hub.rejections`.
"""

from __future__ import annotations

import hmac
import itertools
import json
import logging
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from arena.agent import Observation
from arena.game import Action, State
from arena.tools.host.protocol import Move, Rejection, turn_event

log = logging.getLogger("arena.host")

DEFAULT_ACTIONS = ("random", "first")


def new_token() -> str:
    """144 random bits, URL-safe, never starting with '-' (a command line would read it as an option)."""
    while True:
        token = secrets.token_urlsafe(18)
        if not token.startswith("-"):
            return token


@dataclass
class Turn:
    """One open decision of one seat."""

    id: int
    legal: list[int]
    labels: list[str]
    decision: str
    max_text_length: int
    answer: Action | None = None
    answered: threading.Event = field(default_factory=threading.Event)


@dataclass
class Seat:
    """A human seat: its token, its event log and its connection."""

    seat: int
    name: str
    token: str
    events: list[dict[str, Any]] = field(default_factory=list)
    stream: int | None = None
    """Id of the connected event stream (None: nobody is connected)."""
    delivered: int = 0
    turn: Turn | None = None
    view: str | None = None
    logged: int = 0
    """Entries of the structured view's event log already sent this game (views send only new ones)."""
    total: float = 0.0


class Hub:
    """The host's shared state. ``names`` are the agents' names per seat; ``humans`` maps a human
    seat to its display name. ``move_time`` (seconds, None = no limit) bounds each human decision;
    on expiry ``default_action`` (``random`` or ``first``; ``default_text`` at text decisions) is
    played for the seat."""

    def __init__(
        self,
        game_name: str,
        names: Sequence[str],
        humans: dict[int, str],
        games: int = 1,
        move_time: float | None = 60.0,
        default_action: str = "random",
        default_text: str = "",
        tokens: dict[int, str] | None = None,
        text_decisions: bool = False,
        renderer: str = "",
    ) -> None:
        if default_action not in DEFAULT_ACTIONS:
            raise ValueError(f"default_action must be one of {DEFAULT_ACTIONS}")
        self.game_name, self.names, self.games = game_name, list(names), games
        self.renderer = renderer
        """JavaScript source of the game's table renderer (``GET /game.js``), or empty."""
        self.move_time, self.default_action, self.default_text = move_time, default_action, default_text
        self.cond = threading.Condition()
        tokens = tokens or {}
        self.seats = {p: Seat(p, n, tokens.get(p) or new_token()) for p, n in humans.items()}
        self.rejections: list[tuple[int, str]] = []
        self.finished = False
        self.state: State | None = None
        self.game_index = 0
        self._ids = itertools.count(1)
        for s in self.seats.values():
            self._post(
                s,
                {
                    "type": "hello",
                    "seat": s.seat,
                    "name": s.name,
                    "game": game_name,
                    "seats": self.names,
                    "games": games,
                    "move_time": move_time,
                    "text_decisions": text_decisions,
                    "renderer": bool(renderer),
                },
            )

    # -- bookkeeping --------------------------------------------------------------------------
    def reject(self, status: int, reason: str, where: str = "") -> Rejection:
        """Log a refused request and return the exception to raise."""
        with self.cond:
            self.rejections.append((status, reason))
        log.warning("rejected (%d)%s: %s", status, f" {where}" if where else "", reason)
        return Rejection(status, reason)

    def _post(self, seat: Seat, event: dict[str, Any]) -> None:
        with self.cond:
            seat.events.append(event)
            self.cond.notify_all()

    def broadcast(self, event: dict[str, Any]) -> None:
        for s in self.seats.values():
            self._post(s, dict(event))

    def seat_for(self, token: str | None) -> Seat | None:
        """The seat a token grants (compared in constant time), or None; nothing is logged."""
        if token:
            for s in self.seats.values():
                if hmac.compare_digest(s.token.encode(), token.encode()):
                    return s
        return None

    def seat_of(self, token: str | None, where: str = "") -> Seat:
        """The seat a token grants, else a logged 403."""
        seat = self.seat_for(token)
        if seat is None:
            raise self.reject(403, "unknown or missing join token", where)
        return seat

    # -- connections --------------------------------------------------------------------------
    def connect(self, token: str | None, where: str = "") -> tuple[Seat, int]:
        """Claim the seat's single event stream; a second live connection is a logged 409."""
        seat = self.seat_of(token, where)
        with self.cond:
            if seat.stream is not None:
                raise self.reject(409, f"seat {seat.seat} already has a connected client", where)
            sid = next(self._ids)
            seat.stream = sid
            self.cond.notify_all()
        log.info("seat %d (%s) connected", seat.seat, seat.name)
        return seat, sid

    def disconnect(self, seat: Seat, sid: int) -> None:
        with self.cond:
            if seat.stream == sid:
                seat.stream = None
                self.cond.notify_all()
                log.info("seat %d (%s) disconnected", seat.seat, seat.name)

    def wait_events(self, seat: Seat, since: int, timeout: float) -> list[tuple[int, dict[str, Any]]]:
        """Events after number ``since`` (1-based ids), waiting up to ``timeout`` for new ones."""
        with self.cond:
            if len(seat.events) <= since and not self.finished:
                self.cond.wait(timeout)
            return [(i + 1, e) for i, e in enumerate(seat.events[since:], start=since)]

    def delivered(self, seat: Seat, upto: int) -> None:
        with self.cond:
            seat.delivered = max(seat.delivered, upto)
            self.cond.notify_all()

    def wait_connected(self, timeout: float | None = None) -> bool:
        """Block until every human seat has a connected client (True) or ``timeout`` passes."""
        end = None if timeout is None else time.monotonic() + timeout
        with self.cond:
            while any(s.stream is None for s in self.seats.values()):
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self.cond.wait(1.0 if left is None else min(left, 1.0))
        return True

    def wait_delivered(self, timeout: float) -> None:
        """After the series: give connected clients up to ``timeout`` seconds to read the end."""
        end = time.monotonic() + timeout
        with self.cond:
            while any(s.stream is not None and s.delivered < len(s.events) for s in self.seats.values()):
                left = end - time.monotonic()
                if left <= 0:
                    return
                self.cond.wait(min(left, 0.5))

    # -- the match side (runner thread) -------------------------------------------------------
    def start_game(self, state: State, index: int) -> None:
        self.state, self.game_index = state, index
        for s in self.seats.values():
            s.view, s.logged = None, 0
        self.broadcast({"type": "game_start", "index": index})

    def refresh(self) -> None:
        """Send each human seat its own view if it changed (called before every decision)."""
        state = self.state
        if state is None:
            return
        for s in self.seats.values():
            text, struct = state.observation_text(s.seat), state.observation_struct(s.seat)
            key = text + json.dumps(struct, sort_keys=True)
            if key != s.view:
                s.view = key
                self._post(s, {"type": "view", "text": text, "struct": self._new_events(s, struct)})

    @staticmethod
    def _new_events(seat: Seat, struct: dict[str, Any] | None) -> dict[str, Any] | None:
        """``struct`` with only the log entries the seat has not been sent (``log_start`` says
        where they begin), so a long game's events are not repeated in every view."""
        if struct is None or not isinstance(struct.get("log"), list):
            return struct
        log = struct["log"]
        out = {**struct, "log": log[seat.logged :], "log_start": seat.logged}
        seat.logged = max(seat.logged, len(log))
        return out

    def ask(self, player: int, obs: Observation) -> Action:
        """Open a turn for ``player``, wait for its client or the clock, return the action."""
        return self.ask_recorded(player, obs)[0]

    def ask_recorded(self, player: int, obs: Observation) -> tuple[Action, dict[str, Any]]:
        """:meth:`ask`, plus how the move was made: ``by`` (``you``: the person, ``clock``: the
        default at the time limit) and ``seconds`` from the turn's opening to the move."""
        seat = self.seats[player]
        opened = time.monotonic()
        turn = Turn(
            next(self._ids), list(obs.legal_actions), list(obs.action_labels), obs.decision, obs.max_text_length
        )
        with self.cond:
            seat.turn = turn
            self._post(seat, turn_event(turn.id, obs, self.move_time))
        turn.answered.wait(self.move_time)
        with self.cond:
            seat.turn = None
            by = "you"
            if turn.answer is None:
                turn.answer = self._default(turn, obs)
                by = "clock"
                log.info("seat %d (%s): no move within %ss; played %r", player, seat.name, self.move_time, turn.answer)
            label = turn.answer if isinstance(turn.answer, str) else turn.labels[turn.legal.index(turn.answer)]
            self._post(seat, {"type": "moved", "turn": turn.id, "action": turn.answer, "label": label, "by": by})
        return turn.answer, {"by": by, "seconds": round(time.monotonic() - opened, 3)}

    def _default(self, turn: Turn, obs: Observation) -> Action:
        if turn.decision == "text":
            return self.default_text[: turn.max_text_length]
        if self.default_action == "first":
            return turn.legal[0]
        return turn.legal[min(int(obs.uniform() * len(turn.legal)), len(turn.legal) - 1)]

    def game_over(
        self,
        player: int,
        returns: Sequence[float],
        final_text: str,
        forfeit: str | None,
        outcome: str,
        final_struct: dict[str, Any] | None = None,
    ) -> None:
        seat = self.seats[player]
        seat.total += returns[player]
        self._post(
            seat,
            {
                "type": "game_over",
                "index": self.game_index,
                "returns": list(returns),
                "you": returns[player],
                "outcome": outcome,
                "text": final_text,
                "struct": self._new_events(seat, final_struct),
                "forfeit": forfeit,
                "total": seat.total,
            },
        )

    def finish(self, summary: dict[str, Any]) -> None:
        for s in self.seats.values():
            self._post(s, {"type": "series_over", "total": s.total, **summary})
        with self.cond:
            self.finished = True
            self.cond.notify_all()

    # -- the client side (HTTP threads) --------------------------------------------------------
    def submit(self, token: str | None, move: Move, where: str = "") -> dict[str, Any]:
        """Check a move against the token's seat and its open turn; accept it or raise a logged
        :class:`Rejection`. The match thread is only woken by an accepted move."""
        seat = self.seat_of(token, where)
        if move.seat is not None and move.seat != seat.seat:
            raise self.reject(403, f"this token grants seat {seat.seat}, not seat {move.seat}", where)
        with self.cond:
            turn = seat.turn
            if turn is None or turn.answer is not None:
                raise self.reject(409, f"not your turn: seat {seat.seat} has no open decision", where)
            if move.turn != turn.id:
                raise self.reject(409, f"turn {move.turn} is not open (the open turn is {turn.id})", where)
            if turn.decision == "text":
                if move.text is None:
                    raise self.reject(422, "this decision takes text, not an action number", where)
                if len(move.text) > turn.max_text_length:
                    raise self.reject(
                        422, f"text of {len(move.text)} characters exceeds the limit {turn.max_text_length}", where
                    )
                turn.answer = move.text
            else:
                if move.action is None or move.action not in turn.legal:
                    raise self.reject(
                        422,
                        f"illegal action {move.action if move.text is None else 'text'}; legal: {turn.legal}",
                        where,
                    )
                turn.answer = move.action
            turn.answered.set()
        return {"ok": True, "turn": turn.id}
