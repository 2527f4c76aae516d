"""Files that exist whole or not at all: write to a temp file beside the target, then rename.
An interrupted run (crash, SIGKILL) never leaves half a result or policy file."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable


def write_json_atomic(path: str | Path, data: Any, **dump_kwargs: Any) -> Path:
    return write_text_atomic(path, json.dumps(data, **dump_kwargs))


def write_text_atomic(path: str | Path, text: str) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def atomic_dir(path: str | Path, write: Callable[[Path], Any]) -> Path:
    """Write a directory under a temporary name, then rename: it exists whole or not at all."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.iterdir():  # left by a killed writer (any pid)
        if stale.name.startswith(f".{target.name}.tmp"):
            shutil.rmtree(stale, ignore_errors=True)
    tmp = target.with_name(f".{target.name}.tmp{os.getpid()}")
    tmp.mkdir()
    try:
        write(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if target.exists():
        shutil.rmtree(target)
    os.replace(tmp, target)
    return target
