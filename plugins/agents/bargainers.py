"""The subgame-perfect player of the ultimatum and dictator games: ``subgame_perfect``.

By backward induction (``games/bargaining.py``): a responder facing an offer ``x > 0`` is
strictly better off accepting; at ``x = 0`` it is indifferent. With a pie in whole units the
one-shot ultimatum game therefore has two subgame-perfect equilibria: (offer 0, accept every
offer) and (offer 1, reject 0 and accept every offer of at least 1). Repeated with the same
partner, the SPE plays the stage SPE in every round. The dictator gives 0.

The agent's ``threshold`` picks the equilibrium: as responder it accepts exactly the offers of
at least ``threshold``; as proposer it offers ``threshold``, the least its equilibrium partner
accepts. The default is 1, the (offer 1, reject 0) equilibrium: the offer-0 equilibrium rests on
a tie at 0 broken in the proposer's favour, while offering 1 is the proposer's best offer against
every responder that accepts all positive offers, whatever it does at 0 (it gives up 1 unit and
risks nothing), so it is the SPE that survives a responder who prefers to punish when it costs
nothing. ``threshold=0`` plays the other one (the continuous game's unique SPE, offer 0 and
accept all).
"""

from __future__ import annotations

from typing import Mapping

from arena.agent import Action, AgentEntry, Observation, PolicyAgent
from arena.errors import ArenaError
from arena.game import Game
from arena.hookspecs import hookimpl

GAMES = ("ultimatum", "dictator")


class SubgamePerfectAgent(PolicyAgent):
    """Plays one subgame-perfect equilibrium of the ultimatum/dictator game (module docstring)."""

    name = "subgame_perfect"

    def __init__(self, game: Game, threshold: int = 1) -> None:
        if game.spec.name not in GAMES:
            raise ArenaError(f"agent 'subgame_perfect' plays ultimatum and dictator, not '{game.spec.full_name}'")
        pie = getattr(game, "pie", 0)
        if isinstance(threshold, bool) or not isinstance(threshold, int) or not 0 <= threshold <= pie:
            raise ArenaError(
                f"agent 'subgame_perfect': parameter 'threshold' must be an integer 0..{pie}, got {threshold!r}"
            )
        self.game, self.threshold = game, threshold

    def choice(self, obs: Observation) -> int:
        g = self.game
        if obs.player == 0:  # proposer / dictator
            return 0 if g.spec.name == "dictator" else self.threshold
        offer = obs.struct["offer"]  # type: ignore[index]
        return g.accept if offer >= self.threshold else g.reject  # type: ignore[attr-defined]

    def policy(self, obs: Observation) -> Mapping[int, float]:
        return {self.choice(obs): 1.0}

    def act(self, obs: Observation) -> Action:
        return self.choice(obs)


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry(
            "subgame_perfect",
            SubgamePerfectAgent,
            "ultimatum/dictator SPE: offer the least accepted (threshold), accept offers >= threshold, dictator gives 0",
            {"threshold": 1},
        )
    ]
