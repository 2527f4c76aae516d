"""The PSRO loop (Lanctot et al., *A Unified Game-Theoretic Approach to Multiagent Reinforcement
Learning*, arXiv 1711.00832).

Each iteration: the training meta-solver gives every player a mixture over its population, the
oracle returns each player's best response to the others' mixtures (all players against the
same mixtures, as OpenSpiel's ``psro_v2``), the responses join the populations and the
meta-game grows. Exploitability is measured on the mixture of the *evaluation* meta-solver,
which SHOR-PSRO separates from the training one.

The oracle decides how exact things are: :class:`ExactOracle` (tree-view games: exact best
responses and payoffs) or :class:`arena.plugins.agents.psro.rl.RLOracle` (any game: PPO best
responses, sampled payoffs).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import Game

from .exact import TreeOracle
from .meta_solvers import EVAL_DEFAULT, MetaSolver, make_meta_solver


class ExactOracle:
    """Oracle interface over :class:`TreeOracle`: members are slot vectors."""

    exact = True

    def __init__(self, game: Game, ties: str = "uniform") -> None:
        self.tree_oracle = TreeOracle(game, ties=ties)
        self.num_players = self.tree_oracle.n

    def initial(self, p: int) -> np.ndarray:
        return self.tree_oracle.uniform(p)

    def best_responses(self, pops: Sequence[Sequence[Any]], mixtures: Sequence[np.ndarray]) -> list[Any]:
        t = self.tree_oracle
        sigma = t.mixture_policy(pops, mixtures)
        return [t.best_response(p, sigma)[1] for p in range(t.n)]

    def meta_games(self, pops, old):
        return self.tree_oracle.extend_meta_games(pops, old)

    def joint_responses(self, pops, joint, kind, meta):
        return self.tree_oracle.joint_responses(pops, joint, kind, meta)

    def exploitability(self, pops, mixtures) -> float:
        t = self.tree_oracle
        return t.nash_conv(t.mixture_policy(pops, mixtures)) / t.n


class PSRO:
    """Populations, meta-games and mixtures; ``step()`` runs one PSRO iteration."""

    def __init__(
        self,
        game: Game,
        meta_solver: str = "nash",
        eval_solver: str | None = None,
        oracle: str = "exact",
        ties: str = "uniform",
        seed: int = 0,
        oracle_params: dict[str, Any] | None = None,
    ) -> None:
        self.game = game
        self.train_solver: MetaSolver = make_meta_solver(meta_solver)
        self.eval_name = eval_solver or EVAL_DEFAULT.get(meta_solver, meta_solver)
        self.eval_solver: MetaSolver = make_meta_solver(self.eval_name)
        if self.eval_name == meta_solver:
            self.eval_solver = self.train_solver if not self.train_solver.state() else make_meta_solver(meta_solver)
        n = game.spec.num_players
        self._check_correlated(game, oracle)
        if meta_solver == "nash" or self.eval_name == "nash":
            if n != 2 or not game.spec.zero_sum:
                raise ArenaError(
                    f"meta-solver 'nash' needs a 2-player zero-sum game; "
                    f"'{game.spec.full_name}' is not (use prd, rm, alpharank or shor)"
                )
        if oracle == "exact":
            if not game.spec.tree:
                raise ArenaError(
                    f"PSRO oracle 'exact' needs a tree view; '{game.spec.full_name}' has none (use oracle=ppo)"
                )
            if oracle_params:
                raise ArenaError(f"PSRO oracle 'exact' takes no oracle parameters, got {sorted(oracle_params)}")
            self.oracle: Any = ExactOracle(game, ties)
        elif oracle == "ppo":
            from .rl import RLOracle

            self.oracle = RLOracle(game, seed=seed, **(oracle_params or {}))
        else:
            raise ArenaError(f"unknown PSRO oracle '{oracle}'; known: exact, ppo")
        self.pops: list[list[Any]] = [[self.oracle.initial(p)] for p in range(n)]
        self.meta: list[np.ndarray] = self.oracle.meta_games(self.pops, None)
        self.joint: np.ndarray | None = None
        self.mixtures = self._solve(self.train_solver)
        self.iterations = 0
        self.curve: list[dict[str, float]] = []
        self.elapsed = 0.0

    def _check_correlated(self, game: Game, oracle: str) -> None:
        for s in (self.train_solver, self.eval_solver):
            if s.kind is None:
                continue
            if oracle != "exact":
                raise ArenaError(
                    f"meta-solver '{s.name}' (JPSRO) needs oracle=exact: correlated play needs exact responses"
                )
            if game.spec.num_players == 2 and game.spec.zero_sum:
                raise ArenaError(
                    f"meta-solver '{s.name}' is for general-sum or n-player games; '{game.spec.full_name}' "
                    "is 2-player zero-sum (use nash)"
                )

    def _solve(self, solver: MetaSolver) -> list[np.ndarray]:
        """Mixtures of ``solver``; a correlated training solver also sets ``self.joint``."""
        if solver.kind is None:
            return solver(self.meta)
        joint = solver.joint(self.meta)  # type: ignore[attr-defined]
        if solver is self.train_solver:
            self.joint = joint
        return [
            m / m.sum()
            for m in (joint.sum(axis=tuple(q for q in range(joint.ndim) if q != p)) for p in range(joint.ndim))
        ]

    def step(self) -> None:
        start = time.perf_counter()
        if self.joint is not None:
            brs, gaps = self.oracle.joint_responses(self.pops, self.joint, self.train_solver.kind, self.meta)
            self.train_gap = float(gaps.sum())
        else:
            brs = self.oracle.best_responses(self.pops, self.mixtures)
        for p, br in enumerate(brs):
            self.pops[p].append(br)
        self.meta = self.oracle.meta_games(self.pops, self.meta)
        self.mixtures = self._solve(self.train_solver)
        self.iterations += 1
        self.elapsed += time.perf_counter() - start

    def eval_mixtures(self) -> list[np.ndarray]:
        return self.mixtures if self.eval_solver is self.train_solver else self._solve(self.eval_solver)

    def eval_joint(self) -> np.ndarray:
        """The evaluation solver's joint distribution (the product of its mixtures if it is not correlated)."""
        if self.eval_solver.kind is not None:
            return self.joint if self.eval_solver is self.train_solver else self.eval_solver.joint(self.meta)  # type: ignore[attr-defined,return-value]
        joint = np.ones(())
        for m in self.eval_mixtures():
            joint = np.multiply.outer(joint, m)
        return joint

    def equilibrium_gap(self) -> float | None:
        """Exact sum over players of the evaluation joint's (C)CE gap in the whole game: what the
        best deviation from the recommended population member gains (CE: per recommendation);
        for a product distribution the CCE gap is NashConv. None without a tree."""
        if not getattr(self.oracle, "exact", False):
            return None
        kind = self.eval_solver.kind or "cce"
        _, gaps = self.oracle.joint_responses(self.pops, self.eval_joint(), kind, self.meta)
        return float(gaps.sum())

    def exploitability(self) -> float | None:
        """Exact exploitability (NashConv/n) of the evaluation mixture; None without a tree."""
        if not getattr(self.oracle, "exact", False):
            return None
        return self.oracle.exploitability(self.pops, self.eval_mixtures())

    def run(
        self, iterations: int, on_iteration: Callable[[dict[str, float]], None] | None = None, measure: bool = True
    ) -> "PSRO":
        """``iterations`` more iterations; ``measure`` records exploitability after each (not timed)."""
        for _ in range(iterations):
            self.step()
            point = {"iteration": self.iterations, "seconds": self.elapsed, "population": len(self.pops[0])}
            if measure:
                e = self.exploitability()
                if e is not None:
                    point["exploitability"] = e
                if e is not None and self.eval_solver.kind is not None:
                    point[f"{self.eval_solver.kind}_gap"] = self.equilibrium_gap()  # type: ignore[assignment]
            self.curve.append(point)
            if on_iteration:
                on_iteration(point)
        return self

    # -- the result as one policy -------------------------------------------------------------------
    def policy_vector(self) -> np.ndarray:
        """The evaluation mixture as one behaviour policy over the tree's slots (exact oracle)."""
        if not getattr(self.oracle, "exact", False):
            raise ArenaError("a PSRO policy vector needs the exact oracle (tree-view games)")
        return self.oracle.tree_oracle.mixture_policy(self.pops, self.eval_mixtures())
