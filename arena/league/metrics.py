"""Learner metrics: how each training unit plays, measured the same way at every evaluation.

Per unit (a team, or a learner alone): self-play (the unit's members fill the seats in turn)
and its first member against each configured opponent (one seat against the opponent in every
other seat), ``games`` games each on the same deals at every evaluation, seats rotated. From the
games: mean return, return per round and every per-seat statistic the game reports in its
outcome ``info`` (cooperation, own-coin rate, ...). Without games: the game's own probes
(:meth:`arena.game.Game.agent_metrics`) and, for tree games, the exact return and win rate
against uniform random and the exploitability. Games are played through the run's executor
into ``RUN/metrics/`` like any other games, so they are stored once and observers see them.
"""

from __future__ import annotations

import csv
import io
import math
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from arena.atomic import write_text_atomic
from arena.errors import ArenaError, ConfigError
from arena.evaluation.leaderboard import _pyplot
from arena.evaluation.schedule import rotated_games
from arena.exact.exploitability import exploitability
from arena.exact.head_to_head import vs_random
from arena.league.config import MetricsConfig, _plain
from arena.loading import load_agent


def seat_stats(results: Sequence[Any], name: str, num_players: int) -> dict[str, float]:
    """Mean return, return per round and per-seat outcome statistics of the agent labelled ``name``."""
    rets, per_round = [], []
    stats: dict[str, list[float]] = {}
    for r in results:
        rounds = r.info.get("rounds") or max(1, r.length // num_players)
        for seat, who in enumerate(r.seats):
            if who != name:
                continue
            rets.append(r.returns[seat])
            per_round.append(r.returns[seat] / rounds)
            for k, v in r.info.items():
                if isinstance(v, (list, tuple)) and len(v) == num_players and isinstance(v[seat], (int, float)):
                    stats.setdefault(k, []).append(float(v[seat]))
        for k, v in r.info.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k != "rounds":
                stats.setdefault(k, []).append(float(v))
    if not rets:
        return {}
    out = {"return": float(np.mean(rets)), "return_per_round": float(np.mean(per_round))}
    for k, vals in stats.items():
        vals = [v for v in vals if not math.isnan(v)]
        if vals:
            out[k] = float(np.mean(vals))
    return out


class LearnerMetrics:
    """Plans, plays and summarises the metrics games of one league run. ``seed`` is the metrics
    games' own stream (the league's ``derive_seed(seed, "metrics")``: never the training deals)."""

    def __init__(self, cfg: MetricsConfig, game: Any, fp: str, seed: int, units: Mapping[str, Sequence[str]]) -> None:
        self.cfg, self.game, self.fp, self.seed = cfg, game, fp, seed
        self.units = {u: list(m) for u, m in units.items()}
        self.opponents: dict[str, Any] = {}
        taken = {x for m in self.units.values() for x in m}
        for spec in cfg.opponents:
            spec = _plain(spec)
            label = load_agent(spec, game).name
            if label in taken or label in self.opponents:
                raise ConfigError(f"evaluation.metrics.opponents: '{label}' appears twice or is a learner's label")
            self.opponents[label] = spec

    @property
    def prefix_units(self) -> bool:
        return len(self.units) > 1

    def plan(self, step: int) -> list[tuple[str, str, list[Any]]]:
        """(unit, group, planned games) for every unit: ``selfplay`` and ``vs_<opponent>``."""
        if self.cfg.games <= 0:
            return []
        n = self.game.spec.num_players
        out = []
        seq = 0
        for unit, members in self.units.items():
            groups = [("selfplay", [members[i % len(members)] for i in range(n)])]
            groups += [(f"vs_{o}", [members[0]] + [o] * (n - 1)) for o in self.opponents]
            for name, base in groups:
                games = rotated_games(
                    self.fp, f"metrics|{step}|{unit}|{name}", self.seed, base, self.cfg.games, step, seq
                )
                seq += len(games)
                out.append((unit, name, games))
        return out

    def summarise(
        self, plans: Sequence[tuple[str, str, list[Any]]], played: Sequence[tuple[Any, Any]], agents: Mapping[str, Any]
    ) -> dict[str, float]:
        """One flat row: ``[unit/]selfplay/cooperation``, ``[unit/]vs_always_defect/return``, probes, exact values."""
        n = self.game.spec.num_players
        by_id = {g.id: r for g, r in played}
        row: dict[str, float] = {}
        for unit, name, games in plans:
            got = [by_id[g.id] for g in games if g.id in by_id]
            members = self.units[unit]
            pre = f"{unit}/" if self.prefix_units else ""
            if name == "selfplay":
                per = [seat_stats(got, m, n) for m in dict.fromkeys(members)]
                keys = dict.fromkeys(k for p in per for k in p)
                stats = {k: float(np.mean([p[k] for p in per if k in p])) for k in keys}
            else:
                stats = seat_stats(got, members[0], n)
                opp = seat_stats(got, name[3:], n)
                if opp:
                    stats["opponent_return"] = opp["return"]
            row.update({f"{pre}{name}/{k}": v for k, v in stats.items()})
        for unit, members in self.units.items():
            pre = f"{unit}/" if self.prefix_units else ""
            agent = agents[members[0]]
            row.update({f"{pre}{k}": float(v) for k, v in self.game.agent_metrics(agent).items()})
            if self.cfg.exact and self.game.spec.tree and agent.has_policy:
                row.update({f"{pre}{k}": v for k, v in vs_random(self.game, agent).items()})
                row[f"{pre}exploitability"] = float(exploitability(self.game, agent))
        return row


def write_csv(path: Any, rows: Sequence[Mapping[str, Any]]) -> None:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=keys)
    w.writeheader()
    w.writerows(rows)
    write_text_atomic(path, buf.getvalue())


def plot_curves(path: Any, rows: Sequence[Mapping[str, Any]], title: str) -> None:
    """One panel per metric (up to five columns), against the league step."""
    keys = [
        k
        for k in rows[0]
        if k not in ("step", "seconds") and not k.startswith("train/") and isinstance(rows[0][k], float)
    ]
    if not keys:
        return
    plt = _pyplot()
    cols = min(5, len(keys))
    nrows = -(-len(keys) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols, 2.8 * nrows), squeeze=False)
    for ax in axes.flat[len(keys) :]:
        ax.axis("off")
    steps = [r["step"] for r in rows]
    for ax, k in zip(axes.flat, keys):
        ax.plot(steps, [r.get(k, float("nan")) for r in rows], marker="o", markersize=3)
        ax.set_title(k, fontsize=8)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def training_scalars(metrics: Mapping[str, float]) -> dict[str, float]:
    """What ``training.png`` draws of one step's scalars: solvers' exploitability and learners'
    mean return (the league keeps these per step in its state, so the plot needs no TensorBoard)."""
    return {
        k: v
        for k, v in metrics.items()
        if (k.startswith("solver/") and k.endswith("exploitability"))
        or (k.startswith("train/") and k.endswith("/return"))
    }


def plot_training(path: Any, rows: Sequence[Mapping[str, float]]) -> None:
    """One curve per scalar of :func:`training_scalars`, against the league step."""
    keys = list(dict.fromkeys(k for r in rows for k in r if k != "step"))
    if not keys:
        return
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for k in keys:
        pts = [(r["step"], r[k]) for r in rows if k in r]
        ax.plot([s for s, _ in pts], [v for _, v in pts], marker="o", markersize=3, label=k)
    ax.set_xlabel("league step")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def compare_runs(
    runs: Sequence[Any],
    out: Any,
    metrics: Sequence[str] = (
        "selfplay/return_per_round",
        "selfplay/cooperation",
        "selfplay/own_coin_rate",
        "vs_always_defect/return_per_round",
        "vs_greedy_splitter/return_per_round",
        "vs_take_every_coin/return_per_round",
    ),
) -> None:
    """One PNG overlaying several runs' ``metrics.csv`` curves (e.g. AA against naive PPO)."""
    tables = {}
    for run in runs:
        path = Path(run) / "metrics.csv"
        if not path.exists():
            raise ArenaError(f"no metrics.csv in run directory {run}")
        with open(path) as f:
            tables[Path(run).name] = list(csv.DictReader(f))
    shown = [m for m in metrics if any(m in rows[0] for rows in tables.values())]
    if not shown:
        raise ArenaError(f"none of the metrics {', '.join(metrics)} is in these runs")
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(shown), figsize=(4.8 * len(shown), 3.8), squeeze=False)
    for ax, m in zip(axes[0], shown):
        for name, rows in tables.items():
            if m in rows[0]:
                ax.plot([int(r["step"]) for r in rows], [float(r[m]) for r in rows], label=name)
        ax.set_title(m, fontsize=9)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


if __name__ == "__main__":  # python -m arena.league.metrics OUT.png RUN_DIR...
    compare_runs(sys.argv[2:], sys.argv[1])
