"""arena's games as TextArena envs, driven only by the ``textarena`` package's own API
(``ta.make``, ``reset``, ``get_observation``, ``step``, ``close``, its action wrapper): Kuhn poker,
Werewolf and Monopoly Deal play to the end, the same seed gives the same episode, and unreadable
moves follow TextArena's rule (one re-prompt, then the game is lost)."""

from __future__ import annotations

import random
import re

import pytest

ta = pytest.importorskip("textarena", reason="arena's games as TextArena envs need the textarena package")

from arena.adapters.textarena_envs import register  # noqa: E402
from arena.loading import load_game  # noqa: E402

GAMES = {"arena-kuhn_poker-v0": 2, "arena-werewolf-v0": 7, "arena-monopoly_deal-v0": 2}


def play(env_id: str, players: int, seed: int, choice_seed: int = 0) -> tuple[list[str], dict, dict]:
    """A TextArena loop with a player that picks among the valid moves it is shown."""
    env = ta.wrappers.ActionFormattingWrapper(ta.make(env_id))  # adds the brackets TextArena expects
    env.reset(num_players=players, seed=seed)
    pick, seen, done = random.Random(choice_seed), [], False
    while not done:
        pid, observation = env.get_observation()
        assert isinstance(observation, str) and 0 <= pid < players
        seen.append(observation)
        ask = observation.splitlines()[-1]
        moves = re.findall(r"\[([^\]]+)\]", ask) if ask.startswith("Valid moves:") else []
        done, _ = env.step(pick.choice(moves) if moves else f"player {pid} has nothing to add")
        assert len(seen) < 5000
    rewards, game_info = env.close()
    return seen, rewards, game_info


def test_kuhn_werewolf_and_monopoly_deal_run_a_textarena_loop():
    assert set(GAMES) <= set(register())
    for env_id, players in GAMES.items():
        seen, rewards, info = play(env_id, players, seed=1)
        assert sorted(rewards) == list(range(players)) and sorted(info) == list(range(players))
        assert all(set(v) >= {"role", "invalid_move", "turn_count", "reason"} for v in info.values())
        assert not any(v["invalid_move"] for v in info.values())
        game = load_game(env_id[len("arena-") : -len("-v0")])
        assert all(game.spec.min_utility <= r <= game.spec.max_utility for r in rewards.values())
        if env_id != "arena-werewolf-v0":  # two-player zero-sum
            assert sum(rewards.values()) == 0 and max(rewards.values()) > 0
        else:  # one side wins: the village's and the wolves' returns differ in sign
            assert {1.0, -1.0} == set(rewards.values())
        assert play(env_id, players, seed=1) == (seen, rewards, info)  # the same seed, the same episode
    assert play("arena-kuhn_poker-v0", 2, seed=2)[0] != play("arena-kuhn_poker-v0", 2, seed=1)[0]


def test_an_unreadable_move_is_re_prompted_once_then_loses():
    register(["kuhn_poker"])
    env = ta.make("arena-kuhn_poker-v0")
    env.reset(num_players=2, seed=0)
    pid, _ = env.get_observation()
    assert env.step("[raise to the moon]") == (False, {})
    again, observation = env.get_observation()
    assert again == pid and "invalid move" in observation
    done, info = env.step("[raise to the moon]")
    rewards, game_info = env.close()
    assert done and "loses" in info["reason"] and rewards[pid] == -2.0 and rewards[1 - pid] == 2.0
    assert game_info[pid]["invalid_move"] and not game_info[1 - pid]["invalid_move"]


def test_num_players_picks_the_game_size_or_is_refused():
    register(["kuhn_poker", "ipd"])
    env = ta.make("arena-kuhn_poker-v0")
    env.reset(num_players=3, seed=0)  # kuhn_poker(players=3)
    assert env.game.spec.num_players == 3 and 0 <= env.get_observation()[0] < 3
    with pytest.raises(ValueError, match="is for 2 players, not 3"):
        ta.make("arena-ipd-v0").reset(num_players=3, seed=0)
