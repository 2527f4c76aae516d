"""One driver for every solver behind ``arena solve`` and the ``cfr`` agent: build the solver
for an algorithm name, run it, and record the exploitability curve."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from arena.errors import ArenaError
from arena.exact.exploitability import nash_conv
from arena.exact.tree import get_tree
from arena.game import Game
from arena.policy import TabularPolicy

from .mccfr import SAMPLERS
from .rules import ALGORITHMS
from .solver import TreeSolver, make_rule

ALGOS = list(ALGORITHMS) + list(SAMPLERS)


@dataclass
class Solve:
    """A running solve: ``step(n)``, ``policy()``, ``nash_conv()`` (None without a tree view)."""

    game: Game
    algo: str
    solver: Any
    seconds: float = 0.0
    curve: list[dict[str, float]] = field(default_factory=list)
    max_nodes: int | None = None
    _no_tree: bool = False

    @property
    def iteration(self) -> int:
        return self.solver.t

    def step(self, iterations: int) -> None:
        start = time.perf_counter()
        self.solver.iterate(iterations)
        self.seconds += time.perf_counter() - start

    def policy(self) -> TabularPolicy:
        return self.solver.average_policy()

    def nash_conv(self) -> float | None:
        if isinstance(self.solver, TreeSolver):
            return self.solver.nash_conv()
        if self._no_tree or not self.game.spec.tree:
            return None
        try:
            tree = get_tree(self.game, self.max_nodes)
        except ArenaError:
            self._no_tree = True
            return None
        return nash_conv(self.game, self.solver.average_policy(), tree)

    def log_point(self) -> dict[str, float]:
        nc = self.nash_conv()
        n = self.game.spec.num_players
        point = {
            "iteration": self.iteration,
            "seconds": round(self.seconds, 6),
            "nash_conv": nc,
            "exploitability": None if nc is None else nc / n,
        }
        self.curve.append(point)
        return point


def make_solve(
    game: Game,
    algo: str,
    device: str | None = None,
    updates: str = "alternating",
    seed: int = 0,
    max_nodes: int | None = None,
    **params: Any,
) -> Solve:
    if algo in SAMPLERS:
        if device not in (None, "numpy", "cpu"):
            raise ArenaError(f"'{algo}' runs on game states in Python; device {device!r} applies to the tree solvers")
        try:
            solver = SAMPLERS[algo](game, seed=seed, **params)
        except TypeError:
            raise ArenaError(f"algorithm '{algo}' does not take parameters {sorted(params)}") from None
        return Solve(game, algo, solver, max_nodes=max_nodes)
    if updates not in ("alternating", "simultaneous"):
        raise ArenaError(f"updates must be 'alternating' or 'simultaneous', not {updates!r}")
    rule = make_rule(algo, **params)
    return Solve(
        game, algo, TreeSolver(game, rule, updates == "alternating", device, max_nodes=max_nodes), max_nodes=max_nodes
    )


def run_solve(
    solve: Solve,
    iterations: int,
    log_every: int = 0,
    on_log: Callable[[dict[str, float]], None] | None = None,
    on_step: Callable[[int], None] | None = None,
) -> Solve:
    """Run to ``iterations``, logging exploitability at 1, every ``log_every`` and at the end."""
    if iterations < 1:
        raise ArenaError(f"iterations must be at least 1, not {iterations}")
    marks = {1, iterations} | (set(range(log_every, iterations + 1, log_every)) if log_every > 0 else set())
    for mark in sorted(marks):
        if mark > solve.iteration:
            solve.step(mark - solve.iteration)
            if on_step:
                on_step(solve.iteration)
            point = solve.log_point()
            if on_log:
                on_log(point)
    return solve
