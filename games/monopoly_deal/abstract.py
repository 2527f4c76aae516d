"""``monopoly_deal_intents``: the intent-level abstraction of the 2-player (``paper``) variant,
as its own game for MCCFR (after Wolf, arXiv 2510.25080: plain MCCFR on a small intent
abstraction converges).

A state wraps a real ``monopoly_deal(variant=paper)`` state; its draws are sampled inside from
the seed (the sampling solvers pass one per traversal). Actions are *intents* at the strategic
choices the ``choices`` parameter names (Just Say No or accept by default; also pay with cash or
property, charge a rent or hold it, lay a property or bank it), each mapped to one concrete
move by the card-level choices of :mod:`.tactics`; everywhere else the heuristic plays. The
info-state key is a coarse, **imperfect-recall** summary of what the player sees (the rent or
debt at stake, complete sets, what the player holds), so the game has no tree view
(``GameSpec.tree`` is false) and is solved by sampling (``es-mccfr``). The same two functions,
:func:`intents` and :func:`abstract_key`, serve the ``monopoly_deal_mccfr`` agent
in the real game, computed from its observation.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from arena.errors import ArenaError
from arena.game import Game, GameEntry, GameSpec, IllegalActionError, State, decision_struct
from arena.games.monopoly_deal.cards import BY_NAME, COLOURS, JUST_SAY_NO, KINDS, RENTS
from arena.games.monopoly_deal.state import MonopolyDealState
from arena.games.monopoly_deal.tactics import asset_cost, choose_payment, heuristic_move, property_gain
from arena.games.monopoly_deal.view import PlayerView
from arena.playing.match import sample_chance
from arena.rng import GameRandom

INTENTS = (
    "play on",
    "build",
    "bank the property",
    "charge rent",
    "hold the rent",
    "Just Say No",
    "accept",
    "pay with cash",
    "pay with property",
)
PLAY_ON, BUILD, BANK_PROPERTY, RENT, HOLD, JSN, ACCEPT, PAY_CASH, PAY_PROPERTY = range(len(INTENTS))


CHOICE_NAMES = {"jsn": JSN, "pay": PAY_CASH, "rent": RENT, "build": BUILD}
"""The strategic choices an abstraction may expose (``choices=jsn+pay``): Just Say No or accept;
pay with cash or with property; charge a rent now or hold it; lay a property or bank it."""

DEFAULT_CHOICES = "jsn"
"""Only the Just Say No decision by default: against the heuristic it is the choice with room to
gain (refusing more rents than its "$4M or more" rule wins 0.55 of games), whereas paying with
property and holding rents lose or break even as rules, and every extra choice adds sampling
noise (docs/results/monopoly_deal.md has the measurements)."""


def parse_choices(text: str) -> frozenset[int]:
    """``"jsn+pay"`` → the intent ids of those choices (one clear error naming the bad one)."""
    names = [x.strip() for x in str(text).split("+") if x.strip()]
    bad = [x for x in names if x not in CHOICE_NAMES]
    if bad or not names:
        raise ArenaError(
            f"monopoly_deal_intents: parameter 'choices' must be '+'-joined names from "
            f"{', '.join(CHOICE_NAMES)}, got {text!r}"
        )
    return frozenset(CHOICE_NAMES[x] for x in names)


CHOICES = parse_choices(DEFAULT_CHOICES)


JSN_ID = BY_NAME[JUST_SAY_NO].id


def _bucket(x: int) -> int:
    """$ amounts: 0, 1-2, 3-4, 5+."""
    return 0 if x <= 0 else 1 if x <= 2 else 2 if x <= 4 else 3


def intents(v: PlayerView, moves: list[tuple], choices: frozenset[int] = CHOICES) -> dict[int, tuple]:
    """The intents on offer at this decision, each with the concrete move it stands for.

    Strategic choices only, those in ``choices``: lay a property or bank it as cash; charge a
    rent now or hold it; Just Say No or accept; pay with cash or with property. Everywhere else
    the heuristic's move is the single intent "play on" (the abstract game plays it at once)."""
    ph = v.phase
    if ph == "respond" and JSN in choices:
        return {ACCEPT: ("accept",), **({JSN: ("jsn",)} if ("jsn",) in moves else {})}
    if ph == "pay" and PAY_CASH in choices:
        out: dict[int, tuple] = {}
        bank = [m for m in moves if m[0] == "paybank"]
        table = [m for m in moves if m[0] != "paybank"]
        if bank:
            out[PAY_CASH] = choose_payment(v, bank)
        if table:
            out[PAY_PROPERTY] = min(table, key=lambda m: asset_cost(v, m))
        return out
    h = heuristic_move(v, moves)
    if (
        BUILD in choices
        and ph == "play"
        and h[0] == "place"
        and ("bank", h[1]) in moves
        and property_gain(v, v.me, h[1], h[2]) < 10
    ):
        return {BUILD: h, BANK_PROPERTY: ("bank", h[1])}
    if RENT in choices and ph == "play" and h[0] in ("rent", "wildrent"):
        return {RENT: h, HOLD: heuristic_move(v, [m for m in moves if m[0] not in ("rent", "wildrent")])}
    return {PLAY_ON: h}


def _side(v: PlayerView, q: int) -> str:
    """Seat ``q``'s progress: complete sets, and whether some colour is one card short."""
    near = any(
        v.props[q][c] and not v.complete(q, c) and len(v.props[q][c]) + 1 >= len(RENTS[COLOURS[c]])
        for c in v.rules.colour_ids
    )
    return f"{v.complete_sets(q)}{int(near)}"


def abstract_key(v: PlayerView, offered: dict[int, tuple]) -> str:
    """Imperfect-recall key, deliberately coarse so that MCCFR visits each key often: the choice
    on offer, both sides' progress, and what is at stake. A Just Say No key is only the rent
    bucket, whether cash covers it, how many Just Say Nos the player holds (1 or more) and both
    sides' complete sets: 40 keys reached, each seen hundreds of times in a few thousand
    traversals."""
    me, op = v.me, 1 - v.me
    if JSN in offered:
        held = min(v.hand.get(JSN_ID, 0), 2)
        covers = int(v.bank_value(me) >= v.amount)
        return f"respond|o{_bucket(v.amount)}|c{covers}|j{held}|s{v.complete_sets(me)}{v.complete_sets(op)}"
    sides = f"me{_side(v, me)}|op{_side(v, op)}"
    cash = _bucket(v.bank_value(me))
    if BUILD in offered:
        k, c = offered[BUILD][1], offered[BUILD][2]
        return f"build|p{v.plays_left}|{sides}|n{len(v.props[me][c])}|v{KINDS[k].value}|c{cash}"
    if RENT in offered:
        c = offered[RENT][2] if offered[RENT][0] == "rent" else offered[RENT][1]
        return f"rent|p{v.plays_left}|{sides}|r{_bucket(v.rent(me, c))}|a{_bucket(v.assets(op))}"
    owed = v.owed if v.phase == "pay" else v.amount
    mask = "".join(str(int(i in offered)) for i in range(len(INTENTS)))
    return f"{v.phase}|{mask}|{sides}|o{_bucket(owed)}|c{int(v.bank_value(me) >= owed)}|m{cash}"


class IntentState(State):
    """A real paper-variant state seen through intents.

    Chance (the draws) is sampled inside from the state's own seeded generator, and decisions
    with a single intent on offer are played at once (but the game's first): what is left is
    only the choices that matter, which keeps MCCFR's recursive traversals shallow. A clone
    copies the generator, so a clone replays the same future draws.
    """

    def __init__(self, real: MonopolyDealState, seed: int | None = None, choices: frozenset[int] = CHOICES) -> None:
        self.real = real
        self.choices = choices
        self.rng = GameRandom(seed or 0, 0)
        self._offer: dict[int, tuple] | None = None
        self._view: PlayerView | None = None
        self._advance(first=True)

    def _offered(self) -> dict[int, tuple]:
        if self._offer is None:
            s = self.real
            self._view = PlayerView.from_state(s, s.current_player())
            self._offer = intents(self._view, s.legal_moves(), self.choices)
        return self._offer

    def _advance(self, first: bool = False) -> None:
        """Play chance and single-intent decisions until a choice or the end. The game's first
        decision is always shown (``first``), even with its one intent: with few choices (the
        default, Just Say No only) many games have none, and an environment must not be over
        at reset (PettingZoo's api_test)."""
        s = self.real
        while not s.is_terminal():
            if s.is_chance_node():
                sample_chance(s, self.rng)
                continue
            self._offer = None
            offer = self._offered()
            if len(offer) > 1 or first:
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
        c.choices = self.choices
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

    def observation_struct(self, player: int) -> dict[str, Any]:
        """The real game's view, with the intents on offer as the moves."""
        out = {k: v for k, v in self.real.observation_struct(player).items() if k not in ("legal", "ask")}
        out.update(decision_struct(self, player), game="monopoly_deal_intents")
        return out

    def observation_tensor(self, player: int) -> np.ndarray:
        return self.real.observation_tensor(player)

    def outcome_info(self) -> dict[str, Any]:
        return self.real.outcome_info()


class IntentGame(Game):
    """``monopoly_deal_intents(max_turns=100, choices=jsn)``: the paper variant through intents
    (hidden chance, seeded by ``new_initial_state(seed)``); ``choices`` names the strategic
    choices exposed (``+``-joined: ``jsn``, ``pay``, ``rent``, ``build``)."""

    def __init__(self, max_turns: int = 100, choices: str = DEFAULT_CHOICES) -> None:
        from arena.games.monopoly_deal import MonopolyDealGame

        # MCCFR traverses recursively, one level per decision: a long game needs a deeper stack
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))
        self.choices = parse_choices(choices)
        canon = "+".join(n for n, i in CHOICE_NAMES.items() if i in self.choices)
        self.real = MonopolyDealGame(variant="paper", max_turns=max_turns)
        spec = self.real.spec
        params: dict[str, Any] = {} if max_turns == 100 else {"max_turns": max_turns}
        if canon != DEFAULT_CHOICES:
            params["choices"] = canon
        self.spec = GameSpec(
            name="monopoly_deal_intents",
            num_players=2,
            num_distinct_actions=len(INTENTS),
            observation_shape=spec.observation_shape,
            min_utility=-1.0,
            max_utility=1.0,
            zero_sum=True,
            max_game_length=spec.max_game_length,
            tree=False,
            params=params,
            description="intent abstraction of monopoly_deal(variant=paper) for MCCFR: "
            + ", ".join(INTENTS[i] for i in sorted({PLAY_ON, ACCEPT, PAY_PROPERTY} | self.choices)),
        )

    def new_initial_state(self, seed: int | None = None) -> IntentState:
        return IntentState(self.real.new_initial_state(), seed, self.choices)


ENTRY = GameEntry(
    "monopoly_deal_intents",
    IntentGame,
    "intent abstraction of 2-player Monopoly Deal (paper variant) for MCCFR; imperfect-recall keys",
    {"max_turns": 100, "choices": DEFAULT_CHOICES},
)
