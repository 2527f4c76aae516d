"""``arena.experiments.provenance``: what a run's ``results.json`` records it was computed with."""

from __future__ import annotations

import platform
import subprocess
import sys

import arena
from arena.experiments.provenance import provenance


def test_environment_names_the_interpreter_and_every_imported_library():
    import numpy

    env = provenance()
    assert env["python"] == platform.python_version() and env["cpu"]["cores"] >= 1
    assert env["libraries"]["numpy"] == numpy.__version__
    assert env["libraries"]["arena-rl"] == arena.__version__


def test_a_library_the_process_never_imported_is_not_listed():
    """The record is of what the run used, not of everything installed: a bare interpreter that
    imports only ``arena.experiments.provenance`` lists no numpy (installed here, never imported there)."""
    code = (
        "import json; from arena.experiments.provenance import provenance; print(json.dumps(provenance()['libraries']))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert '"arena-rl"' in out and '"numpy"' not in out
