"""The game contract: one OpenSpiel-shaped state machine per game.

Every arena game implements :class:`State` (and a small :class:`Game` factory). The PettingZoo
AEC face (:mod:`arena.playing.aec`) and the solvers' tree view are derived from it, never written per
game. Player ids follow OpenSpiel: ``0..n-1`` for players, ``CHANCE`` (-1), ``SIMULTANEOUS``
(-2) and ``TERMINAL`` (-4).

Decisions are either a *choice* among labelled discrete actions or *text* (free speech). At a
text decision ``legal_actions`` is empty and ``apply_action`` takes a ``str``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

import numpy as np

from arena.errors import ArenaError

CHANCE = -1
SIMULTANEOUS = -2
TERMINAL = -4

Action = int | str
DecisionKind = Literal["choice", "text"]


@dataclass(frozen=True)
class GameSpec:
    """Static facts about a game instance (after parameters are applied)."""

    name: str
    num_players: int
    num_distinct_actions: int
    observation_shape: tuple[int, ...]
    min_utility: float
    max_utility: float
    zero_sum: bool
    max_game_length: int
    tree: bool = False
    """True when solvers may enumerate it: deterministic clone, explicit chance, perfect recall."""
    text_decisions: bool = False
    """True when some decision is free text (then the AEC face is unavailable)."""
    params: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    simultaneous: bool = False
    """True when every decision node is simultaneous with every player moving (chance nodes
    aside): the game then has a PettingZoo parallel face (:func:`arena.make_parallel_env`)."""

    @property
    def full_name(self) -> str:
        """Name with parameters, e.g. ``kuhn_poker(players=3)``; ``load_game`` accepts it."""
        return format_game_name(self.name, self.params)


class State:
    """One history of a game. Subclasses implement the abstract methods; the rest has defaults."""

    # -- required -------------------------------------------------------------------------
    def current_player(self) -> int:
        raise NotImplementedError

    def legal_actions(self, player: int | None = None) -> list[int]:
        raise NotImplementedError

    def apply_action(self, action: Action) -> None:
        raise NotImplementedError

    def returns(self) -> list[float]:
        raise NotImplementedError

    def clone(self) -> "State":
        raise NotImplementedError

    def information_state_key(self, player: int) -> str:
        """Perfect-recall key, identical for all histories the player cannot tell apart."""
        raise NotImplementedError

    def observation_text(self, player: int) -> str:
        """What ``player`` sees, in words a person or an LLM can act on."""
        raise NotImplementedError

    def observation_tensor(self, player: int) -> np.ndarray:
        raise NotImplementedError

    # -- optional ---------------------------------------------------------------------------
    def observation_struct(self, player: int) -> dict[str, Any] | None:
        """What ``player`` sees as plain JSON (dicts, lists, strings, numbers, booleans, null):
        the facts of :meth:`observation_text` in structure, for table renderers (``arena host``)
        and JSON prompts. ``None`` (the default) when the game has none: clients show the text.
        Start from :func:`decision_struct`; nothing in it may depend on what ``player`` cannot
        know (``arena.testing.check_game`` replays other chance outcomes to check)."""
        return None

    # -- with defaults ----------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    def is_chance_node(self) -> bool:
        return self.current_player() == CHANCE

    def is_simultaneous_node(self) -> bool:
        return self.current_player() == SIMULTANEOUS

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return []

    def acting_players(self) -> list[int]:
        """Players who must decide now (several at a simultaneous node)."""
        p = self.current_player()
        if p >= 0:
            return [p]
        if p == SIMULTANEOUS:
            return [q for q in range(self.num_players()) if self.legal_actions(q) or self.decision_kind(q) == "text"]
        return []

    def apply_actions(self, actions: Sequence[Action]) -> None:
        """Joint move at a simultaneous node (one entry per player; ignored for idle players)."""
        raise NotImplementedError(f"{type(self).__name__} has no simultaneous nodes")

    def decision_kind(self, player: int) -> DecisionKind:
        return "choice"

    def max_text_length(self, player: int) -> int:
        """Upper bound on characters for a text decision."""
        return 280

    def action_label(self, player: int, action: int) -> str:
        return str(action)

    def num_players(self) -> int:
        raise NotImplementedError

    def forfeit_returns(self, player: int, spec: GameSpec) -> list[float]:
        """Returns when ``player`` forfeits (illegal move, crash, timeout).

        The forfeiter gets the game's minimum utility; in zero-sum games the others share
        its loss, in general-sum games they get 0.
        """
        n = spec.num_players
        out = [0.0] * n
        out[player] = spec.min_utility
        if spec.zero_sum and n > 1:
            for q in range(n):
                if q != player:
                    out[q] = -spec.min_utility / (n - 1)
        return out

    def outcome_info(self) -> dict[str, Any]:
        """Game-specific facts about a finished game (winning side, roles) for results."""
        return {}

    def summary(self) -> str:
        """One-line description of a finished game (for logs and the terminal)."""
        return f"returns {self.returns()}"


def decision_struct(state: State, player: int, on: Any = None) -> dict[str, Any]:
    """The part of every structured view that is about the player's own decision: its seat,
    whether it must decide now, the legal moves with their labels (and, with ``on(action)``,
    the things each acts on, e.g. ``["hand:12"]``, so a client can play a card by clicking it),
    and the returns once the game is over. Whose turn it is in general is left to the game:
    in some games (a Werewolf night) it betrays a hidden role."""
    mine = not state.is_terminal() and player in state.acting_players()
    out: dict[str, Any] = {"player": player, "your_turn": mine, "over": state.is_terminal()}
    if mine:
        kind = state.decision_kind(player)
        out["decision"] = kind
        if kind == "text":
            out["max_text_length"] = state.max_text_length(player)
        else:
            out["legal"] = [
                {"action": int(a), "label": state.action_label(player, a), **({"on": list(on(a))} if on else {})}
                for a in state.legal_actions(player)
            ]
    if out["over"]:
        out["returns"] = [float(x) for x in state.returns()]
    return out


class Game:
    """A game factory with a :class:`GameSpec`. Subclasses set ``spec`` and build states."""

    spec: GameSpec

    web_renderer: tuple[str, str] | None = None
    """``(package, file)`` of a JavaScript table renderer for the ``arena host`` web client,
    shipped as package data beside the game; it draws :meth:`State.observation_struct`.
    ``None``: the client shows the text view."""

    def new_initial_state(self, seed: int | None = None) -> State:
        """A fresh state. ``seed`` is only used by games with hidden internal randomness
        (e.g. wrapped PettingZoo envs); tree games expose chance as explicit chance nodes."""
        raise NotImplementedError

    def array_face(self) -> Any:
        """The game's :class:`arena.arrays.ArrayFace` (B games as numpy arrays), or ``None``
        (the default) when it has none: the runner then plays through :class:`State`."""
        return None

    @property
    def name(self) -> str:
        return self.spec.full_name

    def agent_metrics(self, agent: Any) -> dict[str, float]:
        """Game-specific probes of one agent, reported with learner metrics (e.g. the iterated
        prisoner's dilemma's P(cooperate | last joint move)). Optional; no games are played
        here, so probes read ``agent.policy`` at states the game builds."""
        return {}

    def __repr__(self) -> str:
        return f"<arena game {self.spec.full_name}>"


class IllegalActionError(ArenaError):
    """An action that is not legal in the current state."""


def require_tree(game: Game) -> Game:
    """The tree view for solvers: the game itself, once it is known to be enumerable."""
    if not game.spec.tree:
        raise ArenaError(
            f"game '{game.spec.full_name}' has no tree view (it is not enumerable: hidden randomness, "
            "text decisions or no perfect-recall info states); use a sampling method instead"
        )
    return game


# -- names with parameters ------------------------------------------------------------------
_NAME_RE = re.compile(r"^\s*([\w:.\-/]+)\s*(?:\((.*)\))?\s*$", re.S)


def parse_game_name(text: str) -> tuple[str, dict[str, Any]]:
    """``"kuhn_poker(players=3)"`` → ``("kuhn_poker", {"players": 3})``."""
    m = _NAME_RE.match(text)
    if not m:
        raise ArenaError(f"cannot parse game name {text!r}; expected name or name(key=value,...)")
    name, args = m.group(1), m.group(2)
    params: dict[str, Any] = {}
    if args and args.strip():
        for part in _split_top_level(args):
            if "=" not in part:
                raise ArenaError(f"game parameter {part!r} in {text!r} is not key=value")
            k, v = part.split("=", 1)
            params[k.strip()] = parse_scalar(v.strip())
    return name, params


def format_game_name(name: str, params: dict[str, Any]) -> str:
    if not params:
        return name
    inner = ",".join(f"{k}={_fmt(v)}" for k, v in sorted(params.items()))
    return f"{name}({inner})"


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ";".join(_fmt(x) for x in v) + "]"
    return str(v)


def parse_scalar(v: str) -> Any:
    low = v.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return ast.literal_eval(v)
    except (ValueError, SyntaxError):
        return v


def _split_top_level(s: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


@dataclass(frozen=True)
class GameEntry:
    """How a game plugin registers one game: ``factory(**params) -> Game``."""

    name: str
    factory: Any
    description: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    """Documented parameters and their defaults (shown by ``arena describe``)."""


@dataclass(frozen=True)
class GameNamespace:
    """A family of imported games addressed as ``prefix:<name>`` (e.g. ``openspiel:leduc_poker``)."""

    prefix: str
    factory: Any
    """``factory(name, **params) -> Game``"""
    description: str = ""
    unavailable: Any = None
    """Optional ``unavailable() -> iterable of (name, reason)``: names of the family that cannot
    run here and why (``arena games`` lists them, so a user learns it before loading one)."""
