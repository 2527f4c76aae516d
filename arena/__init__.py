"""arena: a plugin-based platform for multi-agent and game reinforcement learning.

Public entry points mirror the ecosystem's::

    game = arena.load_game("kuhn_poker", players=3)      # like pyspiel.load_game
    env = arena.make_env("leduc_poker")                   # a PettingZoo AEC env
    par = arena.make_parallel_env("ipd")                  # a PettingZoo parallel env (simultaneous games)
    agent = arena.load_agent("random", game)
    results = arena.play(game, [agent, arena.load_agent("random", game)], games=100, seed=0)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.errors import ArenaError, ConfigError, PluginError
from arena.hookspecs import hookimpl

if TYPE_CHECKING:  # the facade imports its wings on first use, so `import arena` stays light
    from pettingzoo import AECEnv, ParallelEnv

    from arena.agent import Agent
    from arena.game import Game
    from arena.playing.match import GameResult


def __getattr__(name: str) -> Any:
    """``arena.__version__``, read from the installed distribution when first asked for."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("arena-rl")
        except PackageNotFoundError:
            return "unknown (not installed)"
    raise AttributeError(f"module 'arena' has no attribute {name!r}")


__all__ = [
    "ArenaError",
    "ConfigError",
    "PluginError",
    "hookimpl",
    "load_game",
    "make_env",
    "make_parallel_env",
    "load_agent",
    "play",
]


def load_game(name: str, **params: Any) -> Game:
    """A game by registered name, ``name(key=value,...)`` or ``prefix:name`` (e.g.
    ``openspiel:leduc_poker``), with keyword parameters."""
    from arena.loading import load_game as _load

    return _load(name, **params)


def make_env(name: str, render_mode: str | None = None, **params: Any) -> AECEnv:
    """A PettingZoo AEC env for any arena game (action masks in the observation dict), in
    PettingZoo's order enforcement; ``reset()`` without a seed continues the seeded stream."""
    from arena.playing.aec import make_env as _make

    return _make(load_game(name, **params), render_mode=render_mode)


def make_parallel_env(name: str, render_mode: str | None = None, **params: Any) -> ParallelEnv:
    """A PettingZoo parallel env for a simultaneous-move game (``aec_to_parallel`` of
    :func:`make_env`); a turn-based game is a clear error."""
    from arena.playing.aec import make_parallel_env as _make

    return _make(load_game(name, **params), render_mode=render_mode)


def load_agent(spec: Any, game: Any, **params: Any) -> Agent:
    """An agent from ``"name"``, ``"name:key=value,..."`` or ``{"name": ..., **params}``."""
    from arena.loading import load_agent as _load

    return _load(spec, game, **params)


def play(game: Any, agents: list[Agent], games: int = 1, seed: int = 0, **options: Any) -> list[GameResult]:
    """Play ``games`` games between ``agents`` (one per seat); see :func:`arena.playing.match.play_games`."""
    from arena.playing.match import play_games

    return play_games(game, agents, num_games=games, seed=seed, **options)
