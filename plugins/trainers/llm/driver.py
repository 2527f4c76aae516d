"""``arena llm-train CONFIG [key=value ...]``: train one LLM policy by self-play, one command per result.

Loop: self-play rollouts through :func:`arena.match.play_games` (``record=True``) →
``trainer.update``; every ``eval_every`` iterations an evaluation. Games with a tree view get the
exact numbers (return and win rate against uniform random, exploitability of the scored
policy); social dilemmas get :mod:`arena.plugins.trainers.social_eval` (self-play cooperation,
returns against scripted opponents). The run directory gets the resolved config,
``metrics.csv``, ``results.json``, ``curves.png`` and ``checkpoint/`` (a model directory).

``model.dir`` is built with :func:`arena.tools.tiny_model.build_tiny_model` when it does not
exist (tiny models are built locally, never downloaded).
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
class ModelConfig:
    dir: str = MISSING
    seed: int = 0
    """Seed of the tiny model built into ``dir`` when it is missing."""
    pretrain_steps: int = 0
    """When > 0, the tiny model is warmed up on random play of the game before training
    (:mod:`.pretrain`); ``dir`` then holds the warmed-up model."""
    pretrain_games: int = 200


@dataclass
class LLMTrainConfig:
    game: str = MISSING
    model: ModelConfig = field(default_factory=ModelConfig)
    agent: dict[str, Any] = field(default_factory=dict)
    """Parameters of the ``llm`` agent (``model`` is filled in)."""
    trainer: str = "selfplay_rlvr"
    params: dict[str, Any] = field(default_factory=dict)
    iterations: int = 20
    games_per_iter: int = 128
    seed: int = 0
    eval_every: int = 5
    eval_games: int = 100
    eval_opponents: list[Any] = field(default_factory=lambda: ["always_defect", "always_cooperate", "tit_for_tat"])
    out: str = "runs/llm/train"
    torch_threads: int = 1
    quiet: bool = False


PRETRAIN_MARKER = "arena_pretrain.json"


def ensure_model(cfg: LLMTrainConfig, game: Any) -> Path:
    """``model.dir``, built (and warmed up on ``game``) here when it does not exist. The build goes to a
    side directory first, so an interrupted warm-up never leaves a half-made model behind."""
    import json
    import os
    import shutil

    m = cfg.model
    path = Path(m.dir)
    prompt_keys = {k: v for k, v in dict(cfg.agent).items() if k in ("templates", "instruction", "chat")}
    wanted = {"game": cfg.game, "games": m.pretrain_games, "steps": m.pretrain_steps, "seed": m.seed,
              "prompt": prompt_keys} if m.pretrain_steps > 0 else None
    if (path / "config.json").exists():
        marker = path / PRETRAIN_MARKER
        found = json.loads(marker.read_text())["warmup"] if marker.exists() else None
        if found != wanted:
            raise ArenaError(f"model.dir {path} exists with warm-up {found} but the config asks for {wanted}; "
                             "remove it or choose another model.dir")
        return path
    from arena.tools.tiny_model import build_tiny_model

    tmp = path.with_name(path.name + ".building")
    shutil.rmtree(tmp, ignore_errors=True)
    build_tiny_model(tmp, seed=m.seed)
    if wanted:
        from arena.loading import load_agent

        from .pretrain import pretrain

        agent = load_agent({"name": "llm", **dict(cfg.agent), "model": str(tmp)}, game)
        trainable, losses = pretrain(agent, game, games=m.pretrain_games, steps=m.pretrain_steps, seed=m.seed)
        trainable.save(tmp)
        (tmp / PRETRAIN_MARKER).write_text(json.dumps({"warmup": wanted, "loss_per_token": [losses[0], losses[-1]]},
                                                      indent=2))
    os.replace(tmp, path)
    return path


def build(cfg: LLMTrainConfig):
    from arena.loading import load_agent, load_game
    from arena.registry import get_registry

    game = load_game(cfg.game)
    path = ensure_model(cfg, game)
    spec = {"name": "llm", **dict(cfg.agent), "model": str(path)}
    learner = load_agent(spec, game)
    learner.name = "learner"
    trainer = get_registry().get("trainer", cfg.trainer).factory(game, [learner], **dict(cfg.params))
    return game, learner, trainer


def evaluate(game: Any, learner: Any, cfg: LLMTrainConfig, opponents: list) -> dict[str, float]:
    if game.spec.tree:
        from arena.exploitability import exploitability

        from .evaluate import vs_random

        out = vs_random(game, learner)
        out["exploitability"] = exploitability(game, learner)
        return out
    from arena.plugins.trainers import social_eval as ev

    return ev.flatten(ev.evaluate(game, [learner], opponents, cfg.eval_games, 10_000_019 + cfg.seed))


def train(cfg: LLMTrainConfig, log=None) -> dict[str, Any]:
    import torch

    from arena.loading import load_agent
    from arena.match import play_games
    from arena.plugins.trainers import social_eval as ev

    log = log or (lambda line: print(line, flush=True))
    torch.set_num_threads(max(1, cfg.torch_threads))
    game, learner, trainer = build(cfg)
    opponents = [] if game.spec.tree else [load_agent(s, game) for s in cfg.eval_opponents]
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(to_yaml(cfg))
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()

    def record(it: int, metrics: dict[str, float]) -> dict[str, float]:
        report = evaluate(game, learner, cfg, opponents)
        rows.append({"iteration": it, "seconds": round(time.perf_counter() - start, 2), **report,
                     **{f"train/{k}": v for k, v in metrics.items()}})
        ev.write_rows(out / "metrics.csv", rows)
        if not cfg.quiet:
            shown = ", ".join(f"{k} {v:.4f}" for k, v in report.items() if isinstance(v, float))
            log(f"[{rows[-1]['seconds']:7.1f}s] it {it:3d}  {shown}")
        return report

    metrics: dict[str, float] = {}
    first = record(0, metrics)
    report = first
    for it in range(1, cfg.iterations + 1):
        results = play_games(game, [learner] * game.spec.num_players, num_games=cfg.games_per_iter,
                             seed=cfg.seed * 1_000_003 + it, record=True)
        metrics = trainer.update([r.trajectory for r in results])
        if it % cfg.eval_every == 0 or it == cfg.iterations:
            report = record(it, metrics)
    trainer.save(out / "checkpoint")
    final = {"game": game.spec.full_name, "trainer": cfg.trainer, "params": dict(cfg.params), "seed": cfg.seed,
             "iterations": cfg.iterations, "seconds": round(time.perf_counter() - start, 1),
             "before": first, "after": report, "train": metrics}
    ev.save_json(out / "results.json", final)
    plot(out / "curves.png", rows, f"{cfg.trainer} on {game.spec.full_name} (seed {cfg.seed})")
    return final


def plot(path: Path, rows: list[dict[str, Any]], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k in rows[0] if k not in ("iteration", "seconds") and not k.startswith("train/")
            and isinstance(rows[0][k], float)]
    cols = min(5, len(keys))
    nrows = -(-len(keys) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols, 2.8 * nrows), squeeze=False)
    for ax in axes.flat[len(keys):]:
        ax.axis("off")
    its = [r["iteration"] for r in rows]
    for ax, k in zip(axes.flat, keys):
        ax.plot(its, [r.get(k, float("nan")) for r in rows], marker="o")
        ax.set_title(k, fontsize=9)
        ax.set_xlabel("iteration")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _args(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p, "YAML config (keys: game, model, agent, trainer, params, iterations, ...)",
                         "seed=1 params.baseline=shared")


def _run(args: argparse.Namespace) -> int:
    cfg = load_config(LLMTrainConfig, *config_and_overrides(args.config, args.overrides))
    final = train(cfg)
    print(f"wrote {cfg.out}/results.json, metrics.csv, curves.png and checkpoint/ ({final['seconds']}s)",
          file=sys.stderr)
    return 0


@hookimpl
def arena_commands() -> list[Command]:
    return [Command("llm-train", "train an LLM policy by self-play (selfplay_rlvr, sppo, llm_advantage_alignment)",
                    _args, _run)]
