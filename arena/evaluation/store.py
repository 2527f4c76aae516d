"""The run store: one directory per tournament or league, one SQLite database (WAL) inside.

Why: evaluation must survive crashes and be re-computable. Every finished game is committed
under an id derived from the run, the pairing and the seed, so rerunning the same command on
the same directory plays only what is missing and never counts a game twice; every rating can
be recomputed from these records. Games are committed in batches (:meth:`RunStore.batch`: one
transaction per few hundred games instead of one per game); a process killed mid-batch loses
only games that were never committed, and a rerun plays them again. Records stream out in
pages (:meth:`RunStore.iter_matches`), so reading a store of 10⁶ games holds one page at a time.

API (everything others need)::

    store = RunStore.open("runs/kuhn", fingerprint=fp, config_text=yaml)  # create or resume
    mid = match_id(fp, pairing="a|b", seed=0, k=3)           # stable id of one planned game
    store.record_match(MatchRecord(id=mid, ...))              # idempotent: False if already there
    with store.batch(on_commit=announce):                      # commit every 512 staged games
        store.record_match(rec)                               # staged; announce(records) after commit
    store.has_match(mid); store.existing_ids(ids); store.count()
    store.iter_matches(lo_seq, hi_seq)                        # streams pages in plan order
    store.matches()                                           # the same, as one list
    store.record_snapshot(step, "bt", {"a": (1012.0, 990.0, 1030.0, 40)})   # rating over time
    store.snapshots("bt") -> {step: {agent: (rating, lo, hi, games)}}
    RunStore.open_existing("runs/kuhn")                       # read-only use (leaderboards)

Layout of a run directory: ``arena.sqlite`` (this store), ``config.yaml`` (the resolved
config), ``transcripts/`` (optional, one text file per game), ``decisions/`` (the LLM
decisions of games played with trajectories, :mod:`arena.evaluation.decisions`), ``tb/`` (TensorBoard events),
``leaderboard.{md,csv,json}`` and PNG plots. A path that holds anything else — a file, a
non-empty directory without a store, a database that is not ours or is corrupt, or a store
made by a different config — is a clear :class:`ArenaError` and is never overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import struct
import sys
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from operator import attrgetter
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from arena.errors import ArenaError
from arena.evaluation.decisions import write_decisions

if sys.platform != "win32":
    import fcntl

DB_NAME = "arena.sqlite"
LOCK_NAME = ".writer.lock"
SCHEMA_VERSION = 2
"""2: ordered match ids (:func:`match_id`); a schema-1 store is read (leaderboards) but not resumed."""
READABLE_SCHEMAS = ("1", "2")
KIND = "arena-run"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    plan_seq INTEGER NOT NULL,
    round INTEGER NOT NULL,
    pairing TEXT NOT NULL,
    seed INTEGER NOT NULL,
    game_index INTEGER NOT NULL,
    game TEXT NOT NULL,
    seats TEXT NOT NULL,
    returns TEXT NOT NULL,
    forfeit_player INTEGER,
    forfeit_agent TEXT,
    forfeit_reason TEXT,
    length INTEGER NOT NULL,
    duration REAL NOT NULL,
    transcript TEXT,
    info TEXT NOT NULL,
    recorded_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS matches_plan ON matches(plan_seq);
CREATE TABLE IF NOT EXISTS ratings (
    step INTEGER NOT NULL,
    system TEXT NOT NULL,
    agent TEXT NOT NULL,
    rating REAL NOT NULL,
    lo REAL,
    hi REAL,
    games INTEGER,
    PRIMARY KEY (step, system, agent)
);
"""


def match_id(run: str, pairing: str, seed: int, k: int) -> str:
    """Stable id of the ``k``-th planned game of ``pairing`` in run ``run`` seeded ``seed``: 12 hex
    digits of a hash of ``(run, pairing, seed)``, then ``k`` in 12 hex digits.

    Why ordered: the id is the store's unique key, and its index is where a large store spends
    its time. With whole-hash ids (schema 1) every batch of games landed on random pages of that
    index — at 10⁶ games a commit of 8192 games rewrote most of it (CPU per game tripled, and the
    WAL traffic tripled the wall time). With the pairing's prefix and then the game number, a
    batch appends to one run of pages per pairing, at any store size."""
    return _pairing_prefix(run, pairing, seed) + format(k, "012x")


def match_ids(run: str, pairing: str, seed: int, ks: range) -> list[str]:
    """:func:`match_id` of every ``k`` in ``ks`` (the planner's per-game ids, the hash made once)."""
    pattern = _pairing_prefix(run, pairing, seed) + "%012x"  # the prefix is hex: no other "%"
    return [pattern % k for k in ks]


@lru_cache(maxsize=4096)
def _pairing_prefix(run: str, pairing: str, seed: int) -> str:
    return hashlib.sha256(f"{run}|{pairing}|{seed}".encode()).hexdigest()[:12]


def fingerprint(data: Any) -> str:
    """Short hash of a JSON-able object (the parts of a config that decide the results)."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass(slots=True)
class MatchRecord:
    """One finished game, as stored. ``seats[p]`` is the agent in seat ``p``."""

    id: str
    pairing: str
    seed: int
    game_index: int
    game: str
    seats: list[str]
    returns: list[float]
    plan_seq: int = 0
    """Position in the tournament's plan: ratings replay games in this order, not arrival order."""
    round: int = 0
    forfeit_player: int | None = None
    forfeit_agent: str | None = None
    forfeit_reason: str | None = None
    length: int = 0
    duration: float = 0.0
    transcript: str | None = None
    """Path of the transcript file, relative to the run directory."""
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_result(
        cls, result: Any, *, id: str, pairing: str, game: str, plan_seq: int = 0, round: int = 0
    ) -> "MatchRecord":
        """From an :class:`arena.playing.match.GameResult`."""
        f = result.forfeit
        return cls(  # positional, in field order: one of these is made per game
            id,
            pairing,
            int(result.seed),
            int(result.index),
            game,
            list(result.seats),
            list(map(float, result.returns)),
            plan_seq,
            round,
            f.player if f else None,
            f.agent if f else None,
            f.reason if f else None,
            int(result.length),
            float(result.duration),
            None,
            dict(result.info) if result.info else {},
        )


_PACK2 = struct.Struct("2d").pack
_BY_ID = attrgetter("id")


class _Clash(Exception):
    """A batch met rows already stored (:meth:`RunStore._commit` redoes it carefully)."""


def _refuse_file(path: Path) -> None:
    """A run path that names a file is one clear error (the lock and the store both meet it first)."""
    if path.exists() and not path.is_dir():
        raise ArenaError(f"run path {path} is a file, not a run directory; choose another path")


class RunLock:
    """One writing process per run directory: an exclusive ``flock`` on ``<run>/.writer.lock``,
    held while a run writes. Why: a second process on the same directory (a sweep starting a seed
    that a hand-started command is still running, a command typed twice) would otherwise train
    the same steps beside the first and interleave its checkpoints and rows. The OS drops the
    lock when its holder exits, killed or not, so a crashed run leaves no stale lock to clear.
    Readers (leaderboards, reports) never take it. Without ``fcntl`` (Windows) it does nothing."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    def acquire(cls, path: str | Path) -> "RunLock":
        """Take the lock or stop with one message naming the directory and the holder's pid."""
        path = Path(path)
        _refuse_file(path)
        path.mkdir(parents=True, exist_ok=True)
        handle = open(path / LOCK_NAME, "a+")
        if sys.platform == "win32":  # no advisory locks there: run unguarded, as before
            return cls(handle)
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise ArenaError(
                f"run directory {path} is in use by another process (pid {holder}); "
                "wait for it to finish, or choose another directory"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        return cls(handle)

    def release(self, delete: bool = False) -> None:
        """Idempotent; closing the file drops the lock. ``delete`` also removes the lock file (a
        start refused before the run existed leaves the directory as it found it)."""
        if self._handle is not None:
            if delete:
                Path(self._handle.name).unlink(missing_ok=True)
            self._handle.close()
            self._handle = None


class RunStore:
    """A run directory and its SQLite store. Use :meth:`open` (create/resume) or :meth:`open_existing`."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn
        self._staged: dict[str, MatchRecord] | None = None
        """Records waiting for the batch's next commit (None: no batch open, commit each record)."""
        self._batch_size = 0
        self.created = False
        """This open made the store (a new run), rather than resuming one."""
        self.lock: RunLock | None = None
        """Held by the run's writer (``open(lock=True)``), released by :meth:`close`."""
        self._on_commit: Callable[[list[MatchRecord]], None] | None = None
        self._json_cache: tuple[dict[Any, str], dict[Any, str]] = ({}, {})
        """JSON of recent seatings and return vectors (few distinct ones per run): json.dumps once each."""

    # -- opening --------------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | Path,
        fingerprint: str,
        config_text: str | None = None,
        kind: str = "tournament",
        lock: bool = False,
    ) -> "RunStore":
        """Create the run directory, or resume it when it was made with the same ``fingerprint``.
        ``lock``: the run's writer first takes its :class:`RunLock` (before anything is written),
        held until :meth:`close`; a refused open leaves a new directory without a lock file."""
        path = Path(path)
        if not lock:
            return cls._open(path, fingerprint, config_text, kind)
        fresh = _new_store(path / DB_NAME)
        held = RunLock.acquire(path)
        try:
            store = cls._open(path, fingerprint, config_text, kind)
        except BaseException:
            held.release(delete=fresh)  # e.g. a non-empty directory that is not a run
            raise
        store.lock = held
        return store

    @classmethod
    def _open(cls, path: Path, fingerprint: str, config_text: str | None, kind: str) -> "RunStore":
        db = path / DB_NAME
        _refuse_file(path)
        if path.is_dir() and not db.exists() and any(p.name != LOCK_NAME for p in path.iterdir()):
            raise ArenaError(
                f"run path {path} is a non-empty directory without an arena store ({DB_NAME}); "
                "refusing to write into it — choose a new or empty directory"
            )
        fresh = _new_store(db)
        path.mkdir(parents=True, exist_ok=True)
        store = cls(path, _connect(db, create=fresh))
        store.created = fresh
        if fresh:
            with store.conn:
                store.conn.executescript(_SCHEMA)
                store.conn.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [
                        ("kind", KIND),
                        ("schema", str(SCHEMA_VERSION)),
                        ("fingerprint", fingerprint),
                        ("run_kind", kind),
                        ("created", str(time.time())),
                    ],
                )
            if config_text is not None:
                (path / "config.yaml").write_text(config_text)
            return store
        meta = store.meta()
        if meta.get("schema") != str(SCHEMA_VERSION):
            store.close()
            raise ArenaError(
                f"run directory {path} holds a store of schema {meta.get('schema')} (older game ids); this arena "
                f"resumes schema {SCHEMA_VERSION} only — finish it with the arena that made it, or use a new "
                "directory (its leaderboard still reads: arena leaderboard)"
            )
        if meta.get("fingerprint") != fingerprint:
            store.close()
            raise ArenaError(
                f"run directory {path} was made by a different config or an earlier arena (fingerprint "
                f"{meta.get('fingerprint')} != {fingerprint}); use a new directory to change "
                "game, agents, format or seed"
            )
        return store

    @classmethod
    def open_existing(cls, path: str | Path) -> "RunStore":
        """Open a run directory that must already hold a store (leaderboards, inspection)."""
        path = Path(path)
        if not path.exists():
            raise ArenaError(f"run directory not found: {path}")
        if not path.is_dir():
            raise ArenaError(f"run path {path} is a file, not a run directory")
        if not (path / DB_NAME).exists():
            raise ArenaError(f"{path} is not an arena run directory (no {DB_NAME})")
        store = cls(path, _connect(path / DB_NAME, create=False))
        store.meta()
        return store

    def meta(self) -> dict[str, str]:
        """The run's meta table; a foreign or corrupt database is an ArenaError."""
        db = self.path / DB_NAME
        try:
            rows = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
            self.conn.execute("SELECT id FROM matches LIMIT 1").fetchall()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise ArenaError(f"{db} is not an arena run store (corrupt or foreign database: {exc})") from None
        if rows.get("kind") != KIND:
            self.close()
            raise ArenaError(f"{db} is not an arena run store (foreign SQLite database)")
        if rows.get("schema") not in READABLE_SCHEMAS:
            self.close()
            raise ArenaError(
                f"{db} has store schema {rows.get('schema')}, this arena reads {', '.join(READABLE_SCHEMAS)}"
            )
        return rows

    def set_meta(self, key: str, value: str) -> None:
        """Record a fact about the run for tools that read it later (the tournament keeps
        ``agents`` (JSON list, pool order), ``margin_scale`` and ``format_ranking`` here)."""
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(value)))

    def margin_scale(self) -> float | None:
        """The utility range the run scored games with (None: win/draw/loss)."""
        v = self.meta().get("margin_scale", "")
        return float(v) if v else None

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass
        if self.lock is not None:
            self.lock.release()

    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- matches --------------------------------------------------------------------------------
    def record_match(
        self, rec: MatchRecord, transcript: list[str] | None = None, decisions: list[dict] | None = None
    ) -> bool:
        """Record one finished game. Idempotent: returns False (and changes nothing) if its id is
        already stored. ``transcript`` lines are written to ``transcripts/<id>.txt`` first, and
        ``decisions`` (:mod:`arena.evaluation.decisions`) to ``decisions/<id>.jsonl``.
        Outside :meth:`batch` the game is committed now; inside, it is staged (False if already
        staged) and committed with its batch, where a game the store already holds is dropped
        (and not passed to ``on_commit``) — one query per batch instead of one per game."""
        if self._staged is not None:
            if rec.id in self._staged:
                return False
        elif self.has_match(rec.id):
            return False
        if transcript is not None:
            rel = f"transcripts/{rec.id}.txt"
            (self.path / "transcripts").mkdir(exist_ok=True)
            (self.path / rel).write_text("\n".join(transcript) + "\n")
            rec.transcript = rel
        if decisions:
            write_decisions(self.path, rec.id, decisions)
        if self._staged is None:
            return self._commit([rec]) == [rec]
        self._staged[rec.id] = rec
        if len(self._staged) >= self._batch_size:
            self.flush()
        return True

    @contextmanager
    def batch(
        self, size: int = 512, on_commit: Callable[[list[MatchRecord]], None] | None = None
    ) -> Iterator["RunStore"]:
        """Stage :meth:`record_match` calls and commit them ``size`` at a time, in one
        transaction each, and whatever is staged when the block ends — also when it ends with
        an exception, since every staged game did finish. ``on_commit(records)`` runs after
        each commit with the records it stored (each game once: what observers are told).

        Exactly once under SIGKILL: a game is stored by the transaction that commits it or not
        at all; a killed process loses only staged games, which a rerun plays again (ids are
        stable), and ``on_commit`` hears of a game only after its commit."""
        if self._staged is not None:  # nested: the outer batch commits
            yield self
            return
        self._staged, self._batch_size, self._on_commit = {}, max(1, size), on_commit
        try:
            yield self
        finally:
            try:
                self.flush()
            finally:
                self._staged, self._on_commit = None, None

    def flush(self) -> None:
        """Commit the staged records now (see :meth:`batch`)."""
        if not self._staged:
            return
        recs = list(self._staged.values())
        self._staged.clear()
        done = self._commit(recs)
        if self._on_commit is not None and done:
            self._on_commit(done)

    def _commit(self, recs: Sequence[MatchRecord]) -> list[MatchRecord]:
        """Insert ``recs`` in one transaction; the ones that were not stored before.

        Rows go in sorted by id, so one pass walks the id index in order (what rows the store
        holds, and their order by ``plan_seq``, are the same either way). Optimistic: the batch
        is inserted at once, and only when some row was already there (fewer rows changed than
        given, e.g. a game another process stored first) is the transaction rolled back and
        redone, asking the index which ids it holds — one id lookup per game in the common
        case instead of two."""
        now = time.time()
        seats_json, returns_json = self._json_cache
        if len(seats_json) > 4096 or len(returns_json) > 4096:  # games with ever-new returns
            seats_json.clear()
            returns_json.clear()
        dumps = json.dumps

        def as_json(cache: dict[Any, str], value: list[Any], kind: type) -> str:
            if len(value) == 2:  # the common case, without a generator
                if not (type(value[0]) is kind and type(value[1]) is kind):
                    return dumps(value)
                # floats keyed by their bits (-0.0 is not 0.0 here), labels by themselves
                key = _PACK2(*value) if kind is float else (value[0], value[1])
            elif not all(type(x) is kind for x in value):
                return dumps(value)
            else:
                key = struct.pack(f"{len(value)}d", *value) if kind is float else tuple(value)
            text = cache.get(key)
            if text is None:
                text = cache[key] = dumps(value)
            return text

        new = sorted(recs, key=_BY_ID)
        if not new:
            return new
        try:
            with self.conn:
                if self._insert(new, now, as_json) != len(new):
                    raise _Clash
            return new
        except _Clash:
            pass
        with self.conn:
            have = self._existing(self.conn, [r.id for r in new])
            new = [r for r in new if r.id not in have]
            self._insert(new, now, as_json)
        return new

    def _insert(self, recs: Sequence[MatchRecord], now: float, as_json: Callable[..., str]) -> int:
        """INSERT OR IGNORE the records (in the open transaction); how many rows went in.

        Why two statements: binding a parameter costs about as much as SQLite's work on a
        column. A tournament's batch is mostly *plain* games (no forfeit, transcript or outcome
        details) of one game, seed and round; for those the constant columns are written into
        the statement as SQL literals (:func:`_sql_literal`: NULL, integers, strings — the
        values SQLite would have stored from the parameters) and 9 values are bound per row
        instead of 17. Other records go through the full statement. The rows stored are the
        same either way."""
        dumps = json.dumps
        seats_json, returns_json = self._json_cache
        plain = [
            r
            for r in recs
            if r.forfeit_player is None
            and r.forfeit_agent is None
            and r.forfeit_reason is None
            and r.transcript is None
            and not r.info
        ]
        shared = {(r.game, r.seed, r.round) for r in plain} if plain else set()
        literals = [_sql_literal(v) for v in next(iter(shared))] if len(shared) == 1 else [None]
        count = 0
        if None not in literals:  # one game, seed and round: their literals go into the statement
            game, seed, rnd = literals
            count += self.conn.executemany(
                f"INSERT OR IGNORE INTO matches VALUES (?,?,{rnd},?,{seed},?,{game},?,?,NULL,NULL,NULL,?,?,NULL,'{{}}',?)",
                [
                    (
                        rec.id,
                        rec.plan_seq,
                        rec.pairing,
                        rec.game_index,
                        as_json(seats_json, rec.seats, str),
                        as_json(returns_json, rec.returns, float),
                        rec.length,
                        rec.duration,
                        now,
                    )
                    for rec in plain
                ],
            ).rowcount
            if len(plain) == len(recs):
                return count
            done = {id(r) for r in plain}
            recs = [r for r in recs if id(r) not in done]
        return (
            count
            + self.conn.executemany(
                "INSERT OR IGNORE INTO matches VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        rec.id,
                        rec.plan_seq,
                        rec.round,
                        rec.pairing,
                        rec.seed,
                        rec.game_index,
                        rec.game,
                        as_json(seats_json, rec.seats, str),
                        as_json(returns_json, rec.returns, float),
                        rec.forfeit_player,
                        rec.forfeit_agent,
                        rec.forfeit_reason,
                        rec.length,
                        rec.duration,
                        rec.transcript,
                        dumps(rec.info, default=str) if rec.info else "{}",
                        now,
                    )
                    for rec in recs
                ],
            ).rowcount
        )

    @staticmethod
    def _existing(conn: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
        out: set[str] = set()
        for i in range(0, len(ids), 500):  # SQLite's bound-parameter limit is 999 on old builds
            part = ids[i : i + 500]
            out.update(
                r[0] for r in conn.execute(f"SELECT id FROM matches WHERE id IN ({','.join('?' * len(part))})", part)
            )
        return out

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` the store holds (a query per 500 ids, never the whole id list)."""
        return self._existing(self.conn, list(ids))

    def plan_count(self, lo: int, hi: int) -> int:
        """How many stored games have ``lo <= plan_seq < hi`` (a range scan of the plan index).
        In a tournament's store a plan position only ever holds its planned game (the plan is
        the same whenever the fingerprint is), so this counts a slice's stored games without
        looking up each id."""
        return int(
            self.conn.execute("SELECT COUNT(*) FROM matches WHERE plan_seq >= ? AND plan_seq < ?", (lo, hi)).fetchone()[
                0
            ]
        )

    def has_match(self, mid: str) -> bool:
        return self.conn.execute("SELECT 1 FROM matches WHERE id = ?", (mid,)).fetchone() is not None

    def match_ids(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT id FROM matches")}

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0])

    def matches(self) -> list[MatchRecord]:
        """Every stored game in plan order (the order ratings replay them in)."""
        return list(self.iter_matches())

    _COLUMNS = (
        "id, pairing, seed, game_index, game, seats, returns, plan_seq, round, forfeit_player, "
        "forfeit_agent, forfeit_reason, length, duration, transcript, info"
    )

    def iter_matches(self, lo: int | None = None, hi: int | None = None, page: int = 4096) -> Iterator[MatchRecord]:
        """Stored games with ``lo <= plan_seq < hi`` (either bound optional) in plan order,
        read ``page`` rows at a time (keyset pagination on the plan index: memory is one page,
        and writes between pages are safe)."""
        where = " AND ".join(c for c, v in (("plan_seq >= ?", lo), ("plan_seq < ?", hi)) if v is not None)
        bounds = [v for v in (lo, hi) if v is not None]
        after: tuple[int, str] | None = None
        while True:
            cond = [where] if where else []
            args: list[Any] = list(bounds)
            if after is not None:
                cond.append("(plan_seq, id) > (?, ?)")
                args += list(after)
            sql = (
                f"SELECT {self._COLUMNS} FROM matches"
                + (" WHERE " + " AND ".join(cond) if cond else "")
                + " ORDER BY plan_seq, id LIMIT ?"
            )
            rows = self.conn.execute(sql, (*args, page)).fetchall()
            for r in rows:
                yield _record(r)
            if len(rows) < page:
                return
            after = (rows[-1][7], rows[-1][0])

    def records_by_id(self, ids: Sequence[str]) -> dict[str, MatchRecord]:
        """The stored records among ``ids`` (queried 500 at a time)."""
        out: dict[str, MatchRecord] = {}
        ids = list(ids)
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            rows = self.conn.execute(
                f"SELECT {self._COLUMNS} FROM matches WHERE id IN ({','.join('?' * len(part))})", part
            ).fetchall()
            for r in rows:
                out[r[0]] = _record(r)
        return out

    # -- rating snapshots -----------------------------------------------------------------------
    def record_snapshot(
        self, step: int, system: str, ratings: dict[str, tuple[float, float | None, float | None, int | None]]
    ) -> None:
        """Ratings of every agent after ``step`` games (idempotent per step/system/agent)."""
        self.record_snapshots(system, {step: ratings})

    def record_snapshots(
        self, system: str, steps: dict[int, dict[str, tuple[float, float | None, float | None, int | None]]]
    ) -> None:
        """:meth:`record_snapshot` for many steps in one transaction (a tournament writes a
        slice's snapshots at once: a transaction per snapshot was one per 200 games)."""
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO ratings VALUES (?,?,?,?,?,?,?)",
                [
                    (
                        int(step),
                        system,
                        a,
                        float(r),
                        None if lo is None else float(lo),
                        None if hi is None else float(hi),
                        None if g is None else int(g),
                    )
                    for step, ratings in steps.items()
                    for a, (r, lo, hi, g) in ratings.items()
                ],
            )

    def snapshots(self, system: str) -> dict[int, dict[str, tuple[float, float | None, float | None, int | None]]]:
        out: dict[int, dict[str, tuple]] = {}
        for step, agent, r, lo, hi, g in self.conn.execute(
            "SELECT step, agent, rating, lo, hi, games FROM ratings WHERE system = ? ORDER BY step, agent", (system,)
        ):
            out.setdefault(step, {})[agent] = (r, lo, hi, g)
        return out

    def snapshot_steps(self, system: str) -> set[int]:
        return {r[0] for r in self.conn.execute("SELECT DISTINCT step FROM ratings WHERE system = ?", (system,))}

    def config_text(self) -> str | None:
        p = self.path / "config.yaml"
        return p.read_text() if p.exists() else None


def _sql_literal(value: Any) -> str | None:
    """``value`` as an SQL literal that stores exactly what binding it would (NULL, a 64-bit
    integer, a string without NUL), or None when it must be bound (floats: SQLite's parsing of a
    decimal literal is not promised to round like Python's ``repr``)."""
    if value is None:
        return "NULL"
    if type(value) is int and -(2**63) <= value < 2**63:
        return str(value)
    if type(value) is str and "\x00" not in value:
        return "'" + value.replace("'", "''") + "'"
    return None


def _record(r: Sequence[Any]) -> MatchRecord:
    """A row of ``RunStore._COLUMNS`` as a record."""
    loads = json.loads
    return MatchRecord(
        id=r[0],
        pairing=r[1],
        seed=r[2],
        game_index=r[3],
        game=r[4],
        seats=loads(r[5]),
        returns=loads(r[6]),
        plan_seq=r[7],
        round=r[8],
        forfeit_player=r[9],
        forfeit_agent=r[10],
        forfeit_reason=r[11],
        length=r[12],
        duration=r[13],
        transcript=r[14],
        info=loads(r[15]) if r[15] != "{}" else {},
    )


def _check_existing(db: Path) -> None:
    """Validate an existing store read-only before anything writes to it (even WAL mode would
    change a foreign database's header)."""
    with open(db, "rb") as fh:
        head = fh.read(16)
    if head != b"SQLite format 3\x00":
        raise ArenaError(f"{db} is not an arena run store (not an SQLite database); refusing to touch it")
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        try:
            kind = con.execute("SELECT value FROM meta WHERE key = 'kind'").fetchone()
            con.execute("SELECT id FROM matches LIMIT 1").fetchall()
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise ArenaError(f"{db} is not an arena run store (corrupt or foreign database: {exc})") from None
    if not kind or kind[0] != KIND:
        raise ArenaError(f"{db} is not an arena run store (foreign SQLite database)")


WAL_CHECKPOINT_PAGES = 16384
"""Pages (4 KiB) the write-ahead log may reach before a commit copies it into the database
(SQLite's default: 1000). A tournament commits ~8,192 games (a few MB) at a time; with the
default every other commit set off a checkpoint and its fsyncs (measured on a bare store:
3.7 µs of wall time per row, 2.3 µs with this value; CPU 8% lower). The log grows to about
64 MiB between checkpoints (more while a reader holds an old snapshot), is reused after each
checkpoint and removed when the store closes."""


def _new_store(db: Path) -> bool:
    """No store yet. An empty file counts as none, as SQLite reads it: a reader that polled a
    starting run with a plain ``sqlite3.connect`` leaves one behind, and it is still a new run."""
    return not db.exists() or db.stat().st_size == 0


def _connect(db: Path, create: bool) -> sqlite3.Connection:
    if not create:
        _check_existing(db)
    try:
        conn = sqlite3.connect(db, timeout=30.0, isolation_level="DEFERRED")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
    except sqlite3.DatabaseError as exc:
        raise ArenaError(f"{db} is not an arena run store (corrupt database: {exc})") from None
    return conn


def records_as_dicts(records: Iterable[MatchRecord]) -> list[dict[str, Any]]:
    return [asdict(r) for r in records]
