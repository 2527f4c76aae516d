"""Does a Trust-and-Split LLM read the talk? Its claims split by what the other's message says.

    python tools/trust_split_reading.py configs/llm/trust_split_aa.yaml MODEL_DIR [MODEL_DIR ...] \
        [--game 'trust_split(talk=true,text=hinted,horizon=5)'] [--games 24] [--seed 5]

Each model plays ``--games`` self-play games (both seats, the agent settings of the config). Every
claim is sorted by the message the other sent this round: it names a hand that *my* hand beats
(if true, I hold the upper hand), a hand that beats mine (I hold the lower), or something else
(no hand, or my own hand's name). A model that reads the talk claims less when the named hand
beats its own; a model that does not claims alike in both. Printed per model, one JSON line: the
count, mean claim and share of claims of at most half the coins in each class (a large ``other``
count means the talk no longer names hands, and there is nothing left to read).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import numpy as np

from arena.games.social.trust_split import HANDS, beats, named_hand

CLASSES = ("upper_if_true", "lower_if_true", "other")


def claim_class(text: str) -> str:
    """The class of a claim decision's view (``text=brief`` or ``hinted``): the last ``Now:`` part
    holds my hand and this round's messages."""
    now = text[text.rfind("Now: you") :]
    m = re.search(r"Now: you (\w+)\..*Other said '([^']*)'", now)
    if not m:
        return "other"
    theirs = named_hand(m.group(2))
    if m.group(1) not in HANDS or theirs is None or HANDS[theirs] == m.group(1):
        return "other"
    return "upper_if_true" if beats(HANDS.index(m.group(1)), theirs) else "lower_if_true"


def reading(model: str, config: Any, game_name: str, games: int, seed: int) -> dict[str, Any]:
    from arena.loading import load_agent, load_game
    from arena.playing.match import play_games

    game = load_game(game_name)
    agent = load_agent({"name": "llm", **dict(config.agent), "model": model}, game)
    claims: dict[str, list[float]] = {k: [] for k in CLASSES}
    for result in play_games(game, [agent, agent], num_games=games, seed=seed, record=True):
        assert result.trajectory is not None
        for step in result.trajectory.steps:
            if not isinstance(step.action, str):
                claims[claim_class(step.observation.text)].append(float(step.action))
    out: dict[str, Any] = {"model": model}
    for k, xs in claims.items():
        a = np.asarray(xs)
        out[k] = {
            "n": len(xs),
            "mean": float(a.mean()) if len(xs) else None,
            "at_most_half": float(np.mean(a <= game.coins / 2)) if len(xs) else None,
        }
    return out


def main(argv: list[str] | None = None) -> None:
    import json

    from omegaconf import OmegaConf

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config", type=Path, help="the llm-train config whose agent settings the models use")
    ap.add_argument("models", nargs="+", help="model directories (a snapshot such as learner@30, or a warm-up model)")
    ap.add_argument("--game", help="game spec (default: the config's game)")
    ap.add_argument("--games", type=int, default=24)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args(argv)
    config = OmegaConf.load(args.config)
    for model in args.models:
        print(json.dumps(reading(model, config, args.game or str(config.game), args.games, args.seed)))


if __name__ == "__main__":
    main()
