"""arena's tree-view games as OpenSpiel Python games: ``register("liars_dice")``, then
``pyspiel.load_game("arena_liars_dice")``.

Why: OpenSpiel's reference algorithms (CFR, exploitability, MCTS bots, PSRO) run on any game
registered with ``pyspiel.register_game``; wrapping arena's games lets those algorithms check
arena's own implementations and solvers, not only OpenSpiel's games. Each OpenSpiel state holds
one arena state: chance outcomes with their probabilities, legal actions, labels, returns,
the information-state string (arena's perfect-recall key) and observation string/tensor come
from it. Sequential games with a tree view only (``GameSpec.tree``); OpenSpiel enumerates them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from arena.errors import ArenaError
from arena.game import Game, State
from arena.loading import load_game


def short_name(game: str) -> str:
    """The OpenSpiel name of an arena game (``kuhn_poker(players=3)`` → ``arena_kuhn_poker_players_3``)."""
    clean = "".join(c if c.isalnum() else "_" for c in game).strip("_")
    while "__" in clean:
        clean = clean.replace("__", "_")
    return f"arena_{clean}"


def _bounds(game: Game) -> tuple[int, int]:
    """Most chance outcomes at one node (as action ids + 1) and the longest history, by walking
    the whole tree (the games OpenSpiel enumerates are small)."""
    most, longest = 1, 0
    stack: list[tuple[State, int]] = [(game.new_initial_state(), 0)]
    while stack:
        st, depth = stack.pop()
        longest = max(longest, depth)
        if st.is_terminal():
            continue
        if st.is_chance_node():
            moves = [a for a, _ in st.chance_outcomes()]
            most = max(most, max(moves) + 1)
        else:
            moves = list(st.legal_actions())
        for a in moves:
            child = st.clone()
            child.apply_action(a)
            stack.append((child, depth + 1))
    return most, longest


def register(game: str) -> str:
    """Register arena game ``game`` (a name with optional parameters) with OpenSpiel; returns its
    OpenSpiel short name. Registering the same name twice is harmless."""
    name = short_name(game)
    if name in pyspiel.registered_names():
        return name
    g = load_game(game)
    spec = g.spec
    if not spec.tree or spec.simultaneous or spec.text_decisions:
        raise ArenaError(
            f"game '{spec.full_name}' has no tree view of sequential choices; OpenSpiel Python games "
            "need one (GameSpec.tree, no simultaneous or text decisions)"
        )
    chance, length = _bounds(g)
    game_type = pyspiel.GameType(
        short_name=name,
        long_name=f"arena {spec.full_name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM if spec.zero_sum else pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=spec.num_players,
        min_num_players=spec.num_players,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=bool(spec.observation_shape and int(np.prod(spec.observation_shape)) > 0),
        parameter_specification={},
    )
    info = pyspiel.GameInfo(
        num_distinct_actions=spec.num_distinct_actions,
        max_chance_outcomes=chance,
        num_players=spec.num_players,
        min_utility=spec.min_utility,
        max_utility=spec.max_utility,
        utility_sum=0.0 if spec.zero_sum else None,
        max_game_length=length,
    )
    # A class per game, as OpenSpiel's own Python games register: OpenSpiel's registry keeps the
    # factory until after the interpreter ends, and a plain function (a closure) is freed then
    # without a thread state, which aborts the process; a class stays alive in its own cycle.
    attrs = {"arena_game": g, "game_type": game_type, "game_info": info, "__module__": __name__}
    game_class = type(f"ArenaSpielGame_{name}", (ArenaSpielGame,), attrs)
    pyspiel.register_game(game_type, game_class)
    return name


class ArenaSpielGame(pyspiel.Game):
    arena_game: Game
    game_type: Any
    game_info: Any

    def __init__(self, params: Any = None) -> None:
        super().__init__(self.game_type, self.game_info, params or {})

    def new_initial_state(self) -> Any:
        return ArenaSpielState(self, self.arena_game.new_initial_state())

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
        recall = iig_obs_type is None or iig_obs_type.perfect_recall
        return Observer(self.arena_game, bool(recall))


class ArenaSpielState(pyspiel.State):
    def __init__(self, game: Any, state: State) -> None:
        super().__init__(game)
        self.arena = state
        self.moves: list[int] = []

    def current_player(self) -> int:
        return int(self.arena.current_player())  # arena's CHANCE/TERMINAL are OpenSpiel's ids

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(int(a) for a in self.arena.legal_actions(player))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(int(a), float(p)) for a, p in self.arena.chance_outcomes()]

    def _apply_action(self, action: int) -> None:
        self.arena.apply_action(int(action))
        self.moves.append(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        return f"chance:{action}" if player < 0 else self.arena.action_label(player, int(action))

    def is_terminal(self) -> bool:
        return bool(self.arena.is_terminal())

    def returns(self) -> list[float]:
        if not self.arena.is_terminal():
            return [0.0] * self.arena.num_players()
        return [float(x) for x in self.arena.returns()]

    def __str__(self) -> str:
        return " ".join(map(str, self.moves))


class Observer:
    """OpenSpiel's PyObserver: perfect recall → arena's information-state key; else the
    player's observation text; the tensor is arena's observation tensor."""

    def __init__(self, arena_game: Game, recall: bool) -> None:
        self.recall = recall
        size = int(np.prod(arena_game.spec.observation_shape)) if arena_game.spec.observation_shape else 0
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: Any, player: int) -> None:
        if self.tensor.size:
            self.tensor[:] = np.asarray(state.arena.observation_tensor(player), np.float32).reshape(-1)

    def string_from(self, state: Any, player: int) -> str:
        arena = state.arena
        return arena.information_state_key(player) if self.recall else arena.observation_text(player)
