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
    from arena.judge import JudgeEntry
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
def arena_judges() -> "list[JudgeEntry]":
    """Judges this plugin provides: compare two trajectories of one task instance
    (:mod:`arena.judge`; used by ranking trainers such as ``arenarl`` and by ``sppo``)."""


@hookspec
def arena_commands() -> "list[Command]":
    """Sub-commands of the ``arena`` CLI."""


@hookspec
def arena_benchmarks() -> "list[Benchmark]":
    """Benchmarks run by ``arena bench NAME``."""


# -- events ------------------------------------------------------------------------------------
# Every run (match, tournament, league, train, llm-train, hosted match) tells observers the same
# way: ``arena_run_started``, then ``arena_match_finished`` for every game it stores (and
# ``arena_league_step`` for every training step), then ``arena_run_finished``. ``context`` (and
# ``run``) always carry ``kind``, ``run_id`` and ``run_dir`` (None when nothing is written), plus
# ``total`` and ``unit`` ("games" or "steps") for progress displays. The built-in TensorBoard
# writer and progress display are plugins on these hooks; a third-party observer gets the same.
@hookspec
def arena_run_started(run: dict[str, Any]) -> None:
    """A run began (``run["resume_step"]`` > 0 when it resumes after a crash; ``run["done"]``
    units are already behind it)."""


@hookspec
def arena_match_finished(result: Any, context: dict[str, Any]) -> None:
    """A game finished and was recorded (``result`` is an :class:`arena.playing.match.GameResult`);
    fired once per stored game."""


@hookspec
def arena_matches_finished(results: list[Any], context: dict[str, Any]) -> None:
    """Games finished and were recorded together: one call per committed batch of a tournament
    or league, per batch of ``arena match``, per hosted game (``results`` are their
    :class:`arena.playing.match.GameResult` objects; ``context`` as for ``arena_match_finished``, without
    the per-game keys). Fired besides ``arena_match_finished``; an observer that only counts
    games implements this one. Why: a run builds the per-game event (a context dict per game)
    only when some plugin implements ``arena_match_finished`` — for a cheap game that event cost
    a noticeable share of a tournament's time per game."""


@hookspec
def arena_checkpoint_written(path: str, agent: str, context: dict[str, Any]) -> None:
    """An agent or league checkpoint directory was written."""


@hookspec
def arena_league_step(step: int, metrics: dict[str, float], context: dict[str, Any]) -> None:
    """A league (or ``arena train`` / ``llm-train``) finished one step; ``metrics`` are its scalars."""


@hookspec
def arena_run_finished(run: dict[str, Any], summary: dict[str, Any]) -> None:
    """A run ended normally (``summary`` holds e.g. ``leaderboard_markdown``, ``final_metrics``)."""
