"""Werewolf evaluation with intervals: a learner side against the game's scripted side.

``python tools/werewolf_eval.py play --agent SPEC|CHECKPOINT_DIR --games 400 [--seed 0 [7 ...]] [--out FILE]``
seats the agent on every seat of ``werewolf(..., scripted=wolves|village)`` (the scripted side
is part of the environment, so the agent decides only for the other side) and reports, for the
learner side, its win rate, draw rate (day limit) and mean return, each with a 95% bootstrap
interval over games. With several ``--seed`` values it plays ``--games`` games at each and pools
them (per-game lists in seed order): one file, and one interval, for the whole evaluation set.
``python tools/werewolf_eval.py summary FILE... [--before FILE...]`` aggregates such files (one
per seed) into the mean and IQM over seeds, and with ``--before`` (the untrained model on the
same games) each seed's *paired* change: :func:`negotiation_eval.summary`, which checks that
both files played the same game, seed and count.

Why paired: game ``k`` of a seed deals the same roles to the same seats for both models (the
deal is the first draws of game ``k``'s chance stream, :func:`arena.match.play_games`), so the
change is measured deal by deal, and its interval is narrower than the difference of two
independent win rates.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

from negotiation_eval import finish, interval, summary  # noqa: E402  (one summary for both games)

METRICS = ("win", "draw", "return")
GAME = "werewolf(players=7,wolves=1,talk=text,scripted=wolves,max_message_chars=48,max_days=5,allow_abstain=false,text=brief)"


def learner_side(game: Any) -> str:
    """The side the agent plays: the one the game does not script."""
    from arena.errors import ArenaError

    scripted = game.spec.params.get("scripted", "none")
    if scripted not in ("wolves", "village"):
        raise ArenaError(f"game '{game.spec.full_name}' needs scripted=wolves or scripted=village")
    return "village" if scripted == "wolves" else "wolves"


def per_game(results: Sequence[Any], side: str) -> dict[str, list[float]]:
    """Each game's learner-side win (0/1), draw (0/1) and return (+1 win, -1 loss, 0 draw)."""
    out: dict[str, list[float]] = {k: [] for k in METRICS}
    for r in results:
        winner = r.info["winner"]
        out["win"].append(float(winner == side))
        out["draw"].append(float(winner is None))
        out["return"].append(0.0 if winner is None else (1.0 if winner == side else -1.0))
    return out


def play(args: argparse.Namespace) -> dict[str, Any]:
    import arena

    from arena.loading import checkpoint_spec

    game = arena.load_game(args.game)
    side = learner_side(game)
    spec = checkpoint_spec(args.agent) if Path(args.agent).is_dir() else args.agent
    agent = arena.load_agent(spec, game, label="agent")
    games: dict[str, list[float]] = {k: [] for k in METRICS}
    for seed in args.seed:
        results = arena.play(game, [agent] * game.spec.num_players, games=args.games, seed=seed)
        for k, v in per_game(results, side).items():
            games[k] += v
    return {
        "game": args.game,
        "agent": args.agent,
        "side": side,
        "games": args.games * len(args.seed),
        "seed": args.seed[0] if len(args.seed) == 1 else args.seed,
        **{k: interval(v) for k, v in games.items()},
        "per_game": games,
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="werewolf_eval", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("play", help="play the agent (every learner seat) against the scripted side")
    pp.add_argument("--game", default=GAME)
    pp.add_argument("--agent", required=True, help="agent spec (e.g. werewolf_scripted) or a checkpoint directory")
    pp.add_argument("--games", type=int, default=400)
    pp.add_argument("--seed", type=int, nargs="+", default=[0], help="one or more; --games games at each, pooled")
    pp.add_argument("--out", help="write the JSON here as well")
    ps = sub.add_parser("summary", help="aggregate play outputs (one per seed)")
    ps.add_argument("files", nargs="+")
    ps.add_argument("--before", nargs="+", default=[], help="the same games by the model before training, one per file")
    args = p.parse_args(argv)
    return finish(
        "werewolf_eval", args, lambda: play(args) if args.cmd == "play" else summary(args.files, args.before, METRICS)
    )


if __name__ == "__main__":
    sys.exit(main())
