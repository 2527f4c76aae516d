"""``selfplay_rlvr`` on a one-player game (the bandit): the trainer kit passes (finite metrics,
weights change, resume gives the same run), the shipped config's game is one it accepts, and a
three-player game is still refused with one clear line."""

from __future__ import annotations

import pytest

from arena.errors import ArenaError
from arena.testing import check_trainer


def test_selfplay_rlvr_trains_on_a_one_player_bandit():
    pytest.importorskip("transformers")
    from arena.tools.tiny_model import tiny_model_dir

    llm = {"name": "llm", "model": str(tiny_model_dir()), "temperature": 1}
    check_trainer("selfplay_rlvr", "bandit(arms=2,horizon=3,recent=0,text=brief)", [llm], games=4)


def test_selfplay_rlvr_refuses_more_than_two_players():
    pytest.importorskip("transformers")
    from arena.loading import load_agent, load_game
    from arena.registry import get_registry
    from arena.tools.tiny_model import tiny_model_dir

    game = load_game("kuhn_poker(players=3)")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir())}, game)
    with pytest.raises(ArenaError, match="needs a one- or two-player game"):
        get_registry().get("trainer", "selfplay_rlvr").factory(game, [agent])
