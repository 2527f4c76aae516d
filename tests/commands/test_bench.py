"""``arena bench``: the machine's load and the baseline come with every figure, and under
``--json`` stdout holds the document alone, whatever the benchmark prints meanwhile."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import arena
from arena.cli_api import Benchmark


def noisy_run(args):
    print("progress: halfway")
    subprocess.run([sys.executable, "-c", "print('a child process talking')"], check=True)
    return {"widgets_per_s": 3, "speedup_ratio": 1.5}


def noisy_plugin() -> types.ModuleType:
    plugin = types.ModuleType("noisy_bench")
    plugin.arena_benchmarks = arena.hookimpl(
        lambda: [Benchmark("noisy", "prints while it runs", noisy_run, ratio="ratio")]
    )
    return plugin


def test_json_keeps_stdout_for_the_document(fresh_registry, capfd):
    from arena.cli import main
    from arena.registry import get_registry

    get_registry().register(noisy_plugin(), "noisy_bench")
    assert main(["bench", "noisy", "--json"]) == 0
    out, err = capfd.readouterr()
    doc = json.loads(out)
    assert doc["widgets_per_s"] == 3 and doc["baseline"] == "(none named)" and "machine_load_at_start" in doc
    assert "progress: halfway" in err and "a child process talking" in err
    print("stdout works again")
    assert capfd.readouterr().out == "stdout works again\n"


def test_without_json_the_header_comes_first_and_the_ratio_last(fresh_registry, capfd):
    from arena.cli import main
    from arena.registry import get_registry

    get_registry().register(noisy_plugin(), "noisy_bench")
    assert main(["bench", "noisy"]) == 0
    lines = capfd.readouterr().out.splitlines()
    assert "machine_load_at_start" in lines[0] and "baseline" in lines[1]
    assert lines[-1].strip() == "ratio vs baseline: speedup_ratio = 1.5"
