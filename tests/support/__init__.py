"""What the suite's tests share: the repository's paths and the ``arena`` command of this environment."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def arena_cmd() -> list[str]:
    """The installed ``arena`` console script of this interpreter's environment."""
    exe = BIN / "arena"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "arena.cli"]
