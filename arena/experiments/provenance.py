"""What a result was computed with: the interpreter, the machine and the version of every
library the process imported, written into a run's ``results.json``.

Why: a run is deterministic on one machine but not across machines (measured in
docs/results/werewolf.md, "Across machines": the same command and seed moved 13
points on a fresh machine with freshly installed libraries). Without this record, two results
that differ cannot be traced to a library version or a CPU.
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import platform
import sys
from pathlib import Path
from typing import Any


def _cpu() -> dict[str, Any]:
    """The CPU's model name and vector extensions (which kernels a numeric library picks, and so
    the order its sums run in); ``platform.processor()`` alone is empty on most Linux systems."""
    info: dict[str, Any] = {"model": platform.processor(), "cores": os.cpu_count()}
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:  # not Linux: the platform's own answer, possibly empty
        return info
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            info["model"] = value.strip()
        elif key.strip() == "flags":
            info["simd"] = sorted(f for f in value.split() if f.startswith(("avx", "amx", "fma", "sse4")))
            break
    return info


def imported_libraries() -> dict[str, str]:
    """``{distribution: version}`` for every installed distribution the process has imported."""
    provides = metadata.packages_distributions()
    names = {d for module in list(sys.modules) if "." not in module for d in provides.get(module, [])}
    versions = {}
    for name in sorted(names):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:  # a module's distribution record without metadata
            continue
    return versions


def provenance() -> dict[str, Any]:
    """``{"python", "platform", "cpu": {"model", "cores", "simd"}, "libraries"}`` of this process, now."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": _cpu(),
        "libraries": imported_libraries(),
    }
