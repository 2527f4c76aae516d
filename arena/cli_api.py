"""What plugins implement to add CLI sub-commands and benchmarks."""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Command:
    """``arena NAME ...``: ``add_arguments(parser)`` then ``run(args) -> exit status``."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Benchmark:
    """``arena bench NAME``: ``run(args) -> dict`` of measured figures (printed, or --json)."""

    name: str
    help: str
    run: Callable[[argparse.Namespace], dict]
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
