"""``arena train CONFIG [key=value ...]``: train learners by self-play — a thin front-end of the
league runner (:mod:`arena.league.runner`), so it shares its run directory, store, snapshots,
resume after a kill, executors, TensorBoard, progress and learner metrics.

Seats: ``learners: 1`` puts one shared network in every seat (self-play with parameter
sharing); ``learners: k > 1`` gives each seat its own network, all trained by one trainer (a
league team); with ``learners: 1`` the ``opponents`` are fixed agents the learner plays
against (one in every other seat, drawn uniformly per game); with ``learners: 1`` and
``past_opponents.share`` > 0 the learner also plays its own past snapshots (a buffer of past
policies, as Advantage Alignment's released code trains against). Every ``eval_every`` iterations
the learners are measured: self-play and each ``eval_opponents`` agent over ``eval_games``
games, per-seat statistics the game reports (cooperation, own-coin rate) and the game's probes.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from typing import Any, Sequence

from omegaconf import MISSING

from arena.cli_api import Command, add_config_arguments, config_and_overrides
from arena.config import load_config, to_yaml
from arena.errors import ArenaError
from arena.hookspecs import hookimpl


@dataclass
class PastOpponents:
    """Self-play with a buffer of the learner's own past policies (Duque et al., "Advantage
    Alignment Algorithms", ICLR 2025, arXiv 2406.14662, train against past checkpoints as well as
    in self-play): for ``share`` of its games the learner's co-players are one of its latest
    ``keep`` snapshots (drawn uniformly per game), itself otherwise; until its first snapshot it
    plays only itself. 0: plain self-play."""

    share: float = 0.0
    keep: int = 30
    every: int = 0
    """Iterations between snapshots (0: ``eval_every``)."""


@dataclass
class TrainConfig:
    """Hyperparameters of the driver; the trainer's own live under ``params``."""

    game: str = MISSING
    trainer: str = "ppo"
    params: dict[str, Any] = field(default_factory=dict)
    agent: dict[str, Any] = field(default_factory=lambda: {"name": "neural"})
    learners: int = 2
    opponents: list[Any] = field(default_factory=list)
    iterations: int = 100
    games_per_iter: int = 64
    seed: int = 0
    eval_every: int = 10
    eval_games: int = 200
    eval_opponents: list[Any] = field(default_factory=lambda: ["always_cooperate", "always_defect", "tit_for_tat"])
    out: str = "runs/train"
    torch_threads: int = 1
    quiet: bool = False
    executor: dict[str, Any] = field(default_factory=dict)
    """Where rollouts run (``kind: inprocess | process | ray``, ``workers``, ``chunk``, ``address``)."""
    max_staleness: int = 0
    """Asynchronous training: rollouts may run this many learner versions ahead (0: synchronous)."""
    past_opponents: PastOpponents = field(default_factory=PastOpponents)
    """``share``, ``keep``, ``every``: games against the learner's own past snapshots (one learner)."""


def facing(opponents: Sequence[Any]) -> dict[str, Any]:
    """A learner's matchmaking keys: uniform over the fixed ``opponents`` (labelled as
    :func:`opponent_members` labels them), or self-play when there are none."""
    if not opponents:
        return {"matchmaking": "self_play", "opponents": None}
    return {"matchmaking": "uniform", "opponents": [f"opponent_{j}" for j in range(len(opponents))]}


def past_facing(cfg: TrainConfig) -> dict[str, Any]:
    """The lone learner's matchmaking keys with ``past_opponents``: uniform over its own latest
    ``keep`` snapshots for ``share`` of its games, itself for the rest (and until a snapshot exists)."""
    past = cfg.past_opponents
    if not 0.0 <= past.share <= 1.0:
        raise ArenaError(f"train config: past_opponents.share is a share of games in [0, 1], got {past.share}")
    if past.keep < 1 or past.every < 0:
        raise ArenaError(
            f"train config: past_opponents.keep must be at least 1 and past_opponents.every at least 0 "
            f"(0: eval_every), got {past.keep} and {past.every}"
        )
    if not past.share:
        return {**facing(cfg.opponents), "snapshot_every": cfg.eval_every}
    if cfg.learners != 1 or cfg.opponents:
        raise ArenaError(
            "train config: past_opponents trains one learner against its own snapshots (learners: 1, "
            f"no opponents), got learners: {cfg.learners} and {len(cfg.opponents)} opponents"
        )
    return {
        "matchmaking": "uniform",
        "opponents": ["learner_0"],  # a learner's label in a pool stands for its snapshots
        "self_play": 1.0 - past.share,
        "snapshot_window": past.keep,
        "snapshot_every": past.every or cfg.eval_every,
    }


def opponent_members(opponents: Sequence[Any]) -> list[dict[str, Any]]:
    """The fixed ``opponents`` as league population members (what ``arena train`` and
    ``arena llm-train`` put beside their learner)."""
    return [{"label": f"opponent_{j}", "agent": spec} for j, spec in enumerate(opponents)]


def league_config(cfg: TrainConfig) -> Any:
    """The league that ``arena train`` runs: the learners (one team when several), fixed
    opponents, learner metrics at every evaluation, no rating gauntlet."""
    from arena.league import LeagueConfig
    from arena.loading import load_game, parse_agent_spec

    if cfg.learners < 1:
        raise ArenaError(f"train config: learners must be >= 1, got {cfg.learners}")
    n = load_game(cfg.game).spec.num_players
    if cfg.learners > 1 and cfg.opponents:
        raise ArenaError(
            "train config: fixed opponents train one learner (learners: 1); several learners train "
            "by self-play among themselves"
        )
    if cfg.learners > n:
        raise ArenaError(f"train config: {cfg.learners} learners do not fit the {n} seats of '{cfg.game}'")
    name, params = parse_agent_spec(dict(cfg.agent))
    population: list[dict[str, Any]] = []
    for i in range(cfg.learners):
        population.append(
            {
                "label": f"learner_{i}",
                "agent": {"name": name, **dict({"seed": cfg.seed * 100 + i}, **params)},
                "role": "learner",
                "trainer": {"name": cfg.trainer, "params": dict(cfg.params)},
                "team": "learners" if cfg.learners > 1 else None,
                **past_facing(cfg),
                "games_per_step": cfg.games_per_iter,
            }
        )
    population += opponent_members(cfg.opponents)
    return load_config(
        LeagueConfig,
        None,
        base={
            "game": cfg.game,
            "seed": cfg.seed,
            "out": cfg.out,
            "steps": cfg.iterations,
            "population": population,
            "evaluation": {
                "every": cfg.eval_every,
                "games": 0,
                "metrics": {"games": cfg.eval_games, "opponents": list(cfg.eval_opponents)},
            },
            "executor": dict(cfg.executor),
            "progress": not cfg.quiet,
            "torch_threads": cfg.torch_threads,
            "checkpoint_every": 1,
            "max_staleness": cfg.max_staleness,
        },
    )


def run_front_end(league: Any, cfg: Any, kind: str, log: Any = None) -> dict[str, Any]:
    """What ``arena train`` and ``arena llm-train`` share: run their league (resuming a killed
    run) with the front-end's own YAML as the run's config text; return ``results.json``."""
    from arena.league import run_league

    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    result = run_league(league, config_text=to_yaml(cfg), quiet=cfg.quiet, log=log, kind=kind)
    assert result.results is not None  # the front-ends always measure their learner
    return result.results


def report_written(out: str, final: dict[str, Any], hint: str) -> None:
    print(
        f"wrote {out}/results.json, metrics.csv, curves.png, snapshots/, checkpoints/ and tb/ "
        f"({final['seconds']}s; {hint})",
        file=sys.stderr,
    )


def train(cfg: TrainConfig, log: Any = None) -> dict[str, Any]:
    """Run ``cfg`` through the league runner (resuming a killed run); return ``results.json``."""
    return run_front_end(league_config(cfg), cfg, "train", log)


def _args(p: argparse.ArgumentParser) -> None:
    add_config_arguments(
        p, "YAML training config (keys: game, trainer, params, agent, learners, ...)", "seed=3 params.beta=2"
    )


def _run(args: argparse.Namespace) -> int:
    cfg = load_config(TrainConfig, *config_and_overrides(args.config, args.overrides))
    report_written(cfg.out, train(cfg), "rerun the same command to resume or extend with iterations=N")
    return 0


@hookimpl
def arena_commands() -> list[Command]:
    return [
        Command(
            "train",
            "train neural learners from a YAML config (rollouts via the match runner)",
            _args,
            _run,
            config=TrainConfig,
        )
    ]
