"""``werewolf_scripted``: rule-based Werewolf players (the policy is the game's own,
:mod:`arena.games.werewolf.scripted`).

``village=random`` or ``wolves=random`` makes that side play uniformly at random (and say
``...`` at a text turn), so scripted and random villagers can be measured against the same
wolves. ``babble`` is random too, but at a text turn it says a uniformly random speech act
(:meth:`ScriptedPolicy.babble`): the warm-up of an LLM that should know the game's language and
no strategy, so that its utterances have latent strategies to tell apart (docs/werewolf.md).
"""

from __future__ import annotations

from arena.agent import Agent, AgentEntry, Observation
from arena.errors import ArenaError
from arena.game import Action, Game
from arena.games.werewolf.rules import WOLF
from arena.games.werewolf.scripted import ScriptedPolicy
from arena.games.werewolf.view import View
from arena.hookspecs import hookimpl

MODES = ("scripted", "random", "babble")


class ScriptedWerewolf(Agent):
    name = "werewolf_scripted"

    def __init__(self, game: Game, village: str = "scripted", wolves: str = "scripted") -> None:
        if game.spec.name != "werewolf":
            raise ArenaError(f"agent 'werewolf_scripted' plays only werewolf, not '{game.spec.full_name}'")
        for key, val in (("village", village), ("wolves", wolves)):
            if val not in MODES:
                raise ArenaError(
                    f"agent 'werewolf_scripted': parameter '{key}' must be one of {', '.join(MODES)}, got {val!r}"
                )
        self.n = game.spec.num_players
        self.policy = ScriptedPolicy(self.n)
        self.modes = {"village": village, "wolves": wolves}

    def act(self, obs: Observation) -> Action:
        v = View(obs.tensor, self.n)
        side = "wolves" if v.role == WOLF else "village"
        mode = self.modes[side]
        if mode != "scripted":
            if obs.decision == "text":
                return "..." if mode == "random" else self.policy.sentence(self.policy.babble(v, obs.rng))
            return obs.legal_actions[int(obs.rng.integers(len(obs.legal_actions)))]
        if obs.decision == "text":
            return self.policy.sentence(self.policy.speak(v, None, obs.rng))
        return self.policy.decide(v, obs.legal_actions, obs.rng)


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry(
            "werewolf_scripted",
            ScriptedWerewolf,
            "rule-based Werewolf: revealing Seer, protective Doctor, evidence-voting villagers, coordinating wolves",
            {"village": "scripted", "wolves": "scripted"},
        )
    ]
