"""Helpers for the ``arena host`` tests: a host in a real subprocess, scripted players.

(No tests here; the name only keeps the file in the host tests' area.)
"""

from __future__ import annotations

import io
import queue
import re
import subprocess
import threading
import time
from typing import Any, Callable

from arena.tools.host.client import HostError, JoinClient
from arena.tools.host.session import HostConfig, run_host
from support import arena_cmd

SEAT_LINE = re.compile(r"seat (\d+) (\S+): (?:(http\S+)/#token=(\S+)|agent)")


class HostProcess:
    """``arena host ARGS --port 0`` in a subprocess; parses the URL and join tokens it prints."""

    def __init__(
        self, args: list[str], num_players: int, env: dict[str, str], cwd: str | None = None, startup: float = 60.0
    ) -> None:
        self.proc = subprocess.Popen(
            arena_cmd() + ["host", *args, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cwd,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.out, lines), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.err, None), daemon=True).start()
        self.url, self.tokens, self.names = "", {}, {}
        seen, end = 0, time.monotonic() + startup
        while seen < num_players:
            try:
                line = lines.get(timeout=max(0.1, end - time.monotonic()))
            except queue.Empty:
                self.proc.kill()
                raise AssertionError(f"host did not start: {self.out} {self.err}") from None
            if line is None:
                raise AssertionError(f"host exited early ({self.proc.wait()}): {''.join(self.err)}")
            m = re.search(r"serving (http://\S+)", line)
            if m:
                self.url = m.group(1)
            m = SEAT_LINE.search(line)
            if m:
                seen += 1
                self.names[int(m.group(1))] = m.group(2)
                if m.group(4):
                    self.tokens[int(m.group(1))] = m.group(4)

    @staticmethod
    def _pump(stream: Any, sink: list[str], lines: queue.Queue | None) -> None:
        for line in stream:
            sink.append(line)
            if lines is not None:
                lines.put(line)
        if lines is not None:
            lines.put(None)

    def client(self, seat: int) -> JoinClient:
        return JoinClient(self.url, self.tokens[seat])

    def wait(self, timeout: float = 60.0) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    @property
    def stderr(self) -> str:
        return "".join(self.err)


def play_seat(
    client: JoinClient, choose: Callable[[dict[str, Any]], dict[str, Any]], timeout: float = 60.0
) -> list[dict[str, Any]]:
    """Play every turn of ``client``'s seat with ``choose(turn_event) -> {"action": a} or
    {"text": s}`` until the series is over; returns every event received."""
    for ev in client.events(timeout=timeout):
        if ev["type"] == "turn":
            client.act(ev["turn"], **choose(ev))
    client.close()
    return client.received


def connect(client: JoinClient, within: float = 10.0) -> JoinClient:
    """Open the stream, retrying while the host still holds the seat's previous connection."""
    end = time.monotonic() + within
    while True:
        try:
            return client.open()
        except HostError as exc:
            if exc.status != 409 or time.monotonic() > end:
                raise
            time.sleep(0.2)


class InProcessHost:
    """``run_host`` on a thread; ``url``/``tokens`` once the server is up; ``result`` when done."""

    def __init__(self, cfg: HostConfig) -> None:
        self.ready = threading.Event()
        self.out = io.StringIO()
        self.result = self.error = None

        def on_ready(server, hub):
            self.url, self.hub = server.url(), hub
            self.tokens = {p: s.token for p, s in hub.seats.items()}
            self.ready.set()

        def main():
            try:
                self.result = run_host(cfg, out=self.out, on_ready=on_ready)
            except BaseException as exc:  # surfaced by join()
                self.error = exc
                self.ready.set()

        self.thread = threading.Thread(target=main, daemon=True)
        self.thread.start()
        assert self.ready.wait(60) and self.error is None, self.error

    def join(self, timeout: float = 60):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "host did not finish"
        if self.error is not None:
            raise self.error
        return self.result


def kuhn(tmp_path, **kw) -> HostConfig:
    """A hosted Kuhn poker run in ``tmp_path/run``: a person's seat beside a random agent (``kw`` overrides)."""
    base = dict(
        game="kuhn_poker", seats=["human", "random"], games=1, seed=4, port=0, out=str(tmp_path / "run"), linger=1.0
    )
    base.update(kw)
    return HostConfig(**base)
