"""The llm agent (transformers backend, tiny model) plays every registered text-capable game to
the end: scored mode is always legal; generated mode counts invalid attempts and falls back."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from arena.errors import ArenaError  # noqa: E402
from arena.game import format_game_name  # noqa: E402
from arena.loading import load_agent, load_game  # noqa: E402
from arena.playing.match import game_rng, play_games, sample_chance  # noqa: E402
from arena.registry import get_registry  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402

SHORT = {"horizon": 2, "max_turns": 4, "max_days": 1}
"""A short game budget where a game declares these parameters (games still run to their end)."""


def _variants(entry) -> list[str]:
    """The game with its short budget, plus a free-text variant where ``talk`` allows one."""
    declared = entry.params or {}
    short = {k: v for k, v in SHORT.items() if k in declared}
    out = [format_game_name(entry.name, short)]
    if "talk" in declared:
        for value in ("text", True):
            name = format_game_name(entry.name, {**short, "talk": value})
            try:
                if load_game(name).spec.text_decisions:
                    out.append(name)
                    break
            except (ArenaError, TypeError, ValueError):
                continue
    return out


def text_games() -> list[str]:
    """Registered games whose states render text (new games are covered automatically)."""
    names = []
    for r in get_registry().items("game"):
        for name in _variants(r.entry):
            try:
                game = load_game(name)
                state = game.new_initial_state(seed=0)
                sample_chance(state, game_rng(0, 0))
                if state.is_terminal():
                    continue
                state.observation_text(state.acting_players()[0])
            except (NotImplementedError, ArenaError, TypeError):
                continue
            names.append(name)
    return names


GAMES = text_games()
# generated mode: a game's free-text variant where it has one (it has choice decisions too)
GENERATED = [
    n for n in GAMES if "talk=" in n or not any(m.startswith(n.split("(")[0] + "(") and "talk=" in m for m in GAMES)
]


@pytest.fixture(scope="module")
def model() -> str:
    return str(tiny_model_dir())


def test_registry_has_the_card_games():
    assert {"kuhn_poker", "leduc_poker", "liars_dice"} <= set(GAMES)


def test_some_game_has_text_decisions():
    assert any(load_game(n).spec.text_decisions for n in GAMES), GAMES


@pytest.mark.parametrize("name", GAMES)
def test_scored_mode_plays_every_text_game_legally(name, model):
    game = load_game(name)
    agent = load_agent({"name": "llm", "model": model, "mode": "scored", "max_text_tokens": 8}, game)
    results = play_games(game, [agent] * game.spec.num_players, num_games=1, seed=1, record=True)
    assert all(r.forfeit is None for r in results), [r.forfeit for r in results if r.forfeit]
    steps = [s for r in results for s in r.trajectory.steps]
    choices = [s for s in steps if s.observation.decision == "choice"]
    assert all(s.action in s.observation.legal_actions for s in choices)
    for s in choices:  # what a trainer needs: the policy's log-prob and the token ids
        assert s.log_prob is not None and s.log_prob <= 0
        assert s.extra["prompt_ids"] and s.extra["completion_ids"]
    assert agent.stats()["decisions"] == len(steps) and agent.stats()["invalid_attempts"] == 0


@pytest.mark.parametrize("name", GENERATED)
def test_generated_mode_counts_invalid_attempts_and_falls_back(name, model):
    game = load_game(name)
    agent = load_agent(
        {
            "name": "llm",
            "model": model,
            "mode": "generated",
            "retries": 1,
            "fallback": "random",
            "max_new_tokens": 3,
            "max_text_tokens": 8,
        },
        game,
    )
    results = play_games(game, [agent] * game.spec.num_players, num_games=1, seed=2, record=True)
    assert all(r.forfeit is None for r in results), [r.forfeit for r in results if r.forfeit]
    steps = [s for r in results for s in r.trajectory.steps]
    stats = agent.stats()
    invalid = sum(s.extra.get("invalid_attempts", 0) for s in steps)
    fallbacks = sum(1 for s in steps if s.extra.get("fallback"))
    assert stats["invalid_attempts"] == invalid
    assert stats["fallbacks"] == fallbacks
    for s in steps:
        if s.observation.decision == "choice":
            assert s.action in s.observation.legal_actions
            # the rule: an action is parsed from an attempt, or every attempt (1 + retries) failed
            assert s.extra["fallback"] == (s.extra["invalid_attempts"] == 2)
            assert len(s.extra["attempts"]) == s.extra["invalid_attempts"] + (0 if s.extra["fallback"] else 1)
        else:
            assert isinstance(s.action, str) and len(s.action) <= s.observation.max_text_length
    # an untrained character model almost never names a legal action
    if any(s.observation.decision == "choice" for s in steps):
        assert stats["invalid_attempts"] > 0 and stats["fallbacks"] > 0
