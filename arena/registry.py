"""The plugin manager: discovers plugins through the ``arena`` entry-point group and maps names
to games, agents, trainers, CLI commands and benchmarks.

Built-ins are registered through the same entry points as third-party plugins. Each plugin is
loaded and asked for its entries on its own, so a plugin that fails to import (or whose hook
raises) is recorded as *broken* with its error while every other plugin keeps working. Two
plugins offering the same name is a *conflict*: the name is unusable and the error names both
providers.
"""
from __future__ import annotations

import importlib.metadata as md
import threading
import traceback
from dataclasses import dataclass, field
from typing import Any, Iterable

import pluggy

from arena import hookspecs
from arena.errors import PluginError

KINDS = {
    "game": "arena_games",
    "namespace": "arena_game_namespaces",
    "agent": "arena_agents",
    "trainer": "arena_trainers",
    "command": "arena_commands",
    "benchmark": "arena_benchmarks",
}


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
    entries: dict[tuple[str, str], Registered] = field(default_factory=dict)
    conflicts: dict[tuple[str, str], list[Provider]] = field(default_factory=dict)
    broken: list[BrokenPlugin] = field(default_factory=list)
    providers: dict[str, Provider] = field(default_factory=dict)

    # -- lookup ---------------------------------------------------------------------------------
    def get(self, kind: str, name: str) -> Any:
        key = (kind, name)
        if key in self.conflicts:
            who = " and ".join(str(p) for p in self.conflicts[key])
            raise PluginError(f"{kind} name '{name}' is provided by both {who}; uninstall one of them")
        if key not in self.entries:
            known = ", ".join(sorted(self.names(kind))) or "none"
            hint = ""
            broken = [b.plugin for b in self.broken]
            if broken:
                hint = f" (broken plugins that might provide it: {', '.join(broken)}; see `arena plugins`)"
            raise PluginError(f"unknown {kind} '{name}'; known {kind}s: {known}{hint}")
        return self.entries[key].entry

    def names(self, kind: str) -> list[str]:
        return sorted(n for (k, n) in self.entries if k == kind)

    def items(self, kind: str) -> list[Registered]:
        return [r for (k, _), r in sorted(self.entries.items()) if k == kind]

    def provider_of(self, kind: str, name: str) -> Provider:
        return self.entries[(kind, name)].provider

    @property
    def hook(self) -> Any:
        """Event hooks: ``registry.hook.arena_match_finished(result=..., context=...)``."""
        return self.pm.hook

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
        if key in self.conflicts:
            self.conflicts[key].append(provider)
        elif key in self.entries:
            first = self.entries.pop(key).provider
            self.conflicts[key] = [first, provider]
        else:
            self.entries[key] = Registered(kind, name, entry, provider)

    def _drop(self, provider: Provider) -> None:
        for key in [k for k, r in self.entries.items() if r.provider == provider]:
            del self.entries[key]

    def _mark_broken(self, provider: Provider, exc: BaseException) -> None:
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        self.broken.append(BrokenPlugin(provider.plugin, provider.distribution, provider.version, last))


def entry_key(kind: str, entry: Any) -> str:
    return entry.prefix if kind == "namespace" else entry.name


def _entry_points() -> Iterable[md.EntryPoint]:
    return md.entry_points(group="arena")


def build_registry(extra: Iterable[tuple[str, Any]] = ()) -> Registry:
    """Load every ``arena`` entry point (plus ``extra`` (name, plugin) pairs) into a registry."""
    pm = pluggy.PluginManager("arena")
    pm.add_hookspecs(hookspecs)
    reg = Registry(pm)
    seen: set[str] = set()
    for ep in sorted(_entry_points(), key=lambda e: (e.dist.name if e.dist else "", e.name)):
        dist = ep.dist.name if ep.dist else "<unknown>"
        version = ep.dist.version if ep.dist else ""
        provider = Provider(ep.name, dist, version)
        if ep.name in seen:
            reg._mark_broken(provider, PluginError(f"entry point name '{ep.name}' is declared twice"))
            continue
        seen.add(ep.name)
        try:
            plugin = ep.load()
        except BaseException as exc:  # a third-party import may raise anything, even SystemExit
            if isinstance(exc, KeyboardInterrupt):
                raise
            reg._mark_broken(provider, exc)
            continue
        reg.register(plugin, ep.name, provider)
    for name, plugin in extra:
        reg.register(plugin, name)
    return reg


_lock = threading.Lock()
_registry: Registry | None = None


def get_registry() -> Registry:
    """The process-wide registry, built on first use."""
    global _registry
    with _lock:
        if _registry is None:
            _registry = build_registry()
        return _registry


def reset_registry() -> None:
    """Forget the cached registry (after installing a plugin at run time, or in tests)."""
    global _registry
    with _lock:
        _registry = None
