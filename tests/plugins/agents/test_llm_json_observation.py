"""``observation: json``: the llm agent prompts with the game's structured view as JSON (the
legal moves stay in the actions list; games without a structured view keep their text), and
with it a tiny local model plays every built-in game through ``arena match`` without a forfeit
at a short test budget."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")

import arena  # noqa: E402
from arena.agent import Observation  # noqa: E402
from arena.cli import main  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.game import format_game_name  # noqa: E402
from arena.plugins.agents.llm.prompts import JSON_LOG, PromptBuilder  # noqa: E402
from arena.registry import get_registry  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402

SHORT = {"horizon": 2, "max_turns": 4, "max_days": 1, "players": 5}
"""A short budget where a game declares these parameters (games still run to their end)."""


def short_games() -> list[str]:
    out = []
    for item in get_registry().items("game"):
        declared = item.entry.params or {}
        short = {k: v for k, v in SHORT.items() if k in declared and (k != "players" or item.name == "werewolf")}
        out.append(format_game_name(item.name, short))
    return out


def decision(name: str, seed: int = 0) -> Observation:
    """The first decision of a game whose view has a log, a few moves in."""
    game = arena.load_game(name)
    s = game.new_initial_state(seed)
    moves = 0
    while True:
        if s.is_chance_node():
            s.apply_action(s.chance_outcomes()[0][0])
            continue
        p = s.current_player()
        if moves >= 12:
            return Observation(s, p, game_name=game.spec.full_name)
        s.apply_action(s.legal_actions(p)[-1])
        moves += 1


def test_json_prompts_carry_the_structured_view_and_keep_the_move_list():
    obs = decision("monopoly_deal")
    text = PromptBuilder().build(obs)
    prompt = PromptBuilder(observation="json").build(obs)
    assert obs.text in text and obs.text not in prompt
    line = next(x for x in prompt.splitlines() if x.startswith("{"))
    shown = json.loads(line)
    view = obs.struct
    assert "legal" not in shown and shown["hand"] == view["hand"] and shown["seats"] == view["seats"]
    assert shown["log"] == view["log"][-JSON_LOG:] and len(view["log"]) > JSON_LOG
    assert "Legal actions: " + ", ".join(obs.action_labels) in prompt
    unlisted = PromptBuilder(observation="json", legal_moves=False).build(obs)
    assert "Legal actions" not in unlisted and obs.action_labels[0] not in line


def test_a_game_without_a_structured_view_keeps_its_text():
    game = arena.load_game("openspiel:tic_tac_toe")
    obs = Observation(game.new_initial_state(), 0, game_name="openspiel:tic_tac_toe")
    assert obs.struct is None
    assert PromptBuilder(observation="json").build(obs) == PromptBuilder().build(obs)


def test_a_bad_observation_value_is_one_clear_error():
    with pytest.raises(ArenaError, match="observation must be text or json, not 'xml'"):
        arena.load_agent({"name": "llm", "model": str(tiny_model_dir()), "observation": "xml"}, "kuhn_poker")


@pytest.mark.parametrize("name", short_games())
def test_every_built_in_game_is_played_from_json_through_arena_match(name, capsys):
    spec = f"llm:model={tiny_model_dir()},observation=json,max_text_tokens=8"
    assert main(["match", "--game", name, "--agents", *[spec] * arena.load_game(name).spec.num_players,
                 "--games", "1", "--seed", "3", "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert [r["forfeit"] for r in out["results"]] == [None]
    assert all(a["forfeits"] == 0 and a["invalid_attempts"] == 0 for a in out["agents"].values()), out["agents"]
