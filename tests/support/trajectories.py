"""Trajectories built by hand, for tests of trainers' advantages."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from arena.agent import Observation
from arena.trainer import Step, Trajectory


def simultaneous_trajectory(
    state: Any,
    index: int,
    joints: Sequence[Sequence[int]],
    seats: Sequence[str],
    before_move: Callable[[Any, int], None] | None = None,
) -> Trajectory:
    """A two-player simultaneous-move game (the IPD, the Coin Game) played from ``state`` with these
    joint moves and recorded as the match runner records it: each step's reward is the change in its
    player's return. ``before_move(state, t)`` may set the state up before move ``t``."""
    steps, before = [], [0.0, 0.0]
    for t, joint in enumerate(joints):
        if before_move is not None:
            before_move(state, t)
        new = [Step(p, Observation(state.clone(), p).freeze(), joint[p], None, 0.0) for p in range(2)]
        state.apply_actions(list(joint))
        for p in range(2):
            new[p].reward = state.returns()[p] - before[p]
        before = state.returns()
        steps += new
    return Trajectory(index, 0, list(seats), steps, state.returns())
