"""The lazy registry: plugins are imported only when one of their names is used, and the index
that makes this possible never hides a change (new, edited, broken or conflicting plugins)."""

from __future__ import annotations

import importlib.metadata as md
import os
import subprocess
import sys
import textwrap

import pytest

from arena import registry
from arena.errors import PluginError

PLUGIN = """
import arena
from arena.agent import AgentEntry
from arena.cli_api import Command
IMPORTS = globals().setdefault("IMPORTS", 0) + 1

@arena.hookimpl
def arena_agents():
    return [AgentEntry(n, lambda game: None, "agent " + n) for n in {names!r}]

@arena.hookimpl
def arena_commands():
    return [Command({command!r}, "help of " + {command!r}, lambda p: None, lambda a: 0)]
"""


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """Two plugin modules on sys.path, declared as entry points; an index in tmp_path."""
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(
        registry,
        "_entry_points",
        lambda: [md.EntryPoint("pa", "idx_plug_a", "arena"), md.EntryPoint("pb", "idx_plug_b", "arena")],
    )

    def write(module: str, names: list[str], command: str) -> None:
        path = tmp_path / f"{module}.py"
        path.write_text(PLUGIN.format(names=names, command=command))
        st = path.stat()  # a distinct mtime even on coarse file systems
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000_000))
        sys.modules.pop(module, None)

    write("idx_plug_a", ["alpha"], "cmd-a")
    write("idx_plug_b", ["beta"], "cmd-b")
    yield write
    for m in ("idx_plug_a", "idx_plug_b"):
        sys.modules.pop(m, None)


def fresh(lazy: bool = True) -> registry.Registry:
    for m in ("idx_plug_a", "idx_plug_b"):
        sys.modules.pop(m, None)
    return registry.build_registry(lazy=lazy)


def test_second_start_imports_only_what_is_used(plugins):
    first = fresh()
    assert "idx_plug_a" in sys.modules and "idx_plug_b" in sys.modules  # no index yet: all imported
    assert first.names("agent") == ["alpha", "beta"]
    reg = fresh()
    assert "idx_plug_a" not in sys.modules and "idx_plug_b" not in sys.modules
    assert reg.summaries("command") == [("cmd-a", "help of cmd-a"), ("cmd-b", "help of cmd-b")]
    assert reg.summaries("agent") == [("alpha", "agent alpha"), ("beta", "agent beta")]
    assert reg.get("agent", "beta").name == "beta"
    assert "idx_plug_b" in sys.modules and "idx_plug_a" not in sys.modules
    assert reg.names("agent") == ["alpha", "beta"] and "idx_plug_a" in sys.modules  # listing loads all


def test_an_edited_plugin_is_imported_at_start(plugins):
    fresh()
    plugins("idx_plug_b", ["gamma"], "cmd-b")
    reg = fresh()
    assert "idx_plug_b" in sys.modules and "idx_plug_a" not in sys.modules
    assert reg.summaries("agent") == [("alpha", "agent alpha"), ("gamma", "agent gamma")]
    with pytest.raises(PluginError, match="unknown agent 'beta'; known agents: alpha, gamma"):
        reg.get("agent", "beta")


def test_conflicts_and_unknown_names_are_as_without_the_index(plugins):
    plugins("idx_plug_b", ["alpha"], "cmd-b")
    fresh()
    for lazy in (True, False):
        reg = fresh(lazy)
        assert ("alpha" not in dict(reg.summaries("agent"))) and reg.summaries("command")[0][0] == "cmd-a"
        with pytest.raises(PluginError, match="'alpha' is provided by both plugin 'pa'.* and plugin 'pb'"):
            reg.get("agent", "alpha")
        with pytest.raises(PluginError, match="unknown agent 'zeta'"):
            reg.get("agent", "zeta")


def test_find_imports_only_the_provider_and_answers_none_for_an_unknown_name(plugins):
    """``find`` (optional names, such as a game's array face): an unknown name imports nothing."""
    fresh()
    reg = fresh()
    assert reg.find("agent", "zeta") is None
    assert "idx_plug_a" not in sys.modules and "idx_plug_b" not in sys.modules
    assert reg.find("agent", "beta").name == "beta"
    assert "idx_plug_b" in sys.modules and "idx_plug_a" not in sys.modules
    plugins("idx_plug_b", ["alpha"], "cmd-b")
    fresh()
    with pytest.raises(PluginError, match="'alpha' is provided by both"):
        fresh().find("agent", "alpha")


def test_a_broken_plugin_is_never_trusted_to_the_index(plugins, tmp_path):
    fresh()
    (tmp_path / "idx_plug_b.py").write_text("raise ImportError('needs a package that is not installed')")
    reg = fresh()
    assert [b.plugin for b in reg.broken] == ["pb"]
    assert "not installed" in reg.broken[0].error
    plugins("idx_plug_b", ["beta"], "cmd-b")  # the missing piece arrives
    assert fresh().get("agent", "beta").name == "beta"


def test_help_does_not_import_plugins(tmp_path):
    """`arena --help` lists every command from the index: no numpy, pyspiel, omegaconf, torch."""
    env = dict(os.environ, ARENA_CACHE_DIR=str(tmp_path))
    probe = textwrap.dedent("""
        import contextlib, io, sys
        from arena.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                main(["--help"])
            except SystemExit:
                pass
        heavy = sorted(m for m in ("numpy", "pyspiel", "omegaconf", "torch", "rich") if m in sys.modules)
        print("heavy:", heavy, "tournament" in out.getvalue() and "solve" in out.getvalue())
    """)
    runs = [subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[-1].stderr
    assert runs[1].stdout.strip() == "heavy: [] True", runs[1].stdout


def test_installing_a_package_elsewhere_invalidates_the_index(plugins, tmp_path, monkeypatch):
    """A plugin's entries may depend on what else is installed: a change to a sys.path
    directory holding distributions (pip install/uninstall) imports every plugin again once."""
    site = tmp_path / "site"
    (site / "other-1.0.dist-info").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(site))
    fresh()
    fresh()
    assert "idx_plug_a" not in sys.modules
    (site / "newly_installed-2.0.dist-info").mkdir()
    st = site.stat()
    os.utime(site, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000_000))
    fresh()
    assert "idx_plug_a" in sys.modules and "idx_plug_b" in sys.modules
    fresh()
    assert "idx_plug_a" not in sys.modules  # and trusted again


def test_firing_an_event_imports_only_the_observers(plugins, tmp_path):
    """``registry.hook`` imports the plugins the index says implement an event hook, no others."""
    (tmp_path / "idx_plug_b.py").write_text(
        (tmp_path / "idx_plug_b.py").read_text()
        + textwrap.dedent("""
        SEEN = []

        @arena.hookimpl
        def arena_run_finished(run, summary):
            SEEN.append(run["kind"])
    """)
    )
    fresh()  # builds the index
    reg = fresh()
    assert "idx_plug_a" not in sys.modules and "idx_plug_b" not in sys.modules
    reg.hook.arena_run_finished(run={"kind": "match"}, summary={})
    assert sys.modules["idx_plug_b"].SEEN == ["match"] and "idx_plug_a" not in sys.modules
