"""Monopoly Deal hidden information and faces: no player's view (text, info-state key, tensor, structure)
depends on another player's hand or on the draw pile; the tensor decodes back to the state; the
PettingZoo face passes ``api_test`` for every variant; the BORG facts are in every view."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test

import arena
from arena.games.monopoly_deal.view import PlayerView

VARIANTS = ["monopoly_deal", "monopoly_deal(players=3)", "monopoly_deal(variant=paper)"]


def random_history(game, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    s = game.new_initial_state()
    moves = []
    while not s.is_terminal():
        if s.is_chance_node():
            out = s.chance_outcomes()
            a = out[rng.choice(len(out), p=[p for _, p in out])][0]
        else:
            legal = s.legal_actions()
            a = legal[rng.integers(len(legal))]
        moves.append(a)
        s.apply_action(a)
    return moves


def views(s, p):
    return s.observation_text(p), s.information_state_key(p), s.observation_tensor(p), s.observation_struct(p)


def kept_draws(game, moves: list[int], observer: int) -> set[int]:
    """Indices of chance moves that deal another player a card it still holds at the end: the
    last ``m`` draws of each kind a player ends with ``m`` copies of (those copies are never
    played, so any other card could have been drawn there without changing a public move)."""
    s = game.new_initial_state()
    draws: dict[tuple[int, int], list[int]] = {}
    for i, a in enumerate(moves):
        if s.is_chance_node():
            draws.setdefault((s.drawing[0], a), []).append(i)
        s.apply_action(a)
    out: set[int] = set()
    for (q, k), idx in draws.items():
        m = s.hands[q][k]
        if q != observer and m:
            out.update(idx[-m:])
    return out


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("seed", range(4))
def test_views_do_not_depend_on_other_hands_or_the_deck(name, seed):
    """Replay a random game in a second world where the cards other players keep in hand to the
    end are different cards (so their hands and the draw pile differ, their public moves do
    not). At every step the observer's text, info-state key, tensor and structured view must be
    identical."""
    game = arena.load_game(name)
    moves = random_history(game, seed)
    rng = np.random.default_rng(1000 + seed)
    checked = 0
    for observer in range(game.spec.num_players):
        swap = kept_draws(game, moves, observer)
        if not swap:
            continue  # everyone else ended with an empty hand
        checked += 1
        s1, s2 = game.new_initial_state(), game.new_initial_state()
        compared = 0
        for i, move in enumerate(moves):
            other = move
            if i in swap:
                options = [k for k in s2.legal_actions() if k != move]
                assert s2.is_chance_node() and s1.drawing == s2.drawing, (s1.phase, s2.phase, i)
                if options:  # the most plentiful other card, so later draws rarely find it used up
                    other = max(options, key=lambda k: (s2.drawpile[k], rng.random()))
            if (other if s1.is_chance_node() else move) not in s2.legal_actions():
                break  # a later draw of a card the other world used up
            s1.apply_action(move)
            s2.apply_action(other)
            t1, k1, x1, v1 = views(s1, observer)
            t2, k2, x2, v2 = views(s2, observer)
            assert t1 == t2
            assert k1 == k2
            assert np.array_equal(x1, x2)
            assert v1 == v2
            compared += 1
        assert compared > 30
        assert s1.hands != s2.hands  # the worlds really differ
    assert checked


@pytest.mark.parametrize("name", VARIANTS)
def test_tensor_decodes_to_the_players_knowledge(name):
    game = arena.load_game(name)
    rng = np.random.default_rng(3)
    for _ in range(5):
        s = game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                out = s.chance_outcomes()
                s.apply_action(out[rng.choice(len(out), p=[p for _, p in out])][0])
                continue
            p = s.current_player()
            a = PlayerView(s.observation_tensor(p), s.cfg.variant, s.n, p)
            b = PlayerView.from_state(s, p)
            for field in (
                "phase",
                "plays_left",
                "hand",
                "discard",
                "banks",
                "hand_size",
                "turn_player",
                "effect",
                "owed",
                "amount",
                "jsn_count",
                "by",
                "target",
                "take",
                "give",
                "colour",
                "house",
                "hotel",
            ):
                assert getattr(a, field) == getattr(b, field), field
            assert [[sorted(x) for x in q] for q in a.props] == [[sorted(x) for x in q] for q in b.props]
            legal = s.legal_actions()
            s.apply_action(legal[rng.integers(len(legal))])


@pytest.mark.parametrize(
    "name", ["monopoly_deal(players=4)", "monopoly_deal(variant=paper)", "monopoly_deal(players=5,max_turns=40)"]
)
def test_pettingzoo_api_for_variants(name):
    api_test(arena.make_env(name), num_cycles=1000)


def test_borg_turn_structure_in_the_views():
    """Rent hands control to the payer mid-turn and back; turns are counted apart from decisions;
    the responder's info-state key and text carry the pending obligation."""
    game = arena.load_game("monopoly_deal")
    for seed in range(60):
        s = game.new_initial_state()
        rng = np.random.default_rng(seed)
        while not s.is_terminal():
            if s.is_chance_node():
                out = s.chance_outcomes()
                s.apply_action(out[rng.choice(len(out), p=[p for _, p in out])][0])
                continue
            if s.phase == "pay" and s.owed > 0 and s.plays_left > 0 and s.hand_size[s.player] > 0:
                p = s.current_player()
                assert p != s.player  # someone else acts in the turn player's turn
                key, text = s.information_state_key(p), s.observation_text(p)
                assert key.endswith(f"[pay: ${s.owed}M owed to player {s.effect['by']}]")
                assert f"Still owed: ${s.owed}M" in text and "Pay one card at a time" in text
                assert s.information_state_key(s.player).endswith("[waiting]")
                turn = s.turn
                while s.phase == "pay":
                    s.apply_action(s.legal_actions()[0])
                # control returns to the same turn, mid-turn (unless the payment ended the game)
                assert s.is_terminal() or (s.turn == turn and s.current_player() == s.player and s.phase == "play")
                assert s.decisions > s.turn
                return
            legal = s.legal_actions()
            s.apply_action(legal[rng.integers(len(legal))])
    pytest.fail("no payment in 60 random games")
