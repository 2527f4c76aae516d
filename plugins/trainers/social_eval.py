"""Evaluation of learners in social dilemmas: self-play, fixed opponents, cooperation, probes.

Everything is played through :func:`arena.match.play_games` on fixed seeds with seats rotated.
Reported per agent: mean return per game and per round, and every per-seat statistic the game
reports in ``outcome_info`` (``cooperation`` in the IPD / public goods / Trust-and-Split,
``own_coin_rate`` in the Coin Game) plus scalar ones (``joint_return``). For iterated matrix
games the memory-1 *policy probe* P(cooperate | start, CC, CD, DC, DD) shows whether a policy
is tit-for-tat-like.
"""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from arena.agent import Agent, Observation
from arena.game import Game
from arena.match import play_games


def seat_stats(game: Game, results: Sequence[Any], name: str) -> dict[str, float]:
    """Mean return, return per round and per-seat outcome statistics of agent ``name``."""
    rets, per_round, stats, scalars = [], [], {}, {}
    n = game.spec.num_players
    for r in results:
        rounds = r.info.get("rounds") or max(1, r.length // n)
        for seat, who in enumerate(r.seats):
            if who != name:
                continue
            rets.append(r.returns[seat])
            per_round.append(r.returns[seat] / rounds)
            for k, v in r.info.items():
                if isinstance(v, (list, tuple)) and len(v) == n:
                    stats.setdefault(k, []).append(v[seat])
        for k, v in r.info.items():
            if isinstance(v, (int, float)) and k != "rounds":
                scalars.setdefault(k, []).append(v)
    out = {"return": float(np.mean(rets)), "return_per_round": float(np.mean(per_round))}
    for k, vals in {**stats, **scalars}.items():
        vals = [v for v in vals if not (isinstance(v, float) and math.isnan(v))]
        if vals:
            out[k] = float(np.mean(vals))
    return out


def match_stats(game: Game, agents: Sequence[Agent], games: int, seed: int) -> dict[str, dict[str, float]]:
    results = play_games(game, list(agents), num_games=games, seed=seed, rotate_seats=True)
    return {a.name: seat_stats(game, results, a.name) for a in dict.fromkeys(agents)}


def ipd_probe(game: Game, agent: Agent) -> dict[str, float] | None:
    """P(first action | previous joint move) for the five memory-1 states of a matrix game."""
    from arena.game import CHANCE
    from arena.games.social.base import CONTINUE
    from arena.games.social.matrix import STATE_NAMES, IteratedMatrixGame

    if not isinstance(game, IteratedMatrixGame) or not agent.has_policy:
        return None
    out = {}
    for k, label in enumerate(STATE_NAMES):
        state = game.new_initial_state()
        if k:
            joint = divmod(k - 1, 2)
            for _ in range(game.memory):
                state.apply_actions(list(joint))
                if state.current_player() == CHANCE:  # discount < 1: the game goes on
                    state.apply_action(CONTINUE)
        out[f"P(C|{label})"] = float(agent.policy(Observation(state, 0, np.random.default_rng(0), game.spec.full_name))[0])
    return out


def evaluate(game: Game, learners: Sequence[Agent], opponents: Sequence[Agent], games: int,
             seed: int) -> dict[str, Any]:
    """Self-play among the learners (seats filled in turn) and the first learner against each
    opponent (one learner seat, the opponent in every other seat)."""
    n = game.spec.num_players
    me = learners[0]
    seats = [learners[i % len(learners)] for i in range(n)]
    sp = match_stats(game, seats, games, seed)
    selfplay = {k: float(np.mean([sp[a.name][k] for a in dict.fromkeys(seats) if k in sp[a.name]]))
                for k in sp[me.name]}
    report: dict[str, Any] = {"selfplay": selfplay}
    for opp in opponents:
        st = match_stats(game, [me] + [opp] * (n - 1), games, seed)
        report[f"vs_{opp.name}"] = {**st[me.name], "opponent_return": st[opp.name]["return"]}
    probe = ipd_probe(game, me)
    if probe:
        report["probe"] = probe
    return report


def flatten(report: dict[str, Any]) -> dict[str, float]:
    """``{"selfplay": {"return": 1}}`` → ``{"selfplay/return": 1}`` (CSV columns, curves)."""
    return {f"{group}/{k}": v for group, vals in report.items() for k, v in vals.items()}


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def plot_curves(path: Path, rows: list[dict[str, Any]], title: str) -> None:
    """Learning curves (PNG): returns per round, cooperation-type rates, and the probe."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    it = [r["iteration"] for r in rows]
    panels = [
        ("return per round", [k for k in rows[-1] if k.endswith("/return_per_round")]),
        ("rates", [k for k in rows[-1] if k.split("/")[-1] in ("cooperation", "own_coin_rate")]),
        ("IPD policy probe", [k for k in rows[-1] if k.startswith("probe/")]),
    ]
    panels = [p for p in panels if p[1]]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    for ax, (label, keys) in zip(axes[0], panels):
        for k in keys:
            ax.plot(it, [r.get(k, np.nan) for r in rows], label=k.replace("/return_per_round", "").replace("probe/", ""))
        ax.set_title(label)
        ax.set_xlabel("iteration")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def save_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, default=float))


def compare_runs(runs: Sequence[str | Path], out: str | Path,
                 metrics: Sequence[str] = ("selfplay/return_per_round", "selfplay/cooperation",
                                           "selfplay/own_coin_rate", "vs_always_defect/return_per_round",
                                           "vs_greedy_splitter/return_per_round",
                                           "vs_take_every_coin/return_per_round")) -> None:
    """One PNG overlaying several runs' ``metrics.csv`` curves (e.g. AA against naive PPO)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = {}
    for run in runs:
        path = Path(run) / "metrics.csv"
        if not path.exists():
            from arena.errors import ArenaError

            raise ArenaError(f"no metrics.csv in run directory {run}")
        with open(path) as f:
            tables[Path(run).name] = list(csv.DictReader(f))
    shown = [m for m in metrics if any(m in rows[0] for rows in tables.values())]
    fig, axes = plt.subplots(1, len(shown), figsize=(4.8 * len(shown), 3.8), squeeze=False)
    for ax, m in zip(axes[0], shown):
        for name, rows in tables.items():
            if m in rows[0]:
                ax.plot([int(r["iteration"]) for r in rows], [float(r[m]) for r in rows], label=name)
        ax.set_title(m, fontsize=9)
        ax.set_xlabel("iteration")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


if __name__ == "__main__":  # python -m arena.plugins.trainers.social_eval OUT.png RUN_DIR...
    import sys

    compare_runs(sys.argv[2:], sys.argv[1])
