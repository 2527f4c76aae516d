"""What plugins implement to add CLI sub-commands and benchmarks, and the argument handling
config-driven commands share. Kept free of heavy imports: every plugin module loads it."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from arena.errors import ConfigError


@dataclass(frozen=True)
class Command:
    """``arena NAME ...``: ``add_arguments(parser)`` then ``run(args) -> exit status``."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    config: Any = None
    """For ``arena NAME CONFIG [key=value ...]`` commands: the config dataclass. One with ``seed``
    and ``out`` keys whose run writes ``out/results.json`` (``{"final": {metric: value}}``) can
    be swept over seeds (``arena sweep``)."""


@dataclass(frozen=True)
class Benchmark:
    """``arena bench NAME``: ``run(args) -> dict`` of measured figures (printed, or --json).

    A figure means little without what it was measured against and how busy the machine was:
    ``arena bench`` prints the machine's load and the ``baseline`` before the run, and the
    figures whose keys end with ``ratio`` again at the end as the headline."""

    name: str
    help: str
    run: Callable[[argparse.Namespace], dict]
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    baseline: str = ""
    """The named baseline the figures are measured against, in the same run."""
    ratio: str = ""
    """Suffix of the figure keys holding the headline ratio(s) against the baseline."""


def machine_load() -> str:
    """The load averages and core count, e.g. ``1.52 1.31 0.90 (1/5/15 min) on 2 cores``."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:  # not available on this platform
        return f"unknown on {os.cpu_count()} cores"
    return f"{one:.2f} {five:.2f} {fifteen:.2f} (1/5/15 min) on {os.cpu_count()} cores"


def add_config_arguments(parser: Any, help: str, example: str, optional: bool = False) -> None:
    """The ``CONFIG [key=value ...]`` arguments every config-driven command takes."""
    parser.add_argument("config", nargs="?" if optional else None, help=help)
    parser.add_argument("overrides", nargs="*", help=f"key=value overrides, e.g. {example}")


def config_and_overrides(
    config: str | None, overrides: Sequence[str], optional: bool = False
) -> tuple[str | None, list[str]]:
    """Split the positional arguments: a first argument that looks like ``key=value`` (and is
    no file) is an override when the config file is optional, and an error otherwise."""
    if config and "=" in config and not Path(config).exists():
        if not optional:
            raise ConfigError(f"the first argument must be a YAML config file, got override '{config}'")
        return None, [config, *overrides]
    return config, list(overrides)


def emit_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout (what every ``--json`` flag prints). An undefined
    figure (NaN, ±inf) is ``null``: strict readers such as ``jq`` refuse Python's ``NaN``."""
    print(json.dumps(_finite(data), indent=2, default=str, allow_nan=False))


def _finite(data: Any) -> Any:
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: _finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_finite(v) for v in data]
    return data


def console() -> Any:
    """A rich console; when stdout is not a terminal (logs, CI, pipes) rich would assume 80
    columns and truncate leaderboards, so use a wide page instead."""
    from rich.console import Console  # ~0.1 s to import: only commands that draw tables pay it

    return Console() if sys.stdout.isatty() else Console(width=160)
