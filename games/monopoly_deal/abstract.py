"""``monopoly_deal_intents``: the intent-level abstraction of the 2-player (``paper``) variant,
as its own game for MCCFR (after Wolf, arXiv 2510.25080: plain MCCFR on a small intent
abstraction converges).

A state wraps a real ``monopoly_deal(variant=paper)`` state; its draws are sampled inside from the
seed (the sampling solvers pass one per traversal). Actions are *intents* — complete a set, add to a set, start a set, bank cash, bank a
property, charge rent, end the turn, Just Say No, accept, pay with cash, pay with property,
discard — and each maps to one concrete move by the card-level choices of :mod:`.tactics`. The
info-state key is a coarse, **imperfect-recall** summary of what the player sees (complete sets
and near-complete sets on both sides, the rent or debt at stake, the intents on offer), so the game has
no tree view (``GameSpec.tree`` is false) and is solved by sampling (``os-mccfr``). The same
two functions, :func:`intents` and :func:`abstract_key`, serve the ``monopoly_deal_mccfr`` agent
in the real game, computed from its observation.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from arena.errors import ArenaError
from arena.game import Game, GameEntry, GameSpec, IllegalActionError, State
from arena.match import sample_chance
from arena.rng import GameRandom
from arena.games.monopoly_deal.cards import COLOURS, KINDS, RENTS
from arena.games.monopoly_deal.state import MonopolyDealState
from arena.games.monopoly_deal.tactics import asset_cost, choose_payment, keep_value, progress
from arena.games.monopoly_deal.view import PlayerView

INTENTS = ("end turn", "complete a set", "add to a set", "start a set", "bank cash", "bank a property",
           "charge rent", "Just Say No", "accept", "pay with cash", "pay with property", "discard")
(END, COMPLETE, ADD, START, BANK_CASH, BANK_PROPERTY, RENT, JSN, ACCEPT, PAY_CASH, PAY_PROPERTY,
 DISCARD) = range(len(INTENTS))


def _bucket(x: int) -> int:
    """$ amounts: 0, 1-2, 3-4, 5+."""
    return 0 if x <= 0 else 1 if x <= 2 else 2 if x <= 4 else 3


def intents(v: PlayerView, moves: list[tuple]) -> dict[int, tuple]:
    """The intents on offer at this decision, each with the concrete move it stands for."""
    me = v.me
    out: dict[int, tuple] = {}
    ph = v.phase
    if ph == "respond":
        return {ACCEPT: ("accept",), **({JSN: ("jsn",)} if ("jsn",) in moves else {})}
    if ph == "pay":
        bank = [m for m in moves if m[0] == "paybank"]
        table = [m for m in moves if m[0] != "paybank"]
        if bank:
            out[PAY_CASH] = choose_payment(v, bank)
        if table:
            out[PAY_PROPERTY] = min(table, key=lambda m: asset_cost(v, m))
        return out
    if ph == "discard":
        return {DISCARD: min(moves, key=lambda m: keep_value(v, m[1]))}
    if ph != "play":
        raise ArenaError(f"monopoly_deal_intents: no intents for phase {ph!r}")
    out[END] = ("end",)
    places: dict[int, list[tuple]] = {}
    for m in moves:
        if m[0] == "place":
            c = m[2]
            if v.complete(me, c):
                continue  # a property beyond a complete set earns nothing (bank it instead)
            pile = v.props[me][c]
            size = len(RENTS[COLOURS[c]])
            which = START if not pile else COMPLETE if len(pile) + 1 == size else ADD
            places.setdefault(which, []).append(m)
        elif m[0] == "bank":
            places.setdefault(BANK_PROPERTY if KINDS[m[1]].is_property else BANK_CASH, []).append(m)
        elif m[0] == "rent":
            places.setdefault(RENT, []).append(m)
    for which, ms in places.items():
        if which in (COMPLETE, ADD):
            out[which] = max(ms, key=lambda m: (progress(v, me, m[2]), KINDS[m[1]].value))
        elif which == START:
            out[which] = max(ms, key=lambda m: (v.rent(1 - me, m[2]) == 0, KINDS[m[1]].value))
        elif which == BANK_CASH:
            out[which] = max(ms, key=lambda m: KINDS[m[1]].value)
        elif which == BANK_PROPERTY:
            out[which] = min(ms, key=lambda m: (progress(v, me, COLOURS.index(KINDS[m[1]].colours[0])),
                                                -KINDS[m[1]].value))
        elif which == RENT:
            out[which] = max(ms, key=lambda m: v.rent(me, m[2]))
    return out


def _side(v: PlayerView, q: int) -> str:
    """Seat ``q``'s progress: complete sets, and whether some colour is one card short."""
    near = any(v.props[q][c] and not v.complete(q, c) and len(v.props[q][c]) + 1 >= len(RENTS[COLOURS[c]])
               for c in v.rules.colour_ids)
    return f"{v.complete_sets(q)}{int(near)}"


def abstract_key(v: PlayerView, offered: dict[int, tuple]) -> str:
    """Imperfect-recall key, deliberately coarse so that MCCFR visits each key often: the phase,
    the intents on offer, both sides' progress, and the money at stake."""
    me, op = v.me, 1 - v.me
    mask = "".join(str(int(i in offered)) for i in range(len(INTENTS)))
    sides = f"me{_side(v, me)}|op{_side(v, op)}"
    if v.phase == "play":
        rent = v.rent(me, offered[RENT][2]) if RENT in offered else 0
        return f"play|{mask}|p{v.plays_left}|{sides}|r{_bucket(rent)}|a{int(v.assets(op) > 0)}"
    owed = v.owed if v.phase == "pay" else v.amount
    return f"{v.phase}|{mask}|{sides}|o{_bucket(owed)}|c{int(v.bank_value(me) >= owed)}"


class IntentState(State):
    """A real paper-variant state seen through intents.

    Chance (the draws) is sampled inside from the state's own seeded generator, and decisions
    with a single intent on offer are played at once: what is left is only the choices that
    matter, which keeps MCCFR's recursive traversals shallow. A clone copies the generator, so
    a clone replays the same future draws.
    """

    def __init__(self, real: MonopolyDealState, seed: int | None = None) -> None:
        self.real = real
        self.rng = GameRandom(seed or 0, 0)
        self._offer: dict[int, tuple] | None = None
        self._view: PlayerView | None = None
        self._advance()

    def _offered(self) -> dict[int, tuple]:
        if self._offer is None:
            s = self.real
            self._view = PlayerView.from_state(s, s.current_player())
            self._offer = intents(self._view, s.legal_moves())
        return self._offer

    def _advance(self) -> None:
        s = self.real
        while not s.is_terminal():
            if s.is_chance_node():
                sample_chance(s, self.rng)
                continue
            self._offer = None
            offer = self._offered()
            if len(offer) > 1:
                return
            s.apply_action(s.layout.ids[next(iter(offer.values()))])
        self._offer = None

    def num_players(self) -> int:
        return 2

    def current_player(self) -> int:
        return self.real.current_player()

    def legal_actions(self, player: int | None = None) -> list[int]:
        cur = self.current_player()
        if cur < 0 or (player is not None and player != cur):
            return []
        return sorted(self._offered())

    def apply_action(self, action: Any) -> None:
        offer = self._offered()
        if action not in offer:
            raise IllegalActionError(f"monopoly_deal_intents: {action} is not an intent on offer")
        self.real.apply_action(self.real.layout.ids[offer[action]])
        self._offer = None
        self._advance()

    def returns(self) -> list[float]:
        return self.real.returns()

    def clone(self) -> "IntentState":
        c = IntentState.__new__(IntentState)
        c.real = self.real.clone()
        c.rng = self.rng.clone()
        c._offer, c._view = self._offer, None
        return c

    def action_label(self, player: int, action: int) -> str:
        return INTENTS[action]

    def information_state_key(self, player: int) -> str:
        if player != self.current_player():
            return abstract_key(PlayerView.from_state(self.real, player), {})
        offer = self._offered()
        if self._view is None:
            self._view = PlayerView.from_state(self.real, player)
        return abstract_key(self._view, offer)

    def observation_text(self, player: int) -> str:
        return self.real.observation_text(player)

    def observation_tensor(self, player: int) -> np.ndarray:
        return self.real.observation_tensor(player)

    def outcome_info(self) -> dict[str, Any]:
        return self.real.outcome_info()


class IntentGame(Game):
    """``monopoly_deal_intents(max_turns=100)``: the paper variant through intents (hidden chance,
seeded by ``new_initial_state(seed)``)."""

    def __init__(self, max_turns: int = 100) -> None:
        from arena.games.monopoly_deal import MonopolyDealGame

        # MCCFR traverses recursively, one level per decision: a long game needs a deeper stack
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))
        self.real = MonopolyDealGame(variant="paper", max_turns=max_turns)
        spec = self.real.spec
        self.spec = GameSpec(
            name="monopoly_deal_intents", num_players=2, num_distinct_actions=len(INTENTS),
            observation_shape=spec.observation_shape, min_utility=-1.0, max_utility=1.0, zero_sum=True,
            max_game_length=spec.max_game_length, tree=False,
            params={} if max_turns == 100 else {"max_turns": max_turns},
            description="intent abstraction of monopoly_deal(variant=paper) for MCCFR: " + ", ".join(INTENTS))

    def new_initial_state(self, seed: int | None = None) -> IntentState:
        return IntentState(self.real.new_initial_state(), seed)


ENTRY = GameEntry("monopoly_deal_intents", IntentGame,
                  "intent abstraction of 2-player Monopoly Deal (paper variant) for MCCFR; imperfect-recall keys",
                  {"max_turns": 100})
