"""Game parameters and the discrete action layout of Monopoly Deal.

Every move is a tuple ``(op, *args)`` and has one fixed id per ``(variant, players)``, so the
PettingZoo face has one action space; each phase masks it down to what is legal. Card arguments
are kind ids (copies of a kind are interchangeable), colours are indices into
:data:`arena.games.monopoly_deal.cards.COLOURS`, targets are absolute seats.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from arena.errors import ArenaError
from arena.games.monopoly_deal.cards import (
    BIRTHDAY,
    COLOUR_ID,
    DEAL_BREAKER,
    DEBT_COLLECTOR,
    DOUBLE_RENT,
    FORCED_DEAL,
    HOUSE,
    KINDS,
    PASS_GO,
    RENT,
    SLY_DEAL,
    VARIANTS,
    WILD,
    WILD_RENT,
    Rules,
    rules_for,
)

Move = tuple


@dataclass(frozen=True)
class MonopolyDealConfig:
    """``monopoly_deal(variant=retail, players=2, max_turns=200)``."""

    variant: str = "retail"
    """``retail`` (Hasbro's rules, 106 cards, 2-5 players) or ``paper`` (the 2-player simplified
    game of Wolf, arXiv 2510.25080: 3 colours, cash/rent/JSN only, 2 plays, 2 sets to win)."""
    players: int = 2
    max_turns: int = 200
    """Turns (not decisions) before the game is stopped as a draw (all returns 0)."""

    def __post_init__(self) -> None:
        def bad(key: str, why: str) -> ArenaError:
            return ArenaError(f"monopoly_deal: parameter '{key}' {why}")

        if self.variant not in VARIANTS:
            raise bad("variant", f"must be one of {', '.join(VARIANTS)}; got {self.variant!r}")
        if not isinstance(self.players, int) or isinstance(self.players, bool):
            raise bad("players", f"must be an integer, got {self.players!r}")
        if self.variant == "paper" and self.players != 2:
            raise bad("players", f"must be 2 for variant=paper, got {self.players}")
        if not 2 <= self.players <= 5:
            raise bad("players", f"must be between 2 and 5, got {self.players}")
        if not isinstance(self.max_turns, int) or isinstance(self.max_turns, bool) or self.max_turns < 1:
            raise bad("max_turns", f"must be a positive integer, got {self.max_turns!r}")

    @property
    def rules(self) -> Rules:
        return rules_for(self.variant)

    def changed(self) -> dict[str, Any]:
        base = asdict(MonopolyDealConfig())
        return {k: v for k, v in asdict(self).items() if v != base[k]}


class ActionLayout:
    """The move table of one ``(variant, players)``: ``moves[id]`` and ``ids[move]``."""

    def __init__(self, rules: Rules, n: int) -> None:
        kinds = rules.kinds
        names = {k.name for k in kinds}
        colours = [COLOUR_ID[c] for c in rules.colours]
        self.pairs: list[tuple[int, int]] = [
            (k.id, COLOUR_ID[c]) for k in kinds if k.is_property for c in k.colours if c in rules.colours
        ]
        """Every (property kind, colour) a property card can sit in."""
        wilds = [(k, c) for k, c in self.pairs if KINDS[k].type == WILD]
        doubles = range(3) if DOUBLE_RENT in names else range(1)
        moves: list[Move] = [("end",)]
        moves += [("bank", k.id) for k in kinds if rules.can_bank(k)]
        moves += [("place", k, c) for k, c in self.pairs]
        moves += [("move", k, a, b) for k, a in wilds for kk, b in wilds if kk == k and b != a]
        moves += [("passgo",)] if PASS_GO in names else []
        moves += [("birthday",)] if BIRTHDAY in names else []
        for k in kinds:
            if k.name == WILD_RENT:
                moves += [("wildrent", c, t, d) for c in colours for t in range(n) for d in doubles]
            elif k.type == RENT:
                moves += [("rent", k.id, COLOUR_ID[c], d) for c in k.colours for d in doubles]
        for name, op in ((DEBT_COLLECTOR, "debt"), (SLY_DEAL, "sly"), (FORCED_DEAL, "forced")):
            moves += [(op, t) for t in range(n)] if name in names else []
        moves += [("dealbreaker", t, c) for t in range(n) for c in colours] if DEAL_BREAKER in names else []
        moves += [("house", c) for c in colours] + [("hotel", c) for c in colours] if HOUSE in names else []
        moves += [("jsn",), ("accept",)]
        moves += [("paybank", v) for v in sorted({k.value for k in kinds if k.value > 0})]
        moves += [("payprop", k, c) for k, c in self.pairs if KINDS[k].value > 0]
        moves += [("paybuilding", c, h) for c in colours for h in (0, 1)] if HOUSE in names else []
        moves += [("take", k, c) for k, c in self.pairs] + [("give", k, c) for k, c in self.pairs]
        moves += [("discard", k.id) for k in kinds]
        self.moves = moves
        self.ids = {m: i for i, m in enumerate(moves)}
        self.size = len(moves)


@lru_cache(maxsize=None)
def layout_for(variant: str, n: int) -> ActionLayout:
    return ActionLayout(rules_for(variant), n)
