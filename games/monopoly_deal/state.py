"""The Monopoly Deal state machine: turns of draw → up to N plays → end (discard to 7), with
bounded one-sided responses inside a turn.

A card that targets other players (rent, Debt Collector, It's My Birthday, Sly/Forced Deal,
Deal Breaker) hands control to each target in turn: first a *respond* decision (Just Say No or
accept; a Just Say No hands control back to the initiator, who may answer with one of its own,
and so on), then, for a debt, a *pay* sub-phase in which the target pays one asset at a time
until the debt is covered or its bank and table are empty. Control then returns to the player
whose turn it is, mid-turn. The target is always asked, even without a Just Say No in hand, so
the turn structure never reveals a hand. The pending obligation (creditor, amount still owed,
sub-step) lives in the state and is shown in every observation.

Chance is explicit and only at draws: each drawn card is a chance node over the kinds left in
the draw pile, weighted by their counts (the same distribution as drawing from a shuffled
deck), so no deck order exists to leak. When the draw pile runs out, the discard pile becomes
the new draw pile ("shuffled": draws from it are again uniform).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.game import CHANCE, TERMINAL, Action, GameSpec, IllegalActionError, State
from arena.games.monopoly_deal.cards import (
    COLOURS,
    DOUBLE_RENT,
    JUST_SAY_NO,
    KINDS,
    NO_BUILDINGS,
    RENTS,
    WILD,
    kind,
    pile_complete,
    pile_rent,
)
from arena.games.monopoly_deal.rules import ActionLayout, MonopolyDealConfig, layout_for

NC = len(COLOURS)
JSN = kind(JUST_SAY_NO).id
DTR = kind(DOUBLE_RENT).id
HOUSE_ID, HOTEL_ID = kind("House").id, kind("Hotel").id
SIZE = [len(RENTS[c]) for c in COLOURS]
DEBTS = ("rent", "debt", "birthday")
END = 0
"""Id of ``("end",)``, the first move of every layout."""
"""Effects that make the target pay."""


def seat(p: int) -> str:
    return f"player {p}"


class MonopolyDealState(State):
    """One Monopoly Deal history. Player ids ``0..n-1``; player 0 takes the first turn."""

    def __init__(self, spec: GameSpec, cfg: MonopolyDealConfig) -> None:
        n = cfg.players
        K = len(KINDS)
        self.spec, self.cfg, self.n = spec, cfg, n
        self.rules = cfg.rules
        self.colour_ids = self.rules.colour_ids
        self.layout: ActionLayout = layout_for(cfg.variant, n)
        self.drawpile = list(self.rules.deck)
        self.draw_total = sum(self.drawpile)
        self.discard = [0] * K
        self.hands = [[0] * K for _ in range(n)]
        self.hand_size = [0] * n
        self.banks = [[0] * K for _ in range(n)]
        self.props: list[list[list[int]]] = [[[] for _ in range(NC)] for _ in range(n)]
        self.house = [[False] * NC for _ in range(n)]
        self.hotel = [[False] * NC for _ in range(n)]
        self.locked: dict[tuple[int, int], int] = {}
        self.turn = 0
        self.player = n - 1  # the first turn goes to player 0
        self.plays_left = 0
        self.phase = "deal"
        self.drawing: list[int] = [p for p in range(n) for _ in range(self.rules.hand_size)]
        self.after_draw = "start"
        self.effect: dict[str, Any] | None = None
        self.target = -1
        self.jsn_by = -1
        self.jsn_count = 0
        self.owed = 0
        self.winner = -1
        self.truncated = False
        self.history: list[Action] = []
        self.decisions = 0
        self.logs: list[list[str]] = [[] for _ in range(n)]
        self.transcript: list[str] = []
        self._legal: list[int] | None = None

    # -- contract ---------------------------------------------------------------------------
    def num_players(self) -> int:
        return self.n

    def current_player(self) -> int:
        ph = self.phase
        if ph in ("play", "take", "give", "discard"):
            return self.player
        if ph == "respond":
            return self.jsn_by
        if ph == "pay":
            return self.target
        if ph in ("deal", "draw"):
            return CHANCE
        return TERMINAL

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.phase not in ("deal", "draw"):
            return []
        t = self.draw_total
        return [(k, c / t) for k, c in enumerate(self.drawpile) if c]

    def legal_actions(self, player: int | None = None) -> list[int]:
        cur = self.current_player()
        if player is None:
            player = cur
        if cur == CHANCE and player == CHANCE:
            return [k for k, c in enumerate(self.drawpile) if c]
        if player != cur or cur < 0:
            return []
        if self._legal is None:
            ids = self.layout.ids
            self._legal = sorted(ids[m] for m in self.legal_moves())
        return list(self._legal)

    def apply_action(self, action: Action) -> None:
        cur = self.current_player()
        if cur == TERMINAL:
            raise IllegalActionError("monopoly_deal: the game is over")
        if isinstance(action, str):
            raise IllegalActionError("monopoly_deal: moves are action ids, not text")
        action = int(action)
        if cur == CHANCE:
            if not 0 <= action < len(self.drawpile) or not self.drawpile[action]:
                raise IllegalActionError(f"monopoly_deal: {action} is not a card left in the draw pile")
            self.history.append(action)
            self._drawn(action)
            return
        if action not in self.legal_actions(cur):
            raise IllegalActionError(f"monopoly_deal: {action} is not a legal move for {seat(cur)} ({self.phase})")
        self.history.append(action)
        self.decisions += 1
        move = self.layout.moves[action]
        self._legal = None
        getattr(self, "_do_" + move[0])(cur, *move[1:])
        self._legal = None
        self._settle()

    def returns(self) -> list[float]:
        if self.winner < 0:
            return [0.0] * self.n
        lose = -1.0 / (self.n - 1)
        return [1.0 if p == self.winner else lose for p in range(self.n)]

    def clone(self) -> "MonopolyDealState":
        c = MonopolyDealState.__new__(MonopolyDealState)
        c.__dict__.update(self.__dict__)
        c.drawpile, c.discard, c.hand_size = list(self.drawpile), list(self.discard), list(self.hand_size)
        c.hands = [list(h) for h in self.hands]
        c.banks = [list(b) for b in self.banks]
        c.props = [[list(pile) for pile in mine] for mine in self.props]
        c.house = [list(h) for h in self.house]
        c.hotel = [list(h) for h in self.hotel]
        c.locked = dict(self.locked)
        c.drawing = list(self.drawing)
        c.effect = None if self.effect is None else {**self.effect, "queue": list(self.effect["queue"])}
        c.history = list(self.history)
        c.logs = [list(x) for x in self.logs]
        c.transcript = list(self.transcript)
        return c

    # -- renderings (view.py) -----------------------------------------------------------------
    def action_label(self, player: int, action: int) -> str:
        from arena.games.monopoly_deal.view import label

        if player == CHANCE:
            return f"draw {KINDS[action].name}"
        return label(self, player, self.layout.moves[action])

    def information_state_key(self, player: int) -> str:
        from arena.games.monopoly_deal.view import phase_tag

        return f"{seat(player)}\n" + "\n".join(self.logs[player]) + "\n" + phase_tag(self, player)

    def observation_text(self, player: int) -> str:
        from arena.games.monopoly_deal.view import render_text

        return render_text(self, player)

    def observation_struct(self, player: int) -> dict[str, Any]:
        from arena.games.monopoly_deal.view import render_struct

        return render_struct(self, player)

    def observation_tensor(self, player: int) -> np.ndarray:
        from arena.games.monopoly_deal.view import encode

        return encode(self, player)

    def outcome_info(self) -> dict[str, Any]:
        return {
            "winner": self.winner if self.winner >= 0 else None,
            "truncated": self.truncated,
            "turns": self.turn,
            "decisions": self.decisions,
            "complete_sets": [self.complete_sets(p) for p in range(self.n)],
            "transcript": list(self.transcript),
        }

    def summary(self) -> str:
        if self.winner >= 0:
            return f"{seat(self.winner)} wins on turn {self.turn} with {self.complete_sets(self.winner)} complete sets"
        return f"turn limit ({self.cfg.max_turns}) reached: draw"

    # -- facts --------------------------------------------------------------------------------
    def is_complete(self, p: int, c: int) -> bool:
        return pile_complete(self.props[p][c], c)

    def complete_sets(self, p: int) -> int:
        return sum(1 for c in self.colour_ids if pile_complete(self.props[p][c], c))

    def rent(self, p: int, c: int) -> int:
        """Rent ``p`` may charge for colour ``c`` (0 when it holds none there, or only the any-colour wild)."""
        return pile_rent(self.props[p][c], c, self.house[p][c], self.hotel[p][c])

    def bank_value(self, p: int) -> int:
        return sum(KINDS[k].value * c for k, c in enumerate(self.banks[p]) if c)

    def table_value(self, p: int) -> int:
        return (
            sum(KINDS[k].value for pile in self.props[p] for k in pile)
            + 3 * sum(self.house[p])
            + 4 * sum(self.hotel[p])
        )

    def others(self, p: int) -> list[int]:
        """The other players in turn order after ``p``."""
        return [(p + i) % self.n for i in range(1, self.n)]

    # -- legal moves ----------------------------------------------------------------------------
    def legal_moves(self) -> list[tuple]:
        ph = self.phase
        if ph == "play":
            return self._play_moves()
        if ph == "respond":
            out: list[tuple] = [("accept",)]
            if self.hands[self.jsn_by][JSN] and (self.jsn_count % 2 == 0 or self.rules.jsn_counter):
                out.append(("jsn",))
            return out
        if ph == "pay":
            return self._pay_moves(self.target)
        if ph == "take":
            t = self.effect["target"]
            return [("take", k, c) for c in range(NC) if not self.is_complete(t, c) for k in set(self.props[t][c])]
        if ph == "give":
            p = self.player
            return [("give", k, c) for c in range(NC) if not self.is_complete(p, c) for k in set(self.props[p][c])]
        if ph == "discard":
            return [("discard", k) for k, c in enumerate(self.hands[self.player]) if c]
        return []

    def _free_moves(self, p: int) -> list[tuple]:
        """Moving a two-colour or any-colour wild on your own table: free, each card once per turn."""
        out = []
        allowed = self.rules.colours
        for a in range(NC):
            pile = self.props[p][a]
            for k in set(pile):
                if KINDS[k].type != WILD or pile.count(k) <= self.locked.get((k, a), 0):
                    continue
                out += [
                    ("move", k, a, b) for b in (COLOURS.index(x) for x in KINDS[k].colours if x in allowed) if b != a
                ]
        return out

    def _play_moves(self) -> list[tuple]:
        p, r = self.player, self.rules
        out: list[tuple] = [("end",)] + self._free_moves(p)
        if self.plays_left <= 0:
            return out
        hand = self.hands[p]
        others = self.others(p)
        colours = [COLOURS.index(c) for c in r.colours]
        for k, cnt in enumerate(hand):
            if not cnt:
                continue
            card = KINDS[k]
            if r.can_bank(card):
                out.append(("bank", k))
            if card.is_property:
                out += [("place", k, COLOURS.index(c)) for c in card.colours if c in r.colours]
                continue
            name = card.name
            if card.type == "rent":
                doubles = range(min(hand[DTR], self.plays_left - 1, 2) + 1)
                chargeable = [c for c in colours if COLOURS[c] in card.colours and self.rent(p, c) > 0]
                if len(card.colours) > 2:
                    out += [("wildrent", c, t, d) for c in chargeable for t in others for d in doubles]
                else:
                    out += [("rent", k, c, d) for c in chargeable for d in doubles]
            elif name == "Pass Go":
                out.append(("passgo",))
            elif name == "It's My Birthday":
                out.append(("birthday",))
            elif name == "Debt Collector":
                out += [("debt", t) for t in others]
            elif name == "Sly Deal":
                out += [("sly", t) for t in others if self._loose(t)]
            elif name == "Forced Deal":
                if self._loose(p):
                    out += [("forced", t) for t in others if self._loose(t)]
            elif name == "Deal Breaker":
                out += [("dealbreaker", t, c) for t in others for c in colours if self.is_complete(t, c)]
            elif name == "House":
                out += [
                    ("house", c)
                    for c in colours
                    if self.is_complete(p, c) and not self.house[p][c] and COLOURS[c] not in NO_BUILDINGS
                ]
            elif name == "Hotel":
                out += [
                    ("hotel", c)
                    for c in colours
                    if self.is_complete(p, c) and self.house[p][c] and not self.hotel[p][c]
                ]
        return out

    def _loose(self, p: int) -> bool:
        """``p`` has a property outside complete sets (what Sly and Forced Deal may take)."""
        return any(pile and not self.is_complete(p, c) for c, pile in enumerate(self.props[p]))

    def _pay_moves(self, p: int) -> list[tuple]:
        out: list[tuple] = [("paybank", v) for v in sorted({KINDS[k].value for k, c in enumerate(self.banks[p]) if c})]
        for c in range(NC):
            for k in set(self.props[p][c]):
                if KINDS[k].value > 0:
                    out.append(("payprop", k, c))
            if self.hotel[p][c]:
                out.append(("paybuilding", c, 1))
            elif self.house[p][c]:
                out.append(("paybuilding", c, 0))
        return out

    # -- events ---------------------------------------------------------------------------------
    def _public(self, line: str) -> None:
        for log in self.logs:
            log.append(line)
        self.transcript.append(line)

    def _private(self, p: int, mine: str, others: str) -> None:
        for q in range(self.n):
            self.logs[q].append(mine if q == p else others)
        self.transcript.append(f"[{seat(p)}] {mine}")

    # -- chance -----------------------------------------------------------------------------------
    def _drawn(self, k: int) -> None:
        p = self.drawing.pop(0)
        self.drawpile[k] -= 1
        self.draw_total -= 1
        self.hands[p][k] += 1
        self.hand_size[p] += 1
        self._private(p, f"You draw {KINDS[k].short()}.", f"{seat(p)} draws a card.")
        self._legal = None
        self._settle()

    def _settle(self) -> None:
        """Run everything that needs no decision: reshuffles, finished draws, turn ends."""
        while True:
            if self.phase in ("deal", "draw"):
                if self.drawing and self.draw_total == 0:
                    self._reshuffle()
                    if self.draw_total == 0:
                        self._public("The draw pile and the discard pile are empty: no card is drawn.")
                        self.drawing = []
                if self.drawing:
                    return
                nxt, self.after_draw = self.after_draw, ""
                if nxt == "start":
                    self._start_turn()
                    continue
                self.phase = "play"
                continue
            if self.phase == "play" and self.legal_actions() == [END]:
                self._do_end(self.player)  # nothing left to decide this turn
                self._legal = None
                continue
            return

    def _reshuffle(self) -> None:
        moved = sum(self.discard)
        if not moved:
            return
        for k, c in enumerate(self.discard):
            self.drawpile[k] += c
        self.draw_total += moved
        self.discard = [0] * len(KINDS)
        self._public(f"The draw pile is empty: the discard pile ({moved} cards) is shuffled into a new draw pile.")

    def _start_turn(self) -> None:
        if self.turn >= self.cfg.max_turns:
            self.truncated = True
            self.phase = "over"
            self._public(f"Turn limit ({self.cfg.max_turns}) reached: the game is a draw.")
            return
        self.turn += 1
        self.player = (self.player + 1) % self.n
        p = self.player
        self.plays_left = self.rules.plays_per_turn
        self.locked = {}
        count = self.rules.empty_hand_draw if self.hand_size[p] == 0 else self.rules.draw_per_turn
        self._public(f"Turn {self.turn}: {seat(p)}'s turn.")
        self.drawing = [p] * count
        self.after_draw = "play"
        self.phase = "draw"

    # -- card movements ---------------------------------------------------------------------------
    def _from_hand(self, p: int, k: int, to_discard: bool = True) -> None:
        self.hands[p][k] -= 1
        self.hand_size[p] -= 1
        if to_discard:
            self.discard[k] += 1

    def _remove_property(self, p: int, k: int, c: int) -> None:
        """Take one ``k`` off ``p``'s colour ``c``; a set broken by it sends its buildings to the bank."""
        was = self.is_complete(p, c)
        self.props[p][c].remove(k)
        if was and not self.is_complete(p, c):
            self._drop_buildings(p, c)

    def _drop_buildings(self, p: int, c: int) -> None:
        for flags, kid, name in ((self.hotel, HOTEL_ID, "Hotel"), (self.house, HOUSE_ID, "House")):
            if flags[p][c]:
                flags[p][c] = False
                self.banks[p][kid] += 1
                self._public(f"{seat(p)}'s {COLOURS[c]} set is broken: its {name} goes to {seat(p)}'s bank.")

    def _receive_property(self, q: int, k: int, c: int) -> None:
        """``q`` gets property ``k`` that sat in colour ``c``: a wild goes where it completes a set,
        else where ``q`` holds most of a colour, else back to ``c`` (``q`` may move it later)."""
        colours = [COLOURS.index(x) for x in KINDS[k].colours if x in self.rules.colours]
        if len(colours) > 1:

            def score(x: int) -> tuple:
                pile = self.props[q][x]
                fills = not self.is_complete(q, x) and len(pile) + 1 >= SIZE[x]
                return (fills, 0 < len(pile) < SIZE[x], len(pile) if len(pile) < SIZE[x] else -1, x == c)

            c = max(colours, key=score)
        self.props[q][c].append(k)
        self._check_win(q)

    def _check_win(self, q: int) -> None:
        if self.winner < 0 and self.complete_sets(q) >= self.rules.sets_to_win:
            self.winner = q
            self.phase = "over"
            self._public(f"{seat(q)} has {self.complete_sets(q)} complete sets and wins.")

    # -- own-turn moves -------------------------------------------------------------------------
    def _play(self, p: int, plays: int = 1) -> None:
        self.plays_left -= plays

    def _do_end(self, p: int) -> None:
        self._public(f"{seat(p)} ends the turn.")
        self.phase = "discard"
        self._after_discard()

    def _after_discard(self) -> None:
        if self.hand_size[self.player] > self.rules.hand_limit:
            self.phase = "discard"
            return
        self._start_turn()

    def _do_discard(self, p: int, k: int) -> None:
        self._from_hand(p, k)
        self._public(f"{seat(p)} discards {KINDS[k].short()} (hand limit {self.rules.hand_limit}).")
        self._after_discard()

    def _do_bank(self, p: int, k: int) -> None:
        self._from_hand(p, k, to_discard=False)
        self.banks[p][k] += 1
        self._play(p)
        self._public(f"{seat(p)} banks {KINDS[k].short()}.")

    def _do_place(self, p: int, k: int, c: int) -> None:
        self._from_hand(p, k, to_discard=False)
        self.props[p][c].append(k)
        self._play(p)
        name = KINDS[k].name if KINDS[k].type != WILD else f"{KINDS[k].name} as {COLOURS[c]}"
        self._public(f"{seat(p)} plays {name} ({COLOURS[c]} {len(self.props[p][c])}/{SIZE[c]}).")
        self._check_win(p)

    def _do_move(self, p: int, k: int, a: int, b: int) -> None:
        self._remove_property(p, k, a)
        self.props[p][b].append(k)
        self.locked[(k, b)] = self.locked.get((k, b), 0) + 1
        self._public(f"{seat(p)} moves {KINDS[k].name} from {COLOURS[a]} to {COLOURS[b]}.")
        self._check_win(p)

    def _do_passgo(self, p: int) -> None:
        self._from_hand(p, kind("Pass Go").id)
        self._play(p)
        self._public(f"{seat(p)} plays Pass Go and draws 2 cards.")
        self.drawing = [p, p]
        self.after_draw = "play"
        self.phase = "draw"

    def _begin(self, op: str, p: int, targets: list[int], **info: Any) -> None:
        self.effect = {"op": op, "by": p, "queue": list(targets), **info}
        self._next_target()

    def _next_target(self) -> None:
        """Hand control to the effect's next target, or back to the turn player when none is left."""
        e = self.effect
        if self.phase == "over":
            self.effect = None
            return
        if not e["queue"]:
            self.effect = None
            self.target = self.jsn_by = -1
            self.jsn_count = self.owed = 0
            self.phase = "play"
            return
        self.target = e["queue"].pop(0)
        self.jsn_by, self.jsn_count, self.owed = self.target, 0, 0
        self.phase = "respond"

    def _do_birthday(self, p: int) -> None:
        self._from_hand(p, kind("It's My Birthday").id)
        self._play(p)
        self._public(f"{seat(p)} plays It's My Birthday: every other player owes {seat(p)} $2M.")
        self._begin("birthday", p, self.others(p), amount=2)

    def _do_debt(self, p: int, t: int) -> None:
        self._from_hand(p, kind("Debt Collector").id)
        self._play(p)
        self._public(f"{seat(p)} plays Debt Collector: {seat(t)} owes {seat(p)} $5M.")
        self._begin("debt", p, [t], amount=5)

    def _charge(self, p: int, card: int, c: int, targets: list[int], doubles: int) -> None:
        self._from_hand(p, card)
        for _ in range(doubles):
            self._from_hand(p, DTR)
        self._play(p, 1 + doubles)
        amount = self.rent(p, c) * 2**doubles
        who = "every other player" if len(targets) > 1 else seat(targets[0])
        dbl = f", doubled {'twice ' if doubles == 2 else ''}by Double The Rent" if doubles else ""
        self._public(f"{seat(p)} plays {KINDS[card].name} on {COLOURS[c]}{dbl}: {who} owes {seat(p)} ${amount}M rent.")
        self._begin("rent", p, targets, amount=amount, colour=c)

    def _do_rent(self, p: int, k: int, c: int, d: int) -> None:
        self._charge(p, k, c, self.others(p), d)

    def _do_wildrent(self, p: int, c: int, t: int, d: int) -> None:
        self._charge(p, kind("Rent (any colour)").id, c, [t], d)

    def _do_sly(self, p: int, t: int) -> None:
        self._from_hand(p, kind("Sly Deal").id)
        self._play(p)
        self._public(f"{seat(p)} plays Sly Deal against {seat(t)}.")
        self.effect = {"op": "sly", "by": p, "target": t, "queue": []}
        self.phase = "take"

    def _do_forced(self, p: int, t: int) -> None:
        self._from_hand(p, kind("Forced Deal").id)
        self._play(p)
        self._public(f"{seat(p)} plays Forced Deal against {seat(t)}.")
        self.effect = {"op": "forced", "by": p, "target": t, "queue": []}
        self.phase = "take"

    def _do_take(self, p: int, k: int, c: int) -> None:
        e = self.effect
        e["take"] = (k, c)
        self._public(f"{seat(p)} asks for {seat(e['target'])}'s {KINDS[k].name} ({COLOURS[c]}).")
        if e["op"] == "forced":
            self.phase = "give"
            return
        self._begin("sly", p, [e["target"]], take=(k, c))

    def _do_give(self, p: int, k: int, c: int) -> None:
        e = self.effect
        self._public(f"{seat(p)} offers {KINDS[k].name} ({COLOURS[c]}) in exchange.")
        self._begin("forced", p, [e["target"]], take=e["take"], give=(k, c))

    def _do_dealbreaker(self, p: int, t: int, c: int) -> None:
        self._from_hand(p, kind("Deal Breaker").id)
        self._play(p)
        self._public(f"{seat(p)} plays Deal Breaker on {seat(t)}'s complete {COLOURS[c]} set.")
        self._begin("dealbreaker", p, [t], colour=c)

    def _do_house(self, p: int, c: int) -> None:
        self._from_hand(p, HOUSE_ID, to_discard=False)
        self.house[p][c] = True
        self._play(p)
        self._public(f"{seat(p)} builds a House on the {COLOURS[c]} set.")

    def _do_hotel(self, p: int, c: int) -> None:
        self._from_hand(p, HOTEL_ID, to_discard=False)
        self.hotel[p][c] = True
        self._play(p)
        self._public(f"{seat(p)} builds a Hotel on the {COLOURS[c]} set.")

    # -- responses (the bounded one-sided part) ----------------------------------------------------
    def _do_jsn(self, p: int) -> None:
        self._from_hand(p, JSN)
        self.jsn_count += 1
        e = self.effect
        self._public(f"{seat(p)} plays Just Say No.")
        if not self.rules.jsn_counter:
            self._public(f"{seat(e['by'])}'s {e['op']} against {seat(self.target)} is cancelled.")
            self._next_target()
            return
        self.jsn_by = e["by"] if p == self.target else self.target

    def _do_accept(self, p: int) -> None:
        e = self.effect
        t = self.target
        if self.jsn_count % 2 == 1:
            self._public(f"{seat(p)} accepts: the {e['op']} against {seat(t)} is cancelled.")
            self._next_target()
            return
        op, by = e["op"], e["by"]
        if op in DEBTS:
            self.owed = e["amount"]
            if not self._pay_moves(t):
                self._public(f"{seat(t)} has nothing to pay {seat(by)} with.")
                self._next_target()
                return
            self._public(f"{seat(t)} must pay {seat(by)} ${self.owed}M.")
            self.phase = "pay"
            return
        if op == "sly":
            k, c = e["take"]
            self._remove_property(t, k, c)
            self._public(f"{seat(by)} takes {seat(t)}'s {KINDS[k].name}.")
            self._receive_property(by, k, c)
        elif op == "forced":
            (k, c), (g, gc) = e["take"], e["give"]
            self._remove_property(t, k, c)
            self._remove_property(by, g, gc)
            self._public(f"{seat(by)} swaps {KINDS[g].name} for {seat(t)}'s {KINDS[k].name}.")
            self._receive_property(by, k, c)
            self._receive_property(t, g, gc)
        elif op == "dealbreaker":
            c = e["colour"]
            pile, self.props[t][c] = self.props[t][c], []
            self.props[by][c].extend(pile)
            for flags, kid in ((self.house, HOUSE_ID), (self.hotel, HOTEL_ID)):
                if flags[t][c]:
                    flags[t][c] = False
                    if flags[by][c]:
                        self.banks[by][kid] += 1
                    else:
                        flags[by][c] = True
            self._public(f"{seat(by)} takes {seat(t)}'s {COLOURS[c]} set.")
            self._check_win(by)
        self._next_target()

    def _paid(self, p: int, value: int, what: str, deliver: Any = None) -> None:
        """Log one payment, hand the asset over (``deliver``), then go on or end the debt."""
        self.owed -= value
        by = self.effect["by"]
        left = f"; ${self.owed}M still owed" if self.owed > 0 else ""
        self._public(f"{seat(p)} pays {seat(by)} {what}{left}.")
        if deliver is not None:
            deliver()
        if self.phase == "over":
            self.effect = None
            return
        if self.owed <= 0 or not self._pay_moves(p):
            if self.owed > 0:
                self._public(f"{seat(p)} has nothing left to pay with; the rest is forgiven.")
            self._next_target()

    def _do_paybank(self, p: int, v: int) -> None:
        k = min(k for k, c in enumerate(self.banks[p]) if c and KINDS[k].value == v)
        self.banks[p][k] -= 1
        self.banks[self.effect["by"]][k] += 1
        self._paid(p, v, KINDS[k].short() + " from the bank")

    def _do_payprop(self, p: int, k: int, c: int) -> None:
        by = self.effect["by"]
        self._remove_property(p, k, c)
        if self.rules.paid_property_to_bank:
            self.banks[by][k] += 1
            self._paid(p, KINDS[k].value, f"{KINDS[k].name} from the table (${KINDS[k].value}M, into the bank)")
        else:
            self._paid(
                p,
                KINDS[k].value,
                f"{KINDS[k].name} from the table (${KINDS[k].value}M)",
                lambda: self._receive_property(by, k, c),
            )

    def _do_paybuilding(self, p: int, c: int, h: int) -> None:
        flags, kid = (self.hotel, HOTEL_ID) if h else (self.house, HOUSE_ID)
        flags[p][c] = False
        self.banks[self.effect["by"]][kid] += 1
        self._paid(p, KINDS[kid].value, f"the {KINDS[kid].name} from the {COLOURS[c]} set (${KINDS[kid].value}M)")
