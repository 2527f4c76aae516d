"""The whole plugin contract on one page.

A plugin is any module (or object) with functions marked ``@arena.hookimpl`` whose names match
the specs below, registered through the ``arena`` entry-point group::

    [project.entry-points.arena]
    my_games = "my_package.games"

Registration hooks return lists of entries; event hooks are called for every implementation
and their return values are ignored.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

hookspec = pluggy.HookspecMarker("arena")
hookimpl = pluggy.HookimplMarker("arena")

if TYPE_CHECKING:
    from arena.agent import AgentEntry
    from arena.cli_api import Benchmark, Command
    from arena.game import GameEntry, GameNamespace
    from arena.trainer import TrainerEntry


# -- registration ------------------------------------------------------------------------------
@hookspec
def arena_games() -> "list[GameEntry]":
    """Games this plugin provides."""


@hookspec
def arena_game_namespaces() -> "list[GameNamespace]":
    """Families of imported games, addressed as ``prefix:name`` (``openspiel:``, ``pettingzoo:``)."""


@hookspec
def arena_agents() -> "list[AgentEntry]":
    """Agent kinds this plugin provides."""


@hookspec
def arena_trainers() -> "list[TrainerEntry]":
    """Trainers this plugin provides."""


@hookspec
def arena_commands() -> "list[Command]":
    """Sub-commands of the ``arena`` CLI."""


@hookspec
def arena_benchmarks() -> "list[Benchmark]":
    """Benchmarks run by ``arena bench NAME``."""


# -- events ------------------------------------------------------------------------------------
@hookspec
def arena_match_finished(result: Any, context: dict[str, Any]) -> None:
    """A game finished (``result`` is an :class:`arena.match.GameResult`)."""


@hookspec
def arena_checkpoint_written(path: str, agent: str, context: dict[str, Any]) -> None:
    """An agent checkpoint directory was written."""


@hookspec
def arena_league_step(step: int, metrics: dict[str, float], context: dict[str, Any]) -> None:
    """A league finished one step (training update, evaluation, snapshot)."""
