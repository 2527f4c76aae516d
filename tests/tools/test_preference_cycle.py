"""``arena bench preference-cycle`` reads the model's exact answer distribution: it is what the
agent really answers (sampled frequencies agree), and the winner it measures against is the
game's own."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

pytest.importorskip("transformers")

import arena  # noqa: E402
from arena.games.cyclic_preference import response_index  # noqa: E402
from arena.loading import load_agent  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.registry import get_registry  # noqa: E402
from arena.tools.bench.preference_cycle import distribution, game_name, three_probabilities, winner  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402


def test_exact_distribution_is_what_the_agent_answers():
    game = arena.load_game("cyclic_preference(length=1)")
    agent = load_agent(
        {"name": "llm", "model": str(tiny_model_dir()), "mode": "generated", "max_text_tokens": 1, "temperature": 1.0},
        game,
    )
    trainer = get_registry().get("trainer", "sppo").factory(game, [agent], judge="preference", lr=0.05, seed=0)
    # push mass onto A, B, C first so their shares are large enough to compare
    warm = [
        (agent.backend.prompt_ids(agent.prompts.build(_obs(game))), [agent.backend.tokenizer.convert_tokens_to_ids(c)])
        for c in "ABC"
    ]
    for _ in range(20):
        trainer.model.step(-trainer.model.logprobs(warm, grad=True).mean())
    trainer.model.sync()
    exact = distribution(trainer, agent, game)
    answers = [r.trajectory.steps[0].action for r in play_games(game, [agent], num_games=200, seed=1, record=True)]
    freq = np.bincount([response_index(a) for a in answers], minlength=4) / len(answers)
    assert exact.sum() == pytest.approx(1.0) and exact[:3].sum() > 0.5
    assert np.abs(freq - exact).max() < 0.1, (freq, exact)


def _obs(game):
    from arena.agent import Observation
    from arena.playing.match import game_rng

    return Observation(game.new_initial_state(), 0, game_rng(0, 0), game.spec.full_name)


def test_the_winner_measured_against_is_the_cycles_own():
    """(1/7, 2/7, 4/7) for the default cycle; for another, p ∝ (P(B≻C), P(C≻A), P(A≻B)) − ½."""
    default = winner(arena.load_game(game_name(argparse.Namespace(preferences=(0.9, 0.6, 0.7)))))
    assert np.allclose(default, np.array([1, 2, 4, 0]) / 7)
    other = winner(arena.load_game(game_name(argparse.Namespace(preferences=(0.65, 0.85, 0.6)))))
    m = np.array([0.85, 0.6, 0.65]) - 0.5
    assert np.allclose(other, np.r_[m / m.sum(), 0.0])


def test_a_malformed_cycle_is_refused_with_what_is_wanted():
    assert three_probabilities("0.65,0.85,0.6") == (0.65, 0.85, 0.6)
    for bad in ("0.9,0.6", "0.9,0.6,x", "0.9,0.6,1.5"):
        with pytest.raises(argparse.ArgumentTypeError, match="three numbers in"):
            three_probabilities(bad)
