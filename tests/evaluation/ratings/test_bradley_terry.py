"""Bradley–Terry with its bootstrap interval recovers known strengths (the recipe of "Chatbot
Arena: An Open Platform for Evaluating LLMs by Human Preference", arXiv 2403.04132)."""

import numpy as np

from arena.evaluation.ratings.bradley_terry import bradley_terry


def test_bradley_terry_recovers_strengths_and_ci_covers():
    rng = np.random.default_rng(0)
    true = np.arange(8) * 100.0
    names = [f"a{i}" for i in range(8)]
    outs = []
    for _ in range(20000):
        i, j = rng.choice(8, 2, replace=False)
        p = 1 / (1 + 10 ** ((true[j] - true[i]) / 400))
        outs.append((names[i], names[j], 1.0 if rng.random() < p else 0.0))
    fit = bradley_terry(outs, names, bootstrap=200, seed=1)
    centred = true - true.mean()
    assert np.all(np.abs((fit.rating - 1000) - centred) <= 15)
    half = (fit.hi - fit.lo) / 2
    assert np.all((half > 5) & (half < 20))
    assert np.mean((fit.lo - 1000 <= centred) & (centred <= fit.hi - 1000)) >= 0.75
