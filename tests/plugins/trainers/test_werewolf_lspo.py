"""Werewolf with a scripted side in the environment (``werewolf(scripted=...)``) and the
``lspo_playout`` trainer: the scripted side's chance nodes are exactly the scripted agent's
policy and read only that seat's view (the leak tests of the new observation path), and the
trainer's pairs follow its credit rule (per-turn playout values or the game's outcome)."""

from __future__ import annotations

import numpy as np
import pytest

import arena
from arena.agent import Observation
from arena.errors import ArenaError
from arena.games.werewolf.rules import WOLF
from arena.games.werewolf.scripted import enumerate_draws
from arena.playing.match import game_rng, sample_chance
from arena.plugins.agents.werewolf_scripted import ScriptedWerewolf
from support import REPO


def _play(game, seed, village, record=None):
    """One game: ``village(obs)`` moves for the seats the environment does not play."""
    rng = game_rng(seed, 0)
    s = game.new_initial_state(seed=rng.bits())
    sample_chance(s, rng)
    while not s.is_terminal():
        p = s.current_player()
        obs = Observation(s, p, rng, game.spec.full_name)
        if record is not None:
            record(s, p)
        s.apply_action(village(obs))
        sample_chance(s, rng)
    return s


def test_enumerate_draws_gives_the_exact_distribution():
    def run(rng):  # one draw of 3; on 0 a second draw of 2 picks 10 or 11
        a = rng.integers(3)
        return 10 + rng.integers(2) if a == 0 else a

    assert enumerate_draws(run) == [(1, pytest.approx(1 / 3)), (2, pytest.approx(1 / 3)), (10, 1 / 6), (11, 1 / 6)]
    assert enumerate_draws(lambda rng: 4) == [(4, 1.0)]


@pytest.mark.parametrize("side", ["wolves", "village"])
def test_the_scripted_side_is_chance_and_never_a_player(side):
    game = arena.load_game(f"werewolf(players=7,talk=text,scripted={side})")
    seen = []

    def village(obs):
        return "I accuse player_1." if obs.decision == "text" else obs.legal_actions[0]

    for seed in range(6):
        s = _play(game, seed, village, record=lambda st, p: seen.append(st.roles[p] == WOLF))
        assert s.winner in ("village", "wolves", "draw")
    assert seen and all(is_wolf == (side == "village") for is_wolf in seen)


def test_chance_outcomes_are_the_scripted_agents_choice():
    """At a scripted seat's turn the chance distribution is what ``werewolf_scripted`` would
    choose at that seat in the ordinary game (same history): deterministic choices get
    probability 1 and ties are uniform over the same set its random draw picks from."""
    env = arena.load_game("werewolf(players=7,scripted=wolves)")
    plain = arena.load_game("werewolf(players=7)")
    agent = ScriptedWerewolf(plain)
    checked = 0
    for seed in range(8):
        rng = game_rng(seed, 0)
        s = env.new_initial_state(seed=rng.bits())
        sample_chance(s, rng)
        twin = plain.new_initial_state()
        for a in s.history:
            twin.apply_action(a)
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                assert abs(sum(p for _, p in outcomes) - 1) < 1e-9
                p = twin.current_player()
                assert twin.roles[p] == WOLF
                picks = {agent.act(Observation(twin, p, np.random.default_rng(k), "w")) for k in range(100)}
                assert picks == {a for a, _ in outcomes}
                checked += 1
                a = outcomes[int(rng.numpy.integers(len(outcomes)))][0]  # any outcome: one step at a time
                s.apply_action(a)
                twin.apply_action(a)
                continue
            obs = Observation(s, s.current_player(), rng, "w")
            a = agent.act(obs)
            s.apply_action(a)
            twin.apply_action(a)
            assert s.information_state_key(0) == twin.information_state_key(0)
    assert checked > 20


def test_no_leak_on_the_new_observation_path():
    """A village seat's text, key and tensor are the ordinary game's for the same history (the
    environment adds no observation), and a scripted wolf's chance distribution does not change
    when the hidden roles of two non-wolves are exchanged (it reads only the wolf's own view)."""
    env = arena.load_game("werewolf(players=7,talk=text,scripted=wolves)")
    plain = arena.load_game("werewolf(players=7,talk=text)")
    for seed in range(6):
        states = []
        _play(
            env,
            seed,
            lambda o: "I accuse player_2." if o.decision == "text" else o.legal_actions[-1],
            record=lambda st, p: states.append((st.clone(), p)),
        )
        final = states[-1][0]
        say = ScriptedWerewolf(plain).policy.sentence
        for st, p in states:
            twin = plain.new_initial_state()
            for a in st.history:  # a scripted wolf's speech is its utterance id in the environment
                cur = twin.current_player()
                twin.apply_action(
                    say(a) if cur >= 0 and twin.decision_kind(cur) == "text" and isinstance(a, int) else a
                )
            assert twin.observation_text(p) == st.observation_text(p)
            assert twin.information_state_key(p) == st.information_state_key(p)
            assert np.array_equal(twin.observation_tensor(p), st.observation_tensor(p))
        # swap two villagers' roles (never a wolf) and replay: every wolf turn's distribution is unchanged
        roles = final.history[:7]
        others = [q for q in range(7) if roles[q] != WOLF]
        for a, b in [(others[0], others[1]), (others[1], others[-1])]:
            if roles[a] == roles[b]:
                continue
            swapped = list(final.history)
            swapped[a], swapped[b] = swapped[b], swapped[a]
            s1, s2 = env.new_initial_state(), env.new_initial_state()
            for t, (m1, m2) in enumerate(zip(final.history, swapped)):
                if s1.is_terminal() or [k for _, k in s1.queue] != [k for _, k in s2.queue]:
                    break
                if t >= 7 and s1.is_chance_node() and not s1.tied:
                    assert s1.chance_outcomes() == s2.chance_outcomes()
                if m1 not in s2.legal_actions() and not isinstance(m1, str):
                    break
                s1.apply_action(m1)
                s2.apply_action(m2)


def test_bad_scripted_side_is_one_clear_error():
    with pytest.raises(ArenaError, match="parameter 'scripted' must be one of none, wolves, village"):
        arena.load_game("werewolf(scripted=wolf)")


# -- the trainer -------------------------------------------------------------------------------

GAME = "werewolf(players=5,talk=text,scripted=wolves,max_days=1,max_message_chars=8)"


def _trainer(params, tmp_path=None):
    pytest.importorskip("transformers")
    pytest.importorskip("sklearn")
    from arena.plugins.trainers.llm.lspo_playout import PlayoutLSPO
    from arena.tools.tiny_model import tiny_model_dir

    game = arena.load_game(GAME)
    agent = arena.load_agent(
        {"name": "llm", "model": str(tiny_model_dir()), "temperature": 1, "score": "mean", "max_text_tokens": 8}, game
    )
    agent.name = "learner"
    return game, agent, PlayoutLSPO(game, [agent], **params)


def _games(game, agent, n, seed=0):
    from arena.playing.match import play_games

    return [r.trajectory for r in play_games(game, [agent] * 5, num_games=n, seed=seed, record=True)]


def test_turn_credit_prefers_the_abstract_action_with_the_higher_playout_value(monkeypatch):
    import torch

    torch.set_num_threads(1)
    game, agent, tr = _trainer({"candidates": 2, "max_decisions": 2, "playouts": 2, "margin": 0.0, "epochs": 1})
    trajs = _games(game, agent, 1)
    seen: dict = {}
    from arena.plugins.trainers.llm import lspo_playout

    real = lspo_playout.playout_values

    def spy(g, starts, a, seed, cache=True, streams=None):
        values = real(g, starts, a, seed, cache=cache, streams=streams)
        seen["starts"], seen["values"] = starts, values
        return values

    monkeypatch.setattr(lspo_playout, "playout_values", spy)
    captured = {}
    monkeypatch.setattr(tr, "fit", lambda pairs: captured.setdefault("pairs", list(pairs)) and {} or {})
    out = tr.update(trajs)
    assert out["lspo/playout_games"] == len(seen["starts"]) > 0
    assert 0 < out["lspo/latent_strategies"] <= 6 and out["lspo/corpus"] > 0
    assert 0.0 <= out["lspo/win_rate"] <= 1.0
    # recompute the best and worst option per decision from the recorded playouts
    q: dict = {}
    for (st, option, player), v in zip(seen["starts"], seen["values"]):
        q.setdefault(id(st), {}).setdefault(option if isinstance(option, str) else int(option), []).append(v)
    expected = []
    for vals in q.values():
        means = {o: np.mean(v) for o, v in vals.items()}
        ranked = sorted(means, key=lambda o: (means[o], str(o)))
        expected.append((ranked[-1], ranked[0]))
    pairs = captured["pairs"]
    assert len(pairs) == len(expected) == out["lspo/pairs_talk"] + out["lspo/pairs_move"]
    enc = agent.backend.encode
    for pair, (hi, lo) in zip(pairs, expected):
        if isinstance(hi, str):
            assert pair.chosen_ids == tuple(enc(agent.prompts.continuation(hi)))
            assert pair.rejected_ids == tuple(enc(agent.prompts.continuation(lo)))
        else:
            assert pair.per_token and pair.chosen_ids != pair.rejected_ids


def test_crn_plays_the_same_option_on_the_same_streams():
    """``crn``: playouts that share a stream id replay the same luck (chance draws and the LLM's
    samples); without ids every playout has its own stream."""
    from arena.plugins.trainers.llm.rollout import playout_finals

    game, agent, tr = _trainer({})
    decisions, _, _ = tr._decisions(_games(game, agent, 1))
    st, step, _, _ = next(d for d in decisions if d[1].observation.decision == "text")
    starts = [(st, str(step.action), step.player)] * 8
    shared = [f.transcript for f in playout_finals(game, starts, agent, 3, cache=False, streams=[0, 1, 2, 3] * 2)]
    assert shared[:4] == shared[4:] and len({tuple(t) for t in shared[:4]}) > 1
    own = [f.transcript for f in playout_finals(game, starts, agent, 3, cache=False)]
    assert len({tuple(t) for t in own}) > 4


def test_trajectory_credit_follows_the_games_outcome(monkeypatch):
    game, agent, tr = _trainer({"credit": "trajectory", "candidates": 2, "max_decisions": 0, "decisions": "moves"})
    for seed in range(6):  # a batch with a won game and a lost or drawn one (the village wins ~1 in 4 here)
        trajs = _games(game, agent, 6, seed=seed)
        if len(set(tr._decisions(trajs)[2])) > 1:
            break
    captured = {}
    monkeypatch.setattr(tr, "fit", lambda pairs: captured.setdefault("pairs", list(pairs)) and {} or {})
    out = tr.update(trajs)
    assert out["lspo/playout_games"] == 0 and out["lspo/pairs_talk"] == 0
    decisions, _, side = tr._decisions(trajs)
    base = np.mean(side)
    enc = agent.backend.encode
    want = {}
    for _, step, ret, _ in decisions:
        if step.observation.decision == "choice" and len(step.observation.legal_actions) > 1 and ret != base:
            played = tuple(enc(agent.prompts.continuation(step.observation.label_of(step.action))))
            want.setdefault(tuple(step.extra["prompt_ids"]), []).append((played, ret > base))
    assert len(captured["pairs"]) == sum(len(v) for v in want.values()) > 0
    for pair in captured["pairs"]:
        played, won = want[pair.prompt_ids][0] if len(want[pair.prompt_ids]) == 1 else (None, None)
        if played is not None:
            assert (pair.chosen_ids == played) == won and (pair.rejected_ids == played) == (not won)
    # balance: as many pairs toward the played move as away from it (the larger side subsampled)
    toward = sum(won for rows in want.values() for _, won in rows)
    away = sum(len(rows) for rows in want.values()) - toward
    assert toward != away  # the case balance changes
    tr.p["balance"] = True
    monkeypatch.setattr(tr, "_pair", lambda step, hi, lo: (hi == step.action, False))
    captured.clear()
    tr.update(trajs)
    directions = captured["pairs"]
    assert directions.count(True) == directions.count(False) == min(toward, away)


def test_bad_trainer_params_are_one_clear_error():
    with pytest.raises(ArenaError, match="credit must be one of turn, trajectory"):
        _trainer({"credit": "game"})
    with pytest.raises(ArenaError, match="decisions must be one of all, talk, moves"):
        _trainer({"decisions": "votes"})
    with pytest.raises(ArenaError, match="pool must be one of decision, turn"):
        _trainer({"pool": "game"})
    with pytest.raises(ArenaError, match="balance .* needs credit: trajectory"):
        _trainer({"balance": True})  # turn credit's pairs have no played-side direction to balance


def test_pool_turn_averages_a_latent_strategy_over_the_same_talk_turn():
    from arena.plugins.trainers.llm.lspo_playout import pooled

    cluster = {"a1": 0, "a2": 0, "b": 1, "c": 2}
    q = {0: {"a1": 1.0, "b": -1.0}, 1: {"a2": 0.0, "b": 1.0, "c": 0.5}, 2: {"a1": -1.0, "c": 1.0}, 3: {"x": 1.0}}
    out = pooled(q, {0: 0, 1: 0, 2: 1}, cluster)  # decisions 0 and 1 at turn 0, 2 at turn 1; 3 a move
    assert out[0] == {"a1": 0.5, "b": 0.0}  # cluster 0 at turn 0: mean(1, 0); cluster 1: mean(-1, 1)
    assert out[1] == {"a2": 0.5, "b": 0.0, "c": 0.5}
    assert out[2] == {"a1": -1.0, "c": 1.0}  # alone at its turn: its own values
    assert 3 not in out


@pytest.mark.parametrize(
    "config,side",
    [("werewolf_lspo", "wolves"), ("werewolf_lspo_wolves", "village"), ("werewolf_listen_speak", "wolves")],
)
def test_the_shipped_config_trains_from_yaml_and_resumes(tmp_path, config, side):
    """``arena llm-train configs/llm/werewolf_lspo.yaml`` (and the wolves' config) end to end (a
    small table, no warm-up), then the same command again: the finished run is read back, not
    retrained."""
    pytest.importorskip("transformers")
    pytest.importorskip("sklearn")
    import csv

    from arena.config import load_config
    from arena.plugins.trainers.llm.driver import LLMTrainConfig, train

    overrides = [
        f"game=werewolf(players=5,talk=text,scripted={side},max_days=1,max_message_chars=8)",
        f"model.dir={tmp_path / 'model'}",
        "model.pretrain_steps=0",
        "agent.max_text_tokens=8",
        "iterations=1",
        "games_per_iter=2",
        "params.max_decisions=1",
        "params.epochs=1",
        "params.candidates=1",
        f"out={tmp_path / 'run'}",
        "quiet=true",
    ]
    cfg = load_config(LLMTrainConfig, f"configs/llm/{config}.yaml", overrides)
    assert cfg.trainer == "lspo_playout" and cfg.params["credit"] == "turn"
    train(cfg)
    rows = list(csv.DictReader(open(tmp_path / "run" / "metrics.csv")))
    last = rows[-1]
    assert float(last["train/learner/latent_strategies"]) >= 1
    assert 0.0 <= float(last["train/learner/win_rate"]) <= 1.0
    assert float(last["train/learner/games_total"]) >= 2
    train(cfg)  # resume: nothing left to do, same rows
    assert list(csv.DictReader(open(tmp_path / "run" / "metrics.csv"))) == rows


def test_the_leaderboard_config_seats_the_trained_village():
    """configs/tournament/werewolf_lspo.yaml: one round-robin group of seven (every agent in every
    seat), the LSPO snapshot and the model it started from among them."""
    from arena.config import load_config
    from arena.evaluation.tournament import TournamentConfig
    from arena.plugins.trainers.llm.driver import LLMTrainConfig

    cfg = load_config(TournamentConfig, "configs/tournament/werewolf_lspo.yaml")
    game = arena.load_game(cfg.game)
    assert len(cfg.agents) == game.spec.num_players == 7 and cfg.format.kind == "round_robin"
    models = {a["label"]: a.get("model") for a in cfg.agents}
    assert (
        "snapshots/learner@" in models["lspo_village"]
        and models["untrained"] == "runs/lspo/tiny-village-brief-w1-s1-na"
    )
    wolves = load_config(LLMTrainConfig, "configs/llm/werewolf_lspo_wolves.yaml")
    assert models["lspo_wolf"] == f"{wolves.out}/snapshots/learner@{wolves.iterations}"
    assert models["untrained_wolf"] == wolves.model.dir


def test_werewolf_eval_pairs_the_deals_and_reports_intervals(tmp_path, capsys):
    """tools/werewolf_eval.py: the scripted village against the scripted wolves, then the summary
    of the same games against themselves (a paired change of exactly 0) and a refused mismatch."""
    import json
    import sys

    sys.path.insert(0, str(REPO / "tools"))
    import werewolf_eval

    game = "werewolf(players=5,talk=text,scripted=wolves,max_days=2,text=brief)"
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert (
        werewolf_eval.main(
            ["play", "--game", game, "--agent", "werewolf_scripted", "--games", "30", "--out", str(a), "--look"]
        )
        == 0
    )
    row = json.loads(a.read_text())
    assert row["side"] == "village" and len(row["per_game"]["win"]) == 30
    assert row["look"]["games"] == 30 and row["look"]["win"] == pytest.approx(row["win"]["mean"], abs=1e-4)
    lo, hi = row["win"]["ci"]
    assert lo <= row["win"]["mean"] <= hi and row["win"]["mean"] == np.mean(row["per_game"]["win"])
    assert row["return"]["mean"] == pytest.approx(2 * row["win"]["mean"] - 1 + row["draw"]["mean"])
    capsys.readouterr()
    assert werewolf_eval.main(["summary", str(a), "--before", str(a)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["win"]["change"]["mean"] == 0.0 and out["win"]["per_file"] == [row["win"]["mean"]]
    other = "werewolf(players=5,talk=text,scripted=wolves,max_days=2)"
    assert werewolf_eval.main(["play", "--game", other, "--agent", "random", "--games", "5", "--out", str(b)]) == 0
    assert werewolf_eval.main(["summary", str(a), "--before", str(b)]) == 2  # other games: refused
    assert werewolf_eval.main(["play", "--game", "werewolf(players=5)", "--agent", "random", "--games", "1"]) == 2
    assert "needs scripted=wolves or scripted=village" in capsys.readouterr().err


def test_werewolf_eval_pools_several_seeds_in_order(tmp_path):
    """``--seed 0 3`` is the two single-seed evaluations' per-game lists concatenated, in order."""
    import json
    import sys

    sys.path.insert(0, str(REPO / "tools"))
    import werewolf_eval

    game = "werewolf(players=5,talk=text,scripted=wolves,max_days=2,text=brief)"
    rows = {}
    for name, seeds in (("a", ["0"]), ("b", ["3"]), ("ab", ["0", "3"])):
        out = tmp_path / f"{name}.json"
        args = ["play", "--game", game, "--agent", "random", "--games", "12", "--seed", *seeds, "--out", str(out)]
        assert werewolf_eval.main(args) == 0
        rows[name] = json.loads(out.read_text())
    assert rows["ab"]["games"] == 24 and rows["ab"]["seed"] == [0, 3] and rows["a"]["seed"] == 0
    for k in werewolf_eval.METRICS:
        assert rows["ab"]["per_game"][k] == rows["a"]["per_game"][k] + rows["b"]["per_game"][k]
    assert rows["a"]["per_game"]["win"] != rows["b"]["per_game"]["win"]  # the seeds deal different games


def test_werewolf_eval_look_counts_a_hand_made_transcript(capsys):
    """``look`` on a transcript whose shares are counted by hand, then on real games of the
    scripted village (every ballot counted once; its win rate equals ``play``'s)."""
    import json
    import sys
    from types import SimpleNamespace

    sys.path.insert(0, str(REPO / "tools"))
    import werewolf_eval

    transcript = [
        "Roles: player_0=Villager, player_1=Werewolf, player_2=Villager, player_3=Seer",
        'Day 1: player_0 says: "..."',
        'Day 1: player_1 says: "I accuse p2."',  # the wolf accuses first
        'Day 1: player_2 says: "I accuse player_1. p1 is a werewolf."',
        'Day 1: player_3 says: "..."',
        "[secret ballot] Day 1: player_0 votes for player_1.",  # on the wolf, the first accuser
        "[secret ballot] Day 1: player_1 votes for player_2.",  # the wolf's ballot: not the village's
        "[secret ballot] Day 1: player_2 votes for player_1.",
        "[secret ballot] Day 1: player_3 votes for player_2.",  # on the player the wolf accused
        "Day 1: player_1 is exiled by the vote.",
    ]
    info = {
        "teams": [[0, 2, 3], [1]],
        "team_names": ["village", "wolves"],
        "roles": ["villager", "werewolf", "villager", "seer"],
        "transcript": transcript,
        "winner": "village",
    }
    got = werewolf_eval.look([SimpleNamespace(info=info)], "village")
    assert got["utterances"] == 3 and got["said"][0] == ["...", 0.6667]
    assert got["acts"]["none"] == 0.6667 and got["acts"]["accuse"] == got["acts"]["wolf"] == 0.3333
    assert got["acts"]["defend"] == 0.0
    assert got["ballots"] == 3 and got["on_other_side"] == 0.6667
    assert got["on_first_accuser"] == 0.6667 and got["on_accused_by_other_side"] == 0.3333
    assert got["day1_exile_other_side"] == 1.0 and got["win"] == 1.0
    wolf = werewolf_eval.look([SimpleNamespace(info=info)], "wolves")
    assert wolf["utterances"] == 1 and wolf["acts"]["accuse"] == 1.0 and wolf["on_other_side"] == 1.0
    assert wolf["on_accused_by_other_side"] == 0.0  # the village accused p1 itself; it voted p2

    game = "werewolf(players=5,talk=text,scripted=wolves,max_days=2,text=brief)"
    args = ["--game", game, "--agent", "werewolf_scripted", "--games", "20", "--seed", "3"]
    capsys.readouterr()
    assert werewolf_eval.main(["look", *args]) == 0
    seen = json.loads(capsys.readouterr().out)
    assert werewolf_eval.main(["play", *args]) == 0
    played = json.loads(capsys.readouterr().out)
    assert seen["games"] == 20 and seen["win"] == pytest.approx(played["win"]["mean"], abs=1e-4)
    assert seen["utterances"] > 0 and seen["ballots"] > 0 and sum(s for _, s in seen["said"]) <= 1.0


def test_werewolf_eval_beliefs_scores_the_true_wolf_with_the_agents_model(capsys):
    """``werewolf_eval beliefs``: every living villager surveyed at the end of each day's
    discussion of scripted games; the mean log-likelihood is the mean of log P(true wolf)."""
    import json
    import sys

    pytest.importorskip("transformers")
    from arena.tools.tiny_model import tiny_model_dir

    sys.path.insert(0, str(REPO / "tools"))
    import werewolf_eval

    game = "werewolf(players=5,talk=text,scripted=wolves,max_days=2,text=brief)"
    agent = f"llm:model={tiny_model_dir()},chat=false,templates=configs/llm/werewolf_templates.yaml"
    assert werewolf_eval.main(["beliefs", "--game", game, "--agent", agent, "--games", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["surveys"] > 0 and out["loglik"]["n"] == out["surveys"]
    assert out["loglik"]["mean"] < 0 and 0 < out["p_wolf"]["mean"] < 1
    assert -np.log(4) <= out["uniform_loglik"] <= -np.log(2)  # 2-4 living others to name
