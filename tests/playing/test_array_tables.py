"""Several matches of one seed in one array batch (``play_array_tables``, the in-process
executor's ``run_tasks``): each match's results are those it gets alone, trajectories included."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("torch")

from arena.playing.executor import GameTask, run_task, run_tasks  # noqa: E402


def tasks(trajectories: bool) -> list[GameTask]:
    net = "neural:hidden=8,seed=1"
    seats = [(net, "random"), (net, "neural:hidden=8,seed=2"), (net, net), ("random", "random")]
    labels = [("ppo", "random"), ("ppo", "other"), ("ppo", "ppo"), ("random", "random")]
    out, start = [], 0
    for (a, b), (la, lb), size in zip(seats, labels, (50, 70, 30, 40)):
        indices = tuple(range(start, start + size))
        out.append(GameTask("kuhn_poker", (a, b), (la, lb), 7, indices, trajectories=trajectories, rotate=True))
        start += size
    return out


def facts(results):
    out = []
    for r in results:
        t = r.trajectory
        steps = t and [(s.player, s.action, s.log_prob, s.reward, s.observation.info_state) for s in t.steps]
        out.append((r.index, r.seats, r.returns, r.length, r.forfeit, r.transcript, steps))
    return out


@pytest.mark.parametrize("trajectories", [True, False])
def test_matches_in_one_batch_are_the_matches_alone(trajectories, caplog):
    heard = []
    with caplog.at_level(logging.DEBUG, logger="arena.playing"):
        together = run_tasks(tasks(trajectories), lambda task, r: heard.append((task.labels, r.index)))
    assert "array path (4 matches in one batch)" in caplog.text
    alone = [(t, run_task(t)) for t in tasks(trajectories)]
    assert [t for t, _ in together] == [t for t, _ in alone]
    for (_, a), (_, b) in zip(together, alone):
        assert facts(a) == facts(b)
    assert heard == [(t.labels, r.index) for t, rs in alone for r in rs]
    games = [r for _, rs in together for r in rs]
    assert len(games) == 190 and len({tuple(r.returns) for r in games}) > 2
    if trajectories:
        assert all(s.log_prob is not None for r in games[:50] for s in r.trajectory.steps if r.seats[s.player] == "ppo")
