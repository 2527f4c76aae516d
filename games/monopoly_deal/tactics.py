"""Card-level choices shared by the scripted heuristic and the intent abstraction: which asset
to pay with, which property to take or give, how much a property is worth to a seat. They read
a :class:`~arena.games.monopoly_deal.view.PlayerView`, i.e. only what the player may know."""
from __future__ import annotations

from arena.games.monopoly_deal.cards import COLOURS, KINDS, RAINBOW_ID, RENTS
from arena.games.monopoly_deal.view import PlayerView


def progress(v: PlayerView, q: int, c: int) -> float:
    """How far ``q``'s colour ``c`` is toward complete (1.0 when complete)."""
    return min(1.0, len(v.props[q][c]) / len(RENTS[COLOURS[c]]))


def asset_cost(v: PlayerView, m: tuple) -> float:
    """How much giving this asset away hurts (lower is paid first)."""
    op = m[0]
    if op == "paybank":
        return m[1]
    if op == "paybuilding":
        return 40 + m[2]
    k, c = m[1], m[2]
    if v.complete(v.me, c):
        return 100 + KINDS[k].value
    return 10 + 20 * progress(v, v.me, c) + KINDS[k].value


def choose_payment(v: PlayerView, moves: list[tuple]) -> tuple:
    """Least valuable first; among bank cards, the smallest that settles the debt, else the largest below it."""
    bank = [m for m in moves if m[0] == "paybank"]
    if bank:
        covers = [m for m in bank if m[1] >= v.owed]
        return min(covers, key=lambda m: m[1]) if covers else max(bank, key=lambda m: m[1])
    return min(moves, key=lambda m: asset_cost(v, m))


def property_gain(v: PlayerView, q: int, k: int, c: int) -> float:
    """Value of ``q`` receiving property ``k`` in colour ``c``: completing a set scores most."""
    pile = v.props[q][c]
    size = len(RENTS[COLOURS[c]])
    if v.complete(q, c):
        return 0.1
    if len(pile) + 1 >= size and (k != RAINBOW_ID or pile):
        return 10.0 + KINDS[k].value / 10
    return 1.0 + (len(pile) + 1) / size + KINDS[k].value / 20


def keep_value(v: PlayerView, k: int) -> float:
    """How much keeping card ``k`` in hand is worth (the lowest is discarded first)."""
    card = KINDS[k]
    if card.name == "Just Say No":
        return 100
    if card.is_property:
        return 50 + card.value
    if card.type == "rent":
        mine = max((v.rent(v.me, COLOURS.index(c)) for c in card.colours), default=0)
        return 5 * mine if mine else 0.5
    return card.value
