"""A non-editable ``pip install .`` into a fresh venv gives a working ``arena`` with every
built-in plugin, and nothing generic (``games``, ``plugins``, ``tools``) in site-packages."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib

import pytest

from support import REPO


@pytest.mark.slow
def test_fresh_venv_non_editable_install(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(
        REPO,
        src,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "runs", "build", "*.egg-info", "__pycache__", ".pytest_cache", "test-artifacts"
        ),
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run(
        [str(venv / "bin/pip"), "install", "-q", str(src)], capture_output=True, text=True, timeout=900
    )
    assert pip.returncode == 0, pip.stderr[-2000:]
    site = next((venv / "lib").glob("python*/site-packages"))
    assert (site / "arena" / "games" / "cards.py").exists()
    for generic in ("games", "plugins", "tools"):
        assert not (site / generic).exists(), f"generic top-level '{generic}' installed"
    out = subprocess.run(
        [str(venv / "bin/arena"), "plugins", "--json"], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert not [r for r in rows if r["status"] != "ok"], [r for r in rows if r["status"] != "ok"]
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["arena"]
    providers = {r["plugin"] for r in rows}
    # every built-in entry point loads (plugins needing optional extras like torch may be absent
    # from a core install only if they are declared as such)
    missing = set(declared) - providers
    assert not missing, f"entry points that registered nothing: {missing}"
    match = subprocess.run(
        [
            str(venv / "bin/arena"),
            "match",
            "--game",
            "leduc_poker",
            "--agents",
            "random",
            "random",
            "--games",
            "20",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert match.returncode == 0, match.stderr


def test_license_is_an_spdx_expression_without_setuptools_warnings():
    """``project.license`` as a table is deprecated (setuptools ≥ 77 warns on every install); the
    SPDX string is read as the license expression, with no warning about it."""
    import warnings

    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dist = apply_configuration(Distribution(), REPO / "pyproject.toml")
    assert not [str(w.message) for w in caught if "license" in str(w.message).lower()]
    assert dist.metadata.license_expression == "Apache-2.0"
    requires = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]
    assert "setuptools>=77" in requires  # the first setuptools that reads SPDX license strings
