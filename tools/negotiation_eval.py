"""Deal or No Deal evaluation with intervals: one negotiator against a scripted one, seats rotated.

``python tools/negotiation_eval.py play --agent SPEC|CHECKPOINT_DIR --opponent fair --games 400 [--out FILE]``
plays the games and reports, for the agent, its own value, the agreement rate, the Pareto rate
(the share of *all* games that end in a Pareto-optimal deal, as the learner metrics count it) and
the opponent's value, each with a 95% bootstrap interval over games.
``python tools/negotiation_eval.py summary FILE...`` aggregates such files (one per seed) into the
mean and IQM over seeds with 95% bootstrap intervals (:func:`arena.experiments.sweep.aggregate`); with
``--before FILE...`` (the untrained model on the same games) also each seed's paired change.

Why a tool and not ``arena match``: the match summary holds returns only; the agreement and
Pareto facts live in each game's outcome info (:func:`arena.games.negotiation.negotiation_metrics`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

METRICS = ("own_value", "agreement", "pareto", "opponent_value")


def per_game(results: Sequence[Any], agent: str, opponent: str) -> dict[str, list[float]]:
    """Each game's own value, agreement (0/1), Pareto-optimal deal (0/1) and the opponent's value."""
    out: dict[str, list[float]] = {k: [] for k in METRICS}
    for r in results:
        me, them = r.seats.index(agent), r.seats.index(opponent)
        u = r.info["utilities"]
        out["own_value"].append(float(u[me]))
        out["agreement"].append(float(r.info["agreed"]))
        out["pareto"].append(float(r.info["pareto_optimal"]))
        out["opponent_value"].append(float(u[them]))
    return out


def interval(x: Sequence[float], seed: int = 0) -> dict[str, Any]:
    """Mean and its 95% percentile-bootstrap interval over games."""
    from arena.experiments.sweep import aggregate

    a = aggregate(list(x), seed=seed)
    return {"mean": a.mean, "ci": list(a.mean_ci), "n": a.n}


def play(args: argparse.Namespace) -> dict[str, Any]:
    import arena
    from arena.loading import checkpoint_spec

    game = arena.load_game(args.game)
    spec = checkpoint_spec(args.agent) if Path(args.agent).is_dir() else args.agent
    me = arena.load_agent(spec, game, label="agent")
    them = arena.load_agent(args.opponent, game, label="opponent")
    results = arena.play(game, [me, them], games=args.games, seed=args.seed, rotate_seats=True)
    games = per_game(results, me.name, them.name)
    return {
        "game": args.game,
        "agent": args.agent,
        "opponent": args.opponent,
        "games": args.games,
        "seed": args.seed,
        **{k: interval(v) for k, v in games.items()},
        "per_game": games,
    }


def summary(paths: Sequence[str], before: Sequence[str] = (), metrics: Sequence[str] = METRICS) -> dict[str, Any]:
    """Mean / IQM over files (seeds) of each metric's per-seed mean, with bootstrap intervals.
    With ``before`` (one file per file, the same games: same game, seed and count), also each
    seed's paired change (its interval over games) and the change's mean / IQM over seeds.
    ``metrics``: the per-game keys of the files (tools/werewolf_eval.py passes its own)."""
    from arena.errors import ArenaError
    from arena.experiments.sweep import aggregate

    rows = [json.loads(Path(p).read_text()) for p in paths]
    base = [json.loads(Path(p).read_text()) for p in before]
    if base and len(base) != len(rows):
        raise ArenaError(f"summary: {len(before)} --before files for {len(paths)} files; give one per file")
    for r, b in zip(rows, base):
        if (r["game"], r["seed"], r["games"]) != (b["game"], b["seed"], b["games"]):
            raise ArenaError("summary: a --before file played other games (game, seed and count must match)")
    out: dict[str, Any] = {"files": list(paths), "before": list(before)}
    for k in metrics:
        vals = [r[k]["mean"] for r in rows]
        a = aggregate(vals)
        out[k] = {"per_file": vals, "mean": a.mean, "mean_ci": list(a.mean_ci), "iqm": a.iqm, "iqm_ci": list(a.iqm_ci)}
        if base:
            diffs = [np.subtract(r["per_game"][k], b["per_game"][k]) for r, b in zip(rows, base)]
            d = aggregate([float(x.mean()) for x in diffs])
            out[k]["change_per_file"] = [interval(x) for x in diffs]
            out[k]["change"] = {"mean": d.mean, "mean_ci": list(d.mean_ci), "iqm": d.iqm, "iqm_ci": list(d.iqm_ci)}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="negotiation_eval", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("play", help="play one agent against a scripted negotiator")
    pp.add_argument("--game", default="deal_or_no_deal(max_turns=4,text=brief)")
    pp.add_argument(
        "--agent", required=True, help="agent spec (e.g. llm:model=DIR,score=mean) or a checkpoint directory"
    )
    pp.add_argument("--opponent", default="fair")
    pp.add_argument("--games", type=int, default=400)
    pp.add_argument("--seed", type=int, default=0)
    pp.add_argument("--out", help="write the JSON here as well")
    ps = sub.add_parser("summary", help="aggregate play outputs (one per seed)")
    ps.add_argument("files", nargs="+")
    ps.add_argument("--before", nargs="+", default=[], help="the same games by the model before training, one per file")
    args = p.parse_args(argv)
    return finish(
        "negotiation_eval", args, lambda: play(args) if args.cmd == "play" else summary(args.files, args.before)
    )


def finish(prog: str, args: argparse.Namespace, run: Callable[[], dict[str, Any]]) -> int:
    """Run a ``play``/``summary`` command: its JSON on stdout (and in ``--out`` for ``play``);
    bad input (a missing file, a malformed one, an unknown agent) is one line and exit 2."""
    from arena.errors import ArenaError

    try:
        res = run()
    except (ArenaError, FileNotFoundError, KeyError, json.JSONDecodeError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    text = json.dumps(res)
    if args.cmd == "play" and args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
