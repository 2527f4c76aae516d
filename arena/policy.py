"""Tabular policies and their JSON file format.

``{"game": "<name with params>", "policy": {"<info-state key>": [[action, prob], ...]}}`` —
for OpenSpiel-backed games the key is OpenSpiel's ``information_state_string``, so the file
loads into an OpenSpiel ``TabularPolicy``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

from arena.atomic import write_json_atomic
from arena.errors import ArenaError


class TabularPolicy:
    """Info-state key → {action: probability}."""

    def __init__(self, game: str, table: Mapping[str, Mapping[int, float]]) -> None:
        self.game = game
        self.table = {k: dict(v) for k, v in table.items()}

    def get(self, key: str) -> dict[int, float] | None:
        return self.table.get(key)

    def __len__(self) -> int:
        return len(self.table)

    def to_json(self) -> dict:
        return {
            "game": self.game,
            "policy": {k: [[int(a), float(p)] for a, p in sorted(v.items())] for k, v in sorted(self.table.items())},
        }

    def save(self, path: str | Path) -> Path:
        """Atomic write: a crash never leaves half a policy file."""
        return write_json_atomic(path, self.to_json())

    @classmethod
    def load(cls, path: str | Path) -> "TabularPolicy":
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise ArenaError(f"policy file not found: {path}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ArenaError(f"policy file {path} is not valid JSON: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("policy"), dict):
            raise ArenaError(f"policy file {path} has no 'policy' object (expected {{'game': ..., 'policy': {{...}}}})")
        try:
            table = {str(k): {int(a): float(p) for a, p in v} for k, v in data["policy"].items()}
        except (TypeError, ValueError):
            raise ArenaError(f"policy file {path}: entries must be lists of [action, prob] pairs") from None
        return cls(str(data.get("game", "")), table)
