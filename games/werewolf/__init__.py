"""Werewolf (social deduction) as an arena game plugin: ``werewolf(players=7, talk=structured, ...)``.

Discussion is free text (``talk=text``, for LLMs and people), discrete claims and accusations
(``talk=structured``, the default, so neural agents, solvers and PettingZoo can play), or off
(``talk=none``). Rules and knobs: :mod:`arena.games.werewolf.rules`; docs: docs/werewolf.md.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from arena.cli_api import Command
from arena.game import Game, GameEntry, GameSpec
from arena.games.werewolf.report import report_command
from arena.games.werewolf.rules import ActionLayout, WerewolfConfig
from arena.games.werewolf.state import WerewolfState
from arena.games.werewolf.view import layout
from arena.hookspecs import hookimpl


class WerewolfGame(Game):
    """Factory of :class:`WerewolfState`; parameters are :class:`WerewolfConfig` fields."""

    web_renderer = ("arena.games.werewolf", "table.js")

    def __init__(self, **params: Any) -> None:
        self.cfg = WerewolfConfig(**params)
        c = self.cfg
        n = c.players
        per_day = c.num_wolves + 2 + c.discussion_rounds * n + 2 * n + 1
        self.spec = GameSpec(
            name="werewolf",
            num_players=n,
            num_distinct_actions=ActionLayout(n).size,
            observation_shape=(layout(n).size,),
            min_utility=-1.0,
            max_utility=1.0,
            zero_sum=False,
            max_game_length=n + c.max_days * per_day,
            tree=False,
            text_decisions=c.talk == "text",
            params=c.changed(),
            description=f"Werewolf, {n} players ({c.num_wolves} werewolves), talk={c.talk}",
        )

    def new_initial_state(self, seed: int | None = None) -> WerewolfState:
        return WerewolfState(self.spec, self.cfg)


@hookimpl
def arena_games() -> list[GameEntry]:
    return [
        GameEntry(
            "werewolf",
            WerewolfGame,
            "Werewolf social deduction (5-9 players): night kills, Seer, Doctor, discussion, votes",
            asdict(WerewolfConfig()),
        )
    ]


@hookimpl
def arena_commands() -> list[Command]:
    return [report_command()]
