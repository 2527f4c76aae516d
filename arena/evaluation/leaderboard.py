"""Leaderboards from a run store: a rich table, Markdown/CSV/JSON files and PNG plots.

Why from the store: the leaderboard is a pure function of the stored match records (plus the
rating settings), so ``arena leaderboard RUN_DIR`` reproduces exactly what the tournament
printed, and a league or match host that records into a store gets the same views for free.

Columns: Bradley–Terry rating with its bootstrap 95% interval (deals resampled within
pairings; the ranking key), online Elo, OpenSkill ordinal (μ − 3σ), games, wins/draws/losses
(by rank of returns within each game), score (win rate with draws counted half), mean return,
forfeits; for 2-player pools also the α-Rank mass and the Nash-averaged score of the empirical
payoff matrix.
"""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.evaluation.ratings.game_theory import alpha_rank, nash_averaging
from arena.evaluation.ratings.state import RatingState


@dataclass
class RatingConfig:
    """How a run's games are rated and its leaderboard ranked (``ratings:`` of a tournament or
    a league's evaluation)."""

    outcome: str = "margin"
    """How one game scores a pair: ``margin`` (return difference over the game's utility range;
    ranks by expected payoff) or ``win`` (win/draw/loss only)."""
    rank_by: str = "auto"
    """Leaderboard order: auto, bt, nash, elo, openskill, mean_return (see :func:`compute`)."""
    elo_k: float = 32.0
    bootstrap: int = 200
    openskill_model: str = "PlackettLuce"
    alpha: float = 100.0
    snapshot_every: int = 200


@dataclass
class Row:
    rank: int
    agent: str
    rating: float
    lo: float
    hi: float
    elo: float
    openskill: float
    games: int
    wins: int
    draws: int
    losses: int
    score: float
    mean_return: float
    forfeits: int
    alpha_rank: float | None = None
    nash: float | None = None


def agent_names(records: Sequence[Any], names: Sequence[str] = ()) -> list[str]:
    out = list(names)
    for r in records:
        for a in r.seats:
            if a not in out:
                out.append(a)
    return out


def compute(
    records: Iterable[Any],
    names: Sequence[str] = (),
    scale: float | None = None,
    elo_k: float = 32.0,
    bootstrap: int = 200,
    openskill_model: str = "PlackettLuce",
    alpha: float = 100.0,
    seed: int = 0,
    rank_by: str = "auto",
) -> dict[str, Any]:
    """Every rating and tally for the leaderboard, plus the payoff matrix (for the heatmap).
    ``scale`` selects margin scores for BT and Elo (:func:`arena.evaluation.ratings.outcomes.pair_score`).
    ``records`` may be any iterable in plan order (a store's :meth:`~arena.evaluation.store.RunStore.iter_matches`
    streams them): one pass into a :class:`arena.evaluation.ratings.state.RatingState`, then :func:`board`.

    ``rank_by``: ``bt``, ``nash`` (Nash-averaged score, ties by BT), ``elo``, ``openskill``,
    ``mean_return``, or ``auto`` = ``nash`` when every pair of a 2-player pool has met (a
    complete payoff matrix), else ``bt``. Why: a transitive rating puts an exploiter of weak
    agents above an unexploitable one it loses to (Kuhn: always-bet crushes random but loses
    to the Nash policy); the Nash average never does."""
    if rank_by not in RANK_KEYS:
        raise ArenaError(f"ratings.rank_by must be one of {', '.join(RANK_KEYS)}, got '{rank_by}'")
    state = RatingState(names, scale=scale, elo_k=elo_k, openskill_model=openskill_model).add_all(records)
    return board(state, bootstrap=bootstrap, alpha=alpha, seed=seed, rank_by=rank_by)


def board(
    state: RatingState, bootstrap: int = 200, alpha: float = 100.0, seed: int = 0, rank_by: str = "auto"
) -> dict[str, Any]:
    """The leaderboard of an incremental :class:`arena.evaluation.ratings.state.RatingState` (see :func:`compute`):
    its cost depends on the agents, not on the games played."""
    if rank_by not in RANK_KEYS:
        raise ArenaError(f"ratings.rank_by must be one of {', '.join(RANK_KEYS)}, got '{rank_by}'")
    names = list(state.names)
    bt = state.bradley_terry(names, bootstrap=bootstrap, seed=seed)
    elo = state.elo
    osk = state.openskill_ratings()
    tally = state.tally
    two_player = state.records > 0 and state.two_player
    M, C = state.payoff() if two_player else (None, None)
    pi = nash = None
    if M is not None and len(names) > 1:
        pi = alpha_rank(M, alpha=alpha)
        nash = nash_averaging(M)[1]
    rows = []
    for i, a in enumerate(names):
        t = tally[a]
        g = max(1, t["games"])
        mu, sigma = osk.get(a, (25.0, 25.0 / 3))
        rows.append(
            Row(
                0,
                a,
                float(bt.rating[i]),
                float(bt.lo[i]),
                float(bt.hi[i]),
                float(elo[a]),
                mu - 3 * sigma,
                int(t["games"]),
                int(t["wins"]),
                int(t["draws"]),
                int(t["losses"]),
                t["points"] / g,
                t["ret"] / g,
                int(t["forfeits"]),
                None if pi is None else float(pi[i]),
                None if nash is None else float(nash[i]),
            )
        )
    complete = C is not None and bool(np.all((C + np.eye(len(names))) > 0))
    key = ("nash" if complete else "bt") if rank_by == "auto" else rank_by
    if key == "nash" and nash is None:
        key = "bt"
    rows.sort(key=lambda r: (-_key(r, key), -r.rating, r.agent))
    for k, row in enumerate(rows):
        row.rank = k + 1
    return {"rows": rows, "names": names, "payoff": M, "payoff_games": C, "games": state.records, "ranked_by": key}


RANK_KEYS = ("auto", "bt", "nash", "elo", "openskill", "mean_return")


def _key(r: Row, key: str) -> float:
    v = {"bt": r.rating, "nash": r.nash, "elo": r.elo, "openskill": r.openskill, "mean_return": r.mean_return}[key]
    return round(float(v), 6) if v is not None else float("-inf")


# -- outputs -----------------------------------------------------------------------------------------
_HEAD = [
    "rank",
    "agent",
    "rating",
    "95% CI",
    "elo",
    "openskill",
    "games",
    "W",
    "D",
    "L",
    "score",
    "mean return",
    "forfeits",
    "α-rank",
    "nash",
]


_TERM_HEAD = ["rank", "agent", "rating", "95% CI", "games", "W", "D", "L", "score", "mean return"]
"""The terminal shows the essentials; the files carry every column."""


def _cells(r: Row) -> list[str]:
    opt = lambda v, f: "" if v is None else format(v, f)
    return [
        str(r.rank),
        r.agent,
        f"{r.rating:.1f}",
        f"[{r.lo:.1f}, {r.hi:.1f}]",
        f"{r.elo:.1f}",
        f"{r.openskill:.2f}",
        str(r.games),
        str(r.wins),
        str(r.draws),
        str(r.losses),
        f"{r.score:.3f}",
        f"{r.mean_return:+.4f}",
        str(r.forfeits),
        opt(r.alpha_rank, ".3f"),
        opt(r.nash, "+.4f"),
    ]


def to_markdown(board: dict[str, Any], title: str = "Leaderboard") -> str:
    lines = [
        f"# {title}",
        "",
        f"{board['games']} games, ranked by {board['ranked_by']}. Rating: Bradley–Terry "
        "(Elo scale, pool mean 1000) with bootstrap 95% interval; W/D/L and score count wins by returns.",
        "",
        "| " + " | ".join(_HEAD) + " |",
        "|" + "---|" * len(_HEAD),
    ]
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in board["rows"]]
    return "\n".join(lines) + "\n"


def to_json(board: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    out = {
        "games": board["games"],
        "ranked_by": board["ranked_by"],
        "rows": [asdict(r) for r in board["rows"]],
        "agents": board["names"],
    }
    if board["payoff"] is not None:
        out["payoff"] = np.round(board["payoff"], 6).tolist()
        out["payoff_games"] = board["payoff_games"].astype(int).tolist()
    out.update(extra or {})
    return out


def write_files(
    board: dict[str, Any], run_dir: str | Path, title: str = "Leaderboard", extra: dict[str, Any] | None = None
) -> list[Path]:
    """``leaderboard.md``, ``.csv`` and ``.json`` in ``run_dir``."""
    run_dir = Path(run_dir)
    md = run_dir / "leaderboard.md"
    md.write_text(to_markdown(board, title))
    cv = run_dir / "leaderboard.csv"
    with cv.open("w", newline="") as fh:
        fields = list(asdict(board["rows"][0]).keys()) if board["rows"] else ["rank", "agent"]
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        for r in board["rows"]:
            w.writerow(asdict(r))
    js = run_dir / "leaderboard.json"
    js.write_text(json.dumps(to_json(board, extra), indent=2))
    return [md, cv, js]


def rich_table(board: dict[str, Any], title: str = "Leaderboard") -> Any:
    from rich.table import Table

    table = Table(title=f"{title} ({board['games']} games, ranked by {board['ranked_by']})")
    head = _TERM_HEAD + (["nash"] if board["ranked_by"] == "nash" else [])
    keep = [_HEAD.index(h) for h in head]
    for h in head:
        table.add_column(h, justify="left" if h == "agent" else "right")
    for r in board["rows"]:
        cells = _cells(r)
        table.add_row(*(cells[i] for i in keep))
    return table


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_payoff(board: dict[str, Any], path: str | Path) -> Path | None:
    """Heatmap of mean return of row agent against column agent (2-player pools)."""
    M = board["payoff"]
    if M is None:
        return None
    plt = _pyplot()
    names = board["names"]
    order = [names.index(r.agent) for r in board["rows"]]
    M = M[np.ix_(order, order)]
    played = board["payoff_games"][np.ix_(order, order)] > 0
    labels = [names[i] for i in order]
    lim = float(np.abs(M).max()) or 1.0
    fig, ax = plt.subplots(figsize=(1.2 + 0.6 * len(names), 1.0 + 0.5 * len(names)))
    im = ax.imshow(np.ma.masked_where(~played, M), cmap="RdBu", vmin=-lim, vmax=lim)
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    ax.set_yticks(range(len(labels)), labels)
    if len(names) <= 12:
        for i in range(len(labels)):
            for j in range(len(labels)):
                if played[i, j]:
                    ax.text(j, i, f"{M[i, j]:+.2f}", ha="center", va="center", fontsize=7)
    ax.set_title("mean return, row vs column\n(blank: not played)", fontsize=9)
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


def plot_ratings(
    snapshots: dict[int, dict[str, tuple]], path: str | Path, label: str = "Bradley–Terry rating"
) -> Path | None:
    """Rating of every agent against games played (from the store's snapshots)."""
    if not snapshots:
        return None
    plt = _pyplot()
    steps = sorted(snapshots)
    agents = sorted({a for s in snapshots.values() for a in s})
    fig, ax = plt.subplots(figsize=(7, 4))
    for a in agents:
        xs = [s for s in steps if a in snapshots[s]]
        ax.plot(xs, [snapshots[s][a][0] for s in xs], marker="o", markersize=3, label=a)
    ax.set_xlabel("games")
    ax.set_ylabel(label)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)
