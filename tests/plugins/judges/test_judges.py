"""Judges (a plugin kind) and ranking topologies: ArenaRL's oracles (arXiv 2601.06487: bracket
order, rank advantages, noiseless judge → exact SE champion and round-robin order),
comparison counts, and one clear line for every bad judge."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.errors import ArenaError, PluginError
from arena.evaluation.formats import bracket_order
from arena.evaluation.judge_ranking import TOPOLOGIES, rank_advantages, rank_group, rank_groups
from arena.judge import Candidate, JudgeError, checked_compare, checked_score
from arena.loading import load_game, load_judge
from arena.registry import get_registry
from arena.trainer import Trajectory


def test_bracket_order_and_rank_advantages_match_the_note():
    assert bracket_order(8) == [0, 7, 3, 4, 1, 6, 2, 5]
    assert np.allclose(rank_advantages([0, 1, 2, 3]), [1.1619, 0.3873, -0.3873, -1.1619], atol=1e-4)
    assert np.allclose(rank_advantages([3, 2, 1, 0]), [-1.1619, -0.3873, 0.3873, 1.1619], atol=1e-4)


@pytest.mark.parametrize("n", [4, 8, 16])
def test_noiseless_judge_se_champion_round_robin_exact_and_costs(n):
    rng = np.random.default_rng(n)
    for trial in range(5):
        q = rng.standard_normal(n)
        true = list(np.argsort(-q))

        def cmp(i, j):
            return float(np.clip((q[i] - q[j]) / 4, -1, 1))

        se = rank_group(n, cmp, "single_elimination", seed=trial)
        rr = rank_group(n, cmp, "round_robin", seed=trial)
        assert se.order[0] == true[0] and rr.order == true
        assert se.comparisons == 2 * n - 2 and rr.comparisons == n * (n - 1) // 2
        assert rank_group(n, cmp, "anchor").comparisons == n - 1
        assert rank_group(n, cmp, "adaptive").comparisons <= 2 * n - 2
        for kind in TOPOLOGIES:
            assert sorted(rank_group(n, cmp, kind, seed=trial).order) == list(range(n))


def test_groups_rank_in_lockstep_one_call_per_round():
    calls = []
    q = [np.arange(4)[::-1], np.arange(8)[::-1]]

    def compare(batch):
        calls.append(len(batch))
        return [float(np.sign(q[g][i] - q[g][j])) for g, i, j in batch]

    ranks = rank_groups([4, 8], compare, "single_elimination")
    assert [r.order[0] for r in ranks] == [0, 0]
    assert sum(calls) == 6 + 14 and len(calls) == 4  # seeding round + 3 bracket rounds of the 8-group


def _cand(q, player=0):
    return Candidate(Trajectory(0, 0, ["a"], [], [q]), player, None, {"q": q})


def test_judges_are_plugins_configurable_by_name():
    assert {"outcome", "scorer", "llm"} <= set(get_registry().names("judge"))
    game = load_game("open_task")
    with pytest.raises(PluginError, match="unknown judge 'nope'"):
        load_judge("nope", game)
    with pytest.raises(PluginError, match="judge 'scorer' has no parameter 'bogus'"):
        load_judge("scorer:bogus=1", game)
    j = load_judge({"name": "outcome"}, load_game("kuhn_poker"))
    assert checked_compare(j, [(_cand(2.0), _cand(-2.0))]) == [1.0]  # (2 - -2) / utility range 4


def test_scorer_drift_cancels_in_pairs_not_pointwise_and_resumes():
    game = load_game("open_task")
    j = load_judge("scorer", game, fn=lambda c: c.extra["q"], drift=1.0, seed=3)
    assert checked_compare(j, [(_cand(0.3), _cand(0.1))]) == pytest.approx([0.2])
    pointwise = checked_score(j, [_cand(0.3), _cand(0.3)])
    assert abs(pointwise[0] - pointwise[1]) > 1e-3
    noisy = load_judge("scorer", game, fn=lambda c: c.extra["q"], noise=0.5, seed=3)
    state = noisy.state_dict()
    first = checked_compare(noisy, [(_cand(0.3), _cand(0.1))])
    noisy.load_state_dict(state)
    assert checked_compare(noisy, [(_cand(0.3), _cand(0.1))]) == first


def test_open_task_scorer_reads_the_hidden_quality():
    game = load_game("open_task(instances=2,length=8)")
    s = game.new_initial_state()
    s.apply_action(1)
    assert s.decision_kind(0) == "text" and "Task 1" in s.observation_text(0)
    s.apply_action("".join(sorted(game.good)) * 2)
    assert s.is_terminal() and s.returns() == [0.0]  # the trainer's view has no reward
    assert game.judge_score(s, 0) >= 0.6
    j = load_judge("scorer", game)
    assert j.truth(Candidate(Trajectory(0, 0, ["a"], [], [0.0]), 0, s)) == game.judge_score(s, 0)


def nan_judge(c):
    return math.nan


def test_judge_crash_nan_and_wrong_length_are_one_line_errors():
    game = load_game("open_task")
    j = load_judge("scorer:fn=tests.plugins.judges.test_judges:nan_judge", game)
    with pytest.raises(JudgeError, match="non-finite"):
        checked_compare(j, [(_cand(0.1), _cand(0.2))])

    def boom(c):
        raise RuntimeError("backend down")

    j = load_judge("scorer", game, fn=boom)
    with pytest.raises(JudgeError, match="judge 'scorer' failed in compare: RuntimeError: backend down"):
        checked_compare(j, [(_cand(0.1), _cand(0.2))])
    j.compare = lambda pairs: [0.0]  # type: ignore[method-assign]
    with pytest.raises(JudgeError, match="returned 1 values for 2"):
        checked_compare(j, [(_cand(0.1), _cand(0.2))] * 2)
    with pytest.raises(ArenaError, match="judge .scorer.: cannot load fn"):
        load_judge("scorer:fn=no_such_module:f", game)


def test_a_judge_that_cannot_tell_anything_apart_is_flagged():
    r = rank_group(8, lambda i, j: 0.0, "single_elimination")
    assert r.decisive == 0 and r.comparisons == 14
    assert rank_group(8, lambda i, j: float(i < j), "round_robin").decisive == 28
