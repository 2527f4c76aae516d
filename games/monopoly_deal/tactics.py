"""Card-level choices shared by the scripted heuristic and the intent abstraction: which asset
to pay with, which property to take or give, how much a property is worth to a seat. They read
a :class:`~arena.games.monopoly_deal.view.PlayerView`, i.e. only what the player may know. The
scripted heuristic itself (:func:`heuristic_move`) lives here too: the abstraction plays it
wherever it leaves no strategic choice."""

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


def heuristic_move(v: PlayerView, legal: list[tuple]) -> tuple:
    """The scripted heuristic's move among the legal moves (tuples), from the player's view."""
    phase = v.phase
    if phase == "pay":
        return choose_payment(v, legal)
    if phase == "respond":
        return ("jsn",) if ("jsn",) in legal and should_refuse(v) else ("accept",)
    if phase == "take":
        return max(legal, key=lambda m: property_gain(v, v.me, m[1], m[2]) + KINDS[m[1]].value / 100)
    if phase == "give":
        return min(legal, key=lambda m: progress(v, v.me, m[2]) + KINDS[m[1]].value / 10)
    if phase == "discard":
        return min(legal, key=lambda m: keep_value(v, m[1]))
    return heuristic_play(v, legal)


def should_refuse(v: PlayerView) -> bool:
    """Answer with Just Say No (when holding one)?"""
    if v.by == v.me:  # our demand was refused: answer back
        return True
    if v.effect == "dealbreaker":
        return True
    if v.effect in ("sly", "forced") and v.take is not None:
        k, c = v.take
        return progress(v, v.me, c) >= 0.5
    return v.amount >= 4 and v.assets(v.me) > 0


def heuristic_play(v: PlayerView, legal: list[tuple]) -> tuple:
    """The heuristic's priority order on its own turn."""
    me = v.me
    by_op: dict[str, list[tuple]] = {}
    for m in legal:
        by_op.setdefault(m[0], []).append(m)
    # free wild moves that complete a set
    for m in by_op.get("move", []):
        k, a, b = m[1], m[2], m[3]
        if not v.complete(me, a) and property_gain(v, me, k, b) >= 10:
            return m
    places = by_op.get("place", [])
    best = max(places, key=lambda m: property_gain(v, me, m[1], m[2]), default=None)
    if best is not None and property_gain(v, me, best[1], best[2]) >= 10:
        return best
    if by_op.get("dealbreaker"):
        return by_op["dealbreaker"][0]
    if best is not None:
        return best
    for op in ("sly", "forced"):
        if by_op.get(op):
            return max(by_op[op], key=lambda m: v.assets(m[1]))
    opp_assets = {q: v.assets(q) for q in range(v.n) if q != me}
    rents = by_op.get("rent", []) + by_op.get("wildrent", [])
    if rents:

        def amount(m: tuple) -> float:
            c, d = (m[2], m[3]) if m[0] == "rent" else (m[1], m[3])
            who = opp_assets[m[2]] if m[0] == "wildrent" else sum(opp_assets.values())
            return min(v.rent(me, c) * 2**d, max(who, 0)) - 0.5 * d

        top = max(rents, key=amount)
        if amount(top) >= 1:
            return top
    if by_op.get("debt") and max(opp_assets.values()) > 0:
        return max(by_op["debt"], key=lambda m: opp_assets[m[1]])
    if by_op.get("birthday") and max(opp_assets.values()) > 0:
        return by_op["birthday"][0]
    for op in ("hotel", "house"):
        if by_op.get(op):
            return by_op[op][0]
    if by_op.get("passgo"):
        return by_op["passgo"][0]
    banks = [
        m
        for m in by_op.get("bank", [])
        if KINDS[m[1]].name != "Just Say No" and (KINDS[m[1]].type == "money" or not useful_later(v, m[1]))
    ]
    if banks:
        return max(banks, key=lambda m: KINDS[m[1]].value)
    return ("end",)


def useful_later(v: PlayerView, k: int) -> bool:
    """Keep action cards that may pay off next turn; bank the rest (and properties as cash only
    in the paper variant when the colour is hopeless)."""
    card = KINDS[k]
    if card.is_property:
        return True
    if card.type == "rent":
        return any(v.rent(v.me, COLOURS.index(c)) >= 2 for c in card.colours)
    return card.name in ("Deal Breaker", "Sly Deal", "Forced Deal", "House", "Hotel")
