"""Monopoly Deal card data: colours, card kinds and the decks of the two variants.

Cards of one kind are interchangeable, so the state keeps multisets of kinds and a player's
choices name kinds ("pay a $3M card", "take a Green"), never physical copies. The retail deck is
Hasbro's 106 cards; the ``paper`` deck is the 2-player simplified game of Wolf (arXiv
2510.25080, repo ``cavaunpeu/monopoly-deal-ai``, ``GameConfigType.MEDIUM``): three colours,
$1M/$3M cash, one rent card per colour and Just Say No, ten copies of each plus three JSN.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

# -- colours --------------------------------------------------------------------------------
COLOURS = ("Brown", "Light Blue", "Pink", "Orange", "Red", "Yellow", "Green", "Dark Blue", "Railroad", "Utility")
RENTS: dict[str, tuple[int, ...]] = {
    "Brown": (1, 2),
    "Light Blue": (1, 2, 3),
    "Pink": (1, 2, 4),
    "Orange": (1, 3, 5),
    "Red": (2, 3, 6),
    "Yellow": (2, 4, 6),
    "Green": (2, 4, 7),
    "Dark Blue": (3, 8),
    "Railroad": (1, 2, 3, 4),
    "Utility": (1, 2),
}
"""Rent by number of properties in the set; the length is the size of a complete set."""
PROPERTY_VALUE = {
    "Brown": 1,
    "Light Blue": 1,
    "Pink": 2,
    "Orange": 2,
    "Red": 3,
    "Yellow": 3,
    "Green": 4,
    "Dark Blue": 4,
    "Railroad": 2,
    "Utility": 2,
}
NO_BUILDINGS = ("Railroad", "Utility")
"""Houses and hotels go on complete sets of any other colour."""
HOUSE_RENT, HOTEL_RENT = 3, 4

# -- kinds ----------------------------------------------------------------------------------
MONEY, ACTION, RENT, PROPERTY, WILD = "money", "action", "rent", "property", "wild"

DEAL_BREAKER, JUST_SAY_NO, SLY_DEAL, FORCED_DEAL = "Deal Breaker", "Just Say No", "Sly Deal", "Forced Deal"
DEBT_COLLECTOR, BIRTHDAY, PASS_GO = "Debt Collector", "It's My Birthday", "Pass Go"
HOUSE, HOTEL, DOUBLE_RENT = "House", "Hotel", "Double The Rent"
WILD_RENT = "Rent (any colour)"
RAINBOW = "Wild (any colour)"


@dataclass(frozen=True)
class Kind:
    """One card kind. ``colours``: the colours a property, wild or rent card can be used for."""

    id: int
    name: str
    type: str
    value: int
    colours: tuple[str, ...] = ()

    @property
    def is_property(self) -> bool:
        return self.type in (PROPERTY, WILD)

    def short(self) -> str:
        """How the card is named in text: money by value, the rest by name and value."""
        if self.type == MONEY:
            return f"${self.value}M"
        if self.type == PROPERTY or self.value == 0:
            return self.name
        return f"{self.name} (${self.value}M)"


def _catalog() -> list[Kind]:
    out: list[Kind] = []

    def add(name: str, type_: str, value: int, colours: tuple[str, ...] = ()) -> None:
        out.append(Kind(len(out), name, type_, value, colours))

    for v in (1, 2, 3, 4, 5, 10):
        add(f"${v}M", MONEY, v)
    for name, v in (
        (DEAL_BREAKER, 5),
        (JUST_SAY_NO, 4),
        (SLY_DEAL, 3),
        (FORCED_DEAL, 3),
        (DEBT_COLLECTOR, 3),
        (BIRTHDAY, 2),
        (PASS_GO, 1),
        (HOUSE, 3),
        (HOTEL, 4),
        (DOUBLE_RENT, 1),
    ):
        add(name, ACTION, v)
    for a, b in (
        ("Brown", "Light Blue"),
        ("Red", "Yellow"),
        ("Green", "Dark Blue"),
        ("Pink", "Orange"),
        ("Railroad", "Utility"),
    ):
        add(f"Rent {a}/{b}", RENT, 1, (a, b))
    add(WILD_RENT, RENT, 3, COLOURS)
    for c in COLOURS:  # single-colour rent cards exist only in the paper deck
        add(f"Rent {c}", RENT, 1, (c,))
    for c in COLOURS:
        add(c, PROPERTY, PROPERTY_VALUE[c], (c,))
    for a, b, v in (
        ("Dark Blue", "Green", 4),
        ("Green", "Railroad", 4),
        ("Light Blue", "Railroad", 4),
        ("Light Blue", "Brown", 1),
        ("Pink", "Orange", 2),
        ("Railroad", "Utility", 2),
        ("Red", "Yellow", 3),
    ):
        add(f"Wild {a}/{b}", WILD, v, (a, b))
    add(RAINBOW, WILD, 0, COLOURS)
    return out


KINDS: tuple[Kind, ...] = tuple(_catalog())
BY_NAME = {k.name: k for k in KINDS}
COLOUR_ID = {c: i for i, c in enumerate(COLOURS)}


def kind(name: str) -> Kind:
    return BY_NAME[name]


# -- decks ----------------------------------------------------------------------------------
RETAIL_DECK: dict[str, int] = {
    "$1M": 6,
    "$2M": 5,
    "$3M": 3,
    "$4M": 3,
    "$5M": 2,
    "$10M": 1,
    DEAL_BREAKER: 2,
    JUST_SAY_NO: 3,
    SLY_DEAL: 3,
    FORCED_DEAL: 3,
    DEBT_COLLECTOR: 3,
    BIRTHDAY: 3,
    PASS_GO: 10,
    HOUSE: 3,
    HOTEL: 2,
    DOUBLE_RENT: 2,
    "Rent Brown/Light Blue": 2,
    "Rent Red/Yellow": 2,
    "Rent Green/Dark Blue": 2,
    "Rent Pink/Orange": 2,
    "Rent Railroad/Utility": 2,
    WILD_RENT: 3,
    "Brown": 2,
    "Light Blue": 3,
    "Pink": 3,
    "Orange": 3,
    "Red": 3,
    "Yellow": 3,
    "Green": 3,
    "Dark Blue": 2,
    "Railroad": 4,
    "Utility": 2,
    "Wild Dark Blue/Green": 1,
    "Wild Green/Railroad": 1,
    "Wild Light Blue/Railroad": 1,
    "Wild Light Blue/Brown": 1,
    "Wild Pink/Orange": 2,
    "Wild Railroad/Utility": 1,
    "Wild Red/Yellow": 2,
    RAINBOW: 2,
}
"""Hasbro's retail deck: 20 money, 34 action, 13 rent, 28 property and 11 wild property cards."""

PAPER_COLOURS = ("Brown", "Pink", "Green")
PAPER_DECK: dict[str, int] = {
    "$1M": 10,
    "$3M": 10,
    **{c: 10 for c in PAPER_COLOURS},
    **{f"Rent {c}": 10 for c in PAPER_COLOURS},
    JUST_SAY_NO: 3,
}
"""The paper's deck (``MEDIUM`` config): 10 copies of each of 8 cards, plus 10 // 3 Just Say No."""


@dataclass(frozen=True)
class Rules:
    """Everything that differs between the variants (the engine reads only this)."""

    variant: str
    deck: tuple[int, ...]
    """Copies of each kind, indexed by kind id."""
    colours: tuple[str, ...]
    plays_per_turn: int
    sets_to_win: int
    hand_size: int
    draw_per_turn: int
    empty_hand_draw: int
    hand_limit: int
    bankable: tuple[str, ...]
    """Card types that may be played into the bank as money (never a $0 card)."""
    paid_property_to_bank: bool
    """Property paid as debt lands in the creditor's bank as cash (else on the creditor's table)."""
    jsn_counter: bool
    """A Just Say No may itself be answered by a Just Say No (chains)."""

    @property
    def colour_ids(self) -> tuple[int, ...]:
        return tuple(COLOURS.index(c) for c in self.colours)

    def can_bank(self, k: Kind) -> bool:
        return k.type in self.bankable and k.value > 0

    @property
    def kinds(self) -> tuple[Kind, ...]:
        """Kinds in this deck, in id order."""
        return tuple(k for k in KINDS if self.deck[k.id])

    @property
    def deck_size(self) -> int:
        return sum(self.deck)


def _counts(deck: dict[str, int]) -> tuple[int, ...]:
    c = [0] * len(KINDS)
    for name, n in deck.items():
        c[BY_NAME[name].id] = n
    return tuple(c)


@lru_cache(maxsize=None)
def rules_for(variant: str) -> Rules:
    if variant == "retail":
        return Rules(
            "retail",
            _counts(RETAIL_DECK),
            COLOURS,
            plays_per_turn=3,
            sets_to_win=3,
            hand_size=5,
            draw_per_turn=2,
            empty_hand_draw=5,
            hand_limit=7,
            bankable=(MONEY, ACTION, RENT),
            paid_property_to_bank=False,
            jsn_counter=True,
        )
    if variant == "paper":
        return Rules(
            "paper",
            _counts(PAPER_DECK),
            PAPER_COLOURS,
            plays_per_turn=2,
            sets_to_win=2,
            hand_size=5,
            draw_per_turn=2,
            empty_hand_draw=2,
            hand_limit=7,
            bankable=(MONEY, PROPERTY),
            paid_property_to_bank=True,
            jsn_counter=False,
        )
    raise KeyError(variant)


VARIANTS = ("retail", "paper")


def set_size(colour: str) -> int:
    return len(RENTS[colour])


RAINBOW_ID = BY_NAME[RAINBOW].id


def pile_complete(pile: list[int], c: int) -> bool:
    """A colour pile is complete with as many properties as the set's size, at least one of
    them not the any-colour wild (which cannot make a set on its own)."""
    return len(pile) >= len(RENTS[COLOURS[c]]) and any(k != RAINBOW_ID for k in pile)


def pile_rent(pile: list[int], c: int, house: bool = False, hotel: bool = False) -> int:
    """Rent for colour ``c`` from this pile: 0 without a real property of that colour on it."""
    if not pile or all(k == RAINBOW_ID for k in pile):
        return 0
    rents = RENTS[COLOURS[c]]
    base = rents[min(len(pile), len(rents)) - 1]
    if pile_complete(pile, c):
        base += HOUSE_RENT * house + HOTEL_RENT * hotel
    return base
