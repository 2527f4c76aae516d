"""Werewolf end to end: PettingZoo conformance of every talk mode, 1,000 random games through
the runner, the scripted baseline's measured margin, win-rate reports, OpenSkill team ratings,
and a person playing through ``arena play`` in a real pseudo-terminal."""

from __future__ import annotations

import pexpect
import pytest
from pettingzoo.test import api_test

import arena
from arena.errors import ArenaError
from arena.games.werewolf.report import win_rates
from support import arena_cmd


@pytest.mark.parametrize(
    "name",
    [
        "werewolf",
        "werewolf(players=5,talk=none)",
        "werewolf(players=9,vote_rule=runoff,discussion_rounds=2)",
        "werewolf(players=6,vote_rule=random_tiebreak,reveal_role_on_death=true)",
    ],
)
def test_pettingzoo_api(name):
    api_test(arena.make_env(name), num_cycles=1000)


def test_text_talk_has_no_pettingzoo_face_but_plays():
    with pytest.raises(ArenaError, match="free-text"):
        arena.make_env("werewolf(talk=text)")
    game = arena.load_game("werewolf(talk=text)")
    assert game.spec.text_decisions
    agents = [arena.load_agent("werewolf_scripted", game) for _ in range(7)]
    results = arena.play(game, agents, games=20, seed=3, record=True)
    assert all(r.forfeit is None for r in results)
    said = [line for r in results for line in r.transcript if "I accuse player_" in line or "I am the Seer" in line]
    assert said  # scripted players speak sentences the game parses into claims
    assert any('says: "I accuse player_' in line for r in results for line in r.info["transcript"])


def test_1000_random_games_without_error():
    game = arena.load_game("werewolf")
    agents = [arena.load_agent("random", game) for _ in range(7)]
    results = arena.play(game, agents, games=1000, seed=11, rotate_seats=True)
    assert len(results) == 1000 and not any(r.forfeit for r in results)
    for r in results:
        assert r.info["winner"] in ("village", "wolves") or r.info["truncated"]
        assert sorted(r.info["roles"]) == sorted(["Werewolf"] * 2 + ["Seer", "Doctor"] + ["Villager"] * 3)
        assert r.info["transcript"][0].startswith("Roles: ")  # every game keeps its full transcript


def test_scripted_villagers_beat_random_villagers_against_the_same_wolves():
    game = arena.load_game("werewolf")
    rates = {}
    for label, spec in (("scripted", "werewolf_scripted"), ("random", "werewolf_scripted:village=random")):
        agents = [arena.load_agent(spec, game) for _ in range(7)]
        rates[label] = win_rates(arena.play(game, agents, games=200, seed=0))["sides"]["village"]
    # measured on 1,000 games in docs/results/werewolf.md: ~0.4 vs ~0.005
    assert rates["scripted"] > 0.25 and rates["random"] < 0.05, rates


@pytest.mark.parametrize("text", ["full", "brief"])
def test_babble_says_every_speech_act_and_the_game_understands_each(text):
    """``babble`` (the warm-up that gives an LLM the game's language and no strategy): every kind
    of speech act comes out, and the game reads each sentence as the act it was drawn as."""
    import numpy as np

    from arena.agent import Observation
    from arena.games.werewolf.view import View
    from arena.playing.match import game_rng, sample_chance

    game = arena.load_game(f"werewolf(players=7,talk=text,text={text})")
    agent = arena.load_agent("werewolf_scripted:village=babble,wolves=babble", game)
    rng = game_rng(3, 0)
    s = game.new_initial_state(seed=rng.bits())
    sample_chance(s, rng)
    while Observation(s, s.current_player(), rng, "w").decision != "text":
        s.apply_action(agent.act(Observation(s, s.current_player(), rng, "w")))
        sample_chance(s, rng)
    p, policy = s.current_player(), agent.policy
    v, draws, kinds = View(Observation(s, p, rng, "w").tensor, 7), np.random.default_rng(0), set()
    for _ in range(200):
        act = policy.babble(v, draws)
        kind, arg = policy.layout.speech(act)
        kinds.add(kind)
        t = s.clone()
        t.apply_action(policy.sentence(act))
        heard = {
            "claim": t.claims[p] == arg,
            "accuse": t.accused_today[arg] == s.accused_today[arg] + 1,
            "wolf": t.reports[p][arg] == 1,
            "clear": t.reports[p][arg] == -1,
            "defend": t.defended_today[arg] == s.defended_today[arg] + 1,
            "silent": (t.claims, t.accused_today, t.reports, t.defended_today)
            == (s.claims, s.accused_today, s.reports, s.defended_today),
        }[kind]
        assert heard, (kind, arg, policy.sentence(act))
        assert kind == "defend" or arg != p
    assert kinds == {"silent", "claim", "accuse", "wolf", "clear", "defend"}
    with pytest.raises(ArenaError, match="scripted, random, babble"):
        arena.load_agent("werewolf_scripted:wolves=chatty", game)


def test_win_rate_report_per_side_role_and_agent():
    game = arena.load_game("werewolf(players=5)")
    agents = [arena.load_agent("werewolf_scripted", game, label=f"s{k}") for k in range(3)]
    agents += [arena.load_agent("random", game, label=f"r{k}") for k in range(2)]
    results = arena.play(game, agents, games=100, seed=1, rotate_seats=True)
    rep = win_rates(results)
    assert rep["games"] == 100 and rep["forfeits"] == 0
    assert rep["sides"]["village"] + rep["sides"]["wolves"] + rep["draws"] / 100 == pytest.approx(1.0)
    assert set(rep["roles"]) == {"Werewolf", "Seer", "Doctor", "Villager"}
    assert rep["roles"]["Villager"]["seats"] == 200 and rep["roles"]["Werewolf"]["seats"] == 100
    wolf_rate = sum(1 for r in results if r.info["winner"] == "wolves") / 100
    assert rep["roles"]["Werewolf"]["win_rate"] == pytest.approx(wolf_rate)
    assert sum(a["games"] for a in rep["agents"].values()) == 500
    with pytest.raises(ArenaError):
        win_rates([])


def test_openskill_rates_werewolf_teams():
    from arena.evaluation.ratings.openskill import openskill

    game = arena.load_game("werewolf(players=5)")
    agents = [arena.load_agent("werewolf_scripted", game, label=f"s{k}") for k in range(5)]
    results = arena.play(game, agents, games=30, seed=2, rotate_seats=True)
    ratings = openskill(results)
    assert set(ratings) == {f"s{k}" for k in range(5)}
    assert any(abs(mu - 25.0) > 0.1 for mu, _ in ratings.values())  # team outcomes moved ratings


def test_scripted_agent_refuses_other_games():
    with pytest.raises(ArenaError, match="plays only werewolf"):
        arena.load_agent("werewolf_scripted", arena.load_game("kuhn_poker"))
    with pytest.raises(ArenaError, match="'village'"):
        arena.load_agent("werewolf_scripted:village=lazy", arena.load_game("werewolf"))


def _play_session(game: str, subprocess_env, speech: str | None) -> str:
    cmd = arena_cmd() + ["play", "--game", game, "--opponent", "werewolf_scripted", "--seat", "0", "--seed", "5"]
    child = pexpect.spawn(cmd[0], cmd[1:], env=subprocess_env, encoding="utf-8", timeout=60)
    seen = []
    try:
        child.expect("you are player 0")
        while True:
            i = child.expect(["Your move: ", "Say something .*: ", "Play again"])
            seen.append(child.before)
            if i == 2:
                break
            if i == 1:
                child.sendline(speech)
            else:
                child.sendline("1")
        child.sendline("n")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    return "".join(seen)


def test_human_plays_structured_werewolf_in_the_terminal(subprocess_env):
    out = _play_session("werewolf(players=5)", subprocess_env, None)
    assert "You are player_0, a " in out and "Moves: [1]" in out
    assert "game over" in out and "Roles: player_0=" in out
    # before the game is over the person is told only its own role
    before_end = out.split("--- game over ---")[0]
    assert "Roles: " not in before_end


def test_human_speaks_free_text_in_werewolf(subprocess_env):
    out = _play_session("werewolf(players=5,talk=text)", subprocess_env, "I trust nobody, I accuse player_2")
    assert 'Day 1: player_0 says: "I trust nobody, I accuse player_2"' in out  # seed 5: seat 0 survives night 1
    assert "game over" in out


def test_tournament_rotates_roles_and_the_report_reads_the_run(tmp_path, subprocess_env):
    """A 5-seat round robin seats every agent in every seat over the same deals (role rotation),
    rates teams with OpenSkill, and ``arena werewolf-report`` reads per-role rates back."""
    import json
    import subprocess

    cfg = tmp_path / "ww.yaml"
    cfg.write_text(
        "game: werewolf(players=5)\n"
        "agents:\n"
        + "".join(f"  - {{name: werewolf_scripted, label: s{k}}}\n" for k in range(3))
        + "  - {name: random, label: r0}\n  - {name: random, label: r1}\n"
        f"format: {{kind: round_robin, games: 4}}\nratings: {{rank_by: openskill}}\nout: {tmp_path / 'run'}\n"
        "tensorboard: false\nplots: false\nprogress: false\n"
    )
    run = subprocess.run(
        arena_cmd() + ["tournament", str(cfg), "--quiet"],
        env=subprocess_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    rep = subprocess.run(
        arena_cmd() + ["werewolf-report", str(tmp_path / "run"), "--json"],
        env=subprocess_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert rep.returncode == 0, rep.stderr
    data = json.loads(rep.stdout)
    assert data["games"] == 20
    for name in ("s0", "s1", "s2", "r0", "r1"):
        by_role = data["agents"][name]["by_role"]
        assert {r: x["seats"] for r, x in by_role.items()} == {"Werewolf": 4, "Seer": 4, "Doctor": 4, "Villager": 8}
    bad = subprocess.run(
        arena_cmd() + ["werewolf-report", str(tmp_path / "missing")],
        env=subprocess_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "run directory not found" in bad.stderr and "Traceback" not in bad.stderr
