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
``python tools/werewolf_eval.py look --agent ... --games 100 [--seed 1000]`` reads the games'
transcripts for what the learner side says and whom it votes for (:func:`look`): where a win
rate moved, this says which lever moved it.

Why paired: game ``k`` of a seed deals the same roles to the same seats for both models (the
deal is the first draws of game ``k``'s chance stream, :func:`arena.playing.match.play_games`), so the
change is measured deal by deal, and its interval is narrower than the difference of two
independent win rates.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
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


_SAYS = re.compile(r'^Day (\d+): player_(\d+) says: "(.*)"$')
_ACCUSES = re.compile(r"^Day (\d+): player_(\d+) accuses player_(\d+)\.$")  # talk=acts
_BALLOT = re.compile(r"^\[secret ballot\] Day (\d+): player_(\d+) votes for player_(\d+)\.$")
_EXILE = re.compile(r"^Day 1: player_(\d+) is exiled by the vote\.$")
SPEECH_KINDS = ("claim", "accuse", "clear", "wolf", "defend")


def _share(hits: int, n: int) -> float | None:
    return round(hits / n, 4) if n else None


def look(results: Sequence[Any], side: str, brief: bool = True, top: int = 5) -> dict[str, Any]:
    """What ``side`` says and how it votes, read from the games' transcripts.

    ``said``: its ``top`` most frequent utterances and their shares; ``acts``: the share of its
    utterances in which the game reads each speech act (``none``: not one). Of its ballots:
    ``on_other_side`` (a village's ballots on a wolf), ``on_first_accuser`` (on the day's first
    player to accuse anyone, of the ballots cast on days with an accusation) and
    ``on_accused_by_other_side`` (on a player the other side accused that day, of the ballots on
    such days). ``day1_exile_other_side``: games whose day-1 exile was of the other side."""
    from arena.games.werewolf.state import speech_acts

    said: Counter[str] = Counter()
    acts: Counter[str] = Counter()
    ballots = Counter({"all": 0, "other": 0, "accusation_days": 0, "first": 0, "other_accused_days": 0, "accused": 0})
    day1 = wins = 0
    for r in results:
        teams = r.info["teams"]
        mine = set(teams[r.info["team_names"].index(side)])
        other = {p for p in range(len(r.info["roles"])) if p not in mine}
        accusations: dict[int, list[tuple[int, int]]] = {}  # day -> (accuser, accused) in order
        for line in r.info["transcript"]:
            if m := _SAYS.match(line):
                day, speaker, text = int(m[1]), int(m[2]), m[3]
                found = speech_acts(text, brief)
                if speaker in mine:
                    said[text] += 1
                    kinds = {k for k, _ in found}
                    acts.update(kinds or {"none"})
                accusations.setdefault(day, []).extend((speaker, a) for k, a in found if k == "accuse")
            elif m := _ACCUSES.match(line):
                accusations.setdefault(int(m[1]), []).append((int(m[2]), int(m[3])))
            elif (m := _BALLOT.match(line)) and int(m[2]) in mine:
                day, target = int(m[1]), int(m[3])
                ballots["all"] += 1
                ballots["other"] += target in other
                if accusations.get(day):
                    ballots["accusation_days"] += 1
                    ballots["first"] += target == accusations[day][0][0]
                accused = {a for s, a in accusations.get(day, []) if s in other}
                if accused:
                    ballots["other_accused_days"] += 1
                    ballots["accused"] += target in accused
            elif m := _EXILE.match(line):
                day1 += int(m[1]) in other
        wins += r.info["winner"] == side
    n = sum(said.values())
    return {
        "games": len(results),
        "utterances": n,
        "said": [[text, _share(c, n)] for text, c in said.most_common(top)],
        "acts": {k: _share(acts[k], n) for k in (*SPEECH_KINDS, "none")},
        "ballots": ballots["all"],
        "on_other_side": _share(ballots["other"], ballots["all"]),
        "on_first_accuser": _share(ballots["first"], ballots["accusation_days"]),
        "on_accused_by_other_side": _share(ballots["accused"], ballots["other_accused_days"]),
        "day1_exile_other_side": _share(day1, len(results)),
        "win": _share(wins, len(results)),
    }


def _games(args: argparse.Namespace) -> tuple[Any, str, list[Any]]:
    """The agent on every learner seat, ``--games`` games at each ``--seed``, in seed order."""
    import arena
    from arena.loading import checkpoint_spec

    game = arena.load_game(args.game)
    side = learner_side(game)
    spec = checkpoint_spec(args.agent) if Path(args.agent).is_dir() else args.agent
    agent = arena.load_agent(spec, game, label="agent")
    results = [
        r for seed in args.seed for r in arena.play(game, [agent] * game.spec.num_players, games=args.games, seed=seed)
    ]
    return game, side, results


def play(args: argparse.Namespace) -> dict[str, Any]:
    game, side, results = _games(args)
    games = per_game(results, side)
    seen = {"look": look(results, side, game.spec.params.get("text", "full") == "brief")} if args.look else {}
    return {
        **seen,
        "game": args.game,
        "agent": args.agent,
        "side": side,
        "games": args.games * len(args.seed),
        "seed": args.seed[0] if len(args.seed) == 1 else args.seed,
        **{k: interval(v) for k, v in games.items()},
        "per_game": games,
    }


def beliefs(args: argparse.Namespace) -> dict[str, Any]:
    """How well the agent's model reads the table: ``--games`` games of the scripted village
    against the scripted wolves (the same games for every model: the agent only reads), and at the
    end of each day's discussion every living villager surveyed with the agent's model
    (:mod:`arena.plugins.trainers.llm.social`): the mean log-likelihood of the true wolf and the
    mean probability on it, each with a 95% bootstrap interval over surveys."""
    import numpy as np

    import arena
    from arena.loading import checkpoint_spec
    from arena.playing.match import play_games
    from arena.plugins.trainers.llm.rollout import replay
    from arena.plugins.trainers.llm.social import BeliefReader, listening_loglik, surveys

    game = arena.load_game(args.game)
    spec = checkpoint_spec(args.agent) if Path(args.agent).is_dir() else args.agent
    reader = BeliefReader(arena.load_agent(spec, game, label="agent"), game.spec.full_name)
    scripted = arena.load_agent("werewolf_scripted", game, label="scripted")
    n = game.spec.num_players
    asked = []
    for r in play_games(game, [scripted] * n, num_games=args.games, seed=args.seed, record=True):
        days = set()
        for st in replay(game, r.trajectory) or []:
            if st.discussion_over() and st.day not in days:
                days.add(st.day)
                asked += [x for x in surveys(st) if x.targets]
    ll = [listening_loglik(b, x) for b, x in zip(reader.beliefs(asked), asked)]
    return {
        "game": args.game,
        "agent": args.agent,
        "games": args.games,
        "seed": args.seed,
        "surveys": len(asked),
        "loglik": interval(ll),
        "p_wolf": interval(list(np.exp(ll))),
        "uniform_loglik": float(np.mean([-np.log(len(x.seats)) for x in asked])) if asked else None,
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
    pp.add_argument("--look", action="store_true", help="also what the side says and how it votes (as `look`)")
    pl = sub.add_parser("look", help="what the agent's side says and whom it votes for (from the transcripts)")
    pl.add_argument("--game", default=GAME)
    pl.add_argument("--agent", required=True, help="agent spec or a checkpoint directory")
    pl.add_argument("--games", type=int, default=100)
    pl.add_argument("--seed", type=int, nargs="+", default=[1000])
    pl.add_argument("--top", type=int, default=5, help="how many of its most frequent utterances to show")
    pb = sub.add_parser("beliefs", help="how well the agent's model reads who the wolf is (listening)")
    pb.add_argument("--game", default=GAME)
    pb.add_argument("--agent", required=True, help="agent spec or a checkpoint directory")
    pb.add_argument("--games", type=int, default=40)
    pb.add_argument("--seed", type=int, default=1000)
    ps = sub.add_parser("summary", help="aggregate play outputs (one per seed)")
    ps.add_argument("files", nargs="+")
    ps.add_argument("--before", nargs="+", default=[], help="the same games by the model before training, one per file")
    args = p.parse_args(argv)
    commands = {
        "play": lambda: play(args),
        "look": lambda: _look(args),
        "beliefs": lambda: beliefs(args),
        "summary": lambda: summary(args.files, args.before, METRICS),
    }
    return finish("werewolf_eval", args, commands[args.cmd])


def _look(args: argparse.Namespace) -> dict[str, Any]:
    game, side, results = _games(args)
    brief = game.spec.params.get("text", "full") == "brief"
    return {
        "game": args.game,
        "agent": args.agent,
        "side": side,
        "seed": args.seed,
        **look(results, side, brief, args.top),
    }


if __name__ == "__main__":
    sys.exit(main())
