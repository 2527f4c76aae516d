"""The plugin index: what each installed plugin provided the last time it was imported.

It lets the registry import a plugin only when one of its names is used (see
:mod:`arena.registry`). A record is trusted only while its entry point (target, distribution,
version) and the fingerprint of its source files (path, size and modification time of every
``.py`` file of the plugin's module or package) are unchanged, so editing, installing or
upgrading a plugin re-imports it; and the whole index only while no package was installed or
removed (the modification times of the ``sys.path`` directories), since a plugin may offer
entries depending on what else is installed. The index lives in the user's cache directory, one file per
Python environment; it is only ever a cache: unreadable, unwritable or absent means the
plugins are imported as before. ``ARENA_PLUGIN_INDEX=0`` turns it off.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import importlib.metadata as md

FORMAT = 2
"""2: records also list the event hooks a plugin implements (kind ``event``)."""


def index_path() -> Path:
    """``$ARENA_CACHE_DIR`` (else ``$XDG_CACHE_HOME/arena``, else ``~/.cache/arena``), one file
    per environment (several virtualenvs share a home directory)."""
    root = os.environ.get("ARENA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "arena"
    )
    env = hashlib.sha1(f"{sys.prefix}|{sys.version}".encode()).hexdigest()[:16]
    return Path(root) / f"plugins-{env}.json"


def environment_stamp() -> list[list]:
    """The ``sys.path`` directories that hold installed distributions (``*.dist-info``) and
    their modification times: installing or removing a package changes its directory's. (Other
    entries, and the working directory, change for unrelated reasons.)"""
    stamp = []
    cwd = os.getcwd()
    for entry in sys.path:
        if not entry or entry == cwd:  # `python -m`/`-c` put the working directory first
            continue
        try:
            with os.scandir(entry) as it:
                if not any(e.name.endswith((".dist-info", ".egg-info")) for e in it):
                    continue
            stamp.append([entry, os.stat(entry or ".").st_mtime_ns])
        except OSError:
            continue
    return stamp


def fingerprint(module: str) -> str | None:
    """A digest of the plugin's source files, or None when they cannot be located."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None or not spec.origin or not os.path.exists(spec.origin):
        return None
    files = [spec.origin]
    for root in spec.submodule_search_locations or ():
        for folder, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
    digest = hashlib.sha1()
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            return None
        digest.update(f"{f}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


class Index:
    """Records keyed by plugin (entry-point) name: ``{"id": [...], "fingerprint": ..., "entries":
    {kind: [[name, description], ...]}}``."""

    def __init__(self, path: Path, records: dict[str, Any], stamp: list[list] | None = None) -> None:
        self.path = path
        self.records = records
        self.stamp = stamp if stamp is not None else environment_stamp()
        self._current: dict[str, tuple[list[str], str | None]] = {}

    def _identity(self, ep: "md.EntryPoint", distribution: str, version: str) -> tuple[list[str], str | None]:
        if ep.name not in self._current:
            self._current[ep.name] = ([ep.value, distribution, version], fingerprint(ep.module))
        return self._current[ep.name]

    def knows(self, ep: "md.EntryPoint", distribution: str, version: str) -> bool:
        """True when the record of this plugin (from that distribution at that version) is current
        (it need not be imported now)."""
        ident, fp = self._identity(ep, distribution, version)
        rec = self.records.get(ep.name)
        return bool(fp and rec and rec.get("id") == ident and rec.get("fingerprint") == fp)

    def keys_of(self, plugin: str) -> set[tuple[str, str]]:
        entries = self.records.get(plugin, {}).get("entries", {})
        return {(kind, name) for kind, rows in entries.items() for name, _ in rows}

    def provided(self, plugin: str, kind: str) -> list[tuple[str, str]]:
        return [(name, text) for name, text in self.records.get(plugin, {}).get("entries", {}).get(kind, [])]

    def update(self, provided: dict[str, dict[str, list[list[str]]]], pending: list[str]) -> None:
        """Record what the imported plugins provide (``provided``: plugin -> {kind: [[name,
        description], ...]}, as the registry reports it); keep the records of
        the ``pending`` ones; forget the rest (broken or uninstalled plugins are imported again
        next time)."""
        records: dict[str, Any] = {plugin: self.records[plugin] for plugin in pending}
        for plugin, entries in provided.items():
            ident, fp = self._current.get(plugin, (None, None))
            if ident is None or fp is None or plugin in records:
                continue
            records[plugin] = {"id": ident, "fingerprint": fp, "entries": entries}
        if records != self.records:
            self.records = records
            self._write()

    def _write(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
            with os.fdopen(fd, "w") as fh:
                json.dump({"format": FORMAT, "environment": self.stamp, "plugins": self.records}, fh)
            os.replace(tmp, self.path)
        except OSError:
            pass  # a cache: a read-only home only costs start-up time


def open_index() -> Index | None:
    """The index of this environment (empty when there is none yet), or None when disabled."""
    if os.environ.get("ARENA_PLUGIN_INDEX", "1") == "0":
        return None
    path = index_path()
    stamp = environment_stamp()
    try:
        data = json.loads(path.read_text())
        current = data.get("format") == FORMAT and data.get("environment") == stamp
        records = data["plugins"] if current else {}
        if not isinstance(records, dict):
            records = {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        records = {}
    return Index(path, records, stamp)
