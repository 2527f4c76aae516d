"""``arena train``'s ``past_opponents``: one learner plays its own latest snapshots for a stated
share of its games and itself otherwise (the league's draws, counted), Advantage Alignment shapes
the learner's advantages with a snapshot co-player's advantages (by hand), bad values are one
clear error, and a run stopped part-way and resumed plays the games an uninterrupted run plays."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import arena  # noqa: E402
from arena.config import load_config  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.league import validate  # noqa: E402
from arena.league.config import LeagueConfig, MemberConfig, fingerprint_of  # noqa: E402
from arena.league.matchmaking import PayoffTable  # noqa: E402
from arena.league.population import Member, Population  # noqa: E402
from arena.league.workspace import LeagueState  # noqa: E402
from arena.plugins.agents.neural import NeuralAgent  # noqa: E402
from arena.plugins.trainers.advantage_alignment import AdvantageAlignmentTrainer  # noqa: E402
from arena.plugins.trainers.ppo import PPOTrainer  # noqa: E402
from arena.plugins.trainers.train_command import TrainConfig, league_config, train  # noqa: E402
from support.league import rows  # noqa: E402
from support.trajectories import simultaneous_trajectory  # noqa: E402


def _train_config(**keys) -> TrainConfig:
    base = {"game": "ipd", "learners": 1, "games_per_iter": 20_000, "eval_every": 10}
    return load_config(TrainConfig, None, base={**base, **keys})


def _population(cfg: LeagueConfig, snapshots: int) -> tuple[Population, Member]:
    """The league's opponent draws for ``cfg``'s learner with ``snapshots`` of it in the pool."""
    pop = Population.__new__(Population)
    pop.cfg, pop.state, pop.payoff = cfg, LeagueState(), PayoffTable()
    pop.state.snapshots = [
        {"label": f"learner_0@{5 * (i + 1)}", "member": "learner_0", "step": 5 * (i + 1), "path": "-"}
        for i in range(snapshots)
    ]
    pop.members = {m.label: Member(m, m.agent, None) for m in cfg.population}
    return pop, pop.members["learner_0"]


def test_the_learner_meets_its_latest_snapshots_at_the_stated_share():
    cfg = league_config(_train_config(past_opponents={"share": 0.3, "keep": 4, "every": 5}))
    validate(cfg)
    (m,) = cfg.population
    assert (m.matchmaking, m.opponents, m.self_play, m.snapshot_window, m.snapshot_every) == (
        "uniform",
        ["learner_0"],
        pytest.approx(0.7),
        4,
        5,
    )
    pop, me = _population(cfg, 10)
    picks = pop.choose(me, np.random.default_rng(0))
    n, se = len(picks), np.sqrt(0.3 * 0.7 / len(picks))
    past = [p for p in picks if p != "learner_0"]
    assert abs(len(past) / n - 0.3) < 4 * se  # 4 standard errors
    assert set(past) == {"learner_0@35", "learner_0@40", "learner_0@45", "learner_0@50"}  # the latest 4
    for label in set(past):  # uniform over them
        assert abs(past.count(label) / len(past) - 0.25) < 4 * np.sqrt(0.25 * 0.75 / len(past))
    no_snapshot, me = _population(cfg, 0)
    assert set(no_snapshot.choose(me, np.random.default_rng(0))) == {"learner_0"}  # plays itself until one exists


def test_without_past_opponents_the_learner_is_as_before():
    (m,) = league_config(_train_config()).population
    assert (m.matchmaking, m.self_play, m.snapshot_window, m.snapshot_every) == ("self_play", 0.0, 0, 10)
    a = LeagueConfig(game="ipd", population=[MemberConfig(label="r", agent="random")], out="x")
    b = LeagueConfig(game="ipd", population=[MemberConfig(label="r", agent="random", snapshot_window=3)], out="x")
    assert fingerprint_of(a) != fingerprint_of(b)


@pytest.mark.parametrize(
    "keys, message",
    [
        ({"past_opponents": {"share": 1.5}}, r"past_opponents.share is a share of games in \[0, 1\], got 1.5"),
        ({"past_opponents": {"share": 0.5, "keep": 0}}, "past_opponents.keep must be at least 1"),
        ({"past_opponents": {"share": 0.5, "every": -1}}, "past_opponents.every at least 0"),
        ({"past_opponents": {"share": 0.5}, "learners": 2}, "past_opponents trains one learner.*learners: 2"),
        ({"past_opponents": {"share": 0.5}, "opponents": ["random"]}, "past_opponents trains one learner"),
    ],
)
def test_bad_past_opponents_are_one_clear_error(keys, message):
    with pytest.raises(ArenaError, match=message):
        league_config(_train_config(**keys))


def test_a_negative_snapshot_window_is_a_config_error():
    learner = {"label": "l", "agent": "neural", "role": "learner", "trainer": {"name": "ppo"}, "snapshot_window": -1}
    cfg = load_config(LeagueConfig, None, base={"game": "ipd", "out": "x", "population": [learner]})
    with pytest.raises(ArenaError, match="'l': snapshot_window must be at least 0"):
        validate(cfg)


def _trajectory(game, index, joints):
    """A recorded IPD game of the learner (seat 0) and its snapshot (seat 1) with these joint moves."""
    return simultaneous_trajectory(game.new_initial_state(), index, joints, ["l0", "l0@5"])


def test_aa_shapes_the_learner_with_a_snapshot_co_players_advantages():
    """The IPD games of ``test_trainer_advantages_on_a_small_trajectory_by_hand`` with a past
    snapshot in seat 1: its advantages are computed (scored by the learner's opponent critic) and
    enter the learner's AA term exactly as a live co-player's would; the snapshot is not trained."""
    game = arena.load_game("ipd", horizon=2)
    learner = NeuralAgent(game, seed=0)
    learner.name = "l0"
    C, D = 0, 1
    trajs = [_trajectory(game, 0, [(C, C), (C, D)]), _trajectory(game, 1, [(D, C), (D, D)])]
    trainer = AdvantageAlignmentTrainer(game, [learner], beta=1.0, gamma=0.5, whiten=False, advantage="group")
    games = trainer.segments(trajs)
    trainer.advantages(games)
    (a0, a1), (b0, b1) = games
    assert (a0.owner, a1.owner, a1.critic) == (0, None, 0)
    assert np.allclose(a1.advantages, [-1 + 7.5 / 3, 0 + 7 / 3])  # the snapshot's own (group) advantages
    # A*_1 = A_1 + beta * gamma * (gamma * A_0) * A^snapshot_1
    assert a0.shaped[1] == pytest.approx(-3 + 4 / 3 + 0.5 * 0.5 * (-0.5) * (7 / 3))
    assert b0.shaped[1] == pytest.approx(-2 + 5 / 3 + 0.25 * 1.5 * (-2 + 5 / 3))
    assert np.array_equal(a1.shaped, a1.advantages) and np.array_equal(b1.shaped, b1.advantages)
    with torch.no_grad():
        opp = learner.opp_value(torch.as_tensor(a1.obs)).numpy()
        own = learner.value(torch.as_tensor(a1.obs)).numpy()
    assert np.allclose(a1.values, opp) and not np.allclose(a1.values, own)
    naive = PPOTrainer(game, [learner], gamma=0.5, whiten=False, advantage="group")
    g2 = naive.segments(trajs)
    naive.advantages(g2)
    assert np.allclose(g2[0][0].advantages, a0.advantages) and np.array_equal(g2[0][0].shaped, g2[0][0].advantages)


def _run(tmp_path, name: str, iterations: int) -> dict:
    cfg = load_config(
        TrainConfig,
        None,
        base={
            "game": "ipd",
            "trainer": "advantage_alignment",
            "params": {"beta": 1.0, "epochs": 1},
            "agent": {"name": "neural", "hidden": 8},
            "learners": 1,
            "past_opponents": {"share": 0.5, "keep": 2, "every": 1},
            "iterations": iterations,
            "games_per_iter": 24,
            "eval_every": 3,
            "eval_games": 4,
            "eval_opponents": ["always_defect"],
            "quiet": True,
            "out": str(tmp_path / name),
        },
    )
    return train(cfg)


def test_a_run_stopped_part_way_resumes_into_the_same_games(tmp_path):
    torch.set_num_threads(1)
    _run(tmp_path, "clean", 5)
    _run(tmp_path, "stopped", 2)
    _run(tmp_path, "stopped", 5)  # the same command extended: resumes from step 2's checkpoint
    a, b = rows(tmp_path / "clean" / "train" / "arena.sqlite"), rows(tmp_path / "stopped" / "train" / "arena.sqlite")
    assert a == b and len(a) == 5 * 24
    seats = [(json.loads(s), rnd) for s, _, rnd in a.values()]  # the live learner plays as learner_0@train
    past = [(s, rnd) for s, rnd in seats if any(x[-1].isdigit() for x in s)]
    assert not [x for x in past if x[1] == 1]  # step 1: no snapshot yet, self-play only
    assert 0.25 < len(past) / len([x for x in seats if x[1] > 1]) < 0.75  # about half from step 2 on
    for s, rnd in past:  # the learner and one of its latest 2 snapshots (taken every step, before step rnd)
        assert sorted(s) == sorted(["learner_0@train", *(x for x in s if x[-1].isdigit())])
        assert {x for x in s if x[-1].isdigit()} <= {f"learner_0@{rnd - 2}", f"learner_0@{rnd - 1}"}
