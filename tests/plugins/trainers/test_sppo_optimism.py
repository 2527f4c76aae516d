"""SPPO's optimistic step (``optimism: true``): the target is η(2·P̂(y ≻ π_t) − P̂(y ≻ π_{t−1}) − ½),
so the trainer must judge the same responses against the previous iterate — its weights, not the
current ones — and keep those weights across a resume."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformers")

import arena  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.judge import Candidate  # noqa: E402
from arena.loading import load_agent  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.registry import get_registry  # noqa: E402
from arena.testing import check_trainer  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402
from arena.trainer import Trajectory  # noqa: E402

TEXT = {"name": "llm", "model": "", "mode": "generated", "temperature": 1.0, "max_text_tokens": 1}


def test_cross_win_rates_compare_each_response_with_every_sample_of_the_other_policy():
    from arena.plugins.trainers.llm.preference_text import cross_win_rates

    class Table:  # P(first ≻ second) from the responses' labels, as a judge's margin
        comparisons = 0
        P = {("a", "b"): 0.9, ("a", "c"): 0.3, ("b", "c"): 0.6}

        def compare(self, pairs):
            out = []
            for x, y in pairs:
                i, j = x.trajectory.seats[0], y.trajectory.seats[0]
                p = 0.5 if i == j else self.P.get((i, j), 1 - self.P.get((j, i), 0.5))
                out.append(2 * p - 1)
            return out

    def c(label):
        return Candidate(Trajectory(0, 0, [label], [], [0.0]), 0)

    rates = cross_win_rates(Table(), [[c("a"), c("b")]], [[c("b"), c("c"), c("c")]])[0]
    assert rates == pytest.approx([(0.9 + 0.3 + 0.3) / 3, (0.5 + 0.6 + 0.6) / 3])


def test_the_second_update_judges_against_the_previous_iterates_weights():
    """Kuhn poker, outcome preferences: update 1 reads P̂ under π_1 only; update 2 reads it under
    π_2 and then under π_1's exact weights (the same playouts), and leaves π_2's weights live."""
    import torch

    torch.set_num_threads(1)
    game = arena.load_game("kuhn_poker")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir())}, game)
    sppo = get_registry().get("trainer", "sppo").factory(game, [agent], optimism=True, epochs=2, lr=1e-2, seed=0)
    seen: list[dict] = []
    inner = sppo._preferences

    def spy(*args):
        seen.append({n: p.detach().clone() for n, p in sppo._params().items()})
        return inner(*args)

    sppo._preferences = spy

    def weights():
        return {n: p.detach().clone() for n, p in sppo._params().items()}

    def same(a, b):
        return all(torch.equal(a[n], b[n]) for n in a)

    trajs = [r.trajectory for r in play_games(game, [agent, agent], num_games=6, seed=1, record=True)]
    pi_1 = weights()
    sppo.update(trajs)
    pi_2 = weights()
    assert len(seen) == 1 and same(seen[0], pi_1) and not same(pi_1, pi_2)
    sppo.update(trajs)
    assert len(seen) == 3 and same(seen[1], pi_2) and same(seen[2], pi_1)
    assert same(sppo.previous, pi_2) and not same(weights(), pi_2)


def test_optimistic_sppo_on_text_passes_the_trainer_kit():
    """The kit's resume check fails unless π_{t−1} is part of the trainer's state: a resumed run
    without it would take a plain step where the uninterrupted one takes an optimistic one."""
    llm = {**TEXT, "model": str(tiny_model_dir())}
    params = {"judge": "preference:sample=true", "samples": 2, "optimism": True}
    check_trainer("sppo", "cyclic_preference(length=1)", [llm], params=params, games=2)


def test_optimism_must_be_a_boolean():
    game = arena.load_game("cyclic_preference(length=1)")
    agent = load_agent({**TEXT, "model": str(tiny_model_dir())}, game)
    with pytest.raises(ArenaError, match="optimism must be true or false"):
        get_registry().get("trainer", "sppo").factory(game, [agent], judge="preference", optimism="yes")


def test_the_optimistic_hedge_average_settles_where_the_plain_one_still_swings():
    """Why the option exists, on the exact dynamics of ``cyclic_preference``: Hedge's average is
    still 0.07 from the winner at 300 iterations; the optimistic step's is within 0.02."""
    game = arena.load_game("cyclic_preference(length=1)")
    P = game.preference_matrix()[:3, :3]
    winner = np.array(game.von_neumann_winner())

    def average_after(T, optimistic):
        logp, total, before = np.zeros(3), np.zeros(3), None
        for _ in range(T):
            p = np.exp(logp - logp.max())
            p /= p.sum()
            total += p
            g = P @ p - 0.5
            logp += 2 * g - before if optimistic and before is not None else g
            before = g
        return np.abs(total / T - winner).sum()

    assert average_after(300, optimistic=False) > 0.05
    assert average_after(300, optimistic=True) < 0.02
