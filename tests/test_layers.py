"""The host's layer rule, read from the source (every import, at module level or inside a function).

    commands ─► league ─► evaluation ─► playing ─► exact ─► contracts
                   └────► experiments ─────────────────────► contracts

A wing may import itself and the wings below it, never one above; the host imports no plugin
(``arena.games``, ``arena.plugins``, ``arena.tools``); the import graph between host modules has
no circle. The facade (``arena/__init__.py``), the entry point (``cli.py``) and the conformance
kit (``testing.py``) sit on top: they reach into every wing for their users.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

from support import REPO

ARENA = REPO / "arena"
WINGS = ("contracts", "exact", "playing", "evaluation", "experiments", "league", "commands", "top")
MAY_IMPORT = {
    "contracts": {"contracts"},
    "exact": {"exact", "contracts"},
    "playing": {"playing", "exact", "contracts"},
    "evaluation": {"evaluation", "playing", "exact", "contracts"},
    "experiments": {"experiments", "contracts"},
    "league": {"league", "evaluation", "playing", "exact", "experiments", "contracts"},
    "commands": set(WINGS) - {"top"},
    "top": set(WINGS),
}
TOP = {"arena", "arena.cli", "arena.testing"}
PLUGINS = ("arena.games", "arena.plugins", "arena.tools")


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def wing(module: str) -> str:
    if module in TOP:
        return "top"
    part = module.split(".")[1]
    return part if part in MAY_IMPORT and part not in ("contracts", "top") else "contracts"


def host_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ARENA.rglob("*.py"))}


def imports_of(path: Path, me: str, modules: dict[str, Path]) -> list[tuple[int, str]]:
    """``(line, module)`` for every import in ``path`` (module ``me``): ``from arena import x``
    names ``arena.x`` when ``x`` is a module; relative imports are resolved."""
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.append((node.lineno, sub if sub in modules else base))
    return found


def host_edges() -> list[tuple[str, str, int]]:
    """``(importer, imported, line)`` between host modules, and into the plugin packages."""
    modules = host_modules()
    edges = []
    for me, path in modules.items():
        for line, target in imports_of(path, me, modules):
            if target.startswith(PLUGINS) or target in modules:
                edges.append((me, target, line))
    return edges


def test_every_host_module_has_a_wing():
    assert {wing(m) for m in host_modules()} <= set(WINGS)
    for name in ("playing", "exact", "evaluation", "experiments", "league", "commands"):
        assert (ARENA / name / "__init__.py").exists(), name


def test_host_imports_no_plugin():
    bad = [f"{a} (line {n}) imports {b}" for a, b, n in host_edges() if b.startswith(PLUGINS)]
    assert not bad, "\n".join(bad)


def test_no_wing_imports_upward():
    bad = [
        f"{a} ({wing(a)}, line {n}) imports {b} ({wing(b)})"
        for a, b, n in host_edges()
        if not b.startswith(PLUGINS) and wing(b) not in MAY_IMPORT[wing(a)]
    ]
    assert not bad, "\n".join(bad)


def test_host_import_graph_has_no_circle():
    graph = nx.DiGraph((a, b) for a, b, _ in host_edges() if a != b and not b.startswith(PLUGINS))
    graph.remove_node("arena")  # every module's parent package; it imports only on first use
    circles = list(nx.simple_cycles(graph))
    assert not circles, circles


def test_the_rule_sees_an_upward_import(tmp_path):
    """The check can fail: a made-up playing module that imports the league is caught."""
    fake = tmp_path / "bad.py"
    fake.write_text("def f():\n    from ..league.runner import League\n")
    found = imports_of(fake, "arena.playing.bad", host_modules())
    assert found == [(2, "arena.league.runner")]
    assert wing("arena.league.runner") not in MAY_IMPORT[wing("arena.playing.bad")]
