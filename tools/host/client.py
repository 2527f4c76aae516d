"""A network client of ``arena host`` (standard library only): read a seat's event stream, send
moves. ``arena join`` is built on it, and so are the tests' scripted players.

The stream is read on a background thread into a queue, so a person thinking at the keyboard
never stalls it. A dropped stream is reopened with ``since=<last event id>`` — the host
replays what was missed — until the series is over.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Iterator

from arena.errors import ArenaError


class HostError(ArenaError):
    """The host refused a request (``status``, one-line ``reason``) or could not be reached."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


class JoinClient:
    """One seat's connection to a host at ``url`` (``http://host:port``) with join ``token``."""

    def __init__(self, url: str, token: str, timeout: float = 10.0, retries: int = 20) -> None:
        self.url = url.rstrip("/").split("/#")[0]
        self.token, self.timeout, self.retries = token, timeout, retries
        self.last_id = 0
        self.received: list[dict[str, Any]] = []
        """Every event this client was sent, in order (tests audit it)."""
        self._queue: queue.Queue = queue.Queue()
        self._reader: threading.Thread | None = None
        self._stop = threading.Event()
        self._response: Any = None

    # -- requests -----------------------------------------------------------------------------
    def _request(
        self, path: str, body: bytes | None = None, headers: dict[str, str] | None = None, timeout: float | None = None
    ) -> Any:
        req = urllib.request.Request(
            self.url + path,
            data=body,
            method="POST" if body is not None else "GET",
            headers={"Authorization": f"Bearer {self.token}", **(headers or {})},
        )
        try:
            return urllib.request.urlopen(req, timeout=timeout or self.timeout)  # noqa: S310 - http(s) URL given by the user
        except urllib.error.HTTPError as exc:
            try:
                reason = json.loads(exc.read().decode()).get("error", exc.reason)
            except (ValueError, OSError):
                reason = str(exc.reason)
            raise HostError(exc.code, reason) from None
        except (urllib.error.URLError, OSError) as exc:
            raise HostError(0, f"cannot reach {self.url}: {getattr(exc, 'reason', exc)}") from None

    def whoami(self) -> dict[str, Any]:
        with self._request("/api/whoami") as resp:
            return json.loads(resp.read())

    def send(self, payload: dict[str, Any] | bytes) -> dict[str, Any]:
        """POST a move (a dict, or raw bytes for tests); raises :class:`HostError` if refused."""
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        with self._request("/api/act", body, {"Content-Type": "application/json"}) as resp:
            return json.loads(resp.read())

    def act(self, turn: int, action: int | None = None, text: str | None = None) -> dict[str, Any]:
        return self.send({"turn": turn, "action": action} if text is None else {"turn": turn, "text": text})

    # -- the event stream ---------------------------------------------------------------------
    def open(self) -> "JoinClient":
        """Connect the stream now (raises :class:`HostError` if the host refuses the token/seat)."""
        self._response = self._request(f"/api/events?since={self.last_id}", timeout=self.timeout)
        self._reader = threading.Thread(target=self._read_loop, name="arena-join-reader", daemon=True)
        self._reader.start()
        return self

    def close(self) -> None:
        self._stop.set()
        resp, self._response = self._response, None
        if resp is not None:
            try:
                resp.close()
            except OSError:
                pass

    def _read_loop(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                if self._response is None:
                    self._response = self._request(f"/api/events?since={self.last_id}")
                for event in self._parse(self._response):
                    failures = 0
                    self._queue.put(event)
                    if event.get("type") == "series_over":
                        self._queue.put(None)
                        return
            except HostError as exc:
                if exc.status in (401, 403, 404) or failures >= self.retries:
                    self._queue.put(exc)
                    return
            except (OSError, ValueError):
                pass
            if self._stop.is_set():
                return
            self._response = None
            failures += 1
            if failures > self.retries:
                self._queue.put(HostError(0, f"lost the connection to {self.url}"))
                return
            time.sleep(min(2.0, 0.2 * failures))

    def _parse(self, resp: Any) -> Iterator[dict[str, Any]]:
        data, eid = [], None
        for raw in resp:
            line = raw.decode("utf-8").rstrip("\r\n")
            if not line:
                if data:
                    event = json.loads("\n".join(data))
                    if eid is not None:
                        self.last_id = int(eid)
                    yield event
                data, eid = [], None
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
            elif line.startswith("id:"):
                eid = line[3:].strip()
        raise OSError("stream closed")

    def events(self, timeout: float | None = None) -> Iterator[dict[str, Any]]:
        """Events in order until ``series_over`` (inclusive). ``timeout``: seconds to wait for
        each next event before raising TimeoutError (None waits as long as it takes)."""
        if self._reader is None:
            self.open()
        while True:
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                raise TimeoutError(f"no event from {self.url} within {timeout}s") from None
            if item is None:
                return
            if isinstance(item, Exception):
                raise item
            self.received.append(item)
            yield item
