"""``arena bench host-connections``: how fast a burst of connections reaches the match host.

``N`` TCP connections are opened at once (non-blocking connects, then wait until every one is
established) against an in-process :class:`~arena.tools.host.server.HostServer`, then closed.
Baseline, measured in the same run: the same server with the standard library's listen backlog
of 5, where the connects beyond the queue wait for SYN retransmits (about 1 s, then 3 s, ...).
"""

from __future__ import annotations

import argparse
import os
import select
import socket
import time
from typing import Any

from arena.cli_api import Benchmark
from arena.hookspecs import hookimpl


def open_idle(host: str, port: int, n: int, limit: float) -> tuple[list[socket.socket], float]:
    """Open ``n`` connections at once that send nothing; the sockets and the seconds until all
    are established (raises ``TimeoutError`` past ``limit`` seconds)."""
    socks, start = [], time.monotonic()
    try:
        for _ in range(n):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex((host, port))
            socks.append(s)
        pending = set(socks)
        while pending and time.monotonic() - start < limit:
            _, writable, _ = select.select([], list(pending), [], 0.2)
            pending -= set(writable)
        if pending:
            raise TimeoutError(f"{len(pending)} of {n} connections not established within {limit:g}s")
    except BaseException:
        for s in socks:
            s.close()
        raise
    return socks, time.monotonic() - start


def time_connections(n: int, backlog: int, limit: float) -> float:
    from arena.tools.host.hub import Hub
    from arena.tools.host.server import HostServer

    server = HostServer(Hub("kuhn_poker", ["you", "bot"], {0: "you"}), backlog=backlog).start()
    try:
        socks, seconds = open_idle("127.0.0.1", server.port, n, limit)
        for s in socks:
            s.close()
        return seconds
    finally:
        server.close()


def run(args: argparse.Namespace) -> dict[str, Any]:
    from arena.tools.host.server import BACKLOG

    out: dict[str, Any] = {
        "load_at_start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "connections": args.connections,
        "repeats": args.repeats,
    }
    ours = min(time_connections(args.connections, BACKLOG, 60.0) for _ in range(args.repeats))
    base = min(time_connections(args.connections, 5, 60.0) for _ in range(args.repeats))
    out.update(
        {
            "backlog": BACKLOG,
            "seconds": round(ours, 4),
            "baseline_backlog": 5,
            "baseline_seconds": round(base, 4),
            "speedup": round(base / max(ours, 1e-6), 1),
        }
    )
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--connections", type=int, default=500)
    p.add_argument("--repeats", type=int, default=3, help="best of this many bursts per server")


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "host-connections",
            "seconds until N simultaneous connections to the match host are "
            "established, against the standard library's backlog of 5",
            run,
            add_arguments,
        )
    ]
