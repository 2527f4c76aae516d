"""Shared by the array-face tests: a tabular policy over a game's shallow info states, and the
runner's results of one match through both faces."""

from __future__ import annotations

import logging

import numpy as np
import pyspiel

from arena.playing.match import play_games
from arena.policy import TabularPolicy


def shallow_policy(name: str, pyspiel_name: str, depth: int, keep: float = 0.8, seed: int = 0) -> TabularPolicy:
    """Random lopsided weights at most info states within ``depth`` moves of the start (every
    chance outcome walked); deeper ones are left to the agent's uniform fallback."""
    rng = np.random.default_rng(seed)
    table = {}

    def walk(s, moves):
        if s.is_terminal() or moves > depth:
            return
        if not s.is_chance_node():
            key = s.information_state_string()
            if key not in table and rng.random() < keep:
                legal = s.legal_actions()
                w = rng.random(len(legal)) ** 3
                table[key] = dict(zip(legal, (w / w.sum()).tolist()))
        for a in s.legal_actions():
            walk(s.child(a), moves + (not s.is_chance_node()))

    walk(pyspiel.load_game(pyspiel_name).new_initial_state(), 0)
    return TabularPolicy(name, table)


def outcomes(results):
    return [
        (r.index, r.seats, r.returns, r.length, r.forfeit and (r.forfeit.player, r.forfeit.reason)) for r in results
    ]


def both_paths(game, make_agents, games: int, seed: int, caplog) -> tuple[list, list]:
    """``games`` games of the agents ``make_agents()`` builds, on the array path (checked in the
    log) and on the ``State`` path (the same agents told to need a ``State``)."""
    with caplog.at_level(logging.DEBUG, logger="arena"):
        fast = play_games(game, make_agents(), games, seed=seed, rotate_seats=True)
    assert f"match on {game.spec.full_name}: array path" in caplog.text
    slow_agents = make_agents()
    for a in slow_agents:
        a.array_native = False
    slow = play_games(game, slow_agents, games, seed=seed, rotate_seats=True)
    return outcomes(fast), outcomes(slow)


def debug_match_path(game: str, capsys) -> str:
    """What ``arena --debug match --game GAME --agents random random --games 50`` logs about
    the path it took."""
    from arena.cli import main

    logger = logging.getLogger("arena")
    handlers, level = list(logger.handlers), logger.level
    try:
        assert (
            main(["--debug", "match", "--game", game, "--agents", "random", "random", "--games", "50", "--json"]) == 0
        )
        return "\n".join(line for line in capsys.readouterr().err.splitlines() if "path (" in line)
    finally:
        logger.handlers[:] = handlers
        logger.setLevel(level)
