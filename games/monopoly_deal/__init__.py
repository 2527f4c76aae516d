"""Monopoly Deal as an arena game plugin: ``monopoly_deal(variant=retail, players=2, max_turns=200)``.

The card game with a bounded one-sided response turn structure (BORG; Will Wolf, arXiv
2510.25080): a rent or action card hands control to its target(s) mid-turn — Just Say No chains, then
payment one asset at a time — and control returns to the player whose turn it is. ``variant=retail``
is Hasbro's game for 2-5 players; ``variant=paper`` is the 2-player simplified game of the BORG
paper. Cards and decks: :mod:`.cards`; parameters and moves: :mod:`.rules`; the state machine:
:mod:`.state`; what a player sees: :mod:`.view`; docs: docs/monopoly_deal.md.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from arena.game import Game, GameEntry, GameSpec
from arena.games.monopoly_deal.rules import MonopolyDealConfig, layout_for
from arena.games.monopoly_deal.state import MonopolyDealState
from arena.games.monopoly_deal.view import tensor_layout
from arena.hookspecs import hookimpl

RULES_TEXT = {
    "retail": (
        "Monopoly Deal, Hasbro's retail rules on the 106-card deck (money, properties, wild properties, rent and "
        "action cards). Each player starts with 5 cards; a turn draws 2 (5 from an empty hand), then up to 3 plays: "
        "bank money or an action card, lay a property (a wild in a colour of your choice), or use an action: "
        "rent (every other player pays; the any-colour rent targets one player; Double The Rent doubles it and "
        "counts as a play), Debt Collector ($5M from one player), It's My Birthday ($2M from each), Pass Go "
        "(draw 2), Sly Deal (take a property not in a complete set), Forced Deal (swap such properties), Deal "
        "Breaker (take a complete set), House/Hotel (+$3M/+$4M rent on a complete set, not Railroad/Utility). "
        "A targeted player answers with Just Say No (which the initiator may answer with its own, and so on) or "
        "accepts, then pays one card at a time from bank and table, no change given. Moving a wild on your table "
        "is free (each card once a turn). Hand limit 7 at the end of a turn. The empty draw pile is refilled "
        "from the shuffled discard pile. The first player with 3 complete sets of different colours wins (+1; "
        "the others share -1); the turn limit ends the game as a draw (0 each)."
    ),
    "paper": (
        "Monopoly Deal, the 2-player simplified game of Wolf (arXiv 2510.25080): 83 cards (10 each of $1M, $3M, "
        "Brown, Pink and Green properties and Brown, Pink and Green rent cards, plus 3 Just Say No). 5 cards "
        "each; a turn draws 2, then up to 2 plays: bank cash or a property (as cash), lay a property, or charge "
        "rent for a colour. The opponent answers with Just Say No (no counter) or pays one card at a time from "
        "bank and table (property paid lands in the creditor's bank). Hand limit 7. First to 2 complete sets "
        "wins (+1/-1); the turn limit ends the game as a draw (0 each)."
    ),
}


class MonopolyDealGame(Game):
    """Factory of :class:`MonopolyDealState`; parameters are :class:`MonopolyDealConfig` fields."""

    web_renderer = ("arena.games.monopoly_deal", "table.js")

    def __init__(self, **params: Any) -> None:
        self.cfg = MonopolyDealConfig(**params)
        c = self.cfg
        n = c.players
        rules = c.rules
        # a turn: draws (<= 5), plays and free moves, responses and payments, discards; generous bound
        per_turn = 5 + 3 * (rules.plays_per_turn + 8) + (n - 1) * 40 + 10
        self.spec = GameSpec(
            name="monopoly_deal",
            num_players=n,
            num_distinct_actions=layout_for(c.variant, n).size,
            observation_shape=(tensor_layout(c.variant, n).size,),
            min_utility=-1.0,
            max_utility=1.0,
            zero_sum=True,
            max_game_length=n * rules.hand_size + c.max_turns * per_turn,
            tree=False,
            params=c.changed(),
            description=RULES_TEXT[c.variant],
        )

    def new_initial_state(self, seed: int | None = None) -> MonopolyDealState:
        return MonopolyDealState(self.spec, self.cfg)


@hookimpl
def arena_games() -> list[GameEntry]:
    from arena.games.monopoly_deal.abstract import ENTRY as INTENTS_ENTRY

    return [
        INTENTS_ENTRY,
        GameEntry(
            "monopoly_deal",
            MonopolyDealGame,
            "Monopoly Deal (2-5 players; variant=paper: the BORG paper's 2-player game): rent, Just Say No "
            "chains, payment one card at a time",
            asdict(MonopolyDealConfig()),
        ),
    ]
