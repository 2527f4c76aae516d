"""The whole plugin contract on one page.

A plugin is any module (or object) with functions marked ``@arena.hookimpl`` whose names match
the specs below, registered through the ``arena`` entry-point group::

    [project.entry-points.arena]
    my_games = "my_package.games"

Registration hooks return lists of entries; event hooks are called for every implementation
and their return values are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Iterator, Mapping

import pluggy

hookspec = pluggy.HookspecMarker("arena")
hookimpl = pluggy.HookimplMarker("arena")

if TYPE_CHECKING:
    from arena.agent import AgentEntry
    from arena.arrays import ArrayFaceEntry
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


@hookspec
def arena_array_faces() -> "list[ArrayFaceEntry]":
    """Array faces (:mod:`arena.arrays`) for games this plugin does not define, by game name
    (``openspiel:connect_four``): the OpenSpiel adapter's games look theirs up here."""


# -- events ------------------------------------------------------------------------------------
# Every run (match, tournament, league, train, llm-train, hosted match) tells observers the same
# way: ``arena_run_started``, then ``arena_match_finished`` for every game it stores (and
# ``arena_league_step`` for every training step, ``arena_metrics_recorded`` for other scalars,
# ``arena_run_planned`` when its total grows), then ``arena_run_finished``. ``context`` (and
# ``run``) is a :class:`RunContext`. The built-in TensorBoard writer and progress display are
# plugins on these hooks; a third-party observer gets the same.
@dataclass(frozen=True)
class RunContext(Mapping[str, Any]):
    """What every event says about its run. Read as attributes or as a mapping
    (``context["run_id"]``, ``context.get("step")``), so observers written against plain dicts
    keep working; ``extra`` holds what one event adds (``step``, ``store``, ``match_id``...)."""

    kind: str
    """``match``, ``tournament``, ``league``, ``train``, ``llm-train`` or ``host``."""
    run_id: str
    run_dir: str | None = None
    """Where the run writes (None when nothing is written)."""
    total: int | None = None
    """How many ``unit`` the run will take (None when unknown), for progress displays."""
    unit: str = "games"
    """``games`` or ``steps``."""
    tensorboard: bool = False
    """Whether the run asks for TensorBoard events in ``run_dir/tb``."""
    progress: bool = False
    """Whether the run asks for a progress display."""
    resume_step: int = 0
    """The step a resumed run starts at (0 on a fresh run)."""
    done: int = 0
    """Units already behind a resumed run."""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def with_(self, **extra: Any) -> "RunContext":
        """This context with more per-event keys (a field name replaces the field)."""
        fields = {k: extra.pop(k) for k in list(extra) if k in _CONTEXT_FIELDS}
        return replace(self, **fields, extra={**self.extra, **extra})

    def __getitem__(self, key: str) -> Any:
        if key in _CONTEXT_FIELDS:
            return getattr(self, key)
        return self.extra[key]

    def __iter__(self) -> Iterator[str]:
        yield from _CONTEXT_FIELDS
        yield from self.extra

    def __len__(self) -> int:
        return len(_CONTEXT_FIELDS) + len(self.extra)


_CONTEXT_FIELDS = ("kind", "run_id", "run_dir", "total", "unit", "tensorboard", "progress", "resume_step", "done")


@hookspec
def arena_run_started(run: RunContext) -> None:
    """A run began (``run["resume_step"]`` > 0 when it resumes after a crash; ``run["done"]``
    units are already behind it)."""


@hookspec
def arena_match_finished(result: Any, context: RunContext) -> None:
    """A game finished and was recorded (``result`` is an :class:`arena.playing.match.GameResult`);
    fired once per stored game."""


@hookspec
def arena_matches_finished(results: list[Any], context: RunContext) -> None:
    """Games finished and were recorded together: one call per committed batch of a tournament
    or league, per batch of ``arena match``, per hosted game (``results`` are their
    :class:`arena.playing.match.GameResult` objects — for an array-path batch of ``arena match`` a
    sequence that builds them when first read; ``context`` as for ``arena_match_finished``, without
    the per-game keys). Fired besides ``arena_match_finished``; an observer that only counts
    games implements this one. Why: a run builds the per-game event (a context dict per game)
    only when some plugin implements ``arena_match_finished`` — for a cheap game that event cost
    a noticeable share of a tournament's time per game."""


@hookspec
def arena_run_planned(run: RunContext) -> None:
    """The run planned more work as it went: ``run.total`` is its total now (a tournament plans
    each round of its format once the round before is played)."""


@hookspec
def arena_metrics_recorded(step: int, metrics: dict[str, float], context: RunContext) -> None:
    """Scalars a run measured at ``step`` outside training steps: a tournament's rating snapshots
    (``rating/bt/AGENT`` every ``ratings.snapshot_every`` games; ``step`` counts games) and its
    final ratings (``final/bt/AGENT``)."""


@hookspec
def arena_checkpoint_written(path: str, agent: str, context: RunContext) -> None:
    """An agent or league checkpoint directory was written."""


@hookspec
def arena_league_step(step: int, metrics: dict[str, float], context: RunContext) -> None:
    """A league (or ``arena train`` / ``llm-train``) finished one step; ``metrics`` are its scalars."""


@hookspec
def arena_run_finished(run: RunContext, summary: dict[str, Any]) -> None:
    """A run ended normally (``summary`` holds e.g. ``leaderboard_markdown``, ``final_metrics``)."""
