"""Harness honesty in the llm agent: ``fallback: forfeit`` (the default) never makes a move up,
the substituting fallbacks are marked, the legal-move list can be left out of prompts, and
``arena match`` reports invalid attempts, retries and substitutions per agent."""

from __future__ import annotations

import json

import pytest

from arena.cli import main
from arena.loading import load_game
from arena.playing.match import play_games
from arena.playing.match_report import MatchSummary
from arena.plugins.agents.llm import PARAMS
from arena.plugins.agents.llm.agent import LLMAgent
from arena.plugins.agents.llm.backend import Backend, Generation
from arena.plugins.agents.llm.prompts import PromptBuilder


class Babbler(Backend):
    """Answers every prompt with the same text and records the prompts it saw."""

    name = "babbler"
    supports_scoring = False

    def __init__(self, text: str = "I would rather not say") -> None:
        self.text, self.prompts = text, []

    def generate(self, prompts, *, max_tokens, temperature, seeds, stop=()):
        self.prompts += list(prompts)
        return [Generation(self.text, 3, 5) for _ in prompts]


def _match(agent, games=6, record=False):
    game = load_game("kuhn_poker")
    from arena.loading import load_agent

    summary = MatchSummary([agent.name, "random"])
    results = play_games(game, [agent, load_agent("random", game)], games, seed=3, rotate_seats=True, record=record)
    for r in results:
        summary.add(r)
    return results, summary.as_dict()


def test_forfeit_is_the_default_and_an_agent_that_never_names_a_legal_move_forfeits_every_game():
    assert PARAMS["fallback"] == "forfeit"
    agent = LLMAgent(Babbler(), mode="generated", retries=2)
    for record in (False, True):
        results, report = _match(agent, record=record)
        assert all(r.forfeit is not None and r.forfeit.agent == "llm" for r in results)
        assert all("3 answer(s) named no legal action" in r.forfeit.reason for r in results)
        row = report["llm"]
        assert row["forfeits"] == 6 and row["losses"] == 6 and row["substitutions"] == 0
        assert (row["invalid_attempts"], row["retries"]) == (18, 12)  # one decision per game, 3 answers each
    assert agent.stats()["fallbacks"] == 0 and agent.stats()["forfeits"] == 12


@pytest.mark.parametrize("fallback", ["random", "first"])
def test_a_configured_substitution_plays_on_and_the_report_counts_it(fallback):
    agent = LLMAgent(Babbler(), mode="generated", retries=1, fallback=fallback)
    results, report = _match(agent, games=8)
    assert all(r.forfeit is None for r in results)
    row = report["llm"]
    assert row["substitutions"] == agent.stats()["fallbacks"] >= 8  # at least one decision a game
    assert row["invalid_attempts"] == 2 * row["substitutions"] and row["retries"] == row["substitutions"]


def test_a_legal_answer_is_neither_retried_nor_substituted():
    agent = LLMAgent(Babbler("[1]"), mode="generated")  # the first legal action, by index
    results, report = _match(agent)
    assert all(r.forfeit is None for r in results)
    assert {k: report["llm"][k] for k in ("invalid_attempts", "retries", "substitutions")} == dict.fromkeys(
        ("invalid_attempts", "retries", "substitutions"), 0
    )


def test_prompts_without_the_legal_move_list():
    listed, unlisted = Babbler("[1]"), Babbler("[1]")
    _match(LLMAgent(listed, mode="generated"), games=2)
    _match(LLMAgent(unlisted, mode="generated", prompts=PromptBuilder(legal_moves=False)), games=2)
    assert all("\nLegal actions: " in p for p in listed.prompts)
    # the harness's list is gone (Kuhn's own rendering still says what is legal: that is the game's text)
    assert unlisted.prompts and not any("\nLegal actions: " in p for p in unlisted.prompts)
    custom = PromptBuilder({"kuhn_poker": {"choice": "{observation} one of {actions}"}}, legal_moves=False)
    with pytest.raises(Exception, match="legal_moves=false, but the choice template for 'kuhn_poker'"):
        custom.template("kuhn_poker")


def test_arena_match_reports_the_harness_per_agent(capsys):
    pytest.importorskip("transformers")
    from arena.tools.tiny_model import tiny_model_dir

    spec = f"llm:model={tiny_model_dir()},mode=generated,max_new_tokens=2,legal_moves=false"
    assert main(["match", "--game", "kuhn_poker", "--agents", spec, "random", "--games", "4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    row = next(v for k, v in doc["agents"].items() if k.startswith("llm"))
    forfeited = [r for r in doc["results"] if r["forfeit"]]
    assert row["substitutions"] == 0 and row["forfeits"] == len(forfeited)
    assert row["invalid_attempts"] >= 3 * len(forfeited) and row["retries"] >= 2 * len(forfeited)
    assert all(r["forfeit"]["reason"].startswith("no legal move: 3 answer(s)") for r in forfeited)
