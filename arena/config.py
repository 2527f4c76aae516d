"""Configs: YAML files plus ``key=value`` overrides, validated against structured schemas.

Any problem — missing file, bad YAML, unknown key, wrong type, missing value — becomes one
:class:`ConfigError` naming the file and the key. The CLI prints it as one line (exit 2).
Schemas are dataclasses; each command (match, tournament, league, ...) owns its own.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence, TypeVar

import yaml
from omegaconf import MISSING, DictConfig, OmegaConf
from omegaconf.errors import (
    ConfigAttributeError,
    ConfigKeyError,
    MissingMandatoryValue,
    OmegaConfBaseException,
    ValidationError,
)

from arena.errors import ConfigError

T = TypeVar("T")


@dataclass
class MatchConfig:
    """``arena match``: N games between agents (one per seat)."""

    game: str = MISSING
    agents: list[Any] = MISSING
    games: int = 100
    seed: int = 0
    rotate_seats: bool = True
    timeout: float | None = None
    batch_size: int | None = None
    out: str | None = None


def load_config(
    schema: type[T], path: str | Path | None = None, overrides: Sequence[str] = (), base: dict[str, Any] | None = None
) -> T:
    """Merge schema defaults ← ``base`` ← YAML file ← overrides, validate, return a dataclass."""
    where = str(path) if path else "config"
    layers: list[Any] = [OmegaConf.structured(schema)]
    if base:
        layers.append(OmegaConf.create(base))
    if path is not None:
        layers.append(_read_yaml(Path(path)))
    if overrides:
        layers.append(_parse_overrides(overrides))
    try:
        merged = OmegaConf.merge(*layers)
        missing = sorted(OmegaConf.missing_keys(merged))
        if missing:
            raise ConfigError(f"{where}: missing required key '{missing[0]}'")
        obj = OmegaConf.to_object(merged)
    except ConfigError:
        raise
    except (ConfigKeyError, ConfigAttributeError) as exc:
        key = _key_of(exc)
        known = ", ".join(f.name for f in dataclasses.fields(schema))  # type: ignore[arg-type]
        raise ConfigError(f"{where}: unknown key '{key}' (known keys: {known})") from None
    except ValidationError as exc:
        raise ConfigError(f"{where}: key '{_key_of(exc)}': {_first_line(exc)}") from None
    except MissingMandatoryValue as exc:
        raise ConfigError(f"{where}: missing required key '{_key_of(exc)}'") from None
    except OmegaConfBaseException as exc:
        raise ConfigError(f"{where}: {_first_line(exc)}") from None
    except TypeError:  # OmegaConf cannot merge a dotted override into a list (agents.0.name=...)
        raise ConfigError(f"{where}: {_list_override(layers[:-1], overrides)}") from None
    return obj  # type: ignore[return-value]


def _list_override(layers: Sequence[Any], overrides: Sequence[str]) -> str:
    """Why the overrides did not merge: the first one whose dotted key steps into a list."""
    merged = OmegaConf.merge(*layers) if layers else OmegaConf.create({})
    for item in overrides:
        key = item.split("=", 1)[0]
        parts = key.split(".")
        for i in range(1, len(parts)):
            head = ".".join(parts[:i])
            if OmegaConf.is_list(OmegaConf.select(merged, head, default=None)):
                return (
                    f"override '{item}': '{head}' is a list, and an override cannot set one entry of a list; "
                    f"give the whole list ({head}=[...]) or edit the YAML file"
                )
    return f"overrides {' '.join(overrides)} do not fit the config's structure"


def _read_yaml(path: Path) -> DictConfig:
    if not path.exists():
        raise ConfigError(f"config file not found: {path}")
    if path.is_dir():
        raise ConfigError(f"config path is a directory, not a YAML file: {path}")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}: invalid YAML{at}: {getattr(exc, 'problem', exc)}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a text file") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys, got {type(data).__name__}")
    return OmegaConf.create(data)


def _parse_overrides(overrides: Sequence[str]) -> DictConfig:
    for item in overrides:
        if "=" not in item or item.startswith("="):
            raise ConfigError(f"override '{item}' is not key=value")
    try:
        return OmegaConf.from_dotlist(list(overrides))
    except OmegaConfBaseException as exc:
        raise ConfigError(f"bad override: {_first_line(exc)}") from None
    except Exception as exc:  # yaml errors inside values
        raise ConfigError(f"bad override: {exc}") from None


def _key_of(exc: OmegaConfBaseException) -> str:
    key = getattr(exc, "full_key", None) or getattr(exc, "key", None)
    return str(key) if key is not None else "?"


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def to_yaml(cfg: Any) -> str:
    """A resolved config as YAML (the run directory keeps it)."""
    return OmegaConf.to_yaml(OmegaConf.structured(cfg))


__all__ = ["MatchConfig", "load_config", "to_yaml", "field"]
