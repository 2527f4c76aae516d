"""The plugin manager: discovers plugins through the ``arena`` entry-point group and maps names
to games, agents, trainers, judges, CLI commands and benchmarks.

Built-ins are registered through the same entry points as third-party plugins. Each plugin is
loaded and asked for its entries on its own, so a plugin that fails to import (or whose hook
raises) is recorded as *broken* with its error while every other plugin keeps working. Two
plugins offering the same name is a *conflict*: the name is unusable and the error names both
providers.

Plugins are imported only when needed. Importing all of them costs more than half a second
(numpy, pyspiel, omegaconf, ... at module level), which ``arena --help`` and a short
``arena match`` would pay for nothing. The process-wide registry therefore keeps an *index*
(:mod:`arena.plugin_index`): which names each plugin provided when it was last imported, keyed
by a fingerprint of its source files. A plugin whose fingerprint is unknown or changed is
imported at start; the others are imported the first time one of their names is asked for.
Anything that needs the whole picture (listing names, conflicts, broken plugins, event hooks)
imports every plugin first, so the results are those of an eager registry.
"""

from __future__ import annotations

import importlib.metadata as md
import threading
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import pluggy

from arena import hookspecs, plugin_index
from arena.errors import PluginError

KINDS = {
    "game": "arena_games",
    "namespace": "arena_game_namespaces",
    "agent": "arena_agents",
    "trainer": "arena_trainers",
    "judge": "arena_judges",
    "command": "arena_commands",
    "benchmark": "arena_benchmarks",
    "array_face": "arena_array_faces",
}
EVENTS = (
    "arena_run_started",
    "arena_match_finished",
    "arena_matches_finished",
    "arena_run_planned",
    "arena_metrics_recorded",
    "arena_checkpoint_written",
    "arena_league_step",
    "arena_run_finished",
)
"""Event hooks: the plugin index records which of them each plugin implements (kind ``event``)."""


@dataclass(frozen=True)
class Provider:
    """Where an entry came from: plugin (entry-point) name and its distribution."""

    plugin: str
    distribution: str
    version: str

    def __str__(self) -> str:
        return f"plugin '{self.plugin}' ({self.distribution} {self.version})"


@dataclass
class Registered:
    kind: str
    name: str
    entry: Any
    provider: Provider


@dataclass
class BrokenPlugin:
    plugin: str
    distribution: str
    version: str
    error: str


@dataclass
class Registry:
    pm: pluggy.PluginManager
    _entries: dict[tuple[str, str], Registered] = field(default_factory=dict)
    _conflicts: dict[tuple[str, str], list[Provider]] = field(default_factory=dict)
    _broken: list[BrokenPlugin] = field(default_factory=list)
    providers: dict[str, Provider] = field(default_factory=dict)
    _pending: dict[str, tuple[md.EntryPoint, Provider]] = field(default_factory=dict)
    """Entry points not imported yet (plugin name -> entry point), in load order."""
    _index: plugin_index.Index | None = None
    """What the pending plugins provide, from the index (None: nothing is pending)."""

    # -- the whole picture (imports every pending plugin first) --------------------------------
    @property
    def entries(self) -> dict[tuple[str, str], Registered]:
        self.load_all()
        return self._entries

    @property
    def conflicts(self) -> dict[tuple[str, str], list[Provider]]:
        self.load_all()
        return self._conflicts

    @property
    def broken(self) -> list[BrokenPlugin]:
        self.load_all()
        return self._broken

    # -- lookup ---------------------------------------------------------------------------------
    def get(self, kind: str, name: str) -> Any:
        key = (kind, name)
        self._load_providers_of(key)
        if key not in self._entries and key not in self._conflicts:
            self.load_all()  # a stale index record: only the whole picture is authoritative
        if key in self._conflicts:
            who = " and ".join(str(p) for p in self._conflicts[key])
            raise PluginError(f"{kind} name '{name}' is provided by both {who}; uninstall one of them")
        if key not in self._entries:
            known = ", ".join(sorted(self.names(kind))) or "none"
            hint = ""
            broken = [b.plugin for b in self._broken]
            if broken:
                hint = f" (broken plugins that might provide it: {', '.join(broken)}; see `arena plugins`)"
            raise PluginError(f"unknown {kind} '{name}'; known {kind}s: {known}{hint}")
        return self._entries[key].entry

    def find(self, kind: str, name: str) -> Any:
        """:meth:`get`, or ``None`` when no plugin provides the name. Plugins not imported yet
        are trusted to the index (a plugin it cannot vouch for was imported at start), so an
        unknown name costs no import of every plugin."""
        key = (kind, name)
        if self._pending and key not in self._entries and key not in self._conflicts:
            with _load_lock:
                assert self._index is not None  # plugins are only pending when the index knows them
                providers = [p for p in self._pending if key in self._index.keys_of(p)]
                for plugin in providers:
                    self._load_pending(plugin)
                if providers:
                    self._save_index()
        if key in self._conflicts:
            return self.get(kind, name)  # raises, naming both providers
        found = self._entries.get(key)
        return found.entry if found is not None else None

    def names(self, kind: str) -> list[str]:
        return sorted(n for (k, n) in self.entries if k == kind)

    def items(self, kind: str) -> list[Registered]:
        return [r for (k, _), r in sorted(self.entries.items()) if k == kind]

    def summaries(self, kind: str) -> list[tuple[str, str]]:
        """(name, description) of every usable entry of ``kind`` without importing plugins
        (for ``arena --help``); exact, because the index is as fresh as the plugins' sources."""
        if self._index is None:
            return [(r.name, describe(r.entry)) for r in self.items(kind)]
        found: dict[str, list[str]] = {}
        for (k, n), r in self._entries.items():
            if k == kind:
                found.setdefault(n, []).append(describe(r.entry))
        for (k, n), _ in self._conflicts.items():
            if k == kind:
                found.setdefault(n, []).extend(["", ""])
        for plugin in self._pending:
            for n, text in self._index.provided(plugin, kind):
                found.setdefault(n, []).append(text)
        return sorted((n, texts[0]) for n, texts in found.items() if len(texts) == 1)

    def provider_of(self, kind: str, name: str) -> Provider:
        self._load_providers_of((kind, name))
        return self.entries[(kind, name)].provider

    @property
    def hook(self) -> Any:
        """Event hooks: ``registry.hook.arena_match_finished(result=..., context=...)``. Only the
        pending plugins the index says implement an event hook (observers) are imported."""
        if self._pending:
            with _load_lock:
                assert self._index is not None  # plugins are only pending when the index knows them
                for plugin in [p for p in self._pending if any(k == "event" for k, _ in self._index.keys_of(p))]:
                    self._load_pending(plugin)
                self._save_index()
        return self.pm.hook

    # -- lazy loading -------------------------------------------------------------------------
    def load_all(self) -> None:
        """Import every plugin not imported yet (in entry-point order)."""
        if not self._pending:
            return
        with _load_lock:
            for plugin in list(self._pending):
                self._load_pending(plugin)
            self._save_index()

    def _load_providers_of(self, key: tuple[str, str]) -> None:
        if not self._pending or key in self._entries or key in self._conflicts:
            return
        with _load_lock:
            assert self._index is not None  # plugins are only pending when the index knows them
            providers = [p for p in self._pending if key in self._index.keys_of(p)]
            if not providers:  # not in the index: only a full load can say it is unknown
                self.load_all()
                return
            for plugin in providers:
                self._load_pending(plugin)
            self._save_index()

    def _load_pending(self, plugin: str) -> None:
        if plugin in self._pending:  # another thread may have loaded it meanwhile
            ep, provider = self._pending.pop(plugin)
            _load_entry_point(self, ep, provider)

    def _save_index(self) -> None:
        if self._index is not None:
            self._index.update(self.provided(), list(self._pending))

    def provided(self) -> dict[str, dict[str, list[list[str]]]]:
        """What each imported plugin provides, as the plugin index records it: plugin -> {kind:
        [[name, description], ...]}, with its conflicts (no description) and the event hooks it
        implements (kind ``event``)."""
        out: dict[str, dict[str, list[list[str]]]] = {}
        for plugin, provider in self.providers.items():
            entries: dict[str, list[list[str]]] = {}
            for (kind, name), r in self._entries.items():
                if r.provider == provider:
                    entries.setdefault(kind, []).append([name, describe(r.entry)])
            for (kind, name), providers in self._conflicts.items():
                if provider in providers:
                    entries.setdefault(kind, []).append([name, ""])
            for event in EVENTS:
                if any(
                    self.pm.get_name(impl.plugin) == plugin for impl in getattr(self.pm.hook, event).get_hookimpls()
                ):
                    entries.setdefault("event", []).append([event, ""])
            out[plugin] = entries
        return out

    # -- registration ---------------------------------------------------------------------------
    def register(self, plugin: Any, name: str, provider: Provider | None = None) -> None:
        """Register a plugin object (module or instance) and collect its entries."""
        provider = provider or Provider(name, "<in-process>", "")
        try:
            self.pm.register(plugin, name=name)
        except Exception as exc:  # pluggy validation errors, duplicate names
            self._mark_broken(provider, exc)
            return
        self.providers[name] = provider
        for kind, hook_name in KINDS.items():
            for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
                if impl.plugin is not plugin:
                    continue
                try:
                    produced = impl.function() or []
                except Exception as exc:
                    self.pm.unregister(plugin)
                    self.providers.pop(name, None)
                    self._drop(provider)
                    self._mark_broken(provider, exc)
                    return
                for entry in produced:
                    self._add(kind, entry_key(kind, entry), entry, provider)

    def _add(self, kind: str, name: str, entry: Any, provider: Provider) -> None:
        key = (kind, name)
        if key in self._conflicts:
            self._conflicts[key].append(provider)
        elif key in self._entries:
            first = self._entries.pop(key).provider
            self._conflicts[key] = [first, provider]
        else:
            self._entries[key] = Registered(kind, name, entry, provider)

    def _drop(self, provider: Provider) -> None:
        for key in [k for k, r in self._entries.items() if r.provider == provider]:
            del self._entries[key]

    def _mark_broken(self, provider: Provider, exc: BaseException) -> None:
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        self._broken.append(BrokenPlugin(provider.plugin, provider.distribution, provider.version, last))


def describe(entry: Any) -> str:
    """The one-line description an entry shows in listings and ``--help``."""
    return getattr(entry, "description", "") or getattr(entry, "help", "") or ""


def entry_key(kind: str, entry: Any) -> str:
    return entry.prefix if kind == "namespace" else entry.name


def _entry_points() -> Iterable[md.EntryPoint]:
    return md.entry_points(group="arena")


def _providers() -> list[tuple[md.EntryPoint, Provider, str | None]]:
    """Every ``arena`` entry point in load order, with its provider; the third item is why it
    cannot be loaded (a name declared twice), else None."""
    out: list[tuple[md.EntryPoint, Provider, str | None]] = []
    seen: set[str] = set()
    about: dict[int, tuple[str, str]] = {}
    """(name, version) per distribution object: each read parses its METADATA file (email
    headers), and every entry point asked for both — 142 parses, a third of ``arena match``'s
    start-up, for the one distribution that ships the built-ins."""

    def dist_of(ep: md.EntryPoint) -> tuple[str, str]:
        if ep.dist is None:
            return "<unknown>", ""
        key = id(ep.dist)
        if key not in about:
            about[key] = (ep.dist.name, ep.dist.version)
        return about[key]

    for ep in sorted(_entry_points(), key=lambda e: (dist_of(e)[0] if e.dist else "", e.name)):
        dist, version = dist_of(ep)
        problem = f"entry point name '{ep.name}' is declared twice" if ep.name in seen else None
        seen.add(ep.name)
        out.append((ep, Provider(ep.name, dist, version), problem))
    return out


def _load_entry_point(reg: Registry, ep: md.EntryPoint, provider: Provider) -> None:
    try:
        plugin = ep.load()
    except BaseException as exc:  # a third-party import may raise anything, even SystemExit
        if isinstance(exc, KeyboardInterrupt):
            raise
        reg._mark_broken(provider, exc)
        return
    reg.register(plugin, ep.name, provider)


def build_registry(extra: Iterable[tuple[str, Any]] = (), lazy: bool = False) -> Registry:
    """Load every ``arena`` entry point (plus ``extra`` (name, plugin) pairs) into a registry.

    ``lazy``: import only the plugins the index cannot vouch for; the rest load on first use
    (see the module docstring). ``ARENA_PLUGIN_INDEX=0`` turns the index off."""
    pm = pluggy.PluginManager("arena")
    pm.add_hookspecs(hookspecs)
    reg = Registry(pm)
    index = plugin_index.open_index() if lazy else None
    for ep, provider, problem in _providers():
        if problem:
            reg._mark_broken(provider, PluginError(problem))
        elif index is not None and index.knows(ep, provider.distribution, provider.version):
            reg._pending[ep.name] = (ep, provider)
        else:
            _load_entry_point(reg, ep, provider)
    if reg._pending:
        reg._index = index
    if index is not None:
        index.update(reg.provided(), list(reg._pending))
    for name, plugin in extra:
        reg.register(plugin, name)
    return reg


_lock = threading.Lock()
_load_lock = threading.RLock()
_registry: Registry | None = None


def direct_caller(hook_caller: Any) -> Callable[..., None]:
    """A per-event hook (``registry.hook.arena_match_finished``) as a plain function calling its
    implementations in pluggy's order (last registered first) with the arguments each takes.

    Why: a tournament announces every game; pluggy's dispatch cost more per game than the
    observers that ignore it. Only for hooks whose implementations are plain (no wrappers,
    which need pluggy's machinery; then the hook caller itself is returned); the
    implementations are read once, so use it for one run of events, not across registrations."""
    impls = hook_caller.get_hookimpls()
    if any(i.hookwrapper or i.wrapper for i in impls):
        return hook_caller
    plan = [(i.function, i.argnames) for i in reversed(impls)]

    def call(**kwargs: Any) -> None:
        for fn, names in plan:
            fn(*[kwargs[a] for a in names])

    return call


def event_caller(hook_caller: Any) -> Callable[..., None] | None:
    """:func:`direct_caller` of an event hook, or None when no plugin implements it (the caller
    then skips building the event's arguments)."""
    return direct_caller(hook_caller) if hook_caller.get_hookimpls() else None


def get_registry() -> Registry:
    """The process-wide registry, built on first use."""
    global _registry
    with _lock:
        if _registry is None:
            _registry = build_registry(lazy=True)
        return _registry


def reset_registry() -> None:
    """Forget the cached registry (after installing a plugin at run time, or in tests)."""
    global _registry
    with _lock:
        _registry = None
