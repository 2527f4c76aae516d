"""Turn names from code, configs and the command line into games and agents."""

from __future__ import annotations

import inspect
import json
from collections import Counter
from pathlib import Path
from typing import Any, Mapping

from arena.agent import Agent
from arena.errors import ArenaError, PluginError
from arena.game import Game, _split_top_level, parse_game_name, parse_scalar
from arena.judge import Judge
from arena.registry import get_registry


def load_game(name: str, **params: Any) -> Game:
    base, parsed = parse_game_name(name)
    parsed.update(params)
    reg = get_registry()
    if ":" in base:
        prefix, inner = base.split(":", 1)
        namespace = reg.get("namespace", prefix)
        return namespace.factory(inner, **parsed)
    entry = reg.get("game", base)
    _check_params("game", base, entry.factory, parsed, entry.params)
    return entry.factory(**parsed)


def parse_agent_spec(spec: Any) -> tuple[str, dict[str, Any]]:
    """``"cfr:algo=cfr+,iterations=500"`` or ``{"name": "cfr", "algo": ...}`` → (name, params)."""
    if isinstance(spec, Mapping):
        params = dict(spec)
        if "name" not in params:
            raise ArenaError(f"agent spec {dict(spec)} has no 'name'")
        name = params.pop("name")
        params = dict(params.pop("params", {}) or {}, **params)
        return str(name), params
    text = str(spec)
    if ":" not in text:
        return text.strip(), {}
    name, rest = text.split(":", 1)
    parsed: dict[str, Any] = {}
    for part in _split_top_level(rest):
        if "=" not in part:
            raise ArenaError(f"agent parameter {part!r} in {text!r} is not key=value")
        k, v = part.split("=", 1)
        parsed[k.strip()] = parse_scalar(v.strip())
    return name.strip(), parsed


def _build(kind: str, name: str, parsed: dict[str, Any], game: Game) -> Any:
    """``factory(game, **parsed)`` of the registered ``kind`` plugin, parameters checked first;
    its own errors come back naming it."""
    entry = get_registry().get(kind, name)
    _check_params(kind, name, entry.factory, parsed, entry.params, skip=1)
    try:
        return entry.factory(game, **parsed)
    except ArenaError as exc:
        raise type(exc)(f"{kind} '{name}': {exc}") from None


def load_agent(spec: Any, game: Game, **params: Any) -> Agent:
    name, parsed = parse_agent_spec(spec)
    parsed.update(params)
    label = parsed.pop("label", None)
    agent: Agent = _build("agent", name, parsed, game)
    agent.name = label or (name if not parsed else f"{name}({','.join(f'{k}={v}' for k, v in sorted(parsed.items()))})")
    return agent


def load_judge(spec: Any, game: Game, **params: Any) -> Judge:
    """A judge from ``"name:key=value,..."`` or a mapping with ``name`` (unknown name or
    parameter: one :class:`~arena.errors.PluginError` line)."""
    name, parsed = parse_agent_spec(spec)
    parsed.update(params)
    judge: Judge = _build("judge", name, parsed, game)
    judge.name = name
    return judge


def dedupe_names(agents: list[Agent]) -> None:
    """Seats given the same agent spec get distinct names (``random#1``, ``random#2``), so
    results and ratings can tell them apart."""
    counts = Counter(a.name for a in agents)
    seen: Counter[str] = Counter()
    for a in agents:
        if counts[a.name] > 1:
            seen[a.name] += 1
            a.name = f"{a.name}#{seen[a.name]}"


def _check_params(
    kind: str, name: str, factory: Any, given: Mapping[str, Any], declared: Mapping[str, Any] | None, skip: int = 0
) -> None:
    """Unknown keyword parameters are a clear error naming the plugin, not a TypeError later."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return
    ps = list(sig.parameters.values())[skip:]
    if any(p.kind is p.VAR_KEYWORD for p in ps):
        allowed = set(declared or {}) or None
    else:
        allowed = {p.name for p in ps}
    if allowed is None:
        return
    unknown = sorted(set(given) - allowed)
    if unknown:
        raise PluginError(
            f"{kind} '{name}' has no parameter {', '.join(map(repr, unknown))}; "
            f"parameters: {', '.join(sorted(allowed)) or 'none'}"
        )


# -- checkpoints: any snapshottable agent, built-in or third-party ---------------------------------------
MANIFEST = "arena_agent.json"
"""Written beside an agent's own files; says which plugin rebuilds it and with which parameters."""
MANIFEST_VERSION = 1


def checkpoint_param(name: str) -> str | None:
    """The parameter through which agent ``name`` loads a saved directory (None: not snapshottable)."""
    return get_registry().get("agent", name).checkpoint_param


def save_checkpoint(agent: Agent, directory: str | Path, spec: Any) -> Path:
    """``agent.save(directory)`` plus a manifest (agent name, the spec's other parameters, format
    version), so :func:`load_checkpoint` can rebuild it without knowing the plugin. ``spec`` is
    the agent spec it was built from."""
    name, params = parse_agent_spec(spec)
    param = checkpoint_param(name)
    if param is None:
        raise ArenaError(
            f"agent '{name}' cannot be snapshotted: its AgentEntry declares no checkpoint_param "
            "(the factory parameter that loads a directory written by save)"
        )
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    agent.save(d)
    for replaced in (param, "label", *get_registry().get("agent", name).checkpoint_replaces):
        params.pop(replaced, None)
    manifest = {"format_version": MANIFEST_VERSION, "agent": name, "params": params, "label": agent.name}
    try:
        text = json.dumps(manifest, indent=2, sort_keys=True)
    except TypeError as exc:
        raise ArenaError(f"agent '{name}': parameters of a snapshottable agent must be JSON values ({exc})") from None
    (d / MANIFEST).write_text(text)
    return d


def read_manifest(directory: str | Path) -> dict[str, Any]:
    path = Path(directory) / MANIFEST
    if not path.exists():
        raise ArenaError(f"{directory} is not an agent checkpoint (no {MANIFEST})")
    try:
        manifest = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ArenaError(f"{path}: not valid JSON ({exc})") from None
    version = manifest.get("format_version") if isinstance(manifest, dict) else None
    if version != MANIFEST_VERSION or not isinstance(manifest.get("agent"), str):
        raise ArenaError(
            f"{path}: unsupported checkpoint manifest (format_version {version!r}, this arena reads {MANIFEST_VERSION})"
        )
    return manifest


def checkpoint_spec(directory: str | Path) -> dict[str, Any]:
    """The agent spec that rebuilds the checkpoint in ``directory`` (``{"name": ..., param: dir}``)."""
    m = read_manifest(directory)
    param = checkpoint_param(m["agent"])
    if param is None:
        raise ArenaError(f"{directory}: agent '{m['agent']}' no longer declares a checkpoint_param")
    return {"name": m["agent"], **dict(m.get("params") or {}), param: str(directory)}


def load_checkpoint(directory: str | Path, game: Game, **params: Any) -> Agent:
    """Rebuild any snapshottable agent from a directory :func:`save_checkpoint` wrote."""
    agent = load_agent(checkpoint_spec(directory), game, **params)
    label = read_manifest(directory).get("label")
    if label and "label" not in params:
        agent.name = label
    return agent
