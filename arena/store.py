"""The run store: one directory per tournament or league, one SQLite database (WAL) inside.

Why: evaluation must survive crashes and be re-computable. Every finished game is committed as
it arrives, under an id derived from the run, the pairing and the seed, so rerunning the same
command on the same directory plays only what is missing and never counts a game twice; every
rating is recomputed from these records.

API (everything others need)::

    store = RunStore.open("runs/kuhn", fingerprint=fp, config_text=yaml)  # create or resume
    mid = match_id(fp, pairing="a|b", seed=0, k=3)           # stable id of one planned game
    store.record_match(MatchRecord(id=mid, ...))              # idempotent: False if already there
    store.has_match(mid); store.matches(); store.match_ids(); store.count()
    store.record_snapshot(step, "bt", {"a": (1012.0, 990.0, 1030.0, 40)})   # rating over time
    store.snapshots("bt") -> {step: {agent: (rating, lo, hi, games)}}
    RunStore.open_existing("runs/kuhn")                       # read-only use (leaderboards)

Layout of a run directory: ``arena.sqlite`` (this store), ``config.yaml`` (the resolved
config), ``transcripts/`` (optional, one text file per game), ``tb/`` (TensorBoard events),
``leaderboard.{md,csv,json}`` and PNG plots. A path that holds anything else — a file, a
non-empty directory without a store, a database that is not ours or is corrupt, or a store
made by a different config — is a clear :class:`ArenaError` and is never overwritten.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from arena.errors import ArenaError

DB_NAME = "arena.sqlite"
SCHEMA_VERSION = 1
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
    """Stable id of the ``k``-th planned game of ``pairing`` in run ``run`` seeded ``seed``."""
    return hashlib.sha256(f"{run}|{pairing}|{seed}|{k}".encode()).hexdigest()[:24]


def fingerprint(data: Any) -> str:
    """Short hash of a JSON-able object (the parts of a config that decide the results)."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
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
    def from_result(cls, result: Any, *, id: str, pairing: str, game: str, plan_seq: int = 0,
                    round: int = 0) -> "MatchRecord":
        """From an :class:`arena.match.GameResult`."""
        f = result.forfeit
        return cls(id=id, pairing=pairing, seed=int(result.seed), game_index=int(result.index), game=game,
                   seats=list(result.seats), returns=[float(x) for x in result.returns], plan_seq=plan_seq,
                   round=round, forfeit_player=f.player if f else None, forfeit_agent=f.agent if f else None,
                   forfeit_reason=f.reason if f else None, length=int(result.length),
                   duration=float(result.duration), info=dict(result.info or {}))


class RunStore:
    """A run directory and its SQLite store. Use :meth:`open` (create/resume) or :meth:`open_existing`."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn

    # -- opening --------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, fingerprint: str, config_text: str | None = None,
             kind: str = "tournament") -> "RunStore":
        """Create the run directory, or resume it when it was made with the same ``fingerprint``."""
        path = Path(path)
        db = path / DB_NAME
        if path.exists() and not path.is_dir():
            raise ArenaError(f"run path {path} is a file, not a run directory; choose another path")
        if path.is_dir() and not db.exists() and any(path.iterdir()):
            raise ArenaError(f"run path {path} is a non-empty directory without an arena store ({DB_NAME}); "
                             "refusing to write into it — choose a new or empty directory")
        fresh = not db.exists()
        path.mkdir(parents=True, exist_ok=True)
        store = cls(path, _connect(db, create=fresh))
        if fresh:
            with store.conn:
                store.conn.executescript(_SCHEMA)
                store.conn.executemany("INSERT INTO meta VALUES (?, ?)", [
                    ("kind", KIND), ("schema", str(SCHEMA_VERSION)), ("fingerprint", fingerprint),
                    ("run_kind", kind), ("created", str(time.time()))])
            if config_text is not None:
                (path / "config.yaml").write_text(config_text)
            return store
        meta = store.meta()
        if meta.get("fingerprint") != fingerprint:
            store.close()
            raise ArenaError(f"run directory {path} was made by a different config (fingerprint "
                             f"{meta.get('fingerprint')} != {fingerprint}); use a new directory to change "
                             "game, agents, format or seed")
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
        if rows.get("schema") != str(SCHEMA_VERSION):
            self.close()
            raise ArenaError(f"{db} has store schema {rows.get('schema')}, this arena reads {SCHEMA_VERSION}")
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

    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- matches --------------------------------------------------------------------------------
    def record_match(self, rec: MatchRecord, transcript: list[str] | None = None) -> bool:
        """Commit one finished game. Idempotent: returns False (and changes nothing) if its id is
        already stored. ``transcript`` lines are written to ``transcripts/<id>.txt`` first."""
        if self.has_match(rec.id):
            return False
        if transcript is not None:
            rel = f"transcripts/{rec.id}.txt"
            (self.path / "transcripts").mkdir(exist_ok=True)
            (self.path / rel).write_text("\n".join(transcript) + "\n")
            rec.transcript = rel
        with self.conn:
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO matches VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (rec.id, rec.plan_seq, rec.round, rec.pairing, rec.seed, rec.game_index, rec.game,
                 json.dumps(rec.seats), json.dumps(rec.returns), rec.forfeit_player, rec.forfeit_agent,
                 rec.forfeit_reason, rec.length, rec.duration, rec.transcript,
                 json.dumps(rec.info, default=str), time.time()))
        return cur.rowcount == 1

    def has_match(self, mid: str) -> bool:
        return self.conn.execute("SELECT 1 FROM matches WHERE id = ?", (mid,)).fetchone() is not None

    def match_ids(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT id FROM matches")}

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0])

    def matches(self) -> list[MatchRecord]:
        """Every stored game in plan order (the order ratings replay them in)."""
        rows = self.conn.execute(
            "SELECT id, pairing, seed, game_index, game, seats, returns, plan_seq, round, forfeit_player, "
            "forfeit_agent, forfeit_reason, length, duration, transcript, info FROM matches "
            "ORDER BY plan_seq, id").fetchall()
        return [MatchRecord(id=r[0], pairing=r[1], seed=r[2], game_index=r[3], game=r[4],
                            seats=json.loads(r[5]), returns=json.loads(r[6]), plan_seq=r[7], round=r[8],
                            forfeit_player=r[9], forfeit_agent=r[10], forfeit_reason=r[11], length=r[12],
                            duration=r[13], transcript=r[14], info=json.loads(r[15])) for r in rows]

    # -- rating snapshots -----------------------------------------------------------------------
    def record_snapshot(self, step: int, system: str,
                        ratings: dict[str, tuple[float, float | None, float | None, int | None]]) -> None:
        """Ratings of every agent after ``step`` games (idempotent per step/system/agent)."""
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO ratings VALUES (?,?,?,?,?,?,?)",
                [(int(step), system, a, float(r), None if lo is None else float(lo),
                  None if hi is None else float(hi), None if g is None else int(g))
                 for a, (r, lo, hi, g) in ratings.items()])

    def snapshots(self, system: str) -> dict[int, dict[str, tuple[float, float | None, float | None, int | None]]]:
        out: dict[int, dict[str, tuple]] = {}
        for step, agent, r, lo, hi, g in self.conn.execute(
                "SELECT step, agent, rating, lo, hi, games FROM ratings WHERE system = ? ORDER BY step, agent",
                (system,)):
            out.setdefault(step, {})[agent] = (r, lo, hi, g)
        return out

    def snapshot_steps(self, system: str) -> set[int]:
        return {r[0] for r in self.conn.execute("SELECT DISTINCT step FROM ratings WHERE system = ?", (system,))}

    def config_text(self) -> str | None:
        p = self.path / "config.yaml"
        return p.read_text() if p.exists() else None


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


def _connect(db: Path, create: bool) -> sqlite3.Connection:
    if not create:
        _check_existing(db)
    try:
        conn = sqlite3.connect(db, timeout=30.0, isolation_level="DEFERRED")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.DatabaseError as exc:
        raise ArenaError(f"{db} is not an arena run store (corrupt database: {exc})") from None
    return conn


def records_as_dicts(records: Iterable[MatchRecord]) -> list[dict[str, Any]]:
    return [asdict(r) for r in records]
