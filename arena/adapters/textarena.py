"""Every TextArena env is an arena game: ``arena.load_game("textarena:TicTacToe-v0")``.

TextArena (``textarena`` 0.7.4) holds 100+ competitive text games behind one loop —
``reset(num_players, seed)``, ``get_observation()``, ``step(text)``, ``close()``. Here each arena
state owns one env made by ``ta.make`` (its registered wrappers, so the text is what TextArena's
own players read); every decision is a text decision, the current player's observation is the
text the env gives it, and the rewards at ``close()`` are the returns.

**Seeding.** TextArena seeds the process-global ``random`` (and a few envs draw from numpy's
global generator), so envs sharing a process — arena plays many games at once — would draw from
one stream, and a game would depend on its neighbours (the seeding bugs OpenEnv hit: episodes of
one GRPO group differed). Each state keeps its own copy of both global generators: every call
into the env swaps the state's copy in, under a lock, and saves it back after, so a game's draws
are its own and the same seed gives the same episode whatever else runs.

**Player count.** ``textarena:<EnvId>`` plays the first count the env accepts among
:data:`PLAYER_COUNTS`; ``textarena:<EnvId>(players=N)`` asks for ``N``.

Envs that print do so on stderr: stdout stays arena's (``--json``).

**Faults.** An env that raises mid-game ends that game: the player whose move it could not take
gets the game's minimum (-1), the others 0, and ``outcome_info()`` records the error. Ids that
cannot run here (:data:`UNAVAILABLE`: they fetch data or call hosted LLMs at run time) are refused
with the reason, and listed by ``arena games``.
"""

from __future__ import annotations

import contextlib
import copy
import random
import sys
import threading
from typing import Any, Iterator

import numpy as np

from arena.errors import ArenaError
from arena.game import TERMINAL, Game, GameNamespace, GameSpec, State
from arena.hookspecs import hookimpl

PLAYER_COUNTS = (2, 1, 3, 4, 5, 6, 7, 8)
MAX_TEXT = 4000
"""Characters a player may send in one move (TextArena's conversational envs clip their own)."""
_NLTK = "downloads nltk data (the 'words' corpus{}) when imported; nothing may be fetched at run time here"
UNAVAILABLE = {
    "Codenames": _NLTK.format(" and a POS tagger"),
    "Crosswords": _NLTK.format(""),
    "DontSayIt": _NLTK.format(" and a POS tagger"),
    "Hangman": _NLTK.format(""),
    "LetterAuction": _NLTK.format(""),
    "SpellingBee": _NLTK.format(""),
    "WordChains": _NLTK.format(""),
    "WordLadder": _NLTK.format(""),
    "WordSearch": _NLTK.format(""),
    "Wordle": _NLTK.format(" and a POS tagger"),
    "Debate": "an OpenRouter LLM jury decides the winner (API key and network)",
    "ScenarioPlanning": "an OpenRouter LLM jury decides the winner (API key and network)",
    "TwentyQuestions": "an OpenRouter LLM (gpt-4o) is the gamemaster (API key and network)",
    "GuessWho": "an OpenRouter LLM (gpt-4o) is the gamemaster (API key and network)",
    "BabyAiText": "needs the babyai-text and gym packages, not TextArena's dependencies",
}
"""TextArena families that cannot run here, by the part of the id before ``-v0``."""
_PY312 = "textarena 0.7.4's module uses f-string syntax of Python 3.12 (this is Python {}.{})"
BROKEN = {
    **(
        {
            f: _PY312.format(*sys.version_info[:2])
            for f in ("Checkers", "Chess", "IteratedStagHunt", "Klondike", "ReverseTicTacToe", "UltimateTexasHoldem")
        }
        if sys.version_info < (3, 12)
        else {}
    ),
    "UsedCarNegotiation": "the textarena 0.7.4 wheel lacks the env's data file",
    "UsedCar": "the textarena 0.7.4 wheel lacks the env's module",
    "ScorableGames": "the textarena 0.7.4 wheel lacks the env's game configuration directory",
}
"""Families whose 0.7.4 release cannot be made here (found by ``arena.tools.textarena_conformance``):
loading one fails with the env's own error in one line; ``arena games`` lists them."""

_LOCK = threading.RLock()


def _ta() -> Any:
    try:
        import textarena
    except ImportError:
        raise ArenaError("textarena: games need the textarena package (pip install 'arena-rl[bridges]')") from None
    return textarena


def base_ids() -> list[str]:
    """Every registered TextArena id without a ``-train`` or ``-raw`` suffix (its wrapper sets)."""
    _ta()  # first: without textarena this is one clear line (and `arena games` lists nothing)
    from textarena.envs.registration import ENV_REGISTRY

    return [i for i in ENV_REGISTRY if not (i.endswith("-train") or i.endswith("-raw"))]


def family(env_id: str) -> str:
    return env_id.split("-v0")[0]


def why_unavailable(env_id: str) -> str | None:
    """Why ``env_id`` cannot run here, or ``None``."""
    return UNAVAILABLE.get(family(env_id))


class _Streams:
    """One game's copies of the process-global generators TextArena draws from."""

    def __init__(self) -> None:
        self.py: Any = None
        self.np: Any = None

    def swapped(self) -> "_Swap":
        return _Swap(self)


class _Swap:
    def __init__(self, streams: _Streams) -> None:
        self.s = streams

    def __enter__(self) -> None:
        _LOCK.acquire()
        self.quiet = contextlib.redirect_stdout(sys.stderr)  # envs print; stdout is arena's (--json)
        self.quiet.__enter__()
        self.saved = (random.getstate(), np.random.get_state())
        if self.s.py is not None:
            random.setstate(self.s.py)
            np.random.set_state(self.s.np)

    def __exit__(self, *exc: Any) -> None:
        self.s.py, self.s.np = random.getstate(), np.random.get_state()
        random.setstate(self.saved[0])
        np.random.set_state(self.saved[1])
        self.quiet.__exit__(*exc)
        _LOCK.release()


def _text(obs: Any) -> str:
    """An observation as text (``-raw`` ids give ``(sender, message, type)`` tuples)."""
    if isinstance(obs, str):
        return obs
    if isinstance(obs, (list, tuple)):
        return "\n".join(f"[{'GAME' if m[0] == -1 else f'Player {m[0]}'}] {m[1]}" for m in obs)
    return str(obs)


class TextArenaState(State):
    def __init__(self, game: "TextArenaGame", seed: int | None) -> None:
        self.game = game
        self.streams = _Streams()
        self.error: dict[str, Any] | None = None
        self.rewards: list[float] | None = None
        self.player = 0
        self.texts: dict[int, str] = {}
        n = game.spec.num_players
        with self.streams.swapped():
            random.seed(seed)
            np.random.seed(None if seed is None else seed % 2**32)
            self.env = _ta().make(game.env_id)
            self.env.reset(num_players=n, seed=seed)
            self._observe()

    def _observe(self) -> None:
        """The current player's new observation (called once per transition, inside a swap)."""
        pid, obs = self.env.get_observation()
        self.player = int(pid)
        self.texts[self.player] = _text(obs)

    def num_players(self) -> int:
        return self.game.spec.num_players

    def current_player(self) -> int:
        return TERMINAL if self.rewards is not None else self.player

    def legal_actions(self, player: int | None = None) -> list[int]:
        return []

    def decision_kind(self, player: int) -> Any:
        return "text"

    def max_text_length(self, player: int) -> int:
        return MAX_TEXT

    def apply_action(self, action: Any) -> None:
        mover = self.player
        try:
            with self.streams.swapped():
                done, _ = self.env.step(str(action))
                if done:
                    self._finish()
                else:
                    self._observe()
        except Exception as exc:  # the env's fault surfaced by this move: the game ends, recorded
            self.error = {"player": mover, "error": f"{type(exc).__name__}: {exc}"[:500]}
            self.rewards = [-1.0 if p == mover else 0.0 for p in range(self.num_players())]

    def _finish(self) -> None:
        out = self.env.close()
        rewards = out[0] if isinstance(out, tuple) else out
        rewards = rewards or {}
        self.rewards = [float(rewards.get(p, 0.0)) for p in range(self.num_players())]

    def returns(self) -> list[float]:
        return list(self.rewards) if self.rewards is not None else [0.0] * self.num_players()

    def clone(self) -> "TextArenaState":
        with _LOCK:
            return copy.deepcopy(self)

    def observation_text(self, player: int) -> str:
        text = self.texts.get(player, "")
        return text if text.strip() else f"(player {player} has not been addressed yet)"

    def information_state_key(self, player: int) -> str:
        return self.observation_text(player)

    def observation_tensor(self, player: int) -> np.ndarray:
        raise NotImplementedError("TextArena games are text only")

    def outcome_info(self) -> dict[str, Any]:
        return {"env_error": self.error} if self.error else {}


class TextArenaGame(Game):
    def __init__(self, env_id: str, players: int | None = None) -> None:
        ta = _ta()
        known = base_ids()
        from textarena.envs.registration import ENV_REGISTRY

        if env_id not in ENV_REGISTRY:
            hint = ", ".join(i for i in known if i.lower().startswith(env_id[:4].lower()))[:200]
            raise ArenaError(
                f"unknown TextArena env id {env_id!r} ({len(known)} base ids; `arena games` lists them"
                + (f"; similar: {hint}" if hint else "")
                + ")"
            )
        reason = why_unavailable(env_id)
        if reason:
            raise ArenaError(f"textarena:{env_id} cannot run here: {reason}")
        self.env_id = env_id
        n = players if players is not None else _player_count(ta, env_id)
        self.spec = GameSpec(
            name=f"textarena:{env_id}",
            num_players=int(n),
            num_distinct_actions=0,
            observation_shape=(0,),
            min_utility=-1.0,
            max_utility=1.0,
            zero_sum=False,
            max_game_length=-1,
            text_decisions=True,
            params={} if players is None else {"players": int(players)},
            description=f"TextArena env {env_id}",
        )

    def new_initial_state(self, seed: int | None = None) -> TextArenaState:
        try:
            return TextArenaState(self, seed)
        except ArenaError:
            raise
        except Exception as exc:
            raise ArenaError(
                f"textarena:{self.env_id} with {self.spec.num_players} players failed to start: "
                f"{type(exc).__name__}: {str(exc)[:200]}"
            ) from None


def _player_count(ta: Any, env_id: str) -> int:
    """The first of :data:`PLAYER_COUNTS` the env accepts (an env that cannot even be made, e.g.
    a module this Python cannot import, is an ArenaError saying why)."""
    saved = (random.getstate(), np.random.get_state())
    last = ""
    try:
        with _LOCK, contextlib.redirect_stdout(sys.stderr):
            try:
                ta.make(env_id)
            except Exception as exc:
                raise ArenaError(f"textarena:{env_id} cannot be made here: {_one_line(exc)}") from None
            for n in PLAYER_COUNTS:
                try:
                    ta.make(env_id).reset(num_players=n, seed=0)
                    return n
                except Exception as exc:
                    last = _one_line(exc)
    finally:
        random.setstate(saved[0])
        np.random.set_state(saved[1])
    raise ArenaError(f"textarena:{env_id} accepts none of {list(PLAYER_COUNTS)} players (last: {last})")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200] if text else ''}"


def load_textarena(env_id: str, players: int | None = None, **unknown: Any) -> TextArenaGame:
    if unknown:
        raise ArenaError(
            f"textarena:{env_id} has no parameter {', '.join(map(repr, sorted(unknown)))}; parameters: players"
        )
    return TextArenaGame(env_id, players)


def unavailable_ids() -> Iterator[tuple[str, str]]:
    """``(id, reason)`` for every base id that cannot run here (fetches at run time, or broken)."""
    for i in base_ids():
        reason = why_unavailable(i) or BROKEN.get(family(i))
        if reason:
            yield i, reason


@hookimpl
def arena_game_namespaces() -> list[GameNamespace]:
    return [
        GameNamespace(
            "textarena",
            load_textarena,
            "any TextArena env: textarena:<EnvId>[(players=N)], text decisions (docs/bridges.md lists every id)",
            unavailable=unavailable_ids,
        )
    ]
