"""Third-party plugin packages built and pip-installed as a user would."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def make_package(root: Path, dist: str, module: str, source: str) -> Path:
    pkg = root / dist
    (pkg / module).mkdir(parents=True)
    (pkg / module / "__init__.py").write_text(textwrap.dedent(source))
    (pkg / "pyproject.toml").write_text(
        textwrap.dedent(f"""
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{dist}"
        version = "1.2.3"

        [project.entry-points.arena]
        {module} = "{module}"

        [tool.setuptools]
        packages = ["{module}"]
    """)
    )
    return pkg


def pip_install(target: Path, *packages: Path) -> Path:
    """pip-install package directories into ``target`` (a directory for PYTHONPATH), as a user would."""
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target"]
    subprocess.run(pip + [str(target)] + [str(p) for p in packages], check=True)
    return target
