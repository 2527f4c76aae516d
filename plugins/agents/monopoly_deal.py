"""Monopoly Deal agents: ``monopoly_deal_heuristic`` (scripted) and ``monopoly_deal_mccfr``
(MCCFR on the intent abstraction of :mod:`arena.games.monopoly_deal.abstract`).

The heuristic (:func:`arena.games.monopoly_deal.tactics.heuristic_move`, shared with the
abstraction) reads only its observation tensor (:class:`PlayerView`) and the legal moves:

- plays: lay a property that completes a set, then Deal Breaker, then any property where it
  brings a set closest to complete; steal (Sly/Forced Deal) toward its best sets; charge the
  largest rent (doubled when it can); Debt Collector and It's My Birthday when the others can
  pay; build; Pass Go; bank money (never a Just Say No); then end the turn;
- answers: Just Say No against a Deal Breaker, a steal from a nearly complete set, or a debt of
  $4M or more; the initiator always answers back when it can;
- pays with the least valuable assets: bank money first (the smallest card that settles the
  rest, else the largest below it), then properties far from completing a set, buildings last
  but one, and complete sets last;
- discards the least useful cards (rent for colours it lacks, then low money).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.agent import Agent, AgentEntry, Observation, sample_from
from arena.errors import ArenaError
from arena.game import Action, Game, parse_game_name
from arena.games.monopoly_deal.abstract import (
    DEFAULT_CHOICES,
    INTENTS,
    IntentGame,
    abstract_key,
    intents,
    parse_choices,
)
from arena.games.monopoly_deal.rules import layout_for
from arena.games.monopoly_deal.tactics import heuristic_move
from arena.games.monopoly_deal.view import PlayerView
from arena.hookspecs import hookimpl
from arena.policy import TabularPolicy


def _check_game(game: Game, agent: str) -> None:
    if game.spec.name != "monopoly_deal":
        raise ArenaError(f"agent '{agent}' plays only monopoly_deal, not '{game.spec.full_name}'")


class MonopolyDealHeuristic(Agent):
    name = "monopoly_deal_heuristic"

    def __init__(self, game: Game) -> None:
        _check_game(game, self.name)
        p = game.spec.params
        self.variant = p.get("variant", "retail")
        self.n = game.spec.num_players
        self.moves = layout_for(self.variant, self.n).moves

    def act(self, obs: Observation) -> Action:
        v = PlayerView(obs.tensor, self.variant, self.n, obs.player)
        legal = [self.moves[a] for a in obs.legal_actions]
        ids = {self.moves[a]: a for a in obs.legal_actions}
        return ids[self.choose(v, legal)]

    def choose(self, v: PlayerView, legal: list[tuple]) -> tuple:
        return heuristic_move(v, legal)


class IntentPolicyAgent(Agent):
    """Plays an MCCFR policy of the intent abstraction in the real 2-player paper variant: the
    observation gives the intents on offer (the abstraction's ``choices``, read from the
    policy's game name) and the abstract key; the policy picks an intent; the intent's concrete
    move is played. A decision with one intent on offer is the heuristic's move (as in the
    abstraction); a choice whose key the policy never saw falls back to the heuristic's move
    (``stats()`` counts choices and unseen keys)."""

    name = "monopoly_deal_mccfr"

    def __init__(self, game: Game, policy: TabularPolicy, info: dict[str, Any] | None = None) -> None:
        self.table = policy
        self.info = info or {}
        self.choices = parse_choices(parse_game_name(policy.game)[1].get("choices", DEFAULT_CHOICES))
        self.moves = layout_for("paper", 2).moves
        self.decisions = self.choice_points = self.misses = 0
        self.chosen: dict[str, int] = {}

    def act(self, obs: Observation) -> Action:
        v = PlayerView(obs.tensor, "paper", 2, obs.player)
        legal = {self.moves[a]: a for a in obs.legal_actions}
        offer = intents(v, list(legal), self.choices)
        self.decisions += 1
        if len(offer) == 1:
            return legal[next(iter(offer.values()))]
        self.choice_points += 1
        probs = self.table.get(abstract_key(v, offer))
        if probs is None:
            self.misses += 1
            return legal[heuristic_move(v, list(legal))]
        intent = sample_from({i: probs.get(i, 0.0) for i in offer}, obs)
        self.chosen[INTENTS[intent]] = self.chosen.get(INTENTS[intent], 0) + 1
        return legal[offer[intent]]

    def stats(self) -> dict[str, Any]:
        return {
            "decisions": self.decisions,
            "choices": self.choice_points,
            "unseen_keys": self.misses,
            "intents_played": dict(self.chosen),
            **self.info,
        }

    def save(self, directory: str | Path) -> None:
        directory = Path(directory)
        self.table.save(directory / "policy.json")


def make_mccfr(
    game: Game,
    path: str | None = None,
    iterations: int = 4000,
    algo: str = "es-mccfr",
    seed: int = 0,
    averaging: str = "simple",
    choices: str = DEFAULT_CHOICES,
    probe_after: int = 6,
) -> IntentPolicyAgent:
    """``monopoly_deal_mccfr:path=policy.json`` plays a saved policy (``arena solve --game
    monopoly_deal_intents --algo es-mccfr``; the abstraction's ``choices`` come with the
    policy's game name); without ``path`` it solves on load. External sampling enumerates the
    player's first ``probe_after`` choices of a traversal and samples the rest: its cost is
    exponential in the choices along a game, and a long game with Just Say No held through many
    rents has dozens."""
    _check_game(game, "monopoly_deal_mccfr")
    if game.spec.params.get("variant") != "paper":
        raise ArenaError(
            "agent 'monopoly_deal_mccfr' plays the 2-player paper variant: "
            "load it with game 'monopoly_deal(variant=paper)'"
        )
    if path is not None:
        p = Path(path)
        policy = TabularPolicy.load(p / "policy.json" if p.is_dir() else p)
        if parse_game_name(policy.game)[0] != "monopoly_deal_intents":
            raise ArenaError(f"policy file {p} is for game '{policy.game}', not monopoly_deal_intents")
        return IntentPolicyAgent(game, policy, {"source": str(p)})
    if algo not in ("os-mccfr", "es-mccfr"):
        raise ArenaError(f"agent 'monopoly_deal_mccfr': algo must be os-mccfr or es-mccfr, not {algo!r}")
    if not isinstance(iterations, int) or iterations < 1:
        raise ArenaError(f"agent 'monopoly_deal_mccfr': iterations must be a positive integer, not {iterations!r}")
    from arena.plugins.agents.cfr.run import make_solve, run_solve

    turns = game.spec.params.get("max_turns", 200)
    params: dict[str, Any] = {"averaging": averaging} if algo == "os-mccfr" else {"probe_after": probe_after}
    abstraction = IntentGame(max_turns=turns, choices=choices)
    solve = run_solve(make_solve(abstraction, algo, seed=seed, **params), iterations)
    return IntentPolicyAgent(
        game,
        solve.policy(),
        {
            "algo": algo,
            "iterations": iterations,
            "seed": seed,
            **params,
            "abstraction": abstraction.spec.full_name,
            "infosets": len(solve.solver.nodes),
            "solve_seconds": round(solve.seconds, 1),
        },
    )


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry(
            "monopoly_deal_heuristic",
            lambda game: MonopolyDealHeuristic(game),
            "scripted Monopoly Deal: complete sets, charge the biggest rent, bank money, pay with least value",
        ),
        AgentEntry(
            "monopoly_deal_mccfr",
            make_mccfr,
            "MCCFR policy of the intent abstraction (2-player paper variant): a saved policy or solved on load",
            {
                "path": None,
                "iterations": 4000,
                "algo": "es-mccfr",
                "seed": 0,
                "averaging": "simple",
                "choices": DEFAULT_CHOICES,
                "probe_after": 6,
            },
        ),
    ]
