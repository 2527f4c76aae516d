"""The pieces that let the ordinary match runner play a hosted match.

- :class:`RemoteHuman`: a seat played by a person over the network (its ``act`` waits on the hub).
- :class:`Notifying`: wraps an agent so every seat's view is refreshed before the agent moves —
  people see the game move on while agents play.
- :class:`HostedGame`: wraps the game so the hub knows the live state of the current game
  (read only from the runner's thread, between moves).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from arena.agent import Agent, Observation
from arena.game import Action, Game, State
from arena.tools.host.hub import Hub


class RemoteHuman(Agent):
    """A person at a network client, identified by the join token of ``seat``. ``hub`` may be
    attached later (the session settles seat names before it builds the hub)."""

    def __init__(self, hub: Hub | None, seat: int, name: str = "human") -> None:
        self.hub, self.seat, self.name = hub, seat, name

    def act(self, obs: Observation) -> Action:
        return self.act_batch_info([obs])[0][0]

    def act_batch_info(self, observations: Sequence[Observation]) -> tuple[list[Action], list[dict[str, Any]]]:
        """Each move with what the person saw beside it (the runner keeps the info dict with the
        recorded step; :func:`arena.evaluation.decisions.decision_rows` stores it as a human
        decision): ``human`` marks the row, ``by``/``seconds`` say how it was made, and the
        structured view is read now, while the state is live (the recorded observation keeps
        the text, the legal moves and their labels)."""
        hub = self.hub
        if hub is None:
            raise RuntimeError("RemoteHuman: no hub attached (the host session attaches it before play)")
        actions, infos = [], []
        for obs in observations:
            hub.refresh()
            struct = obs.struct
            action, how = hub.ask_recorded(obs.player, obs)
            actions.append(action)
            infos.append({"human": True, **how, "observation_struct": struct})
        return actions, infos


class Notifying(Agent):
    """``inner`` unchanged, except that the people's views are refreshed before it decides."""

    def __init__(self, inner: Agent, hub: Hub) -> None:
        self.inner, self.hub, self.name = inner, hub, inner.name

    def act_batch(self, observations: Sequence[Observation]) -> list[Action]:
        self.hub.refresh()
        return self.inner.act_batch(observations)

    def act_batch_info(self, observations: Sequence[Observation]) -> tuple[list[Action], list[dict[str, Any]]]:
        self.hub.refresh()
        return self.inner.act_batch_info(observations)

    def policy(self, obs: Observation) -> Mapping[int, float]:
        return self.inner.policy(obs)

    def game_started(self, game_index: int, player: int) -> None:
        self.inner.game_started(game_index, player)

    def game_finished(
        self, game_index: int, player: int, returns: Sequence[float], final: Observation | None = None
    ) -> None:
        self.inner.game_finished(game_index, player, returns, final)

    def close(self) -> None:
        self.inner.close()


class HostedGame(Game):
    """``game`` unchanged, except that each new state is announced to the hub."""

    def __init__(self, game: Game, hub: Hub, indices: Sequence[int]) -> None:
        self.inner, self.hub, self.spec = game, hub, game.spec
        self.indices = iter(indices)

    def new_initial_state(self, seed: int | None = None) -> State:
        """Called by the runner once per game, in order (the host plays one game at a time)."""
        state = self.inner.new_initial_state(seed=seed)
        self.hub.start_game(state, next(self.indices, -1))
        return state
