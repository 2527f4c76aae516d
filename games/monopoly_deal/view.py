"""What one Monopoly Deal player sees: action labels, the text board, the phase tag of the
info-state key, and the observation tensor.

Everything here reads only what the player may know: its own hand, every table and bank (face
up in the real game), the discard pile, pile sizes, hand sizes and the pending obligation.
Seats in the tensor are relative (the observer first) so one policy serves every seat.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from arena.game import decision_struct
from arena.games.monopoly_deal.cards import (
    BIRTHDAY,
    BY_NAME,
    COLOUR_ID,
    COLOURS,
    DEAL_BREAKER,
    DEBT_COLLECTOR,
    FORCED_DEAL,
    HOTEL,
    HOUSE,
    JUST_SAY_NO,
    KINDS,
    PASS_GO,
    RENTS,
    SLY_DEAL,
    WILD,
    WILD_RENT,
)
from arena.games.monopoly_deal.rules import layout_for

if TYPE_CHECKING:
    from arena.games.monopoly_deal.state import MonopolyDealState

PHASES = ("play", "take", "give", "respond", "pay", "discard", "over", "chance")
EFFECTS = ("rent", "debt", "birthday", "sly", "forced", "dealbreaker")


def _seat(p: int, me: int) -> str:
    return "you" if p == me else f"player {p}"


def _prop(k: int, c: int) -> str:
    return KINDS[k].name if KINDS[k].type != WILD else f"{KINDS[k].name} (as {COLOURS[c]})"


# -- action labels ----------------------------------------------------------------------------
def label(s: "MonopolyDealState", p: int, m: tuple) -> str:
    op = m[0]
    if op == "end":
        return "end turn"
    if op == "bank":
        return f"bank {KINDS[m[1]].short()}"
    if op == "place":
        k, c = m[1], m[2]
        return f"play {KINDS[k].name}" + (f" as {COLOURS[c]}" if KINDS[k].type == WILD else "")
    if op == "move":
        return f"move {KINDS[m[1]].name} from {COLOURS[m[2]]} to {COLOURS[m[3]]}"
    if op == "passgo":
        return "play Pass Go (draw 2 cards)"
    if op == "birthday":
        return "play It's My Birthday (every other player pays you $2M)"
    if op == "debt":
        return f"play Debt Collector on player {m[1]} ($5M)"
    if op in ("rent", "wildrent"):
        if op == "rent":
            card, c, d, who = KINDS[m[1]].name, m[2], m[3], "everyone" if s.n > 2 else f"player {s.others(p)[0]}"
        else:
            card, c, d, who = "Rent (any colour)", m[1], m[3], f"player {m[2]}"
        extra = f" + {d} Double The Rent" if d else ""
        return f"charge {COLOURS[c]} rent ${s.rent(p, c) * 2**d}M to {who} ({card}{extra})"
    if op == "sly":
        return f"play Sly Deal on player {m[1]}"
    if op == "forced":
        return f"play Forced Deal on player {m[1]}"
    if op == "dealbreaker":
        return f"play Deal Breaker on player {m[1]}'s {COLOURS[m[2]]} set"
    if op in ("house", "hotel"):
        return f"build a {op.capitalize()} on {COLOURS[m[1]]}"
    if op == "jsn":
        return "Just Say No"
    if op == "accept":
        return _accept_label(s)
    if op == "paybank":
        return f"pay ${m[1]}M from your bank"
    if op == "payprop":
        return f"pay with {_prop(m[1], m[2])} from your table (${KINDS[m[1]].value}M)"
    if op == "paybuilding":
        name = "Hotel" if m[2] else "House"
        return f"pay with the {name} on {COLOURS[m[1]]} (${4 if m[2] else 3}M)"
    if op == "take":
        return f"take {_prop(m[1], m[2])}"
    if op == "give":
        return f"give {_prop(m[1], m[2])}"
    if op == "discard":
        return f"discard {KINDS[m[1]].short()}"
    return str(m)


def _accept_label(s: "MonopolyDealState") -> str:
    e = s.effect or {}
    if s.jsn_count % 2 == 1:
        return "accept the Just Say No"
    op = e.get("op")
    if op in ("rent", "debt", "birthday"):
        return f"accept (pay ${e['amount']}M)"
    if op == "sly":
        return f"accept (give up {_prop(*e['take'])})"
    if op == "forced":
        return f"accept (swap your {_prop(*e['take'])} for {_prop(*e['give'])})"
    if op == "dealbreaker":
        return f"accept (lose your {COLOURS[e['colour']]} set)"
    return "accept"


# -- text -------------------------------------------------------------------------------------------
def _cards(counts: list[int]) -> str:
    parts = [f"{c}x {KINDS[k].short()}" if c > 1 else KINDS[k].short() for k, c in enumerate(counts) if c]
    return ", ".join(parts) if parts else "nothing"


def _table(s: "MonopolyDealState", q: int) -> str:
    sets = []
    for c in range(len(COLOURS)):
        pile = s.props[q][c]
        if not pile:
            continue
        size = len(RENTS[COLOURS[c]])
        done = " complete" if s.is_complete(q, c) else ""
        extra = (" + House" if s.house[q][c] else "") + (" + Hotel" if s.hotel[q][c] else "")
        wilds = [KINDS[k].name for k in pile if KINDS[k].type == WILD]
        w = f" incl. {', '.join(wilds)}" if wilds else ""
        sets.append(f"{COLOURS[c]} {len(pile)}/{size}{done}{extra}{w} (rent ${s.rent(q, c)}M)")
    return "; ".join(sets) if sets else "no properties"


def pending_text(s: "MonopolyDealState", p: int) -> str:
    """The open obligation in words (empty when none)."""
    e = s.effect
    if e is None or s.phase not in ("respond", "pay", "take", "give"):
        return ""
    by, t = _seat(e["by"], p), _seat(s.target, p) if s.target >= 0 else ""
    op = e["op"]
    if s.phase in ("take", "give"):
        return f"{by} {'is' if by != 'you' else 'are'} choosing what to {'take' if s.phase == 'take' else 'give'} ({op} deal)."
    what = {
        "rent": lambda: f"${e['amount']}M rent ({COLOURS[e['colour']]})",
        "debt": lambda: "$5M (Debt Collector)",
        "birthday": lambda: "$2M (It's My Birthday)",
        "sly": lambda: f"{_prop(*e['take'])} (Sly Deal)",
        "forced": lambda: f"{_prop(*e['take'])} in exchange for {_prop(*e['give'])} (Forced Deal)",
        "dealbreaker": lambda: f"the complete {COLOURS[e['colour']]} set (Deal Breaker)",
    }[op]()
    line = f"{by} demand{'s' if by != 'you' else ''} {what} from {t}."
    if s.jsn_count:
        stands = "the Just Say No stands" if s.jsn_count % 2 else "the demand stands"
        line += f" {s.jsn_count} Just Say No played so far: {stands}."
    if s.phase == "pay":
        line += f" Still owed: ${s.owed}M, paid one card at a time (no change)."
    return line


ASK = {
    "play": "Your turn: play a card (bank it, lay a property, or use an action), move a wild property for free, or end the turn.",
    "take": "Choose the property to take (not from a complete set).",
    "give": "Choose the property you give in exchange (not from a complete set).",
    "respond": "Answer: Just Say No (if you hold one) or accept.",
    "pay": "Pay one card at a time from your bank or table (no change given).",
    "discard": "End of turn: discard down to the hand limit.",
}


def render_text(s: "MonopolyDealState", p: int, recent: int = 8) -> str:
    r = s.rules
    head = (
        f"Monopoly Deal ({r.variant} rules, {s.n} players): first to {r.sets_to_win} complete sets of different "
        f"colours wins; up to {r.plays_per_turn} plays a turn. You are player {p}."
    )
    lines = [head]
    if s.phase == "deal":
        lines.append("The cards are being dealt.")
        return "\n".join(lines)
    if s.phase == "over":
        end = f"Game over: player {s.winner} wins." if s.winner >= 0 else "Game over: turn limit reached, a draw."
        lines.append(f"{end} Your return: {s.returns()[p]:+g}.")
    else:
        lines.append(
            f"Turn {s.turn} (limit {s.cfg.max_turns}): {'your' if s.player == p else f'player {s.player}' + chr(39) + 's'} turn, "
            f"{s.plays_left} play{'s' if s.plays_left != 1 else ''} left. "
            f"Draw pile {s.draw_total} cards, discard pile {sum(s.discard)}."
        )
    lines.append(f"Your hand ({s.hand_size[p]}): {_cards(s.hands[p])}.")
    for q in [p] + s.others(p):
        who = "You" if q == p else f"Player {q} (hand {s.hand_size[q]} cards)"
        lines.append(
            f"{who}: {s.complete_sets(q)} complete set{'s' if s.complete_sets(q) != 1 else ''}; "
            f"bank ${s.bank_value(q)}M ({_cards(s.banks[q])}); {_table(s, q)}."
        )
    pend = pending_text(s, p)
    if pend:
        lines.append("Pending: " + pend)
    log = s.logs[p][-recent:]
    if log:
        lines.append("Recent: " + " ".join(log))
    if s.current_player() == p:
        lines.append(ASK[s.phase])
    return "\n".join(lines)


# -- structured view --------------------------------------------------------------------------------
def card(k: int) -> dict[str, Any]:
    c = KINDS[k]
    return {"kind": k, "name": c.name, "type": c.type, "value": c.value, "colours": list(c.colours)}


def _counted(counts: list[int]) -> list[dict[str, Any]]:
    return [{**card(k), "count": c} for k, c in enumerate(counts) if c]


_CARD_OF = {"passgo": PASS_GO, "birthday": BIRTHDAY, "debt": DEBT_COLLECTOR, "sly": SLY_DEAL, "forced": FORCED_DEAL}
_CARD_OF.update(dealbreaker=DEAL_BREAKER, house=HOUSE, hotel=HOTEL, jsn=JUST_SAY_NO, wildrent=WILD_RENT)


def acts_on(s: "MonopolyDealState", p: int, m: tuple) -> list[str]:
    """The things a move acts on, as the web table names them: ``hand:<kind>`` (a card in
    hand), ``set:<player>:<colour>``, ``prop:<player>:<colour>:<kind>`` (a property on a table),
    ``bank:<player>:<value>``, ``building:<player>:<colour>``, ``seat:<player>``, ``pending``, ``end``."""
    op = m[0]
    hand = [f"hand:{BY_NAME[_CARD_OF[op]].id}"] if op in _CARD_OF else []
    if op in ("bank", "discard"):
        return [f"hand:{m[1]}"]
    if op in ("place", "rent"):
        return [f"hand:{m[1]}", f"set:{p}:{m[2]}"]
    if op == "move":
        return [f"prop:{p}:{m[2]}:{m[1]}"]
    if op in ("debt", "sly", "forced"):
        return hand + [f"seat:{m[1]}"]
    if op == "wildrent":
        return hand + [f"set:{p}:{m[1]}", f"seat:{m[2]}"]
    if op == "dealbreaker":
        return hand + [f"set:{m[1]}:{m[2]}"]
    if op in ("house", "hotel"):
        return hand + [f"set:{p}:{m[1]}"]
    if op == "paybank":
        return [f"bank:{p}:{m[1]}"]
    if op == "payprop":
        return [f"prop:{p}:{m[2]}:{m[1]}"]
    if op == "paybuilding":
        return [f"building:{p}:{m[1]}"]
    if op == "take":
        return [f"prop:{s.effect['target'] if s.effect else -1}:{m[2]}:{m[1]}"]
    if op == "give":
        return [f"prop:{p}:{m[2]}:{m[1]}"]
    if op == "accept":
        return ["pending"]
    return hand or (["end"] if op == "end" else [])


def _seat_struct(s: "MonopolyDealState", q: int, p: int) -> dict[str, Any]:
    sets = []
    for c in range(len(COLOURS)):
        pile = s.props[q][c]
        if pile:
            sets.append(
                {
                    "colour": COLOURS[c],
                    "colour_id": c,
                    "cards": [card(k) for k in pile],
                    "size": len(RENTS[COLOURS[c]]),
                    "complete": s.is_complete(q, c),
                    "house": s.house[q][c],
                    "hotel": s.hotel[q][c],
                    "rent": s.rent(q, c),
                }
            )
    return {
        "player": q,
        "you": q == p,
        "hand_size": s.hand_size[q],
        "complete_sets": s.complete_sets(q),
        "bank": {"total": s.bank_value(q), "cards": _counted(s.banks[q])},
        "sets": sets,
    }


def render_struct(s: "MonopolyDealState", p: int) -> dict[str, Any]:
    """The structured view: the player's hand, every seat's bank and property sets (with
    progress toward a full set), piles, the pending obligation and the player's own log; each
    legal move says what it acts on (:func:`acts_on`). Same facts as :func:`render_text`."""
    r = s.rules
    out = decision_struct(s, p, lambda a: acts_on(s, p, s.layout.moves[a]))
    out.update(game="monopoly_deal", variant=r.variant, players=s.n, sets_to_win=r.sets_to_win)
    out["log"] = list(s.logs[p])
    if s.phase == "deal":
        return out
    out.update(
        turn=s.turn,
        max_turns=s.cfg.max_turns,
        to_move=s.player if s.phase != "over" else None,
        plays_left=s.plays_left,
        plays_per_turn=r.plays_per_turn,
        draw_pile=s.draw_total,
        discard=_counted(s.discard),
        hand=_counted(s.hands[p]),
        seats=[_seat_struct(s, q, p) for q in [p] + s.others(p)],
    )
    pend = pending_text(s, p)
    if pend:
        e = s.effect or {}
        out["pending"] = {
            "op": e.get("op"),
            "by": e.get("by"),
            "target": s.target if s.target >= 0 else None,
            "amount": e.get("amount"),
            "owed": s.owed if s.phase == "pay" else None,
            "just_say_no": s.jsn_count,
            "text": pend,
        }
    if s.phase == "over":
        out["winner"] = s.winner if s.winner >= 0 else None
    elif out["your_turn"]:
        out["ask"] = ASK[s.phase]
    return out


def phase_tag(s: "MonopolyDealState", p: int) -> str:
    """The decision context for the info-state key (response infosets never merge with own-turn ones)."""
    if s.phase == "over":
        return "[over]"
    if s.current_player() != p:
        return "[waiting]"
    if s.phase == "play":
        return f"[play: {s.plays_left} left]"
    if s.phase == "respond":
        return f"[respond: {s.effect['op']} by player {s.effect['by']}, {s.jsn_count} JSN]"
    if s.phase == "pay":
        return f"[pay: ${s.owed}M owed to player {s.effect['by']}]"
    return f"[{s.phase}]"


# -- tensor --------------------------------------------------------------------------------------
class Layout:
    """Offsets of the blocks in the observation tensor of ``(variant, n)``."""

    def __init__(self, variant: str, n: int) -> None:
        from arena.games.monopoly_deal.cards import rules_for

        rules = rules_for(variant)
        self.kinds = [k.id for k in rules.kinds]
        self.colours = [COLOUR_ID[c] for c in rules.colours]
        self.pairs = layout_for(variant, n).pairs
        K, C, P = len(self.kinds), len(self.colours), len(self.pairs)
        seat_block = P + 2 * C + K + 5
        blocks = [
            ("phase", len(PHASES)),
            ("scalars", 5),
            ("hand", K),
            ("discard", K),
            ("seats", n * seat_block),
            ("effect", len(EFFECTS)),
            ("pending", 3),
            ("by", n),
            ("target", n),
            ("take", P),
            ("give", P),
            ("colour", C),
        ]
        self.n, self.seat_block = n, seat_block
        self.slices: dict[str, slice] = {}
        at = 0
        for name, size in blocks:
            self.slices[name] = slice(at, at + size)
            at += size
        self.size = at
        self.kpos = {k: i for i, k in enumerate(self.kinds)}
        self.cpos = {c: i for i, c in enumerate(self.colours)}
        self.ppos = {pc: i for i, pc in enumerate(self.pairs)}


@lru_cache(maxsize=None)
def tensor_layout(variant: str, n: int) -> Layout:
    return Layout(variant, n)


def encode(s: "MonopolyDealState", p: int) -> np.ndarray:
    L = tensor_layout(s.rules.variant, s.n)
    sl = L.slices
    x = np.zeros(L.size, dtype=np.float32)
    phase = "chance" if s.phase in ("deal", "draw") else s.phase
    x[sl["phase"].start + PHASES.index(phase)] = 1
    deck = s.rules.deck_size
    x[sl["scalars"]] = [
        s.current_player() == p,
        s.plays_left / s.rules.plays_per_turn,
        s.turn / s.cfg.max_turns,
        s.draw_total / deck,
        sum(s.discard) / deck,
    ]
    h0, d0 = sl["hand"].start, sl["discard"].start
    for i, k in enumerate(L.kinds):
        x[h0 + i] = s.hands[p][k]
        x[d0 + i] = s.discard[k]
    C, P, K = len(L.colours), len(L.pairs), len(L.kinds)
    for r, q in enumerate([p] + s.others(p)):
        b = sl["seats"].start + r * L.seat_block
        for c in L.colours:
            for k in s.props[q][c]:
                x[b + L.ppos[(k, c)]] += 1
            x[b + P + L.cpos[c]] = s.house[q][c]
            x[b + P + C + L.cpos[c]] = s.hotel[q][c]
        for i, k in enumerate(L.kinds):
            x[b + P + 2 * C + i] = s.banks[q][k]
        e = b + P + 2 * C + K
        x[e : e + 5] = [s.bank_value(q) / 10, s.hand_size[q] / 7, s.complete_sets(q), q == s.player, q == s.target]
    eff = s.effect
    if eff is not None:
        x[sl["effect"].start + EFFECTS.index(eff["op"])] = 1
        x[sl["pending"]] = [s.owed / 10, eff.get("amount", 0) / 10, s.jsn_count]
        rel = {q: r for r, q in enumerate([p] + s.others(p))}
        x[sl["by"].start + rel[eff["by"]]] = 1
        if s.target >= 0:
            x[sl["target"].start + rel[s.target]] = 1
        elif "target" in eff:
            x[sl["target"].start + rel[eff["target"]]] = 1
        for key in ("take", "give"):
            if key in eff:
                x[sl[key].start + L.ppos[eff[key]]] = 1
        if "colour" in eff:
            x[sl["colour"].start + L.cpos[eff["colour"]]] = 1
    return x


# -- decoding (for scripted agents and the abstraction: they read only the tensor) ---------------
class PlayerView:
    """A player's observation tensor read back into named parts, with absolute seats.

    ``props[q][c]`` lists the kind ids on seat ``q``'s colour ``c`` (all colours, unused ones
    empty), ``banks[q]`` maps kind id to count; ``hand`` likewise for the observer.
    """

    def __init__(self, x: np.ndarray, variant: str, n: int, me: int) -> None:
        L = tensor_layout(variant, n)
        sl = L.slices
        x = np.asarray(x).reshape(-1)
        self.n, self.me, self.variant = n, me, variant
        self.phase = PHASES[int(np.argmax(x[sl["phase"]]))]
        sc = x[sl["scalars"]]
        from arena.games.monopoly_deal.cards import rules_for

        self.rules = rules_for(variant)
        self.acting = bool(sc[0])
        self.plays_left = int(round(sc[1] * self.rules.plays_per_turn))
        self.draw_left = int(round(sc[3] * self.rules.deck_size))
        self.hand = {k: int(round(x[sl["hand"].start + i])) for i, k in enumerate(L.kinds) if x[sl["hand"].start + i]}
        self.discard = {
            k: int(round(x[sl["discard"].start + i])) for i, k in enumerate(L.kinds) if x[sl["discard"].start + i]
        }
        NC = len(COLOURS)
        C, P, K = len(L.colours), len(L.pairs), len(L.kinds)
        self.props = [[[] for _ in range(NC)] for _ in range(n)]
        self.house = [[False] * NC for _ in range(n)]
        self.hotel = [[False] * NC for _ in range(n)]
        self.banks: list[dict[int, int]] = [{} for _ in range(n)]
        self.hand_size = [0] * n
        self.turn_player = -1
        for r in range(n):
            q = (me + r) % n
            b = sl["seats"].start + r * L.seat_block
            for i, (k, c) in enumerate(L.pairs):
                self.props[q][c] += [k] * int(round(x[b + i]))
            for i, c in enumerate(L.colours):
                self.house[q][c] = bool(x[b + P + i])
                self.hotel[q][c] = bool(x[b + P + C + i])
            for i, k in enumerate(L.kinds):
                if x[b + P + 2 * C + i]:
                    self.banks[q][k] = int(round(x[b + P + 2 * C + i]))
            e = b + P + 2 * C + K
            self.hand_size[q] = int(round(x[e + 1] * 7))
            if x[e + 3]:
                self.turn_player = q
        eff = x[sl["effect"]]
        self.effect = EFFECTS[int(np.argmax(eff))] if eff.any() else None
        self.owed = int(round(x[sl["pending"].start] * 10))
        self.amount = int(round(x[sl["pending"].start + 1] * 10))
        self.jsn_count = int(round(x[sl["pending"].start + 2]))

        def seat_of(block: str) -> int:
            v = x[sl[block]]
            return (me + int(np.argmax(v))) % n if v.any() else -1

        def pair_of(block: str) -> tuple[int, int] | None:
            v = x[sl[block]]
            return L.pairs[int(np.argmax(v))] if v.any() else None

        self.by, self.target = seat_of("by"), seat_of("target")
        self.take, self.give = pair_of("take"), pair_of("give")
        col = x[sl["colour"]]
        self.colour = L.colours[int(np.argmax(col))] if col.any() else -1

    @classmethod
    def from_state(cls, s: "MonopolyDealState", p: int) -> "PlayerView":
        """The same view built straight from the state (what ``p`` may know only; equal to
        decoding ``encode(s, p)``, which the tests check) — for solvers that cannot afford the
        tensor round trip. It shares the state's lists: read it before the state moves on."""
        v = cls.__new__(cls)
        n = s.n
        v.n, v.me, v.variant, v.rules = n, p, s.rules.variant, s.rules
        v.phase = "chance" if s.phase in ("deal", "draw") else s.phase
        v.acting = s.current_player() == p
        v.plays_left, v.draw_left = s.plays_left, s.draw_total
        v.hand = {k: c for k, c in enumerate(s.hands[p]) if c}
        v.discard = {k: c for k, c in enumerate(s.discard) if c}
        v.props, v.house, v.hotel, v.hand_size = s.props, s.house, s.hotel, s.hand_size
        v.banks = [{k: c for k, c in enumerate(b) if c} for b in s.banks]
        v.turn_player = s.player
        e = s.effect
        v.effect = e["op"] if e else None
        v.owed, v.jsn_count = s.owed, s.jsn_count
        v.amount = e.get("amount", 0) if e else 0
        v.by = e["by"] if e else -1
        v.target = s.target if s.target >= 0 else (e.get("target", -1) if e else -1)
        v.take, v.give = (e.get("take"), e.get("give")) if e else (None, None)
        v.colour = e.get("colour", -1) if e else -1
        return v

    # facts shared with the state (same functions)
    def complete(self, q: int, c: int) -> bool:
        from arena.games.monopoly_deal.cards import pile_complete

        return pile_complete(self.props[q][c], c)

    def complete_sets(self, q: int) -> int:
        return sum(1 for c in self.rules.colour_ids if self.complete(q, c))

    def rent(self, q: int, c: int) -> int:
        from arena.games.monopoly_deal.cards import pile_rent

        return pile_rent(self.props[q][c], c, self.house[q][c], self.hotel[q][c])

    def bank_value(self, q: int) -> int:
        return sum(KINDS[k].value * c for k, c in self.banks[q].items())

    def assets(self, q: int) -> int:
        """What ``q`` could pay with: bank, table properties, buildings."""
        return (
            self.bank_value(q)
            + sum(KINDS[k].value for pile in self.props[q] for k in pile)
            + 3 * sum(self.house[q])
            + 4 * sum(self.hotel[q])
        )

    def need(self, q: int, c: int) -> int:
        """Cards ``q`` still lacks to complete colour ``c``."""
        return max(0, len(RENTS[COLOURS[c]]) - len(self.props[q][c])) if not self.complete(q, c) else 0
