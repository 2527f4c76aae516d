"""``arena train CONFIG [key=value ...]``: train learners by self-play — a thin front-end of the
league runner (:mod:`arena.league.runner`), so it shares its run directory, store, snapshots,
resume after a kill, executors, TensorBoard, progress and learner metrics.

Seats: ``learners: 1`` puts one shared network in every seat (self-play with parameter
sharing); ``learners: k > 1`` gives each seat its own network, all trained by one trainer (a
league team); with ``learners: 1`` the ``opponents`` are fixed agents the learner plays
against (one in every other seat, drawn uniformly per game). Every ``eval_every`` iterations
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


def facing(opponents: Sequence[Any]) -> dict[str, Any]:
    """A learner's matchmaking keys: uniform over the fixed ``opponents`` (labelled as
    :func:`opponent_members` labels them), or self-play when there are none."""
    if not opponents:
        return {"matchmaking": "self_play", "opponents": None}
    return {"matchmaking": "uniform", "opponents": [f"opponent_{j}" for j in range(len(opponents))]}


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
                **facing(cfg.opponents),
                "games_per_step": cfg.games_per_iter,
                "snapshot_every": cfg.eval_every,
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
