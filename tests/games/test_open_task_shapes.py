"""``open_task``'s family of hidden-quality shapes: each shape's quality on strings whose value
is known from the drawn hidden sets, determinism from ``secret``, and the split into
development and held-out shapes."""

from __future__ import annotations

import pytest

from arena.errors import ArenaError
from arena.games.open_task import ALPHABET, DEVELOPMENT_SHAPES, HELD_OUT_SHAPES, SHAPES
from arena.loading import load_game


def game(shape, **kw):
    args = ",".join([f"shape={shape}", "instances=2", "length=8", *(f"{k}={v}" for k, v in kw.items())])
    return load_game(f"open_task({args})")


def test_shapes_split_into_development_and_held_out():
    assert set(DEVELOPMENT_SHAPES) | set(HELD_OUT_SHAPES) == set(SHAPES)
    assert not set(DEVELOPMENT_SHAPES) & set(HELD_OUT_SHAPES)
    with pytest.raises(ArenaError, match="shape must be one of"):
        load_game("open_task(shape=vowels)")


def test_chars_is_the_original_task():
    g, old = game("chars"), load_game("open_task(instances=2,length=8)")
    assert g.good == old.good and g.themes == old.themes and "shape" not in old.spec.params
    good = sorted(g.good - g.themes[0])[0]
    assert g.quality(0, good * 8) == pytest.approx(0.6)
    assert g.quality(0, good * 4) == pytest.approx(0.3)  # length counts


def test_pairs_scores_adjacent_pairs_not_characters():
    g = game("pairs")
    bigram = sorted(g.good_pairs - g.theme_pairs[0])[0]
    a, b = bigram
    assert g.quality(0, a + b) == pytest.approx(0.6 / 7)
    # the same characters in the other order score only if that pair is good too
    assert g.quality(0, b + a) == pytest.approx(
        0.6 / 7 * ((b + a) in g.good_pairs) + 0.4 / 7 * ((b + a) in g.theme_pairs[0])
    )
    themed = sorted(g.theme_pairs[1] - g.good_pairs)[0]
    assert g.quality(1, themed) == pytest.approx(0.4 / 7) and g.quality(0, themed) == pytest.approx(
        0.4 / 7 * (themed in g.theme_pairs[0])
    )


def test_order_follows_the_hidden_cycle():
    g = game("order")
    c = ALPHABET[0]
    chain = c
    for _ in range(7):
        chain += sorted(g.successors[chain[-1]])[0]
    assert g.quality(0, chain) == pytest.approx(1.0)
    bad = next(x for x in ALPHABET if x not in g.successors[c] and x != c)
    assert g.quality(0, c + bad) == 0.0 and g.quality(0, c * 8) == 0.0


def test_position_length_and_themes():
    g = game("position")
    best = "".join(sorted(s)[0] for s in g.position_sets)
    assert g.quality(0, best) == pytest.approx(1.0)
    assert g.quality(0, best[1:]) < 1.0  # shifted: what goes where
    g = game("length", length=24)
    t, c = g.targets[0], sorted(g.good)[0]
    assert g.quality(0, c * t) == pytest.approx(1.0)
    assert g.quality(0, c * (t - 1)) == pytest.approx((t - 1) / t)
    if t < 24:
        assert g.quality(0, c * (t + 1)) == pytest.approx((t - 1) / t)  # one too many costs one
    g = game("themes")
    own = sorted(g.theme5[0] - g.theme5[1])[0]
    assert g.quality(0, own * 8) == pytest.approx(1.0) and g.quality(1, own * 8) == 0.0


def test_shapes_are_deterministic_from_the_secret():
    assert game("pairs").good_pairs == game("pairs").good_pairs
    assert game("pairs").good_pairs != game("pairs", secret=1).good_pairs
