"""``table_talker``: a scripted player for ``table_talk`` games that talks about its hand.

At a talk turn it says a phrase of the style that matches its card's strength (``strong`` for
the highest rank, ``weak`` for the lowest, ``unsure`` in between, read from the observation's
"You hold the ..." line) with probability ``honesty``, else a phrase of another style; at a
move it plays uniformly at random. An honest talker leaks its card: it is the exploitable
starting point of LSPO's Kuhn oracle (docs/lspo.md), and its games are the warm-up corpus
that teaches a tiny local LLM to talk at all (``model.pretrain_agent: table_talker``).
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

    def __init__(self, honesty: float = 0.8) -> None:
        if not 0.0 <= honesty <= 1.0:
            raise ArenaError(f"table_talker: honesty must be in [0, 1], not {honesty}")
        self.honesty = float(honesty)

    def policy(self, obs: Observation) -> Mapping[int, float]:
        return {a: 1.0 / len(obs.legal_actions) for a in obs.legal_actions}

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


def make_talker(game: Game, honesty: float = 0.8) -> TableTalker:
    return TableTalker(honesty)


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry(
            "table_talker",
            make_talker,
            "table_talk games: talks about its card's strength (honesty), moves at random",
            {"honesty": 0.8},
        )
    ]
