"""arena's games as TextArena envs: after :func:`register`, ``ta.make("arena-kuhn_poker-v0")``.

A TextArena-style loop — ``env.reset(num_players, seed)``, ``pid, obs = env.get_observation()``,
``done, info = env.step(text)``, ``rewards, game_info = env.close()`` — then runs unmodified on
every registered arena game with a text rendering, Werewolf and Monopoly Deal included. The
observation is the game's own text for that player plus the moves it may make, in TextArena's
bracket style (``Valid moves: [check], [bet]``); a move is read like a typed one (label,
unique prefix or 1-based index, with or without brackets). Chance is drawn from a stream derived
from ``seed`` alone (:class:`arena.rng.GameRandom`), so the same seed gives the same episode.
Simultaneous decisions are asked seat by seat and applied together. As in TextArena, the first
unreadable move is answered with a re-prompt and the second ends the game, the offender getting
the game's minimum (``error_allowance``).
"""

from __future__ import annotations

import re
from typing import Any

from arena.agent import Observation
from arena.errors import ArenaError
from arena.game import Game, State
from arena.loading import load_game
from arena.registry import get_registry
from arena.rng import GameRandom

_BRACKETS = re.compile(r"^\s*\[(.*)\]\s*$", re.S)


def env_id(game: str) -> str:
    """The TextArena id of an arena game name."""
    return f"arena-{game}-v0"


def register(games: list[str] | None = None) -> list[str]:
    """Register ``arena-<game>-v0`` for each of ``games`` (default: every registered game) in
    TextArena's registry; returns the ids. Registering twice is harmless."""
    try:
        from textarena.envs.registration import ENV_REGISTRY
        from textarena.envs.registration import register as ta_register
    except ImportError:
        raise ArenaError("arena's games as TextArena envs need the textarena package (pip install 'arena-rl[bridges]')")
    names = games if games is not None else [r.name for r in get_registry().items("game")]
    out = []
    for name in names:
        eid = env_id(name)
        if eid not in ENV_REGISTRY:
            ta_register(eid, _factory(name), default_wrappers=None)
        out.append(eid)
    return out


def _factory(name: str) -> Any:
    def make(**_: Any) -> "ArenaEnv":
        return ArenaEnv(name)

    return make


def _env_base() -> type:
    from textarena.core import Env

    return Env


class ArenaEnv:
    """One arena game behind TextArena's env methods (a ``textarena.core.Env`` subclass is made
    on first use: :func:`ArenaEnv.__new__`)."""

    error_allowance = 1

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is ArenaEnv:  # textarena is imported only when an env is made
            cls = _subclass()
        return object.__new__(cls)

    def __init__(self, game: str) -> None:
        self.name = game
        self.game: Game = load_game(game)
        self.state: State | None = None

    def reset(self, num_players: int, seed: int | None = None) -> None:
        self.game = self._with_players(int(num_players))
        seed = 0 if seed is None else int(seed)
        self.rng = GameRandom(seed, 0)
        self.state = self.game.new_initial_state(seed=seed)
        self.pending: dict[int, Any] = {}
        self.invalid = {p: 0 for p in range(num_players)}
        self.turns = {p: 0 for p in range(num_players)}
        self.rewards: dict[int, float] | None = None
        self.reason = ""
        self.notice = ""
        self._advance()
        if self.rewards is None and not self._players():
            raise ValueError(f"arena game {self.name!r} has no player to move at its start")

    def _with_players(self, n: int) -> Game:
        if n == self.game.spec.num_players:
            return self.game
        entry = get_registry().get("game", self.name.split("(")[0])
        if "players" not in (entry.params or {}):
            raise ValueError(f"arena game {self.name!r} is for {self.game.spec.num_players} players, not {n}")
        return load_game(self.name, players=n)

    def _advance(self) -> None:
        """Past chance nodes; records the end when the game is over."""
        st = self._st()
        while st.is_chance_node():
            outcomes = st.chance_outcomes()
            u, acc, chosen = self.rng.uniform(), 0.0, outcomes[-1][0]
            for action, prob in outcomes:
                acc += prob
                if u < acc:
                    chosen = action
                    break
            st.apply_action(chosen)
        if st.is_terminal():
            self.rewards = {p: float(r) for p, r in enumerate(st.returns())}
            self.reason = "the game is over"

    def _st(self) -> State:
        if self.state is None:
            raise ValueError("call reset(num_players, seed) first")
        return self.state

    def _players(self) -> list[int]:
        return [p for p in self._st().acting_players() if p not in self.pending]

    def current_player(self) -> int:
        players = self._players()
        return players[0] if players else -1

    def get_observation(self) -> tuple[int, str]:
        p = self.current_player()
        obs = Observation(self._st(), p, None, self.game.spec.full_name)
        if obs.decision == "text":
            ask = f"Say what you say (at most {obs.max_text_length} characters)."
        else:
            ask = "Valid moves: " + ", ".join(f"[{label}]" for label in obs.action_labels)
        notice, self.notice = self.notice, ""
        return p, f"{notice}{obs.text}\n{ask}"

    def step(self, action: str) -> tuple[bool, dict[str, Any]]:
        if self.rewards is not None:
            return True, {"reason": self.reason}
        st, p = self._st(), self.current_player()
        obs = Observation(st, p, None, self.game.spec.full_name)
        move = self._read(obs, str(action))
        self.turns[p] += 1
        if move is None:
            return self._invalid(p, str(action))
        if st.is_simultaneous_node():
            self.pending[p] = move
            if self._players():
                return False, {}
            joint = [self.pending.get(q, 0) for q in range(self.game.spec.num_players)]
            self.pending = {}
            st.apply_actions(joint)
        else:
            st.apply_action(move)
        self._advance()
        return self.rewards is not None, ({"reason": self.reason} if self.rewards is not None else {})

    @staticmethod
    def _read(obs: Observation, text: str) -> Any:
        m = _BRACKETS.match(text)
        inner = m.group(1).strip() if m else text.strip()
        if obs.decision == "text":
            return inner[: obs.max_text_length]
        return obs.parse_action(inner)

    def _invalid(self, p: int, text: str) -> tuple[bool, dict[str, Any]]:
        self.invalid[p] += 1
        if self.invalid[p] <= self.error_allowance:
            self.notice = f"[GAME] Player {p} attempted an invalid move ({text[:80]!r}). Please try again.\n"
            return False, {}
        self.rewards = dict(enumerate(self._st().forfeit_returns(p, self.game.spec)))
        self.reason = f"Player {p} made {self.invalid[p]} invalid moves and loses."
        return True, {"reason": self.reason}

    def close(self) -> tuple[dict[int, float] | None, dict[int, dict[str, Any]]]:
        info = {
            p: {"role": f"Player {p}", "invalid_move": self.invalid[p] > 0, "turn_count": self.turns[p]}
            for p in self.invalid
        }
        for v in info.values():
            v["reason"] = self.reason
        return self.rewards, info


_SUBCLASS: list[type] = []


def _subclass() -> type:
    """``ArenaEnv`` with TextArena's ``Env`` as a base, so ``isinstance(env, ta.Env)`` holds."""
    if not _SUBCLASS:
        _SUBCLASS.append(type("ArenaTextArenaEnv", (ArenaEnv, _env_base()), {"__module__": __name__}))
    return _SUBCLASS[0]
