"""Every shipped config (``configs/**/*.yaml``) loads through the config class of the command it
is for, and names only games, agents and trainers that are installed: a renamed key or plugin
breaks here rather than in a user's run. Nothing is trained or played."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from arena.config import MatchConfig, load_config
from arena.evaluation.tournament import TournamentConfig
from arena.league import LeagueConfig, validate
from arena.loading import load_game, parse_agent_spec
from arena.plugins.agents.cfr.run import ALGOS
from arena.plugins.agents.llm.prompts import load_templates
from arena.plugins.trainers.llm import driver
from arena.plugins.trainers.train_command import league_config
from arena.registry import get_registry
from arena.tools.host.session import HostConfig, human_seat
from support import REPO

CONFIGS = sorted((REPO / "configs").rglob("*.yaml"))
BY_DIRECTORY = {
    "host": "host",
    "league": "league",
    "llm": "llm-train",
    "match": "match",
    "social": "train",
    "solve": "solve",
    "tournament": "tournament",
}
"""The command that reads the configs of a directory (a league's config may live anywhere)."""


def command_of(path: Path) -> str:
    """A config with a ``population`` is a league's (``configs/quickstart.yaml``, ``configs/psro/``,
    ``configs/llm/kuhn_league.yaml``); ``*_templates.yaml`` are the llm agent's prompts; the
    directory says the rest. A config no command claims fails, so none is skipped silently."""
    if path.name.endswith("_templates.yaml"):
        return "llm-templates"
    if "population" in yaml.safe_load(path.read_text()):
        return "league"
    if path.parent.name not in BY_DIRECTORY:
        pytest.fail(f"{path}: no known command reads it; add its directory to BY_DIRECTORY")
    return BY_DIRECTORY[path.parent.name]


def command_config(name: str) -> Any:
    """The config class a command declares (``Command.config``)."""
    return get_registry().get("command", name).config


def check_players(game: str, agents: list[Any]) -> None:
    """The game loads and every agent is a registered one."""
    load_game(game)
    for spec in agents:
        get_registry().get("agent", parse_agent_spec(spec)[0])


def _league(path: Path) -> None:
    validate(load_config(LeagueConfig, path))


def _train(path: Path) -> None:
    validate(league_config(load_config(command_config("train"), path)))


def _llm_train(path: Path) -> None:
    cfg = load_config(command_config("llm-train"), path)
    validate(driver.league_config(cfg, load_game(cfg.game), Path(cfg.model.dir)))


def _match(path: Path) -> None:
    cfg = load_config(MatchConfig, path)
    check_players(cfg.game, cfg.agents)


def _tournament(path: Path) -> None:
    cfg = load_config(TournamentConfig, path)
    check_players(cfg.game, cfg.agents)


def _host(path: Path) -> None:
    cfg = load_config(HostConfig, path)
    check_players(cfg.game, [s for s in cfg.seats if human_seat(s) is None])


def _solve(path: Path) -> None:
    cfg = load_config(command_config("solve"), path)
    load_game(cfg.game)
    assert cfg.algo in ALGOS, f"{path}: algo '{cfg.algo}' is not one of {ALGOS}"


def _templates(path: Path) -> None:
    assert load_templates(str(path))


LOADERS: dict[str, Callable[[Path], None]] = {
    "league": _league,
    "train": _train,
    "llm-train": _llm_train,
    "match": _match,
    "tournament": _tournament,
    "host": _host,
    "solve": _solve,
    "llm-templates": _templates,
}


@pytest.mark.parametrize("path", CONFIGS, ids=[str(p.relative_to(REPO / "configs")) for p in CONFIGS])
def test_config_loads_through_its_command(path):
    LOADERS[command_of(path)](path)


@pytest.mark.parametrize("path", CONFIGS, ids=[str(p.relative_to(REPO / "configs")) for p in CONFIGS])
def test_the_command_a_config_names_is_the_one_that_reads_it(path):
    """Where a config says how to run it (``arena COMMAND configs/...``), that command is the one
    the mapping loads it with (``arena sweep`` runs another command's config)."""
    said = re.findall(rf"arena ([a-z-]+) {re.escape(str(path.relative_to(REPO)))}", path.read_text())
    for command in set(said) - {"sweep"}:
        assert command == command_of(path), f"{path.relative_to(REPO)} says `arena {command}`"


def test_a_config_no_command_reads_fails(tmp_path):
    stray = tmp_path / "configs" / "mystery" / "x.yaml"
    stray.parent.mkdir(parents=True)
    stray.write_text("game: kuhn_poker\n")
    with pytest.raises(pytest.fail.Exception, match="no known command reads it"):
        command_of(stray)


def test_a_config_naming_an_unknown_agent_fails(tmp_path):
    bad = tmp_path / "t.yaml"
    bad.write_text("game: kuhn_poker\nagents: [random, superbot]\nout: runs/x\n")
    with pytest.raises(Exception, match="unknown agent 'superbot'"):
        _tournament(bad)
