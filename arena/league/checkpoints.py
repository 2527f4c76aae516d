"""Crash safety and the run's files. After a step the learners (through
:func:`arena.loading.save_checkpoint`), their trainers' ``state_dict`` and the league state are
written to ``checkpoints/step-N/`` and only then is step N committed (the store's
``league_step``). A rerun loads the last committed step and replays from there; the replay is
deterministic, so re-recorded games are the same games and the stores keep each once. When the
run ends: ``metrics.csv``, ``results.json``, the leaderboard files and the plots, all drawn from
what the stores and the state hold."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

from arena.atomic import atomic_dir, write_json_atomic
from arena.evaluation.leaderboard import board as leaderboard
from arena.evaluation.leaderboard import plot_payoff, plot_ratings, to_markdown, write_files
from arena.evaluation.ratings.state import RatingState
from arena.experiments.provenance import provenance
from arena.league.metrics import plot_curves, plot_training, write_csv
from arena.league.population import Population
from arena.league.workspace import LeagueState, Workspace
from arena.loading import save_checkpoint
from arena.trainer import save_trainer_state


def resume(work: Workspace) -> tuple[LeagueState, Path | None]:
    """The state of the last committed step and its checkpoint directory (a fresh state and None
    when nothing was committed)."""
    committed = int(work.store.meta().get("league_step", "0"))
    if not committed:
        return LeagueState(), None
    ckpt = work.run_dir / "checkpoints" / f"step-{committed:06d}"
    return LeagueState(**json.loads((ckpt / "state.json").read_text())), ckpt


def commit(work: Workspace, population: Population, state: LeagueState, step: int) -> None:
    """Learners, trainer states and the league state, then the commit mark."""
    state.payoff = population.payoff.table
    state.payoff_returns = population.payoff.returns
    state.versions = dict(population.versions)
    base = work.run_dir / "checkpoints"
    final = base / f"step-{step:06d}"

    def write(d: Path) -> None:
        for label, mem in population.members.items():
            if mem.cfg.role == "learner":
                save_checkpoint(mem.agent, d / "learners" / label, mem.spec)
        for u, unit in population.units.items():
            save_trainer_state(unit.trainer, d / "trainers" / f"{u}.pt")
        (d / "state.json").write_text(json.dumps(asdict(state), default=float))

    atomic_dir(final, write)
    work.store.set_meta("league_step", str(step))
    kept = sorted(p for p in base.glob("step-*") if p.is_dir())
    for old in kept[: -max(1, work.cfg.keep_checkpoints)]:
        shutil.rmtree(old, ignore_errors=True)
    work.hook.arena_checkpoint_written(path=str(final), agent="league", context=work.context().with_(step=step))


def title(work: Workspace) -> str:
    return f"{work.game.spec.full_name} — {work.kind}"


def write_results(work: Workspace, state: LeagueState) -> dict[str, Any] | None:
    """``metrics.csv``, ``results.json`` (None when no learner was measured) and the curves."""
    rows = state.metrics
    if work.cfg.plots:
        plot_training(work.run_dir / "training.png", state.training)
    if not rows:
        return None
    write_csv(work.run_dir / "metrics.csv", rows)
    results = {
        "game": work.game.spec.full_name,
        "seed": work.cfg.seed,
        "steps": state.step,
        "seconds": round(work.seconds(), 1),
        "first": rows[0],
        "final": rows[-1],
        "environment": provenance(),
    }
    write_json_atomic(work.run_dir / "results.json", results, indent=2, default=float)
    if work.cfg.plots:
        plot_curves(work.run_dir / "curves.png", rows, title(work))
    return results


def write_board(work: Workspace, state: LeagueState, ratings: RatingState) -> dict[str, Any] | None:
    """The leaderboard of every evaluation game so far, its files and plots (None without games)."""
    if not ratings.records:
        return None
    rc = work.cfg.evaluation.ratings
    board = leaderboard(
        ratings, bootstrap=rc.bootstrap, alpha=rc.alpha, seed=work.seed("bootstrap"), rank_by=rc.rank_by
    )
    write_files(board, work.run_dir, title(work), {"steps": state.step, "seed": work.cfg.seed})
    if work.cfg.plots:
        plot_payoff(board, work.run_dir / "payoff.png")
        plot_ratings(work.store.snapshots("bt"), work.run_dir / "ratings.png")
    return board


def summary(work: Workspace, state: LeagueState, board: dict[str, Any] | None) -> dict[str, Any]:
    """What observers hear when the run finishes."""
    return {
        "leaderboard_markdown": to_markdown(board, title(work)) if board else None,
        "step": state.step,
        "final_metrics": state.metrics[-1] if state.metrics else None,
        "status": "finished",
    }
