"""The house's habits in ``arena/``, read from the source.

- No function is longer than :data:`MAX_LINES` lines: a function that long does several things,
  and each deserves a name.
- Functions import nothing but the heavy optional libraries (:data:`HEAVY`), which would slow
  ``import arena`` and ``arena --help`` at a module's top; everything else is imported at the
  top, where a reader looks for what a module depends on. The facade functions of
  ``arena/__init__.py`` are the one exception: they import their wings on first use, so
  ``import arena`` stays light.

Both are parametrized by wing (``pytest tests/test_habits.py -k playing``).
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from support import REPO

ARENA = REPO / "arena"
FACADE = ARENA / "__init__.py"
MAX_LINES = 80
HEAVY = frozenset(
    {
        "torch",
        "ray",
        "vllm",
        "transformers",
        "matplotlib",
        "scipy",
        "networkx",
        "tensorboard",
        "pettingzoo",
        "openskill",
        "rich",
        "pyarrow",
        "textarena",
    }
)
TOP = {"__init__.py", "cli.py", "testing.py"}
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def wing(path: Path) -> str:
    """``playing``, ``exact``, ... for a subpackage's modules; the entry points (the facade, the
    CLI, the conformance kit) are ``top``; the other top-level modules and ``adapters/`` are
    ``contracts``."""
    parts = path.relative_to(ARENA).parts
    if len(parts) == 1:
        return "top" if parts[0] in TOP else "contracts"
    return "contracts" if parts[0] == "adapters" else parts[0]


SOURCES = sorted(ARENA.rglob("*.py"))
WINGS = sorted({wing(p) for p in SOURCES})


def long_functions(source: str, filename: str) -> list[str]:
    """``FILE:LINE NAME is N lines`` for every function (nested ones too) over the limit."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, FUNCTIONS):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_LINES:
                found.append(f"{filename}:{node.lineno} {node.name} is {length} lines (at most {MAX_LINES})")
    return found


class _FunctionImports(ast.NodeVisitor):
    """``(line, function, module)`` of every import inside a function (the innermost one)."""

    def __init__(self) -> None:
        self.within: list[str] = []
        self.found: list[tuple[int, str, str]] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.within.append(node.name)
        self.generic_visit(node)
        self.within.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Import(self, node: ast.Import) -> None:
        if self.within:
            self.found += [(node.lineno, self.within[-1], alias.name) for alias in node.names]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if self.within:
            base = "." * node.level
            modules = [base + node.module] if node.module else [base + alias.name for alias in node.names]
            self.found += [(node.lineno, self.within[-1], module) for module in modules]


def function_imports(source: str, filename: str) -> list[str]:
    """``FILE:LINE FUNCTION imports MODULE`` for every import inside a function of a module
    that is not one of :data:`HEAVY` (relative imports never are)."""
    visitor = _FunctionImports()
    visitor.visit(ast.parse(source))
    return [
        f"{filename}:{line} {function} imports {module}"
        for line, function, module in visitor.found
        if module.split(".")[0] not in HEAVY
    ]


def _problems(check: str, wing_name: str) -> list[str]:
    out = []
    for path in SOURCES:
        if wing(path) != wing_name or (check == "imports" and path == FACADE):
            continue
        name = str(path.relative_to(REPO))
        text = path.read_text()
        out += long_functions(text, name) if check == "length" else function_imports(text, name)
    return out


@pytest.mark.parametrize("wing_name", WINGS)
def test_no_function_is_longer_than_the_limit(wing_name: str) -> None:
    problems = _problems("length", wing_name)
    assert not problems, "split these into functions whose names say what each part does:\n" + "\n".join(problems)


@pytest.mark.parametrize("wing_name", WINGS)
def test_functions_import_only_heavy_optional_libraries(wing_name: str) -> None:
    problems = _problems("imports", wing_name)
    assert not problems, (
        "import these at the module's top (inside a function only: " + ", ".join(sorted(HEAVY)) + "):\n"
    ) + "\n".join(problems)


# -- the checks themselves can fail ---------------------------------------------------------------


def test_the_length_check_names_a_function_over_the_limit() -> None:
    def function(name: str, lines: int) -> str:
        return f"def {name}():\n" + "".join(f"    x = {i}\n" for i in range(lines - 1))

    source = function("at_the_limit", MAX_LINES) + function("over_it", MAX_LINES + 1)
    assert long_functions(source, "made_up.py") == [
        f"made_up.py:{MAX_LINES + 1} over_it is {MAX_LINES + 1} lines (at most {MAX_LINES})"
    ]


def test_the_import_check_names_file_line_and_module() -> None:
    source = textwrap.dedent(
        """\
        import json

        def plots():
            import matplotlib.pyplot as plt
            from torch import nn

        def reads():
            import csv
            from arena.loading import load_game

            def inner():
                from . import sibling
        """
    )
    assert function_imports(source, "made_up.py") == [
        "made_up.py:8 reads imports csv",
        "made_up.py:9 reads imports arena.loading",
        "made_up.py:12 inner imports .sibling",
    ]


def test_every_module_is_in_a_wing_and_the_facade_is_the_only_exception() -> None:
    assert {"contracts", "top", "playing", "exact"} <= set(WINGS)
    assert function_imports(FACADE.read_text(), "arena/__init__.py"), "the facade's lazy imports are what it exempts"
