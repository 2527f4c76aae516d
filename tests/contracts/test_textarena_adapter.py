"""``textarena:<EnvId>`` games: they pass the conformance kit, arena's seed alone decides an
episode (whatever other games share the process), random and LLM agents play them through
``arena match``, and bad ids, unavailable ids and envs that raise mid-game are one clear line or
a recorded end, never a traceback."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

pytest.importorskip("textarena", reason="textarena: games need the textarena package (pip install 'arena-rl[bridges]')")

from arena.cli import main  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.loading import load_agent, load_game  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.tools.textarena_conformance import check_id, episodes  # noqa: E402


def test_tic_tac_toe_passes_the_conformance_kit():
    game = load_game("textarena:TicTacToe-v0")
    assert game.spec.num_players == 2 and game.spec.text_decisions
    row = check_id("TicTacToe-v0", games=5, seed=0, timeout=120)  # check_game, and the same seed twice
    assert row["loads"] and row["check_game"] and row["deterministic"] and row["players"] == 2, row
    state = game.new_initial_state(1)
    assert "Tic Tac Toe" in state.observation_text(0) or "tic" in state.observation_text(0).lower()
    for move in ("[4]", "[0]", "[1]", "[2]", "[7]"):  # player 0 takes the middle column
        state.apply_action(move)
    assert state.is_terminal() and state.returns() == [1.0, -1.0]


def test_the_seed_alone_decides_the_episode():
    game = load_game("textarena:KuhnPoker-v0")  # cards are dealt from TextArena's global random
    before = (random.getstate(), np.random.get_state()[1].tobytes())
    together = episodes(game, 6, seed=3, batch_size=6)
    alone = episodes(game, 6, seed=3, batch_size=1)  # other games' draws no longer in between
    assert together == alone
    assert episodes(game, 6, seed=4, batch_size=6) != together  # the seed does drive the deal
    random.random()  # noqa: S311 - the process's own stream is left as it was
    assert np.random.get_state()[1].tobytes() == before[1]
    random.setstate(before[0])


def test_arena_match_plays_random_and_llm_agents(capsys):
    pytest.importorskip("transformers")
    from arena.tools.tiny_model import tiny_model_dir

    llm = f"llm:model={tiny_model_dir()},mode=generated,max_text_tokens=6"
    for agents in (["random", "random"], [llm, "random"]):
        argv = ["match", "--game", "textarena:TicTacToe-v0", "--agents", *agents, "--games", "2", "--json"]
        assert main(argv) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["game"] == "textarena:TicTacToe-v0" and len(doc["results"]) == 2
        assert all(r["forfeit"] is None and len(r["returns"]) == 2 for r in doc["results"])


def test_bad_ids_are_one_line(capsys):
    for name, message in (
        ("textarena:NoSuchGame-v0", "unknown TextArena env id 'NoSuchGame-v0'"),
        ("textarena:Wordle-v0", "cannot run here: downloads nltk data"),
        ("textarena:TicTacToe-v0(colour=red)", "has no parameter 'colour'"),
    ):
        with pytest.raises(ArenaError, match=message):
            load_game(name)
        assert main(["match", "--game", name, "--agents", "random", "random", "--games", "1"]) == 2
        err = capsys.readouterr().err.strip()
        assert message.split("'")[0] in err and len(err.splitlines()) == 1


def test_an_env_that_raises_mid_game_ends_that_game_recorded(monkeypatch):
    game = load_game("textarena:TicTacToe-v0")
    original = game.new_initial_state

    def broken(seed=None):
        state = original(seed)
        env_step = state.env.step
        calls = []

        def step(action):
            calls.append(action)
            if len(calls) == 2:
                movers.append(state.player)
                raise RuntimeError("the board caught fire")
            return env_step(action)

        state.env.step = step
        return state

    movers: list[int] = []
    monkeypatch.setattr(game, "new_initial_state", broken)
    agents = [load_agent("random", game), load_agent("random", game)]
    results = play_games(game, agents, 3, seed=0)
    assert len(movers) == 3
    for r, mover in zip(results, movers):
        assert r.info["env_error"] == {"player": mover, "error": "RuntimeError: the board caught fire"}
        assert r.returns == [-1.0 if p == mover else 0.0 for p in range(2)] and r.forfeit is None


def test_the_conformance_table_names_why_an_id_is_not_run():
    skipped = check_id("Debate-v0", games=3, seed=0, timeout=120)
    assert not skipped["loads"] and skipped["why"].startswith("not run: an OpenRouter LLM jury")
