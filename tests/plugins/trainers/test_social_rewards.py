"""Listening and speaking rewards (plugins/trainers/llm/social.py, ``lspo_playout``'s ``listening`` /
``speaking``): the speaking reward on hand-built beliefs, the listening log-likelihood against the
model's own scores, supervised listening that learns, and one clear error per bad parameter."""

from __future__ import annotations

import numpy as np
import pytest

import arena
from arena.agent import Observation
from arena.errors import ArenaError
from arena.games.werewolf.rules import WOLF
from arena.playing.match import game_rng, sample_chance

GAME = "werewolf(players=7,wolves=1,talk=text,max_message_chars=48,max_days=3,text=brief)"
TEMPLATES = "configs/llm/werewolf_templates.yaml"


def _talk_state(game, want_wolf: bool, living: int):
    """The first talk turn (over seeds) whose speaker is (not) the werewolf with ``living`` players alive."""
    for seed in range(200):
        rng = game_rng(seed, 0)
        pick = np.random.default_rng(seed)
        s = game.new_initial_state(seed=rng.bits())
        sample_chance(s, rng)
        while not s.is_terminal():
            p = s.current_player()
            if s.decision_kind(p) == "text" and (s.roles[p] == WOLF) == want_wolf and len(s.living()) == living:
                return s
            obs = Observation(s, p, rng, game.spec.full_name)
            s.apply_action(
                "..." if obs.decision == "text" else obs.legal_actions[int(pick.integers(len(obs.legal_actions)))]
            )
            sample_chance(s, rng)
    raise AssertionError("no such state")


class _Reader:
    """Beliefs by hand: P(the werewolf) is 0.45 for a listener who heard an accusation, else 0.3."""

    def __init__(self):
        self.asked = []

    def beliefs(self, asked):
        self.asked += list(asked)
        out = []
        for s in asked:
            p = 0.45 if "accuse" in s.question else 0.3
            b = np.full(len(s.seats), (1 - p) / (len(s.seats) - 1))
            b[s.seats.index(s.targets[0])] = p
            out.append(b)
        return out


def test_speaking_reward_on_a_hand_built_example():
    from arena.plugins.trainers.llm.social import Survey, pooled, speaking_reward, speaking_rewards

    # four listeners at 0.3 on the true wolf (B = 1.2), then 0.45 each (B = 1.8)
    asked = [Survey(p, "", [0, 1, 2], ["p0", "p1", "p2"], [0]) for p in (3, 4, 5, 6)]
    before = pooled([np.array([0.3, 0.35, 0.35])] * 4, asked)
    after = pooled([np.array([0.45, 0.5, 0.05])] * 4, asked)
    assert before == pytest.approx(1.2) and after == pytest.approx(1.8)
    assert speaking_reward(before, after, speaker_hidden=False) == pytest.approx(0.6)
    assert speaking_reward(before, after, speaker_hidden=True) == pytest.approx(-0.6)

    # through a real table: a villager speaks with four other living villagers (and the wolf) listening
    game = arena.load_game(GAME)
    s = _talk_state(game, want_wolf=False, living=6)
    speaker = s.current_player()
    reader = _Reader()
    [[accuse, silent]] = speaking_rewards(reader, [(s, speaker, ["I accuse p1.", "..."])])
    assert accuse == pytest.approx(0.6) and silent == pytest.approx(0.0)
    heard = {x.listener for x in reader.asked}
    assert speaker not in heard and all(s.roles[q] != WOLF for q in heard) and len(heard) == 4  # the listeners pool
    # a wolf saying it: the village's belief in the wolf rising is the wolf's loss
    s = _talk_state(game, want_wolf=True, living=5)
    [[accuse]] = speaking_rewards(_Reader(), [(s, s.current_player(), ["I accuse p1."])])
    assert accuse == pytest.approx(-0.6)  # 4 living villagers: 4 x (0.3 -> 0.45)


def _agent(game, seed=0):
    pytest.importorskip("transformers")
    from arena.tools.tiny_model import tiny_model_dir

    agent = arena.load_agent(
        {
            "name": "llm",
            "model": str(tiny_model_dir()),
            "temperature": 1,
            "score": "sum",
            "max_text_tokens": 8,
            "chat": False,
            "templates": TEMPLATES,
        },
        game,
    )
    agent.name = "learner"
    return agent


def test_listening_loglik_is_the_scored_belief_of_the_true_role():
    from arena.plugins.trainers.llm.social import BeliefReader, listening_loglik, surveys

    game = arena.load_game(GAME)
    agent = _agent(game)
    s = _talk_state(game, want_wolf=False, living=6)
    asked = surveys(s)
    assert len(asked) == 5 and all(len(x.targets) == 1 for x in asked)
    reader = BeliefReader(agent, game.spec.full_name)
    beliefs = reader.beliefs(asked)
    for b, x in zip(beliefs, asked):
        prompt, conts = reader.prompt(x)
        assert prompt.endswith("\nwolf:") and conts == [f" p{q}\n" for q in x.seats]
        lp = np.array([r.logprob for r in agent.backend.score([prompt], [conts])[0]])
        expected = lp[x.seats.index(x.targets[0])] - np.log(np.exp(lp).sum())
        assert b.sum() == pytest.approx(1.0)
        assert listening_loglik(b, x) == pytest.approx(expected, abs=1e-6)


def _toy_surveys(game, n_games=4):
    """Every villager surveyed at the end of day 1's discussion in ``n_games`` random games."""
    from arena.plugins.trainers.llm.social import surveys

    out = []
    for seed in range(n_games):
        rng = game_rng(seed, 0)
        s = game.new_initial_state(seed=rng.bits())
        sample_chance(s, rng)
        while not s.is_terminal() and not s.discussion_over():
            obs = Observation(s, s.current_player(), rng, game.spec.full_name)
            s.apply_action("..." if obs.decision == "text" else obs.legal_actions[0])
            sample_chance(s, rng)
        out += [x for x in surveys(s) if x.targets]
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_supervised_listening_raises_the_true_role_likelihood(seed):
    import torch

    torch.set_num_threads(1)
    pytest.importorskip("sklearn")
    from arena.plugins.trainers.llm.lspo_playout import PlayoutLSPO

    game = arena.load_game(GAME.replace(")", ",scripted=wolves)"))
    agent = _agent(game)
    tr = PlayoutLSPO(game, [agent], listening=1.0, listening_steps=2, lr=1e-3, seed=seed)
    asked = _toy_surveys(game)
    assert len(asked) >= 12
    start = tr.social.loglik(asked)
    curve = [start]
    for _ in range(3):
        stats = tr.social.listen(tr.model, asked, tr.reference, [])
        assert stats["social/listening_loglik_before"] == pytest.approx(curve[-1], abs=1e-6)
        curve.append(stats["social/listening_loglik"])
    assert curve[-1] > start + 0.3, curve
    assert tr.social.loglik(asked) == pytest.approx(curve[-1], abs=1e-6)  # the agent reads the trained weights


def test_update_adds_the_speaking_reward_to_the_talk_values(monkeypatch):
    """With the playout values all 0, a talk pair prefers the option with the larger speaking
    reward (recomputed here), and the listening steps run on the iteration's surveys."""
    import torch

    torch.set_num_threads(1)
    pytest.importorskip("sklearn")
    from arena.playing.match import play_games
    from arena.plugins.trainers.llm import lspo_playout, social

    game = arena.load_game("werewolf(players=5,talk=text,scripted=wolves,max_days=2,max_message_chars=16,text=brief)")
    agent = _agent(game)
    tr = lspo_playout.PlayoutLSPO(
        game, [agent], candidates=3, max_decisions=6, playouts=1, margin=0.0, epochs=1, speaking=2.0, listening=1.0
    )
    trajs = [r.trajectory for r in play_games(game, [agent] * 5, num_games=3, seed=0, record=True)]
    monkeypatch.setattr(lspo_playout, "playout_values", lambda g, starts, *a, **k: np.zeros(len(starts)))
    seen = {}
    real = social.speaking_rewards

    def spy(reader, talks):
        seen["talks"], seen["rewards"] = list(talks), real(reader, talks)
        return seen["rewards"]

    monkeypatch.setattr(social, "speaking_rewards", spy)
    captured = {}
    monkeypatch.setattr(tr, "fit", lambda pairs: captured.setdefault("pairs", list(pairs)) and {} or {})
    out = tr.update(trajs)
    talk_pairs = [p for p in captured["pairs"] if p.origin.observation.decision == "text"]
    assert seen["talks"] and out["social/surveys"] > 0 and np.isfinite(out["social/listening_loglik"])
    enc = agent.backend.encode
    expected = []
    for (st, speaker, options), row in zip(seen["talks"], seen["rewards"]):
        ranked = sorted(range(len(options)), key=lambda j: (row[j], options[j]))
        expected.append((options[ranked[-1]], options[ranked[0]]))
    assert len(talk_pairs) == len(expected) > 0
    for pair, (hi, lo) in zip(talk_pairs, expected):
        assert pair.chosen_ids == tuple(enc(agent.prompts.continuation(hi)))
        assert pair.rejected_ids == tuple(enc(agent.prompts.continuation(lo)))


@pytest.mark.parametrize(
    "game_name,params,needle",
    [
        (GAME, {"listening": -1}, "listening must be a number >= 0"),
        (GAME, {"speaking": "loud"}, "speaking must be a number >= 0"),
        (GAME, {"surveys": 0}, "surveys must be an integer >= 1"),
        (GAME, {"speaking": 1.0, "credit": "trajectory"}, "speaking adds to the per-turn values"),
        ("table_talk(game=kuhn_poker)", {"listening": 1.0}, "listening need a hidden-role talk game"),
    ],
)
def test_bad_social_params_are_one_clear_error(game_name, params, needle):
    pytest.importorskip("sklearn")
    from arena.plugins.trainers.llm.lspo_playout import PlayoutLSPO

    game = arena.load_game(game_name)
    with pytest.raises(ArenaError, match=needle):
        PlayoutLSPO(game, [_agent(game)], **params)


def test_structured_talk_is_valued_by_the_same_speaking_reward():
    """``talk=structured``: a speech action is an utterance too (the state asks ``speak``)."""
    from arena.plugins.trainers.llm.social import speaking_rewards, talk_turn

    game = arena.load_game("werewolf(players=7,wolves=1,talk=structured)")
    s = _talk_state_structured(game)
    speaker = s.current_player()
    accuse = next(a for a in s.legal_actions() if s.action_label(speaker, a).startswith("accuse"))
    silent = next(a for a in s.legal_actions() if s.action_label(speaker, a) == "silent")
    assert talk_turn(s, "choice") and not talk_turn(game.new_initial_state(), "choice")
    [[r_accuse, r_silent]] = speaking_rewards(_Reader(), [(s, speaker, [accuse, silent])])
    heard = len(s.believers(speaker))
    sign = -1 if s.roles[speaker] == WOLF else 1
    assert r_accuse == pytest.approx(sign * 0.15 * heard) and r_silent == pytest.approx(0.0)


def _talk_state_structured(game):
    rng = game_rng(0, 0)
    s = game.new_initial_state(seed=rng.bits())
    sample_chance(s, rng)
    while s.decision() != "speak":
        s.apply_action(s.legal_actions()[0])
        sample_chance(s, rng)
    return s
