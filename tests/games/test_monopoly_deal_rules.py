"""Monopoly Deal rules, written from the rulebook: scripted positions with known outcomes for every
action card, Just Say No chains, payment (sets broken, wilds moved), the hand limit, sets with
wilds, buildings, the reshuffle, the turn limit; plus invariants over random play."""

from __future__ import annotations

import numpy as np
import pytest

import arena
from arena.errors import ArenaError
from arena.game import CHANCE, IllegalActionError
from arena.games.monopoly_deal import MonopolyDealGame
from arena.games.monopoly_deal.cards import COLOURS, KINDS, PAPER_DECK, RETAIL_DECK, kind

C = {c: i for i, c in enumerate(COLOURS)}


def K(name: str) -> int:
    return kind(name).id


def position(
    variant: str = "retail",
    players: int = 2,
    hands=None,
    props=None,
    banks=None,
    player: int = 0,
    plays: int | None = None,
    **params,
):
    """A state at ``player``'s play phase with the given cards (taken from the draw pile)."""
    s = MonopolyDealGame(variant=variant, players=players, **params).new_initial_state()
    s.drawing, s.phase, s.turn, s.player = [], "play", 1, player
    s.plays_left = s.rules.plays_per_turn if plays is None else plays

    def take(name: str) -> int:
        k = K(name)
        assert s.drawpile[k] > 0, f"no {name} left in the draw pile"
        s.drawpile[k] -= 1
        s.draw_total -= 1
        return k

    for p, cards in (hands or {}).items():
        for name in cards:
            s.hands[p][take(name)] += 1
            s.hand_size[p] += 1
    for p, table in (props or {}).items():
        for colour, cards in table.items():
            for name in cards:
                if name in ("House", "Hotel"):
                    (s.house if name == "House" else s.hotel)[p][C[colour]] = True
                    take(name)
                else:
                    s.props[p][C[colour]].append(take(name))
    for p, cards in (banks or {}).items():
        for name in cards:
            s.banks[p][take(name)] += 1
    s._legal = None
    return s


def do(s, *moves):
    """Apply moves given as tuples (``("bank", K("$1M"))``) or labels of the current player."""
    for m in moves:
        p = s.current_player()
        legal = s.legal_actions()
        if isinstance(m, str):
            labels = {s.action_label(p, a): a for a in legal}
            assert m in labels, (m, list(labels))
            s.apply_action(labels[m])
        else:
            a = s.layout.ids[m]
            assert a in legal, (m, [s.layout.moves[x] for x in legal])
            s.apply_action(a)
    return s


def cards_in_play(s) -> int:
    piles = sum(len(pile) for mine in s.props for pile in mine)
    buildings = sum(map(sum, s.house)) + sum(map(sum, s.hotel))
    return sum(s.drawpile) + sum(s.discard) + sum(map(sum, s.hands)) + sum(map(sum, s.banks)) + piles + buildings


# -- deck and turn structure -------------------------------------------------------------------------
def test_retail_deck_is_the_106_cards_and_the_paper_deck_83():
    by_type: dict[str, int] = {}
    for name, n in RETAIL_DECK.items():
        t = kind(name).type
        by_type[t] = by_type.get(t, 0) + n
    assert sum(RETAIL_DECK.values()) == 106
    assert by_type == {"money": 20, "action": 34, "rent": 13, "property": 28, "wild": 11}
    assert sum(RETAIL_DECK[k.name] for k in KINDS if k.type == "money" and k.name in RETAIL_DECK) == 20
    assert RETAIL_DECK["Pass Go"] == 10 and RETAIL_DECK["Just Say No"] == 3 and RETAIL_DECK["Deal Breaker"] == 2
    assert sum(PAPER_DECK.values()) == 83
    assert MonopolyDealGame().new_initial_state().draw_total == 106


def test_deal_is_five_each_then_the_first_turn_draws_two_with_count_weighted_chance():
    s = MonopolyDealGame(players=3).new_initial_state()
    outcomes = dict(s.chance_outcomes())
    assert sum(outcomes.values()) == pytest.approx(1.0)
    assert outcomes[K("Pass Go")] == pytest.approx(10 / 106) and outcomes[K("$10M")] == pytest.approx(1 / 106)
    draws = 0
    while s.is_chance_node():
        s.apply_action(s.chance_outcomes()[0][0])
        draws += 1
    assert draws == 3 * 5 + 2 and s.current_player() == 0 and s.turn == 1
    assert s.hand_size == [7, 5, 5] and s.draw_total == 106 - 17 and s.plays_left == 3
    assert "Turn 1 (limit 200): your turn, 3 plays left" in s.observation_text(0)


def test_three_plays_then_the_turn_passes_and_an_empty_hand_draws_five():
    s = position(hands={0: ["$1M", "$2M", "Green", "$3M"], 1: []})
    do(s, ("bank", K("$1M")), ("place", K("Green"), C["Green"]))
    assert s.plays_left == 1 and s.current_player() == 0
    do(s, ("bank", K("$2M")))  # the third play ends the turn by itself
    assert s.current_player() == CHANCE and s.player == 1 and s.drawing == [1] * 5  # empty hand: draw 5
    assert s.bank_value(0) == 3 and s.hands[0][K("$3M")] == 1


def test_moving_a_wild_is_free_once_per_card_per_turn():
    s = position(hands={0: ["$1M"]}, props={0: {"Pink": ["Wild Pink/Orange"], "Orange": ["Orange", "Orange"]}})
    do(s, "move Wild Pink/Orange from Pink to Orange")
    assert s.plays_left == 3 and s.is_complete(0, C["Orange"])
    assert not any(s.layout.moves[a][0] == "move" for a in s.legal_actions())  # moved once this turn


# -- rent, Just Say No chains, payment -------------------------------------------------------------
def test_rent_charges_every_other_player_who_pays_one_card_at_a_time_without_change():
    s = position(
        players=3,
        hands={0: ["Rent Red/Yellow", "$1M"]},
        props={0: {"Red": ["Red", "Red"]}},
        banks={1: ["$1M", "$5M"], 2: ["$2M"]},
    )
    do(s, "charge Red rent $3M to everyone (Rent Red/Yellow)")
    assert s.phase == "respond" and s.current_player() == 1 and s.legal_actions() == [s.layout.ids[("accept",)]]
    assert "Pending: player 0 demands $3M rent (Red) from you." in s.observation_text(1)
    do(s, ("accept",))
    assert s.phase == "pay" and s.owed == 3
    do(s, ("paybank", 1))
    assert s.owed == 2 and s.current_player() == 1  # still player 1: the debt is not covered
    do(s, ("paybank", 5))  # no change is given
    assert s.current_player() == 2 and s.phase == "respond"
    do(s, ("accept",), ("paybank", 2))  # player 2 has only $2M: pays all, the rest is forgiven
    assert s.bank_value(0) == 8 and s.bank_value(1) == 0 and s.bank_value(2) == 0
    assert s.phase == "play" and s.current_player() == 0 and s.plays_left == 2  # control returns mid-turn
    assert "nothing left to pay with" in s.transcript[-1]


def test_just_say_no_chain_alternates_and_the_last_no_decides():
    s = position(
        hands={0: ["Debt Collector", "Just Say No", "$1M"], 1: ["Just Say No", "Just Say No"]}, banks={1: ["$5M"]}
    )
    do(s, "play Debt Collector on player 1 ($5M)", ("jsn",))
    assert s.current_player() == 0 and s.jsn_count == 1  # the initiator may answer back
    assert s.action_label(0, s.layout.ids[("accept",)]) == "accept the Just Say No"
    do(s, ("jsn",))
    assert s.current_player() == 1 and s.jsn_count == 2
    do(s, ("jsn",))
    assert s.current_player() == 0 and s.legal_actions() == [s.layout.ids[("accept",)]]  # no JSN left
    do(s, ("accept",))  # three Nos: the debt is cancelled
    assert s.bank_value(0) == 0 and s.bank_value(1) == 5 and s.phase == "play"
    assert s.discard[K("Just Say No")] == 3


def test_a_countered_no_makes_the_target_pay():
    s = position(hands={0: ["It's My Birthday", "Just Say No"], 1: ["Just Say No"]}, banks={1: ["$2M"]})
    do(s, "play It's My Birthday (every other player pays you $2M)", ("jsn",), ("jsn",))
    assert s.current_player() == 1 and s.phase == "respond"
    do(s, ("accept",), ("paybank", 2))
    assert s.bank_value(0) == 2


def test_paper_variant_just_say_no_cannot_be_countered():
    s = position(
        "paper",
        hands={0: ["Rent Green", "Just Say No", "$1M"], 1: ["Just Say No"]},
        props={0: {"Green": ["Green"]}},
        banks={1: ["$3M"]},
    )
    do(s, "charge Green rent $2M to player 1 (Rent Green)", ("jsn",))
    assert s.phase == "play" and s.current_player() == 0 and s.bank_value(1) == 3


def test_paying_with_property_breaks_the_set_and_moves_the_wild():
    s = position(
        hands={0: ["Debt Collector", "$1M"]},
        props={
            0: {"Light Blue": ["Light Blue", "Light Blue"]},
            1: {"Brown": ["Brown", "Wild Light Blue/Brown", "House"]},
        },
    )
    assert s.is_complete(1, C["Brown"]) and s.rent(1, C["Brown"]) == 2 + 3
    do(s, "play Debt Collector on player 1 ($5M)", ("accept",))
    assert s.phase == "pay"
    labels = [s.action_label(1, a) for a in s.legal_actions()]
    assert (
        "pay with the House on Brown ($3M)" in labels
        and "pay with Wild Light Blue/Brown (as Brown) from your table ($1M)" in labels
    )
    do(s, "pay with Wild Light Blue/Brown (as Brown) from your table ($1M)")
    # the set is broken: its House goes to the owner's bank; the wild completes the creditor's Light Blue
    assert not s.is_complete(1, C["Brown"]) and not s.house[1][C["Brown"]] and s.banks[1][K("House")] == 1
    assert K("Wild Light Blue/Brown") in s.props[0][C["Light Blue"]] and s.is_complete(0, C["Light Blue"])
    do(s, "pay $3M from your bank")  # the House, now money: $4M paid in all
    assert s.phase == "pay" and s.owed == 1
    do(s, "pay with Brown from your table ($1M)")
    assert s.phase == "play" and s.props[1][C["Brown"]] == [] and s.props[0][C["Brown"]] == [K("Brown")]


def test_paper_variant_property_paid_goes_to_the_creditors_bank():
    s = position("paper", hands={0: ["Rent Pink"]}, props={0: {"Pink": ["Pink"]}, 1: {"Green": ["Green"]}})
    do(s, "charge Pink rent $1M to player 1 (Rent Pink)", ("accept",), "pay with Green from your table ($4M)")
    assert s.banks[0][K("Green")] == 1 and s.bank_value(0) == 4 and s.props[0][C["Green"]] == []


def test_double_the_rent_doubles_per_card_and_counts_as_plays():
    s = position(
        hands={0: ["Rent (any colour)", "Double The Rent", "Double The Rent"]},
        props={0: {"Green": ["Green", "Green"]}},
        banks={1: ["$10M"]},
    )
    labels = [s.action_label(0, a) for a in s.legal_actions()]
    assert "charge Green rent $4M to player 1 (Rent (any colour))" in labels
    assert "charge Green rent $16M to player 1 (Rent (any colour) + 2 Double The Rent)" in labels
    do(s, "charge Green rent $8M to player 1 (Rent (any colour) + 1 Double The Rent)")
    assert s.plays_left == 1 and s.owed == 0 and s.effect["amount"] == 8


# -- the other action cards ---------------------------------------------------------------------------
def test_debt_collector_birthday_and_pass_go():
    s = position(players=3, hands={0: ["Pass Go", "It's My Birthday"]}, plays=3, banks={1: ["$3M"], 2: ["$1M", "$1M"]})
    do(s, "play Pass Go (draw 2 cards)")
    assert s.current_player() == CHANCE and s.drawing == [0, 0]
    s.apply_action(K("$1M"))
    s.apply_action(K("$1M"))
    assert s.current_player() == 0 and s.plays_left == 2 and s.hand_size[0] == 3
    do(
        s,
        "play It's My Birthday (every other player pays you $2M)",
        ("accept",),
        ("paybank", 3),
        ("accept",),
        ("paybank", 1),
        ("paybank", 1),
    )
    assert s.bank_value(0) == 5 and s.phase == "play"


def test_sly_deal_takes_a_loose_property_never_from_a_complete_set_and_jsn_stops_it():
    s = position(
        hands={0: ["Sly Deal", "Sly Deal", "$1M"], 1: ["Just Say No"]},
        props={
            0: {"Orange": ["Orange", "Orange"]},
            1: {"Dark Blue": ["Dark Blue", "Dark Blue"], "Orange": ["Wild Pink/Orange"]},
        },
    )
    do(s, "play Sly Deal on player 1")
    assert s.phase == "take"
    assert [s.action_label(0, a) for a in s.legal_actions()] == ["take Wild Pink/Orange (as Orange)"]
    do(s, "take Wild Pink/Orange (as Orange)", ("jsn",), ("accept",))
    assert s.props[1][C["Orange"]] == [K("Wild Pink/Orange")]
    do(s, "play Sly Deal on player 1", "take Wild Pink/Orange (as Orange)", ("accept",))
    assert s.is_complete(0, C["Orange"]) and s.props[1][C["Orange"]] == []


def test_forced_deal_swaps_loose_properties():
    s = position(
        hands={0: ["Forced Deal"]},
        props={0: {"Green": ["Green", "Green"], "Brown": ["Brown"]}, 1: {"Green": ["Green"], "Utility": ["Utility"]}},
    )
    do(s, "play Forced Deal on player 1", "take Green", "give Brown")
    assert s.action_label(1, s.layout.ids[("accept",)]) == "accept (swap your Green for Brown)"
    do(s, ("accept",))
    assert s.is_complete(0, C["Green"]) and s.props[1][C["Brown"]] == [K("Brown")] and s.props[1][C["Green"]] == []


def test_deal_breaker_takes_a_complete_set_with_its_buildings():
    s = position(
        hands={0: ["Deal Breaker"]},
        props={1: {"Dark Blue": ["Dark Blue", "Dark Blue", "House", "Hotel"], "Red": ["Red"]}},
    )
    assert s.rent(1, C["Dark Blue"]) == 8 + 3 + 4
    assert [s.action_label(0, a) for a in s.legal_actions() if "play Deal Breaker" in s.action_label(0, a)] == [
        "play Deal Breaker on player 1's Dark Blue set"
    ]
    do(s, "play Deal Breaker on player 1's Dark Blue set", "accept (lose your Dark Blue set)")
    assert (
        s.props[0][C["Dark Blue"]] == [K("Dark Blue")] * 2 and s.house[0][C["Dark Blue"]] and s.hotel[0][C["Dark Blue"]]
    )
    assert s.props[1][C["Dark Blue"]] == [] and not s.house[1][C["Dark Blue"]]


def test_houses_and_hotels_only_on_complete_sets_never_railroad_or_utility():
    s = position(
        hands={0: ["House", "House", "Hotel"]},
        props={0: {"Utility": ["Utility", "Utility"], "Green": ["Green", "Green"], "Brown": ["Brown", "Brown"]}},
    )
    labels = [s.action_label(0, a) for a in s.legal_actions()]
    assert "build a House on Brown" in labels and "build a House on Green" not in labels
    assert "build a House on Utility" not in labels and not any("build a Hotel" in x for x in labels)
    do(s, "build a House on Brown")
    assert "build a Hotel on Brown" in [s.action_label(0, a) for a in s.legal_actions()]
    do(s, "build a Hotel on Brown")
    assert s.rent(0, C["Brown"]) == 2 + 3 + 4


# -- sets, hand limit, reshuffle, winning, limits -------------------------------------------------------
def test_sets_with_wilds_and_the_any_colour_wild_alone():
    s = position(
        hands={0: ["Wild Red/Yellow", "$1M"]},
        props={0: {"Red": ["Red", "Red"]}, 1: {"Brown": ["Wild (any colour)", "Wild (any colour)"]}},
    )
    assert not s.is_complete(1, C["Brown"]) and s.rent(1, C["Brown"]) == 0  # two any-colour wilds make no set
    do(s, "play Wild Red/Yellow as Red")
    assert s.is_complete(0, C["Red"]) and s.complete_sets(0) == 1
    s = position(hands={0: ["Wild (any colour)"]}, props={0: {"Brown": ["Brown"]}})
    labels = [s.action_label(0, a) for a in s.legal_actions()]
    assert sum(x.startswith("play Wild (any colour) as ") for x in labels) == 10
    assert "bank Wild (any colour)" not in " ".join(labels)  # no money value
    do(s, "play Wild (any colour) as Brown")
    assert s.is_complete(0, C["Brown"])


def test_third_complete_set_of_different_colours_wins_at_once():
    s = position(
        hands={0: ["Utility", "Brown"]},
        props={
            0: {
                "Brown": ["Brown"],
                "Dark Blue": ["Dark Blue"] * 2,
                "Utility": ["Utility"],
                "Green": ["Green"] * 3 + ["Wild Green/Railroad"],
            }
        },
    )
    assert s.complete_sets(0) == 2  # extra Greens beyond a set still count once
    do(s, "play Brown")
    assert s.complete_sets(0) == 3 and s.is_terminal() and s.returns() == [1.0, -1.0]
    assert s.outcome_info()["winner"] == 0 and "player 0 has 3 complete sets and wins" in s.summary() + s.transcript[-1]


def test_hand_limit_discards_down_to_seven_at_the_end_of_the_turn():
    s = position(hands={0: ["$1M"] * 4 + ["Pass Go"] * 5, 1: ["$2M"]})
    do(s, "end turn")
    assert s.phase == "discard" and s.current_player() == 0
    do(s, "discard Pass Go ($1M)")
    assert s.phase == "discard"
    do(s, "discard $1M")
    assert s.hand_size[0] == 7 and s.current_player() == CHANCE and s.player == 1
    assert s.discard[K("Pass Go")] == 1 and s.discard[K("$1M")] == 1


def test_reshuffle_when_the_draw_pile_runs_out():
    s = position(hands={0: ["Pass Go"]})
    s.discard = list(s.drawpile)  # move the whole draw pile to the discard pile
    s.drawpile = [0] * len(s.drawpile)
    total, s.draw_total = s.draw_total, 0
    do(s, "play Pass Go (draw 2 cards)")
    assert s.current_player() == CHANCE and s.draw_total == total + 1  # the Pass Go itself is shuffled in
    assert sum(s.discard) == 0 and "shuffled into a new draw pile" in s.transcript[-1]
    s.apply_action(s.chance_outcomes()[0][0])
    s.apply_action(s.chance_outcomes()[0][0])
    assert s.current_player() == 0 and s.draw_total == total - 1


def test_turn_limit_is_a_draw():
    s = position(hands={0: ["$1M"]}, max_turns=1)
    do(s, "end turn")
    assert s.is_terminal() and s.returns() == [0.0, 0.0] and s.outcome_info()["truncated"]


def test_illegal_moves_and_bad_parameters_are_one_clear_error():
    s = position(hands={0: ["$1M"]})
    with pytest.raises(IllegalActionError, match="not a legal move"):
        s.apply_action(s.layout.ids[("jsn",)])
    with pytest.raises(IllegalActionError, match="action ids"):
        s.apply_action("bank")
    for params, fragment in (
        ({"players": 6}, "'players' must be between 2 and 5"),
        ({"variant": "junior"}, "'variant' must be one of retail, paper"),
        ({"variant": "paper", "players": 3}, "must be 2 for variant=paper"),
        ({"max_turns": 0}, "'max_turns' must be a positive integer"),
    ):
        with pytest.raises(ArenaError, match=fragment):
            MonopolyDealGame(**params)


# -- invariants over random play -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    [
        "monopoly_deal",
        "monopoly_deal(players=4)",
        "monopoly_deal(players=5,max_turns=60)",
        "monopoly_deal(variant=paper)",
    ],
)
def test_random_play_keeps_every_card_and_the_turn_structure(name):
    game = arena.load_game(name)
    rng = np.random.default_rng(5)
    for _ in range(25):
        s = game.new_initial_state()
        size = s.rules.deck_size
        decisions = 0
        while not s.is_terminal():
            if s.is_chance_node():
                out = s.chance_outcomes()
                assert abs(sum(p for _, p in out) - 1) < 1e-9
                s.apply_action(out[rng.choice(len(out), p=[p for _, p in out])][0])
                continue
            p, legal = s.current_player(), s.legal_actions()
            assert legal == sorted(legal) and legal, s.phase
            if s.phase == "pay":
                assert p == s.target != s.effect["by"] and s.owed > 0
            if s.phase == "respond":
                assert p in (s.target, s.effect["by"])
            if s.phase in ("play", "take", "give", "discard"):
                assert p == s.player
            assert len(set(s.action_label(p, a) for a in legal)) == len(legal)  # labels tell moves apart
            s.apply_action(legal[rng.integers(len(legal))])
            decisions += 1
            assert cards_in_play(s) == size
            for q in range(s.n):
                for c in range(len(COLOURS)):
                    assert not s.hotel[q][c] or (s.house[q][c] and s.is_complete(q, c))
        assert s.turn <= s.cfg.max_turns and decisions + s.rules.hand_size * s.n <= game.spec.max_game_length
        r = s.returns()
        assert abs(sum(r)) < 1e-9 and (s.winner < 0) == (r == [0.0] * s.n)
        if s.winner >= 0:
            assert s.complete_sets(s.winner) >= s.rules.sets_to_win
