"""Any OpenSpiel game is an arena game: ``openspiel:<name>`` with its parameters.

The adapter keeps OpenSpiel's own state underneath, so tree access (clone, explicit chance,
``information_state_string`` as the info-state key) is OpenSpiel's and a policy keyed here can
be evaluated by OpenSpiel itself. Game plugins built on OpenSpiel (``games/cards.py``) subclass
:class:`OpenSpielGame` / :class:`OpenSpielState` and override only the renderings.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from arena.errors import ArenaError
from arena.game import Game, GameNamespace, GameSpec, State
from arena.hookspecs import hookimpl
from arena.registry import get_registry


class OpenSpielState(State):
    def __init__(self, game: "OpenSpielGame", s: "pyspiel.State") -> None:
        self.game = game
        self._s = s
        # Hot calls go straight to the C++ state: instance attributes shadow the methods below
        # (on purpose, hence the ignores), saving a Python frame per call; the match runner
        # makes millions of these.
        self.current_player = s.current_player  # type: ignore[method-assign]
        self.is_terminal = s.is_terminal  # type: ignore[method-assign]
        self.is_chance_node = s.is_chance_node  # type: ignore[method-assign]
        self.chance_outcomes = s.chance_outcomes  # type: ignore[method-assign]
        self.apply_action = s.apply_action  # type: ignore[method-assign]
        # pybind overloads: legal_actions() and legal_actions(player)
        self.legal_actions = s.legal_actions  # type: ignore[method-assign]

    @property
    def pyspiel_state(self) -> "pyspiel.State":
        return self._s

    def current_player(self) -> int:
        return self._s.current_player()

    def is_terminal(self) -> bool:
        return self._s.is_terminal()

    def is_chance_node(self) -> bool:
        return self._s.is_chance_node()

    def is_simultaneous_node(self) -> bool:
        return self._s.is_simultaneous_node()

    def num_players(self) -> int:
        return self.game.spec.num_players

    def legal_actions(self, player: int | None = None) -> list[int]:
        if player is None:
            return self._s.legal_actions()
        return self._s.legal_actions(player)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self._s.chance_outcomes()

    def apply_action(self, action: Any) -> None:
        self._s.apply_action(int(action))

    def apply_actions(self, actions: Any) -> None:
        self._s.apply_actions([int(a) for a in actions])

    def returns(self) -> list[float]:
        return list(self._s.returns())

    def clone(self) -> "OpenSpielState":
        return type(self)(self.game, self._s.clone())

    def information_state_key(self, player: int) -> str:
        if self.game.provides_info_string:
            return self._s.information_state_string(player)
        return self._s.observation_string(player)

    def observation_text(self, player: int) -> str:
        if self.game.provides_obs_string:
            return self._s.observation_string(player)
        return self._s.information_state_string(player)

    def observation_tensor(self, player: int) -> np.ndarray:
        if self.game.provides_info_tensor:
            return np.asarray(self._s.information_state_tensor(player), dtype=np.float32)
        return np.asarray(self._s.observation_tensor(player), dtype=np.float32)

    def action_label(self, player: int, action: int) -> str:
        return self._s.action_to_string(player, action)

    def history(self) -> list[int]:
        return self._s.history()

    def summary(self) -> str:
        return f"{self._s} | returns {self.returns()}"


class OpenSpielGame(Game):
    """Wraps a ``pyspiel.Game``. Subclasses set ``state_class`` to change renderings."""

    state_class: type[OpenSpielState] = OpenSpielState

    def __init__(
        self, name: str, params: dict[str, Any] | None = None, arena_name: str | None = None, description: str = ""
    ) -> None:
        params = dict(params or {})
        try:
            self.pyspiel_game = pyspiel.load_game(name, _nested_games(name, params))
        except pyspiel.SpielError as exc:
            raise ArenaError(f"OpenSpiel cannot load '{name}' with {params}: {exc}") from None
        except RuntimeError as exc:
            raise ArenaError(f"OpenSpiel cannot load '{name}' with {params}: {exc}") from None
        g, t = self.pyspiel_game, self.pyspiel_game.get_type()
        self.provides_info_string = t.provides_information_state_string
        self.provides_obs_string = t.provides_observation_string
        self.provides_info_tensor = t.provides_information_state_tensor
        if self.provides_info_tensor:
            shape = tuple(g.information_state_tensor_shape())
        elif t.provides_observation_tensor:
            shape = tuple(g.observation_tensor_shape())
        else:
            shape = (0,)
        sequential = t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
        explicit_chance = t.chance_mode != pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
        tree = bool(sequential and explicit_chance and t.provides_information_state_string)
        self.spec = GameSpec(
            name=arena_name or f"openspiel:{name}",
            num_players=g.num_players(),
            num_distinct_actions=g.num_distinct_actions(),
            observation_shape=shape,
            min_utility=g.min_utility(),
            max_utility=g.max_utility(),
            zero_sum=t.utility == pyspiel.GameType.Utility.ZERO_SUM,
            max_game_length=g.max_game_length(),
            tree=tree,
            simultaneous=t.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS,
            params=params,
            description=description or t.long_name,
        )

    def new_initial_state(self, seed: int | None = None) -> OpenSpielState:
        return self.state_class(self, self.pyspiel_game.new_initial_state())

    def array_face(self) -> Any:
        """The array face a plugin registered for ``openspiel:<name>`` (hook ``arena_array_faces``),
        built once for this game; ``None`` when there is none or it does not cover the parameters."""
        if not hasattr(self, "_array_face"):
            entry = get_registry().find("array_face", f"openspiel:{self.pyspiel_game.get_type().short_name}")
            self._array_face = entry.factory(self) if entry is not None else None
        return self._array_face

    def wrap(self, pyspiel_state: "pyspiel.State") -> OpenSpielState:
        """An arena state around an existing OpenSpiel state of this game."""
        return self.state_class(self, pyspiel_state)


def _nested_games(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """Game-valued parameters (``turn_based_simultaneous_game(game=goofspiel(num_cards=5))``)
    arrive as strings from a game name; OpenSpiel wants them as parameter dicts."""
    if not any(isinstance(v, str) and "(" in v for v in params.values()):
        return params
    types = (t.parameter_specification for t in pyspiel.registered_games() if t.short_name == name)
    spec: dict[str, Any] = next(types, {})
    return {
        k: pyspiel.game_parameters_from_string(v) if isinstance(spec.get(k), dict) and isinstance(v, str) else v
        for k, v in params.items()
    }


def load_openspiel(name: str, **params: Any) -> OpenSpielGame:
    if name not in pyspiel.registered_names():
        raise ArenaError(f"OpenSpiel has no game '{name}' (see pyspiel.registered_names())")
    return OpenSpielGame(name, params)


@hookimpl
def arena_game_namespaces() -> list[GameNamespace]:
    return [GameNamespace("openspiel", load_openspiel, "any OpenSpiel game: openspiel:<name>(key=value,...)")]
