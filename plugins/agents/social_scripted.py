"""Scripted baselines for the social dilemmas: always-cooperate, always-defect, tit-for-tat,
take-every-coin and the greedy splitter.

What "cooperate" means is game-specific (give everything in public goods, take only your own
coins in the Coin Game, concede with the lower hand in Trust-and-Split), so each social game
implements ``scripted_action(kind, obs)`` on its own observation layout and these agents only
dispatch to it. Loading one for a game that does not define the behaviour is a clear error.
"""

from __future__ import annotations

from typing import Sequence

from arena.agent import Agent, AgentEntry, Observation
from arena.errors import ArenaError
from arena.game import Action, Game
from arena.hookspecs import hookimpl

KINDS = {
    "always_cooperate": "always cooperates (IPD C, public goods all-in, own coins only, concede with the lower hand)",
    "always_defect": "always defects (IPD D, public goods nothing, every coin, claim everything)",
    "tit_for_tat": "cooperates first, then copies the other's last move (IPD, public goods, Trust-and-Split)",
    "take_every_coin": "Coin Game: walks to the coin whatever its colour",
    "greedy_splitter": "Trust-and-Split: always claims every coin",
    "hand_teller": "Trust-and-Split: names its hand, claims uniformly at random (a warm-up corpus of honest talk)",
}
MESSAGES = {
    "always_cooperate": "Let's split fairly: whoever holds the upper hand takes the coins.",
    "tit_for_tat": "Whoever holds the upper hand takes the coins; I will do as you did.",
}


class ScriptedAgent(Agent):
    """Plays the game's own rendition of a named baseline behaviour."""

    def __init__(self, game: Game, kind: str) -> None:
        supported = getattr(game, "scripted_kinds", lambda: ())()
        if kind not in supported:
            raise ArenaError(
                f"agent '{kind}' does not support game '{game.spec.full_name}'"
                + (f" (it supports: {', '.join(supported)})" if supported else " (not a social dilemma)")
            )
        self.game, self.kind, self.name = game, kind, kind

    def act_batch(self, observations: Sequence[Observation]) -> list[Action]:
        return [self._say(o) if o.decision == "text" else self.game.scripted_action(self.kind, o) for o in observations]

    def _say(self, obs: Observation) -> str:
        said = getattr(self.game, "scripted_message", lambda kind, obs: None)(self.kind, obs)
        return said if said is not None else MESSAGES.get(self.kind, "I will claim everything.")


def _factory(kind: str):
    return lambda game: ScriptedAgent(game, kind)


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [AgentEntry(kind, _factory(kind), help_) for kind, help_ in KINDS.items()]
