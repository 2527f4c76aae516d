"""``tools/turn_credit.py``: games to reach the reference's final return, on hand-made curves and on
TensorBoard scalars written the way a run writes them."""

from __future__ import annotations

import numpy as np
import pytest

from arena.tools.turn_credit import curves, ratios, reach, trailing


def test_trailing_mean_and_first_crossing():
    x = np.array([1.0, 3.0, 2.0, 6.0])
    assert trailing(x, 2).tolist() == [1.0, 2.0, 2.5, 4.0]
    games = np.array([10.0, 20.0, 30.0, 40.0])
    assert reach(x, games, 2.5, 2) == (30.0, True)
    assert reach(x, games, 9.0, 2) == (40.0, False)  # never reached: the last count, a lower bound


def test_ratio_is_games_to_the_references_final_value_over_its_games():
    g = np.arange(1, 9) * 10.0
    ref = [(np.array([0, 0, 0, 0, 0, 0, 4.0, 4.0]), g)] * 3  # final (last 2) = 4
    fast = (np.array([0, 0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]), g)  # trailing mean of 2 reaches 4 at the 4th iteration
    level, rs, hit = ratios(ref, [fast], 2, 80.0)
    assert level == 4.0 and rs == [0.5] and hit == [True]


def test_curves_read_the_runs_tensorboard_scalars(tmp_path):
    tb = pytest.importorskip("torch.utils.tensorboard")
    seed = tmp_path / "seed-3"
    (seed / "tb").mkdir(parents=True)
    (seed / "results.json").write_text("{}")
    w = tb.SummaryWriter(str(seed / "tb"))
    for step, (a, b, p) in enumerate([(1.0, 3.0, 8.0), (2.0, 4.0, 16.0)], start=1):
        w.add_scalar("train/learner/return_p0", a, step)
        w.add_scalar("train/learner/return_p1", b, step)
        w.add_scalar("train/learner/playout_games", p, step)
    w.close()
    (tmp_path / "seed-4").mkdir()  # unfinished: no results.json
    out = curves(tmp_path, 24)
    assert list(out) == [3]
    ret, games = out[3]
    assert ret.tolist() == [2.0, 3.0] and games.tolist() == [24.0 + 8.0, 48.0 + 16.0]
