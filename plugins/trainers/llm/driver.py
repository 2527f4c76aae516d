"""``arena llm-train CONFIG [key=value ...]``: train one LLM policy by self-play (or
against fixed ``opponents``) — a thin front-end of the league runner (:mod:`arena.league.runner`):
the same run directory, store, snapshots (Hugging Face model directories), resume after a kill,
executors, TensorBoard and progress.

Every ``eval_every`` iterations the learner is measured: games with a tree view get the exact
numbers (return and win rate against uniform random, exploitability of the scored policy);
other games (social dilemmas) get self-play and ``eval_opponents`` games with the game's
per-seat statistics and probes (:mod:`arena.league.metrics`).

``model.dir`` is built with :func:`arena.tools.tiny_model.build_tiny_model` when it does not
exist (tiny models are built locally, never downloaded).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import MISSING

from arena.cli_api import Command, add_config_arguments, config_and_overrides
from arena.config import load_config
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
    pretrain_agent: str = "random"
    """Who plays the warm-up games (any agent spec; ``table_talker`` for talk games, whose
    corpus then holds its phrases: the model learns to talk as well as to read)."""
    pretrain_loss: str = "all"
    """``all``: next-token loss on the whole text; ``response``: on the answers only (:func:`.pretrain.pretrain`)."""
    pretrain_batch: int = 32
    """Texts per warm-up step (long prompts, e.g. Werewolf's 1,000+ characters, make 32 slow on a CPU)."""


@dataclass
class LLMTrainConfig:
    game: str = MISSING
    model: ModelConfig = field(default_factory=ModelConfig)
    agent: dict[str, Any] = field(default_factory=dict)
    """Parameters of the ``llm`` agent (``model`` is filled in)."""
    trainer: str = "selfplay_rlvr"
    params: dict[str, Any] = field(default_factory=dict)
    opponents: list[Any] = field(default_factory=list)
    """Fixed agents the learner plays against (one in every other seat, drawn uniformly per game),
    as ``arena train``'s; empty: self-play."""
    iterations: int = 20
    games_per_iter: int = 128
    seed: int = 0
    eval_every: int = 5
    eval_games: int = 100
    eval_opponents: list[Any] = field(default_factory=lambda: ["always_defect", "always_cooperate", "tit_for_tat"])
    out: str = "runs/llm/train"
    torch_threads: int = 1
    quiet: bool = False
    executor: dict[str, Any] = field(default_factory=dict)
    """Where rollouts run (``kind: inprocess | process | ray``, ``workers``, ``chunk``, ``address``)."""
    max_staleness: int = 0
    """Asynchronous training: rollouts may run this many learner versions ahead (0: synchronous)."""


PRETRAIN_MARKER = "arena_pretrain.json"


@contextmanager
def _building(path: Path) -> Iterator[None]:
    """Hold ``<model.dir>.lock`` exclusively, waiting for it: the seeds of a sweep share one warm-up
    model, and two that found it missing would build it in the same side directory at once (seen:
    the second's ``os.replace`` failed on the first's finished model). The waiter then finds the
    model built. The file stays (unlinking a lock another process waits on would split it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as handle:
        try:
            import fcntl
        except ImportError:  # no advisory locks on this platform: build unguarded, as before
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield  # closing the file drops the lock


def ensure_model(cfg: LLMTrainConfig, game: Any) -> Path:
    """``model.dir``, built (and warmed up on ``game``) here when it does not exist. The build goes to a
    side directory first, so an interrupted warm-up never leaves a half-made model behind; one
    process builds it while the others that need it wait (:func:`_building`)."""
    path = Path(cfg.model.dir)
    with _building(path):
        return _ensure_model(cfg, game, path)


def _ensure_model(cfg: LLMTrainConfig, game: Any, path: Path) -> Path:
    import json
    import os
    import shutil

    m = cfg.model
    prompt_keys = {k: v for k, v in dict(cfg.agent).items() if k in ("templates", "instruction", "chat")}
    wanted = (
        {"game": cfg.game, "games": m.pretrain_games, "steps": m.pretrain_steps, "seed": m.seed, "prompt": prompt_keys}
        if m.pretrain_steps > 0
        else None
    )
    if wanted is not None and m.pretrain_agent != "random":
        wanted["agent"] = m.pretrain_agent
    if wanted is not None and m.pretrain_loss != "all":
        wanted["loss"] = m.pretrain_loss
    if wanted is not None and m.pretrain_batch != 32:
        wanted["batch"] = m.pretrain_batch
    if (path / "config.json").exists():
        marker = path / PRETRAIN_MARKER
        found = json.loads(marker.read_text())["warmup"] if marker.exists() else None
        if found != wanted:
            raise ArenaError(
                f"model.dir {path} exists with warm-up {found} but the config asks for {wanted}; "
                "remove it or choose another model.dir"
            )
        return path
    from arena.tools.tiny_model import build_tiny_model

    tmp = path.with_name(path.name + ".building")
    shutil.rmtree(tmp, ignore_errors=True)
    build_tiny_model(tmp, seed=m.seed)
    if wanted:
        import torch

        from arena.loading import load_agent

        from .pretrain import pretrain

        if cfg.torch_threads > 0:  # measured: two threads under CPU contention sum in another order
            torch.set_num_threads(cfg.torch_threads)  # run to run, so a rebuilt warm-up differed; one does not
        agent = load_agent({"name": "llm", **dict(cfg.agent), "model": str(tmp)}, game)
        trainable, losses = pretrain(
            agent,
            game,
            games=m.pretrain_games,
            steps=m.pretrain_steps,
            seed=m.seed,
            players=m.pretrain_agent,
            loss=m.pretrain_loss,
            batch=m.pretrain_batch,
        )
        trainable.save(tmp)
        (tmp / PRETRAIN_MARKER).write_text(
            json.dumps({"warmup": wanted, "loss_per_token": [losses[0], losses[-1]]}, indent=2)
        )
    os.replace(tmp, path)
    return path


def league_config(cfg: LLMTrainConfig, game: Any, model_dir: Path) -> Any:
    """The league ``arena llm-train`` runs: one LLM learner in every seat (self-play), or facing
    the fixed ``opponents``; learner metrics are exact for tree games (return and win rate
    against random, exploitability) and played otherwise (self-play and ``eval_opponents``: cooperation, returns, the game's probes)."""
    from arena.league import LeagueConfig
    from arena.plugins.trainers.train_command import facing, opponent_members

    learner = {
        "label": "learner",
        "agent": {"name": "llm", **dict(cfg.agent), "model": str(model_dir)},
        "role": "learner",
        "trainer": {"name": cfg.trainer, "params": dict(cfg.params)},
        **facing(cfg.opponents),
        "games_per_step": cfg.games_per_iter,
        "snapshot_every": cfg.eval_every,
    }
    played = not game.spec.tree
    return load_config(
        LeagueConfig,
        None,
        base={
            "game": cfg.game,
            "seed": cfg.seed,
            "out": cfg.out,
            "steps": cfg.iterations,
            "population": [learner, *opponent_members(cfg.opponents)],
            "evaluation": {
                "every": cfg.eval_every,
                "games": 0,
                "metrics": {
                    "games": cfg.eval_games if played else 0,
                    "opponents": list(cfg.eval_opponents) if played else [],
                },
            },
            "executor": dict(cfg.executor),
            "progress": not cfg.quiet,
            "torch_threads": cfg.torch_threads,
            "max_staleness": cfg.max_staleness,
        },
    )


def train(cfg: LLMTrainConfig, log: Any = None) -> dict[str, Any]:
    """Build (and warm up) the model when missing, then run the league; return ``results.json``."""
    from arena.loading import load_game
    from arena.plugins.trainers.train_command import run_front_end

    game = load_game(cfg.game)
    return run_front_end(league_config(cfg, game, ensure_model(cfg, game)), cfg, "llm-train", log)


def _args(p: argparse.ArgumentParser) -> None:
    add_config_arguments(
        p, "YAML config (keys: game, model, agent, trainer, params, iterations, ...)", "seed=1 params.baseline=shared"
    )


def _run(args: argparse.Namespace) -> int:
    cfg = load_config(LLMTrainConfig, *config_and_overrides(args.config, args.overrides))
    from arena.plugins.trainers.train_command import report_written

    report_written(cfg.out, train(cfg), "rerun the same command to resume")
    return 0


@hookimpl
def arena_commands() -> list[Command]:
    return [
        Command(
            "llm-train",
            "train an LLM policy by self-play (selfplay_rlvr, sppo, llm_advantage_alignment)",
            _args,
            _run,
            config=LLMTrainConfig,
        )
    ]
