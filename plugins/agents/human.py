"""``human``: a person at this terminal chooses every move (see ``arena play``)."""

from __future__ import annotations

from typing import Sequence

from arena.agent import Agent, AgentEntry, Observation
from arena.game import Action
from arena.hookspecs import hookimpl
from arena.tools.terminal import TerminalIO


class HumanAgent(Agent):
    """Asks the person for each decision; shows the final position and result."""

    name = "human"

    def __init__(self, io: TerminalIO | None = None) -> None:
        self.io = io or TerminalIO()

    def act(self, obs: Observation) -> Action:
        return self.io.choose(obs, header=f"--- your turn (player {obs.player}) ---")

    def game_finished(
        self, game_index: int, player: int, returns: Sequence[float], final: Observation | None = None
    ) -> None:
        self.io.say("--- game over ---")
        if final is not None:
            self.io.say(final.text)
        self.io.say(f"Result: you {outcome_word(returns, player)} ({returns[player]:+g}).")


def outcome_word(returns: Sequence[float], player: int) -> str:
    others = [r for q, r in enumerate(returns) if q != player]
    if not others or returns[player] > max(others):
        return "won"
    return "lost" if returns[player] < max(others) else "drew"


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [AgentEntry("human", lambda game: HumanAgent(), "a person at the terminal")]
