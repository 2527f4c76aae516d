"""The HTTP face of a hosted match (standard library ``http.server``, one thread per request).

Routes, and nothing else: ``GET /`` (the page), ``/app.js``, ``/style.css``, ``/game.js`` (the
hosted game's table renderer, from the hub, never a file named by the request), ``GET
/api/whoami`` (which seat a token grants), ``GET /api/events`` (the seat's event stream) and
``POST /api/act`` (a move). Any other path is a 404 and no file is ever served from disk by
name. Requests over :data:`~arena.tools.host.protocol.MAX_BODY` bytes, without a length,
with invalid JSON, a wrong token, a taken seat, another seat's move or a move out of turn are
answered with an error status and a one-line reason, and logged by the hub.

Connection handling: a listen backlog of :data:`BACKLOG` (the standard library's 5 made 200
simultaneous connects wait for SYN retransmits, ~9 s), a thread per connection, and an idle
timeout that closes a connection that sends nothing (so idle sockets cannot pile up). API
requests (moves, event streams, whoami) are rate-limited by a token bucket per credential
(:class:`RateLimiter`): a request with a valid seat token spends its seat's bucket, any other
(no token, a wrong one) its client address's, so a hostile client cannot spend the budget of
players behind the same address; over the limit is a 429 with ``Retry-After``, logged like every
refusal. Connections that send nothing spend no one's budget (only API requests count). An unexpected error in a handler is one logged line and a 500, never a traceback.
"""

from __future__ import annotations

import json
import logging
import math
import select
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from arena.errors import ArenaError
from arena.tools.host.hub import Hub
from arena.tools.host.protocol import MAX_BODY, Rejection, parse_move, sse

log = logging.getLogger("arena.host")

HEARTBEAT = 0.5
"""Seconds between keep-alive comments on an idle stream; a client that closed its end (or
whose write fails) is noticed within about this long, and its seat is free to reconnect."""

DRAIN_LIMIT = 4 * 1024 * 1024
"""An oversized body up to this size is read and discarded so the client sees the 413."""

STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}

BACKLOG = 1024
"""Listen backlog (the kernel caps it at ``net.core.somaxconn``)."""

API = ("/api/act", "/api/events", "/api/whoami")


class RateLimiter:
    """Token buckets per key (a seat, or a client address): ``rate`` requests per second sustained, bursts of
    ``burst``; ``rate`` 0 switches it off. Buckets of clients idle long enough to be full again
    are dropped, so the table stays small."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = float(rate), max(1, int(burst))
        self.buckets: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()

    def allow(self, client: str) -> float:
        """0 when the request may go ahead, else the seconds until it would be allowed."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        with self.lock:
            tokens, last = self.buckets.get(client, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if len(self.buckets) > 4096:
                full = self.burst / self.rate
                self.buckets = {k: v for k, v in self.buckets.items() if now - v[1] < full}
            if tokens >= 1.0:
                self.buckets[client] = (tokens - 1.0, now)
                return 0.0
            self.buckets[client] = (tokens, now)
            return (1.0 - tokens) / self.rate


SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _static(name: str) -> bytes:
    return resources.files("arena.tools.host.web").joinpath(name).read_bytes()


class _Handler(BaseHTTPRequestHandler):
    server_version = "arena-host"
    sys_version = ""
    hub: Hub  # set on the subclass made per server
    limiter: RateLimiter  # ditto
    timeout = 30.0  # idle timeout of a connection in seconds (set per server)

    # -- plumbing -----------------------------------------------------------------------------
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - BaseHTTPRequestHandler's name
        """Debug-level access log without the query string (which may carry a token)."""
        log.debug(
            "%s %s %s", self.client_address[0], getattr(self, "command", "-"), urlsplit(getattr(self, "path", "")).path
        )

    def _where(self) -> str:
        return f"from {self.client_address[0]} {self.command} {urlsplit(self.path).path}"

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in SECURITY_HEADERS.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._extra = headers or {}
        self._send(status, json.dumps(data).encode(), "application/json")

    def end_headers(self) -> None:
        for k, v in getattr(self, "_extra", {}).items():
            self.send_header(k, v)
        self._extra = {}
        super().end_headers()

    def _refuse(self, exc: Rejection) -> None:
        wait = getattr(exc, "retry_after", None)
        self._json(exc.status, {"error": exc.reason}, {"Retry-After": str(wait)} if wait else None)

    def _limit(self, path: str) -> None:
        """Refuse an API request over its credential's rate (429 with Retry-After): a request
        with a valid seat token spends that seat's bucket, any other the client address's, so
        clients sharing an address (behind one NAT) cannot spend a seat's budget."""
        if path not in API:
            return
        seat = self.hub.seat_for(self._token(query=path != "/api/act"))
        who = "this seat" if seat is not None else "this address"
        wait = self.limiter.allow(f"seat {seat.seat}" if seat is not None else self.client_address[0])
        if wait > 0:
            self.close_connection = True
            exc = self.hub.reject(
                429,
                f"too many requests from {who} (limit {self.limiter.rate:g}/s, bursts of {self.limiter.burst})",
                self._where(),
            )
            exc.retry_after = max(1, math.ceil(wait))  # type: ignore[attr-defined]
            raise exc

    def _internal(self, exc: BaseException) -> None:
        """One log line and a 500 (if the response has not started): never a traceback."""
        log.error("internal error %s: %s: %s", self._where(), type(exc).__name__, str(exc)[:200])
        self.close_connection = True
        if not getattr(self, "_started", False):
            try:
                self._json(500, {"error": "internal error"})
            except OSError:
                pass

    def send_response(self, code: int, message: str | None = None) -> None:
        self._started = True
        super().send_response(code, message)

    def handle_one_request(self) -> None:
        self._started = False
        super().handle_one_request()

    def _token(self, query: bool = True) -> str | None:
        """The bearer token; the ``token`` query parameter only where allowed (the browser's
        EventSource cannot set headers). Moves need the header, which no cross-site page can
        send without a CORS preflight that this server never grants."""
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            return auth[7:].strip()
        return (parse_qs(urlsplit(self.path).query).get("token") or [None])[0] if query else None

    # -- routes -------------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = urlsplit(self.path).path
        try:
            self._limit(path)
            if path in STATIC:
                name, ctype = STATIC[path]
                self._send(200, _static(name), ctype)
            elif path == "/game.js":
                self._send(200, self.hub.renderer.encode(), "text/javascript; charset=utf-8")
            elif path == "/api/whoami":
                seat = self.hub.seat_of(self._token(), self._where())
                self._json(
                    200,
                    {
                        "seat": seat.seat,
                        "name": seat.name,
                        "game": self.hub.game_name,
                        "connected": seat.stream is not None,
                    },
                )
            elif path == "/api/events":
                self._events()
            else:
                self._json(404, {"error": f"not found: {path}"})
        except Rejection as exc:
            self._refuse(exc)
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            self._internal(exc)

    def do_POST(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path
        try:
            if path != "/api/act":
                self.close_connection = True
                raise Rejection(404, f"not found: {path}")
            self._limit(path)
            move = parse_move(self._body())
            self._json(200, self.hub.submit(self._token(query=False), move, self._where()))
        except Rejection as exc:
            if exc.status == 400:  # parse errors come from protocol.parse_move: log them here
                self.hub.reject(400, exc.reason, self._where())
            self._refuse(exc)
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            self._internal(exc)

    def _other(self) -> None:
        self.close_connection = True
        self._json(405, {"error": f"method {self.command} not allowed"})

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _other  # noqa: N815

    def _body(self) -> bytes:
        length = self.headers.get("Content-Length")
        if length is None or not length.strip().isdigit():
            self.close_connection = True
            raise self.hub.reject(411, "a move needs a Content-Length header", self._where())
        n = int(length)
        if n > MAX_BODY:
            self.close_connection = True
            self._drain(n)
            raise self.hub.reject(413, f"message of {n} bytes exceeds the limit of {MAX_BODY} bytes", self._where())
        return self.rfile.read(n)

    def _drain(self, n: int) -> None:
        left = min(n, DRAIN_LIMIT)
        try:
            while left > 0:
                chunk = self.rfile.read(min(left, 65536))
                if not chunk:
                    break
                left -= len(chunk)
        except OSError:
            pass

    def _events(self) -> None:
        hub = self.hub
        seat, sid = hub.connect(self._token(), self._where())
        try:
            since = self.headers.get("Last-Event-ID") or (parse_qs(urlsplit(self.path).query).get("since") or ["0"])[0]
            since = int(since) if str(since).isdigit() else 0
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            for k, v in SECURITY_HEADERS.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(b"retry: 1500\n\n")
            self.wfile.flush()
            while True:
                events = hub.wait_events(seat, since, HEARTBEAT)
                if events:
                    self.wfile.write(b"".join(sse(i, e) for i, e in events))
                    since = events[-1][0]
                elif hub.finished or self._client_gone():
                    break
                else:
                    self.wfile.write(b": ping\n\n")
                self.wfile.flush()
                hub.delivered(seat, since)
        except OSError:
            pass  # the client went away; its seat is free again
        finally:
            self.close_connection = True
            hub.disconnect(seat, sid)

    def _client_gone(self) -> bool:
        """True when the client closed its end (an event-stream client never sends more)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True


class _Server(ThreadingHTTPServer):
    request_queue_size = BACKLOG
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection-level failure (outside the handlers' own catch) is one log line."""
        exc = sys.exc_info()[1]
        log.error("connection from %s failed: %s: %s", client_address[0], type(exc).__name__, str(exc)[:200])


class HostServer:
    """Serves one hub on ``bind:port`` (port 0 picks a free one) from a background thread;
    ``rate_limit``/``rate_burst`` per seat token (per client address without one) on the API, ``idle_timeout`` seconds for a
    connection that sends nothing."""

    def __init__(
        self,
        hub: Hub,
        bind: str = "127.0.0.1",
        port: int = 0,
        rate_limit: float = 20.0,
        rate_burst: int = 40,
        idle_timeout: float = 30.0,
        backlog: int = BACKLOG,
    ) -> None:
        handler = type(
            "Handler",
            (_Handler,),
            {"hub": hub, "limiter": RateLimiter(rate_limit, rate_burst), "timeout": idle_timeout},
        )
        server = _Server if backlog == BACKLOG else type("Server", (_Server,), {"request_queue_size": backlog})
        try:
            self.httpd = server((bind, port), handler)
        except OSError as exc:
            raise ArenaError(f"cannot listen on {bind}:{port}: {exc.strerror or exc}") from None
        self.bind = bind
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="arena-host-http", daemon=True)

    def url(self, public_host: str | None = None) -> str:
        host = public_host or self.bind
        if host in ("0.0.0.0", "::", ""):
            host = socket.gethostname()
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def start(self) -> "HostServer":
        self.thread.start()
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
