"""Ultimatum and dictator games: payoffs by the rules, repeated rounds, renderings naming the
legal moves, conformance (PettingZoo face included), bad parameters."""

from __future__ import annotations

import pytest

from arena.errors import ArenaError
from arena.game import TERMINAL, IllegalActionError
from arena.loading import load_game
from arena.testing import check_game


def play(game, moves):
    s = game.new_initial_state()
    for m in moves:
        s.apply_action(m)
    return s


@pytest.mark.parametrize("offer", [0, 3, 10])
def test_ultimatum_accept_splits_the_pie_and_reject_leaves_nothing(offer):
    g = load_game("ultimatum")
    assert g.spec.tree and g.spec.num_distinct_actions == 13
    s = play(g, [offer])
    assert s.current_player() == 1 and s.legal_actions() == [g.accept, g.reject]
    assert [s.action_label(1, a) for a in s.legal_actions()] == ["accept", "reject"]
    accepted, rejected = s.clone(), s.clone()
    accepted.apply_action(g.accept)
    rejected.apply_action(g.reject)
    assert accepted.returns() == [10.0 - offer, float(offer)] and accepted.current_player() == TERMINAL
    assert rejected.returns() == [0.0, 0.0] and rejected.is_terminal()
    assert accepted.outcome_info() == {"rounds": 1, "offer_share": offer / 10, "acceptance": 1.0}


def test_repeated_ultimatum_adds_rounds_with_the_same_roles():
    g = load_game("ultimatum(pie=6,rounds=3)")
    s = play(g, [2, g.accept, 5, g.reject, 0])
    assert s.current_player() == 1 and s.returns() == [4.0, 2.0]
    s.apply_action(g.accept)
    assert s.is_terminal() and s.returns() == [10.0, 2.0]
    info = s.outcome_info()
    assert info["acceptance"] == pytest.approx(2 / 3) and info["offer_share"] == pytest.approx(7 / 18)
    text = s.observation_text(1)
    assert "Round 2: offer 5, rejected (both got 0)." in text and "Round 3: offer 0, accepted (you got 0)." in text


def test_dictator_gives_and_the_recipient_never_moves():
    g = load_game("dictator(rounds=2)")
    s = g.new_initial_state()
    assert s.legal_actions() == list(range(11)) and s.action_label(0, 4) == "give 4"
    assert s.legal_actions(1) == []
    s.apply_action(4)
    assert s.current_player() == 0 and s.returns() == [6.0, 4.0]
    s.apply_action(0)
    assert s.is_terminal() and s.returns() == [16.0, 4.0]
    with pytest.raises(IllegalActionError):
        s.apply_action(0)


def test_text_names_the_role_the_stakes_and_the_legal_moves():
    g = load_game("ultimatum")
    s = g.new_initial_state()
    text = s.observation_text(0)
    assert "You are the proposer." in text and "Legal: offer 0 to 10." in text
    s.apply_action(3)
    text = s.observation_text(1)
    assert "The proposer offers you 3 (it keeps 7)" in text and "accept (you get 3) or reject (both get 0)" in text
    view = s.observation_struct(1)
    assert view["offer"] == 3 and view["role"] == "responder"
    assert [m["label"] for m in view["legal"]] == ["accept", "reject"]
    assert list(s.observation_tensor(1)[:3]) == [0.0, 1.0, pytest.approx(0.3)]
    with pytest.raises(IllegalActionError):
        s.apply_action(5)  # an offer is not an answer


@pytest.mark.parametrize("name", ["ultimatum", "dictator", "ultimatum(pie=4,rounds=3)"])
def test_conformance(name):
    check_game(name, games=30)


@pytest.mark.parametrize(
    "name,msg",
    [
        ("ultimatum(pie=0)", "'pie' must be an integer 1..1000"),
        ("dictator(rounds=1.5)", "'rounds' must be an integer 1..100"),
        ("ultimatum(pie=true)", "'pie'"),
    ],
)
def test_bad_parameters_are_one_line(name, msg):
    with pytest.raises(ArenaError, match=msg):
        load_game(name)
