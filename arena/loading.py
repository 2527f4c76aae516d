"""Turn names from code, configs and the command line into games and agents."""
from __future__ import annotations

import inspect
from collections import Counter
from typing import Any, Mapping

from arena.agent import Agent
from arena.errors import ArenaError, PluginError
from arena.game import Game, parse_game_name, parse_scalar, _split_top_level
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
    params: dict[str, Any] = {}
    for part in _split_top_level(rest):
        if "=" not in part:
            raise ArenaError(f"agent parameter {part!r} in {text!r} is not key=value")
        k, v = part.split("=", 1)
        params[k.strip()] = parse_scalar(v.strip())
    return name.strip(), params


def load_agent(spec: Any, game: Game, **params: Any) -> Agent:
    name, parsed = parse_agent_spec(spec)
    parsed.update(params)
    label = parsed.pop("label", None)
    entry = get_registry().get("agent", name)
    _check_params("agent", name, entry.factory, parsed, entry.params, skip=1)
    try:
        agent = entry.factory(game, **parsed)
    except ArenaError as exc:
        raise type(exc)(f"agent '{name}': {exc}") from None
    agent.name = label or (name if not parsed else f"{name}({','.join(f'{k}={v}' for k, v in sorted(parsed.items()))})")
    return agent


def dedupe_names(agents: list[Agent]) -> None:
    """Seats given the same agent spec get distinct names (``random#1``, ``random#2``), so
    results and ratings can tell them apart."""
    counts = Counter(a.name for a in agents)
    seen: Counter[str] = Counter()
    for a in agents:
        if counts[a.name] > 1:
            seen[a.name] += 1
            a.name = f"{a.name}#{seen[a.name]}"


def _check_params(kind: str, name: str, factory: Any, given: Mapping[str, Any],
                  declared: Mapping[str, Any] | None, skip: int = 0) -> None:
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
        raise PluginError(f"{kind} '{name}' has no parameter {', '.join(map(repr, unknown))}; "
                          f"parameters: {', '.join(sorted(allowed)) or 'none'}")

