"""PSRO as an arena plugin: the ``psro`` agent.

``psro:meta_solver=nash,iterations=20`` runs PSRO on load and plays the evaluation meta-strategy
mixture. On tree-view games (exact oracle) the mixture is turned into one behaviour policy
(:mod:`.exact`), which the agent exposes through ``policy(obs)``, so its exploitability is exact;
``psro:path=DIR`` plays a saved one. On other games (``oracle=ppo``) it draws one population
member per game from the mixture. A league may grow it with :meth:`PSROAgent.improve`.

Meta-solvers: uniform, nash, prd, rm, alpharank, shor (SHOR-PSRO's training solver, evaluated
with ``shor_eval`` unless ``eval_solver`` says otherwise), the correlated mwcce, mwce, mecce, mece
(JPSRO; the agent plays the joint's marginals) and rae. See ``docs/psro.md``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from arena.agent import AgentEntry, Observation, PolicyAgent, sample_from
from arena.errors import ArenaError
from arena.exact.exploitability import to_tabular
from arena.game import Game, parse_game_name
from arena.hookspecs import hookimpl
from arena.policy import TabularPolicy

from .meta_solvers import SOLVERS, make_meta_solver
from .solver import PSRO

__all__ = ["PSRO", "PSROAgent", "make_meta_solver", "SOLVERS"]


class PSROAgent(PolicyAgent):
    """Plays a PSRO meta-strategy mixture."""

    name = "psro"

    def __init__(self, game: Game, psro: PSRO | None = None, table: TabularPolicy | None = None) -> None:
        self.game = game
        self.psro = psro
        self.table = table
        self._mixture: Any = None
        self._fixed: Any = None
        self._refresh()

    def _refresh(self) -> None:
        psro = self.psro
        if psro is None:
            return
        if getattr(psro.oracle, "exact", False):
            self.table = to_tabular(psro.oracle.tree_oracle.tree, psro.policy_vector())
            self._mixture = None
        else:
            from .rl import MixtureAgent

            mix = psro.eval_mixtures()
            self._mixture = [MixtureAgent(psro.pops[p], mix[p], f"{self.name}/p{p}") for p in range(len(mix))]

    # -- acting -------------------------------------------------------------------------------------
    def policy(self, obs: Observation) -> Mapping[int, float]:
        if self.table is None:
            raise ArenaError(
                "psro agent with the ppo oracle plays one member per game; its behaviour policy "
                "is not tabular (exact evaluation needs a tree-view game)"
            )
        probs = self.table.get(obs.info_state)
        if probs is None:
            return {a: 1.0 / len(obs.legal_actions) for a in obs.legal_actions}
        return {a: probs.get(a, 0.0) for a in obs.legal_actions}

    @property
    def has_policy(self) -> bool:
        return self.table is not None

    @property
    def array_native(self) -> bool:
        """A tabular mixture plays on a game's array face (``act_arrays``); the ppo oracle's
        members need a ``State``."""
        return self.table is not None and self._mixture is None

    @property
    def watches_games(self) -> bool:
        """Only the ppo oracle's mixture hears games end (it picks a member per game)."""
        return self._mixture is not None

    def act_arrays(self, games: Any, rows: Any, player: int | None = None) -> Any:
        """The table's ``sample_from`` on arrays (the ``fixed`` agent's, on this table)."""
        if self._fixed is None or self._fixed.table is not self.table:
            from arena.plugins.agents.basic import FixedPolicyAgent

            assert self.table is not None
            self._fixed = FixedPolicyAgent(self.table)
        return self._fixed.act_arrays(games, rows, player)

    def act_arrays_info(self, games: Any, rows: Any, player: int | None = None) -> tuple[Any, None]:
        """:meth:`act_arrays`; a tabular mixture's decisions carry no info."""
        return self.act_arrays(games, rows, player), None

    def act_batch_info(self, observations):
        if self._mixture is None:
            return [sample_from(self.policy(o), o) for o in observations], [{} for _ in observations]
        actions: list[Any] = [None] * len(observations)
        infos: list[dict] = [{} for _ in observations]
        by_player: dict[int, list[int]] = {}
        for i, o in enumerate(observations):
            by_player.setdefault(o.player, []).append(i)
        for p, idx in by_player.items():
            acts, _ = self._mixture[p].act_batch_info([observations[i] for i in idx])
            for i, a in zip(idx, acts):
                actions[i] = a
        return actions, infos

    def act_batch(self, observations):
        return self.act_batch_info(observations)[0]

    def game_finished(self, game_index, player, returns, final=None) -> None:
        if self._mixture is not None:
            self._mixture[player].game_finished(game_index, player, returns, final)

    # -- growing and saving ---------------------------------------------------------------------------
    def improve(self, budget: int) -> dict[str, float]:
        """Run ``budget`` more PSRO iterations (a league's solver step); returns metrics."""
        if self.psro is None:
            raise ArenaError("this psro agent was loaded from a file; it cannot run more iterations")
        self.psro.run(int(budget), measure=False)
        self._refresh()
        out = {"iterations": float(self.psro.iterations), "population": float(len(self.psro.pops[0]))}
        e = self.psro.exploitability()
        if e is not None:
            out["exploitability"] = e
        if e is not None and self.psro.eval_solver.kind is not None:
            out[f"{self.psro.eval_solver.kind}_gap"] = self.psro.equilibrium_gap()  # type: ignore[assignment]
        return out

    def save(self, directory: str | Path) -> None:
        if self.table is None:
            raise ArenaError("only tree-game psro agents (exact oracle) can be saved as a policy file")
        d = Path(directory)
        self.table.save(d / "policy.json")
        info = {"agent": "psro", "path": "policy.json"}
        if self.psro is not None:
            info.update(
                iterations=self.psro.iterations,
                meta_solver=self.psro.train_solver.name,
                eval_solver=self.psro.eval_name,
                exploitability=self.psro.exploitability(),
            )
        (d / "config.json").write_text(json.dumps(info, indent=2))


def make_psro(
    game: Game,
    path: str | None = None,
    meta_solver: str = "nash",
    eval_solver: str | None = None,
    iterations: int = 20,
    oracle: str = "exact",
    ties: str = "uniform",
    seed: int = 0,
    br_games: int = 2000,
    br_batch: int = 100,
    payoff_games: int = 200,
) -> PSROAgent:
    """``psro:path=DIR`` plays a saved mixture policy; otherwise PSRO runs ``iterations`` on load."""
    if path is not None:
        p = Path(path)
        table = TabularPolicy.load(p / "policy.json" if p.is_dir() else p)
        if table.game and parse_game_name(table.game) != parse_game_name(game.spec.full_name):
            raise ArenaError(f"policy file {path} is for game '{table.game}', not '{game.spec.full_name}'")
        return PSROAgent(game, table=table)
    if not isinstance(iterations, int) or iterations < 0:
        raise ArenaError(f"iterations must be a non-negative integer, not {iterations!r}")
    params = {}
    if oracle == "ppo":
        params = {"br_games": br_games, "br_batch": br_batch, "payoff_games": payoff_games}
    psro = PSRO(game, meta_solver, eval_solver, oracle, ties, seed, params)
    psro.run(iterations, measure=False)
    return PSROAgent(game, psro)


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry(
            "psro",
            make_psro,
            "PSRO meta-strategy mixture (exact BR on tree games, PPO BR otherwise)",
            {
                "path": None,
                "meta_solver": "nash",
                "eval_solver": None,
                "iterations": 20,
                "oracle": "exact",
                "ties": "uniform",
                "seed": 0,
                "br_games": 2000,
                "br_batch": 100,
                "payoff_games": 200,
            },
            checkpoint_param="path",
        )
    ]
