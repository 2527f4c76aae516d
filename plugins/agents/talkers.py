"""``table_talker``: a scripted player for ``table_talk`` games that talks about its hand.

At a talk turn it says a phrase of the style that matches its card's strength (``strong`` for
the highest rank, ``weak`` for the lowest, ``unsure`` in between, read from the observation's
"You hold the ..." line) with probability ``honesty``, else a phrase of another style; at a
move it plays uniformly at random, or, with ``move_honesty`` h > 0, the move of its card's
strength (bet/call/raise when strong, check/fold when weak) with probability h + (1 - h)/n and
the others uniformly. An honest talker leaks its card: it is the exploitable starting point of
LSPO's Kuhn oracle (docs/lspo.md), and its games are the warm-up corpus that teaches a tiny
local LLM to talk at all (``model.pretrain_agent: table_talker``). Why ``move_honesty``: a
warm-up on uniformly random moves gives the model no reason to read its card where it moves, so
DPO then moves the Jack, Queen and King alike; card-dependent (naive, exploitable) moves in the
corpus make the move logits depend on the card before LSPO starts (docs/results/lspo.md).
"""

from __future__ import annotations

import re
from typing import Mapping

from arena.agent import AgentEntry, Observation, PolicyAgent
from arena.errors import ArenaError
from arena.game import Game
from arena.hookspecs import hookimpl

PHRASES = {
    "strong": ["i have a great hand", "you should fold now", "this pot is mine"],
    "unsure": ["not sure about this one", "could go either way", "let us see what happens"],
    "weak": ["my card is bad", "i might fold here", "nothing good for me"],
}
RANKS = ["Jack", "Queen", "King", "Ace"]
BOLD = ("bet", "call", "raise")
"""Move labels a strong hand plays under ``move_honesty``; a weak one plays the others (check, fold)."""
_HOLD = re.compile(r"You hold the (\w+)")


def strength(text: str, ranks: int = 3) -> str:
    """``strong`` / ``unsure`` / ``weak`` from the card named in an observation."""
    m = _HOLD.search(text)
    if not m or m.group(1) not in RANKS[:ranks]:
        return "unsure"
    r = RANKS.index(m.group(1))
    return "strong" if r == ranks - 1 else "weak" if r == 0 else "unsure"


class TableTalker(PolicyAgent):
    name = "table_talker"

    def __init__(self, honesty: float = 0.8, move_honesty: float = 0.0) -> None:
        for key, v in (("honesty", honesty), ("move_honesty", move_honesty)):
            if not 0.0 <= v <= 1.0:
                raise ArenaError(f"table_talker: {key} must be in [0, 1], not {v}")
        self.honesty = float(honesty)
        self.move_honesty = float(move_honesty)

    def policy(self, obs: Observation) -> Mapping[int, float]:
        acts = obs.legal_actions
        uniform = {a: 1.0 / len(acts) for a in acts}
        style = strength(obs.text) if self.move_honesty > 0 else "unsure"
        bold = [a for a in acts if obs.label_of(a).lower() in BOLD]
        honest = bold if style == "strong" else [a for a in acts if a not in bold] if style == "weak" else []
        if len(honest) != 1:  # no single move of that strength here: uniform
            return uniform
        h = self.move_honesty
        return {a: h * float(a == honest[0]) + (1.0 - h) * uniform[a] for a in acts}

    def act(self, obs: Observation):
        if obs.decision != "text":
            return super().act(obs)
        style = strength(obs.text)
        if obs.uniform() >= self.honesty:
            others = [s for s in PHRASES if s != style]
            style = others[min(int(obs.uniform() * len(others)), len(others) - 1)]
        phrases = PHRASES[style]
        phrase = phrases[min(int(obs.uniform() * len(phrases)), len(phrases) - 1)]
        limit = obs.max_text_length
        return phrase[:limit] if limit > 0 else phrase  # a longer line would be an illegal action


def make_talker(game: Game, honesty: float = 0.8, move_honesty: float = 0.0) -> TableTalker:
    return TableTalker(honesty, move_honesty)


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry(
            "table_talker",
            make_talker,
            "table_talk games: talks about its card's strength (honesty), moves at random or, with "
            "move_honesty, by its card's strength",
            {"honesty": 0.8, "move_honesty": 0.0},
        )
    ]
