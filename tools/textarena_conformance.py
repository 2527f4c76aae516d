"""Every TextArena base id through arena: does it load, does it pass ``arena.testing.check_game``,
does the same seed give the same episode?

    python -m arena.tools.textarena_conformance --out docs/results/textarena.json [--ids TicTacToe-v0 ...]

Per id: ``loads`` (``load_game("textarena:<id>")`` and a first state), ``check_game`` (the
conformance kit with ``--games`` random games), ``deterministic`` (the same seed twice — once
with all games in one batch, once one game per batch, so other games' draws in between — gives
identical transcripts and identical observation texts at every decision), and ``why`` when one
fails. Ids :data:`arena.adapters.textarena.UNAVAILABLE` names are reported with their reason,
not run. Each id runs under a time limit (``--timeout`` seconds, SIGALRM).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

from arena.adapters.textarena import base_ids, family, why_unavailable
from arena.loading import load_agent, load_game
from arena.playing.match import play_games
from arena.testing import check_game


def episodes(game: Any, games: int, seed: int, batch_size: int) -> list[list[str]]:
    """Each game's transcript followed by every observation text its players were shown."""
    agents = [load_agent("random", game) for _ in range(game.spec.num_players)]
    results = play_games(game, agents, games, seed=seed, record=True, batch_size=batch_size)
    return [(r.transcript or []) + [s.observation.text for s in r.trajectory.steps] for r in results]


class _Timeout(BaseException):  # not an Exception: nothing on the way may catch it
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise _Timeout


def check_id(env_id: str, games: int, seed: int, timeout: int) -> dict[str, Any]:
    """One row of the table."""
    row: dict[str, Any] = {"id": env_id, "family": family(env_id), "players": None}
    row.update(loads=False, check_game=False, deterministic=False, why="")
    reason = why_unavailable(env_id)
    if reason:
        row["why"] = f"not run: {reason}"
        return row
    stage = "load"
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    t0 = time.perf_counter()
    try:
        game = load_game(f"textarena:{env_id}")
        game.new_initial_state(seed)
        row.update(loads=True, players=game.spec.num_players)
        stage = "check_game"
        check_game(game, games=games, seed=seed)
        row["check_game"] = True
        stage = "determinism"
        first = episodes(game, 4, seed, batch_size=4)
        row["deterministic"] = first == episodes(game, 4, seed, batch_size=1)
        if not row["deterministic"]:
            row["why"] = "the same seed gave different episodes"
    except _Timeout:
        row["why"] = f"{stage}: no result within {timeout}s"
    except Exception as exc:  # a broken id is a row of the table, never the end of the run
        row["why"] = f"{stage}: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
    finally:
        signal.alarm(0)
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row


def markdown(rows: list[dict[str, Any]]) -> str:
    """The table of every id: loads / passes check_game (and the same-seed check) / why not."""
    yes = {True: "yes", False: "no"}
    lines = [
        "| id | players | loads | passes check_game | same seed, same episode | why not |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        run = not r["why"].startswith("not run")
        cells = [yes[r["loads"]], yes[r["check_game"]], yes[r["deterministic"]]] if run else ["—"] * 3
        why = r["why"].replace("|", "\\|")
        lines.append(f"| `{r['id']}` | {r['players'] or '—'} | {' | '.join(cells)} | {why} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ids", nargs="*", help="base ids to check (default: all)")
    p.add_argument("--games", type=int, default=10, help="random games per check_game")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=int, default=120, help="seconds per id")
    p.add_argument("--out", help="write the rows as JSON here")
    p.add_argument("--markdown", help="write the table as Markdown here")
    args = p.parse_args(argv)
    rows = []
    for env_id in args.ids or base_ids():
        row = check_id(env_id, args.games, args.seed, args.timeout)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    ran = [r for r in rows if not r["why"].startswith("not run")]
    summary = {
        "ids": len(rows),
        "runnable": len(ran),
        "load": sum(r["loads"] for r in ran),
        "pass": sum(r["loads"] and r["check_game"] and r["deterministic"] for r in ran),
    }
    doc = {"summary": summary, "rows": rows}
    if args.out:
        Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(markdown(rows))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
