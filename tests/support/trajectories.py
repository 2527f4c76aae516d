"""Trajectories built by hand, for tests of trainers' advantages."""

from __future__ import annotations

from typing import Any, Sequence

from arena.agent import Observation
from arena.trainer import Step, Trajectory


def simultaneous_trajectory(game: Any, index: int, joints: Sequence[Sequence[int]], seats: Sequence[str]) -> Trajectory:
    """A recorded two-player simultaneous-move game (e.g. the IPD) with these joint moves, built
    step by step as the match runner records it: each step's reward is the change in its player's return."""
    state = game.new_initial_state()
    steps, before = [], [0.0, 0.0]
    for joint in joints:
        new = [Step(p, Observation(state.clone(), p).freeze(), joint[p], None, 0.0) for p in range(2)]
        state.apply_actions(list(joint))
        for p in range(2):
            new[p].reward = state.returns()[p] - before[p]
        before = state.returns()
        steps += new
    return Trajectory(index, 0, list(seats), steps, state.returns())
