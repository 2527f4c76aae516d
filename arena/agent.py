"""The agent contract.

An agent needs one method, ``act_batch(observations) -> actions``: the match runner steps many
games in lockstep and hands each agent all of its pending decisions at once. Agents that can
say how they act expose ``policy(obs) -> {action: prob}``, which makes exact evaluation
(best response, exploitability) possible.

Each :class:`Observation` carries its game's own randomness (``obs.uniform()`` for a fast draw,
``obs.rng`` for a numpy Generator). Agents that sample draw from it, so results depend only on
the match seed, not on how games were batched or which executor ran them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from arena.game import Action, DecisionKind, State
from arena.rng import GameRandom


class cached_property:  # noqa: N801 - a lock-free variant of functools.cached_property
    """Compute once per instance, then a plain attribute (functools' takes a lock per read in 3.11)."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


class Observation:
    """What one player sees at one decision. Everything is computed lazily and cached, and
    must be read before the runner applies the move (``freeze`` keeps it for later)."""

    __slots__ = ("player", "game_name", "_state", "_random", "__dict__")

    def __init__(
        self,
        state: State,
        player: int,
        rng: "GameRandom | np.random.Generator | None" = None,
        game_name: str = "",
        legal_actions: list[int] | None = None,
    ) -> None:
        self._state = state
        self.player = player
        self.game_name = game_name
        self._random = rng
        if legal_actions is not None:  # known to be a choice (the runner's fast path): fill the caches
            self.decision = "choice"
            self.legal_actions = legal_actions

    @property
    def state(self) -> State:
        """The state behind this decision, for search agents that simulate from it (``mcts``).
        It holds what the player may not know: an agent that reads hidden information from it
        cheats, so imperfect-information search samples worlds from the player's information."""
        return self._state

    @cached_property
    def decision(self) -> DecisionKind:
        return self._state.decision_kind(self.player)

    @cached_property
    def legal_actions(self) -> list[int]:
        return [] if self.decision == "text" else list(self._state.legal_actions(self.player))

    @cached_property
    def max_text_length(self) -> int:
        return self._state.max_text_length(self.player) if self.decision == "text" else 0

    @cached_property
    def rng(self) -> np.random.Generator:
        """This game's numpy generator (reproducible from the match seed)."""
        r = self._random
        if isinstance(r, GameRandom):
            return r.numpy
        return r if r is not None else np.random.default_rng()

    def uniform(self) -> float:
        """A fast uniform draw in [0, 1) from this game's stream."""
        r = self._random
        if isinstance(r, GameRandom):
            return r.uniform()
        return float(self.rng.random())

    @cached_property
    def action_labels(self) -> list[str]:
        return [self._state.action_label(self.player, a) for a in self.legal_actions]

    @cached_property
    def text(self) -> str:
        return self._state.observation_text(self.player)

    @cached_property
    def struct(self) -> dict[str, Any] | None:
        """The structured view (plain JSON), or ``None`` when the game has none."""
        return self._state.observation_struct(self.player)

    @cached_property
    def tensor(self) -> np.ndarray:
        return np.asarray(self._state.observation_tensor(self.player), dtype=np.float32)

    @cached_property
    def info_state(self) -> str:
        return self._state.information_state_key(self.player)

    def freeze(self, tensor: bool = True) -> "Observation":
        """Compute every rendering now and drop the state reference (for recording)."""
        _ = self.decision, self.legal_actions, self.max_text_length, self.action_labels, self.text, self.info_state
        if tensor:
            try:
                _ = self.tensor
            except NotImplementedError:
                pass
        self._state = None  # type: ignore[assignment]
        return self

    def label_of(self, action: int) -> str:
        return self.action_labels[self.legal_actions.index(action)]

    def parse_action(self, text: str) -> int | None:
        """Match a typed/generated move to a legal action: by label (case-insensitive, unique
        prefix) or by its position in the legal list (1-based). ``None`` if nothing matches."""
        t = text.strip().lower()
        if not t:
            return None
        labels = [lbl.lower() for lbl in self.action_labels]
        if t in labels:
            return self.legal_actions[labels.index(t)]
        if t.isdigit() and 1 <= int(t) <= len(self.legal_actions):
            return self.legal_actions[int(t) - 1]
        hits = [i for i, lbl in enumerate(labels) if lbl.startswith(t)]
        if len(hits) == 1:
            return self.legal_actions[hits[0]]
        return None


class Agent:
    """Base class. Override ``act`` (one decision) or ``act_batch`` (many); ``policy`` if you can."""

    name: str = "agent"

    def act(self, obs: Observation) -> Action:
        return self.act_batch([obs])[0]

    def act_batch(self, observations: Sequence[Observation]) -> list[Action]:
        if type(self).act is Agent.act:
            raise NotImplementedError(f"{type(self).__name__} must implement act or act_batch")
        return [self.act(o) for o in observations]

    def act_batch_info(self, observations: Sequence[Observation]) -> tuple[list[Action], list[dict[str, Any]]]:
        """``act_batch`` plus one info dict per decision (``log_prob``, token ids, ...) that the
        match runner stores in trajectories. Learning agents override this."""
        return list(self.act_batch(observations)), [{} for _ in observations]

    def cobatch_key(self) -> Any:
        """Agents of one match that return the same non-None key decide together: the runner hands
        all their pending decisions of a step to one :meth:`act_together` call (LoRA adapters of
        one base model answer a mixed batch in one forward pass). None: decide alone."""
        return None

    @staticmethod
    def act_together(parts: Sequence[tuple["Agent", Sequence[Observation]]]) -> list[tuple[list, list[dict[str, Any]]]]:
        """``act_batch_info`` for several agents at once, one (actions, infos) per part."""
        return [agent.act_batch_info(obs) for agent, obs in parts]

    def policy(self, obs: Observation) -> Mapping[int, float]:
        """Action distribution at this decision. Optional; raises if the agent cannot say."""
        raise NotImplementedError(f"agent '{self.name}' does not expose its action distribution")

    @property
    def has_policy(self) -> bool:
        return type(self).policy is not Agent.policy

    def game_started(self, game_index: int, player: int) -> None:
        """Hook for stateful agents: a new game starts in batch slot ``game_index``."""

    def game_finished(
        self, game_index: int, player: int, returns: Sequence[float], final: "Observation | None" = None
    ) -> None:
        """Hook for stateful agents: the game in slot ``game_index`` ended; ``final`` is this
        player's view of the final state (renderings computed only if read)."""

    def save(self, directory: str | Path) -> None:
        raise NotImplementedError(f"agent '{self.name}' cannot be saved")

    def close(self) -> None:
        """Release resources (threads, processes, models)."""


def sample_from(probs: Mapping[int, float], obs: "Observation | np.random.Generator") -> int:
    """Sample an action from a distribution with one uniform draw from the game's stream."""
    u = obs.uniform() if isinstance(obs, Observation) else float(obs.random())
    weights = [(a, max(0.0, float(p))) for a, p in probs.items()]
    total = sum(w for _, w in weights)
    if total <= 0:
        return weights[min(int(u * len(weights)), len(weights) - 1)][0]
    acc, target = 0.0, u * total
    for a, w in weights:
        acc += w
        if target < acc:
            return a
    return next(a for a, w in reversed(weights) if w > 0)


class PolicyAgent(Agent):
    """An agent that acts by sampling its own ``policy``."""

    def act(self, obs: Observation) -> Action:
        return sample_from(self.policy(obs), obs)


AgentFactory = Callable[..., Agent]
"""``factory(game, **params) -> Agent``; ``game`` lets solvers solve on load."""


@dataclass(frozen=True)
class AgentEntry:
    """How an agent plugin registers one agent kind."""

    name: str
    factory: AgentFactory
    description: str = ""
    params: Mapping[str, Any] | None = None
    """Documented parameters and defaults (shown by ``arena plugins``)."""
    checkpoint_param: str | None = None
    """The factory parameter that rebuilds an agent from a directory its ``save`` wrote
    (``checkpoint``, ``path``, ``model``...). Declaring it makes the agent snapshottable:
    :func:`arena.loading.save_checkpoint` / :func:`arena.loading.load_checkpoint` then work for
    it, so it can be a league learner or solver without the host knowing its name."""
    checkpoint_replaces: tuple[str, ...] = ()
    """Other factory parameters a saved directory stands in for (an LLM's ``adapter``: the saved
    directory *is* the adapter), left out of the checkpoint's manifest."""
