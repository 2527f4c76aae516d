"""``arena train CONFIG [key=value ...]``: the small training driver for neural learners.

Loop: rollouts ONLY through :func:`arena.match.play_games` (``record=True``) → trajectories →
``trainer.update``; every ``eval_every`` iterations the learners are evaluated (self-play, each
fixed opponent, cooperation rates, IPD probe). The run directory gets the resolved config,
``metrics.csv`` (one row per evaluation), ``results.json`` (final evaluation and train
metrics), ``curves.png`` and one checkpoint directory per learner.

Seats: ``learners: 1`` puts one shared network in every seat (self-play with parameter
sharing); ``learners: 2`` gives each seat of a two-player game its own network; ``opponents``
fill the last seats with fixed agents.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import MISSING

from arena.cli_api import Command
from arena.cli_api import add_config_arguments, config_and_overrides
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


def build(cfg: TrainConfig):
    """Game, learners, fixed opponents, seat list, trainer and evaluation opponents."""
    from arena.loading import load_agent, load_game
    from arena.registry import get_registry

    game = load_game(cfg.game)
    n = game.spec.num_players
    if cfg.learners < 1:
        raise ArenaError(f"train config: learners must be >= 1, got {cfg.learners}")
    if len(cfg.opponents) >= n:
        raise ArenaError(f"train config: {len(cfg.opponents)} opponents leave no seat for a learner in "
                         f"'{game.spec.full_name}' ({n} seats)")
    learners = []
    for i in range(cfg.learners):
        spec = dict(cfg.agent)
        spec.setdefault("seed", cfg.seed * 100 + i)
        agent = load_agent(spec, game)
        agent.name = f"learner_{i}"
        learners.append(agent)
    fixed = [load_agent(s, game) for s in cfg.opponents]
    seats = [learners[i % len(learners)] for i in range(n - len(fixed))] + fixed
    entry = get_registry().get("trainer", cfg.trainer)
    trainer = entry.factory(game, learners, **dict(cfg.params))
    evals = [load_agent(s, game) for s in cfg.eval_opponents]
    return game, learners, seats, trainer, evals


def train(cfg: TrainConfig, log=None) -> dict[str, Any]:
    """Run the loop described in the module docstring; return the final report."""
    from arena.match import play_games
    from arena.plugins.agents.neural import require_torch
    from arena.plugins.trainers import social_eval as ev

    log = log or (lambda line: print(line, flush=True))
    torch = require_torch()
    torch.set_num_threads(max(1, cfg.torch_threads))
    game, learners, seats, trainer, evals = build(cfg)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(to_yaml(cfg))
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    eval_seed = 10_000_019 + cfg.seed

    def evaluate(it: int, train_metrics: dict[str, float]) -> dict[str, Any]:
        report = ev.evaluate(game, learners, evals, cfg.eval_games, eval_seed)
        row = {"iteration": it, "seconds": round(time.perf_counter() - start, 2), **ev.flatten(report),
               **{f"train/{k}": v for k, v in train_metrics.items()}}
        rows.append(row)
        ev.write_rows(out / "metrics.csv", rows)
        if not cfg.quiet:
            sp = report["selfplay"]
            extra = ", ".join(f"{k} {v:.3f}" for k, v in sp.items() if k in ("cooperation", "own_coin_rate"))
            vs = ", ".join(f"{k[3:]} {v['return_per_round']:+.3f}" for k, v in report.items() if k.startswith("vs_"))
            log(f"[{row['seconds']:7.1f}s] it {it:4d}  self-play return/round {sp['return_per_round']:+.3f}"
                f"{'  ' + extra if extra else ''}  vs: {vs}")
        return report

    metrics: dict[str, float] = {}
    report = evaluate(0, metrics)
    for it in range(1, cfg.iterations + 1):
        results = play_games(game, seats, num_games=cfg.games_per_iter, seed=cfg.seed * 1_000_003 + it,
                             rotate_seats=True, record=True)
        metrics = trainer.update([r.trajectory for r in results])
        if it % cfg.eval_every == 0 or it == cfg.iterations:
            report = evaluate(it, metrics)
    for agent in learners:
        agent.save(out / "checkpoints" / agent.name)
    final = {"game": game.spec.full_name, "trainer": cfg.trainer, "params": dict(cfg.params), "seed": cfg.seed,
             "iterations": cfg.iterations, "seconds": round(time.perf_counter() - start, 1),
             "final": report, "train": metrics}
    ev.save_json(out / "results.json", final)
    ev.plot_curves(out / "curves.png", rows, f"{cfg.trainer} on {game.spec.full_name} (seed {cfg.seed})")
    return final


def _args(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p, "YAML training config (keys: game, trainer, params, agent, learners, ...)",
                         "seed=3 params.beta=2")


def _run(args: argparse.Namespace) -> int:
    cfg = load_config(TrainConfig, *config_and_overrides(args.config, args.overrides))
    final = train(cfg)
    print(f"wrote {cfg.out}/results.json, metrics.csv, curves.png and checkpoints/ "
          f"({final['seconds']}s)", file=sys.stderr)
    return 0


@hookimpl
def arena_commands() -> list[Command]:
    return [Command("train", "train neural learners from a YAML config (rollouts via the match runner)",
                    _args, _run)]
