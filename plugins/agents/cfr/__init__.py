"""CFR solvers as an arena plugin: the ``cfr`` agent (plays a saved policy, or solves on load)
and the ``arena solve`` command.

Tree solvers (cfr, cfr+, lcfr, dcfr, pcfr+, pdcfr+, vad-cfr) run vectorized on the compiled
tree (:mod:`arena.exact.tree`), on numpy or torch; os-mccfr and es-mccfr sample game states for trees
too large to enumerate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.agent import AgentEntry
from arena.errors import ArenaError
from arena.game import Game
from arena.hookspecs import hookimpl
from arena.plugins.agents.basic import FixedPolicyAgent, make_fixed

from .run import ALGOS, make_solve, run_solve
from .solver import TreeSolver, make_rule

__all__ = ["CFRAgent", "TreeSolver", "make_rule", "make_solve", "run_solve", "ALGOS"]


class CFRAgent(FixedPolicyAgent):
    """Plays a CFR average policy (sampling it with the game's generator)."""

    name = "cfr"

    def __init__(self, policy, strict: bool = False, info: dict[str, Any] | None = None, solve: Any = None) -> None:
        super().__init__(policy, strict)
        self.info = info or {}
        self.solve = solve
        """The running solver when this agent solved on load (so ``improve`` can continue it)."""

    def improve(self, budget: int) -> dict[str, float]:
        """``budget`` more iterations of the same CFR run; the agent then plays the new average
        policy (a league's solver step)."""
        if self.solve is None:
            raise ArenaError("this cfr agent plays a saved policy file; it cannot run more iterations")
        self.solve.step(int(budget))
        self.table = self.solve.policy()
        out = {"iterations": float(self.solve.iteration)}
        nc = self.solve.nash_conv()
        if nc is not None:
            out["exploitability"] = nc / self.solve.game.spec.num_players
        return out

    def save(self, directory: str | Path) -> None:
        directory = Path(directory)
        self.table.save(directory / "policy.json")
        (directory / "config.json").write_text(
            json.dumps({"agent": "cfr", "path": "policy.json", **self.info}, indent=2)
        )


def make_cfr(
    game: Game,
    path: str | None = None,
    algo: str = "cfr+",
    iterations: int = 1000,
    device: str = "numpy",
    updates: str = "alternating",
    seed: int = 0,
    strict: bool = False,
) -> CFRAgent:
    """``cfr:path=policy.json`` plays a saved policy; ``cfr:algo=cfr+,iterations=1000`` solves on load."""
    if path is not None:
        p = Path(path)
        if p.is_dir():
            p = p / "policy.json"
        return CFRAgent(make_fixed(game, str(p), strict).table, strict, {"source": str(p)})
    if not isinstance(iterations, int) or iterations < 1:
        raise ArenaError(f"agent 'cfr': iterations must be a positive integer, not {iterations!r}")
    solve = run_solve(make_solve(game, algo, device=device, updates=updates, seed=seed), iterations)
    return CFRAgent(
        solve.policy(),
        strict,
        {"algo": algo, "iterations": iterations, "exploitability": solve.curve[-1]["exploitability"]},
        solve,
    )


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry(
            "cfr",
            make_cfr,
            "CFR-family policy: plays a saved policy file or solves on load",
            {
                "path": None,
                "algo": "cfr+",
                "iterations": 1000,
                "device": "numpy",
                "updates": "alternating",
                "seed": 0,
                "strict": False,
            },
            checkpoint_param="path",
        )
    ]


@hookimpl
def arena_commands():
    from .cli import COMMAND

    return [COMMAND]
