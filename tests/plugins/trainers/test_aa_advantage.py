"""Advantage Alignment's advantage against values computed by hand (see the numbers in comments)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import arena  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.plugins.agents.neural import NeuralAgent  # noqa: E402
from arena.plugins.trainers.advantage_alignment import (  # noqa: E402
    AdvantageAlignmentTrainer,
    aligned_advantages,
    partner_credit,
    past_weight,
    reward_credit,
)
from support.trajectories import simultaneous_trajectory  # noqa: E402

OWN = [1.0, -1.0, 2.0]
OTHERS = [0.5, 2.0, -1.0]


@pytest.mark.parametrize(
    "kernel,expected",
    [
        # P = gamma * sum_{k<t} gamma^(t-k) A_k with gamma=.5: [0, .25, -.125]
        ("discounted", [1.0, -1.0 + 2 * 0.25 * 2.0, 2.0 + 2 * -0.125 * -1.0]),
        # P = mean of past: [0, 1, 0]
        ("mean", [1.0, 3.0, 2.0]),
        # P = sum of past / (1+t): [0, .5, 0]
        ("time_reg", [1.0, 1.0, 2.0]),
        # P = gamma * sum_{k<=t} gamma^(t-k) A_k: [.5, -.25, .875]
        ("jit", [1.5, -2.0, 0.25]),
    ],
)
def test_kernels_match_hand_computation(kernel, expected):
    got = aligned_advantages(np.array(OWN), np.array(OTHERS), beta=2.0, gamma=0.5, kernel=kernel)
    assert np.allclose(got, expected)


def test_shaping_vanishes_at_t0_and_with_beta_zero():
    rng = np.random.default_rng(0)
    own, others = rng.normal(size=8), rng.normal(size=8)
    for kernel in ("discounted", "mean", "time_reg"):
        assert past_weight(own, kernel, 0.9)[0] == 0.0
        assert np.allclose(aligned_advantages(own, others, 0.0, 0.9, kernel), own)


def _trajectory(game, index, joints):
    """A recorded IPD game with the given joint moves, built step by step like the match runner."""
    return simultaneous_trajectory(game.new_initial_state(), index, joints, ["l0", "l1"])


def test_trainer_advantages_on_a_small_trajectory_by_hand():
    game = arena.load_game("ipd", horizon=2)
    learners = [NeuralAgent(game, seed=i) for i in range(2)]
    for i, a in enumerate(learners):
        a.name = f"l{i}"
    trainer = AdvantageAlignmentTrainer(game, learners, beta=1.0, gamma=0.5, whiten=False, advantage="group")
    C, D = 0, 1
    trajs = [_trajectory(game, 0, [(C, C), (C, D)]), _trajectory(game, 1, [(D, C), (D, D)])]
    games = trainer.segments(trajs)
    trainer.advantages(games)
    (a0, a1), (b0, b1) = games
    # rewards (LOLA payoffs): game A p0 [-1,-3], p1 [-1,0]; game B p0 [0,-2], p1 [-3,-2]
    # return-to-go, gamma .5: A p0 [-2.5,-3], A p1 [-1,0], B p0 [-1,-2], B p1 [-4,-2]
    # leave-one-out baseline over the four seats at each index:
    assert np.allclose(a0.advantages, [-2.5 + 6 / 3, -3 + 4 / 3])
    assert np.allclose(a1.advantages, [-1 + 7.5 / 3, 0 + 7 / 3])
    assert np.allclose(b0.advantages, [-1 + 7.5 / 3, -2 + 5 / 3])
    assert np.allclose(b1.advantages, [-4 + 4.5 / 3, -2 + 5 / 3])
    # A*_1 = A_1 + beta * gamma * (gamma * A_0) * A^opp_1
    assert a0.shaped[0] == pytest.approx(a0.advantages[0])
    assert a0.shaped[1] == pytest.approx(-3 + 4 / 3 + 0.5 * 0.5 * (-0.5) * (7 / 3))
    assert b1.shaped[1] == pytest.approx(-2 + 5 / 3 + 0.25 * (-2.5) * (-2 + 5 / 3))
    # beta = 0 is exactly the naive learner
    naive = AdvantageAlignmentTrainer(game, learners, beta=0.0, gamma=0.5, whiten=False, advantage="group")
    g2 = naive.segments(trajs)
    naive.advantages(g2)
    assert all(np.allclose(s.shaped, s.advantages) for segs in g2 for s in segs)


def test_partner_credit_counts_only_the_co_players_surprises():
    """``past=partner``: the memory sums r_k minus the mean reward of the same learner's other
    decisions with the same index, observation and own move — what the co-player's move added."""
    game = arena.load_game("ipd", horizon=2)
    learners = [NeuralAgent(game, seed=i) for i in range(2)]
    for i, a in enumerate(learners):
        a.name = f"l{i}"
    C, D = 0, 1
    trajs = [
        _trajectory(game, 0, [(C, C), (C, D)]),
        _trajectory(game, 1, [(C, C), (C, C)]),
        _trajectory(game, 2, [(D, C), (D, D)]),
    ]
    trainer = AdvantageAlignmentTrainer(
        game, learners, beta=1.0, gamma=0.5, whiten=False, advantage="group", past="partner"
    )
    games = trainer.segments(trajs)
    credit = partner_credit([s for segs in games for s in segs])
    (g0a, g0b), (g1a, g1b), (g2a, g2b) = games
    # l0: round 0 both games with C at the start got -1 (0 credit); round 1 after CC with C: -3 vs -1
    assert np.allclose(credit[id(g0a)], [0, -2]) and np.allclose(credit[id(g1a)], [0, 2])
    assert np.allclose(credit[id(g2a)], [0, 0])  # its own defections: nothing to compare with, no credit
    # l1: cooperated at the start in all three games, got -1, -1 and -3 (l0 defected in game 2)
    assert np.allclose(credit[id(g0b)], [1, 0]) and np.allclose(credit[id(g1b)], [1, 0])
    assert np.allclose(credit[id(g2b)], [-2, 0])
    trainer.advantages(games)
    assert np.allclose(g0a.shaped, g0a.advantages)  # l0's co-player never surprised it before round 1
    assert g2b.shaped[1] == pytest.approx(g2b.advantages[1] + 0.5 * 0.5 * (-2) * g2a.advantages[1])
    with pytest.raises(ArenaError, match="past must be one of"):
        AdvantageAlignmentTrainer(game, learners, past="nope")


def test_partner_credit_pools_every_index_with_partner_cells_any():
    """``partner_cells=any`` compares a decision with the learner's others that share its
    observation and own move at any index (one game: CC seen at rounds 1 and 2)."""
    game = arena.load_game("ipd", horizon=3)
    learners = [NeuralAgent(game, seed=i) for i in range(2)]
    for i, a in enumerate(learners):
        a.name = f"l{i}"
    C, D = 0, 1
    trainer = AdvantageAlignmentTrainer(game, learners, advantage="group", past="partner", partner_cells="any")
    ((l0, l1),) = trainer.segments([_trajectory(game, 0, [(C, C), (C, C), (C, D)])])
    assert np.allclose(partner_credit([l0, l1])[id(l0)], [0, 0, 0])  # by round: each decision alone
    # pooled: l0 cooperated after CC at rounds 1 and 2 and got -1, then -3 (l1 defected)
    assert np.allclose(partner_credit([l0, l1], by_round=False)[id(l0)], [0, 2, -2])
    with pytest.raises(ArenaError, match="partner_cells must be one of"):
        AdvantageAlignmentTrainer(game, learners, partner_cells="nope")


def test_reward_memory_sums_strictly_past_one_step_advantages():
    """``past=reward``: P_t sums r_k minus the leave-one-out mean reward at index k, k < t — the
    learner's fortune before t, blind to its move at t and to the rest of the game."""
    game = arena.load_game("ipd", horizon=2)
    learners = [NeuralAgent(game, seed=i) for i in range(2)]
    for i, a in enumerate(learners):
        a.name = f"l{i}"
    C, D = 0, 1
    trajs = [_trajectory(game, 0, [(C, C), (C, D)]), _trajectory(game, 1, [(D, C), (D, D)])]
    trainer = AdvantageAlignmentTrainer(
        game, learners, beta=1.0, gamma=0.5, whiten=False, advantage="group", past="reward"
    )
    games = trainer.segments(trajs)
    (a0, a1), (b0, b1) = games
    # rewards at index 0: A p0 -1, A p1 -1, B p0 0, B p1 -3; index 1: -3, 0, -2, -2
    credit = reward_credit([a0, a1, b0, b1])
    assert np.allclose(credit[id(a0)], [-1 + 4 / 3, -3 + 4 / 3])
    assert np.allclose(credit[id(b0)], [0 + 5 / 3, -2 + 5 / 3])
    assert np.allclose(credit[id(b1)], [-3 + 2 / 3, -2 + 5 / 3])
    trainer.advantages(games)
    # A*_1 = A_1 + beta * gamma * (gamma * c_0) * A^opp_1, A from returns-to-go as before
    assert a0.shaped[0] == pytest.approx(a0.advantages[0])
    assert a0.shaped[1] == pytest.approx(-3 + 4 / 3 + 0.25 * (1 / 3) * (7 / 3))
    assert b1.shaped[1] == pytest.approx(-2 + 5 / 3 + 0.25 * (-7 / 3) * (-2 + 5 / 3))


def test_own_slip_punished_is_no_grudge_with_partner_credit():
    """The IPD failure of the paper's memory, reduced to one batch: l1 plays tit-for-tat, l0
    sometimes defects in round 1 and is punished in round 2; then it either keeps defecting
    (the pair locks into mutual defection) or makes up. With ``past=advantage`` the AA term at
    l0's round-2 decision is a large push on whatever l0 played, more on the locked-in
    defection than on making up (own and co-player advantages both negative: "retaliate" —
    against the punishment it caused). With ``past=partner`` l1's moves were its usual ones in every situation, so l0 has no credit to
    remember and the term is exactly 0; l1, betrayed in round 1, does remember it."""
    game = arena.load_game("ipd", horizon=6)
    learners = [NeuralAgent(game, seed=i) for i in range(2)]
    for i, a in enumerate(learners):
        a.name = f"l{i}"
    C, D = 0, 1
    kinds = {
        "cooperate": [(C, C)] * 6,
        "locked": [(C, C), (D, C)] + [(D, D)] * 4,
        "contrite": [(C, C), (D, C), (C, D)] + [(C, C)] * 3,
    }
    trajs = [_trajectory(game, 3 * i + j, moves) for i in range(8) for j, moves in enumerate(kinds.values())]
    term = {}
    for past in ("advantage", "partner"):
        trainer = AdvantageAlignmentTrainer(game, learners, beta=1.0, advantage="group", past=past)
        games = trainer.segments(trajs)
        trainer.advantages(games)
        l0 = {kind: [g[0] for g in games[j::3]] for j, kind in enumerate(kinds)}
        term[past] = {k: float(np.mean([s.shaped[2] - s.advantages[2] for s in v])) for k, v in l0.items()}
        if past == "partner":
            betrayed = [g[1] for g in games[1::3]]  # l1 cooperated in round 1 and got the sucker's payoff
            assert all(s.shaped[2] != s.advantages[2] for s in betrayed)
    # (measured: +1.65 on the locked-in D, +1.45 on making up with C — a large push whatever was
    # played after the own slip, larger for defecting; the naive advantages are of order 1)
    assert term["advantage"]["locked"] > term["advantage"]["contrite"] > 0.5
    assert term["partner"] == {"cooperate": 0.0, "locked": 0.0, "contrite": 0.0}


def test_n_player_opponent_advantages_are_summed():
    game = arena.load_game("public_goods", players=3, horizon=2)
    learners = [NeuralAgent(game, seed=0)]
    learners[0].name = "me"
    trainer = AdvantageAlignmentTrainer(game, learners, beta=1.0, gamma=1.0, whiten=False, advantage="group")
    results = arena.play(game, learners * 3, games=4, seed=0, record=True)
    games = trainer.segments([r.trajectory for r in results])
    trainer.advantages(games)
    segs = games[0]
    s = segs[0]
    others = segs[1].advantages + segs[2].advantages
    assert np.allclose(s.shaped, aligned_advantages(s.advantages, others, 1.0, 1.0, "discounted"))


def test_bad_parameters_are_one_line_errors():
    game = arena.load_game("ipd")
    agent = NeuralAgent(game)
    with pytest.raises(ArenaError, match="kernel must be one of"):
        AdvantageAlignmentTrainer(game, [agent], kernel="nope")
    with pytest.raises(ArenaError, match="has no parameter 'betta'"):
        AdvantageAlignmentTrainer(game, [agent], betta=1)


def test_league_use_trains_only_the_learner_against_a_snapshot():
    """A past snapshot in the other seat is read, not trained; its advantage comes from the
    learner's opponent critic, which is fitted on the snapshot's rewards."""
    game = arena.load_game("ipd", horizon=4)
    learner = NeuralAgent(game, seed=0)
    learner.name = "learner"
    snap = learner.snapshot("learner@0")
    from arena.registry import get_registry

    entry = get_registry().get("trainer", "advantage_alignment")
    trainer = entry.factory(game, [learner], beta=1.0)
    before_snap = [p.detach().clone() for p in snap.net.parameters()]
    before_opp = [p.detach().clone() for p in learner.net.opp_critic.parameters()]
    results = arena.play(game, [learner, snap], games=32, seed=0, rotate_seats=True, record=True)
    games = trainer.segments([r.trajectory for r in results])
    assert all({s.owner for s in segs} == {0, None} and all(s.critic == 0 for s in segs) for segs in games)
    metrics = trainer.update([r.trajectory for r in results])
    assert "learner/pg_loss" in metrics and not any(k.startswith("learner@0") for k in metrics)
    assert all(torch.equal(a, b) for a, b in zip(before_snap, snap.net.parameters()))
    assert not all(torch.equal(a, b) for a, b in zip(before_opp, learner.net.opp_critic.parameters()))


def _coin_trajectory(index, plan):
    """A 2-step Coin Game with red (l0) at (0,0), blue (l1) at (0,2) and red's coin at (0,1);
    ``plan`` is ((joint move, coin placed before the move as (cell, colour) or None), ...)."""
    game = arena.load_game("coin_game(memory=2,horizon=2)")
    state = game.new_initial_state(seed=0)
    state.pos, state.coin, state.coin_colour = [(0, 0), (0, 2)], (0, 1), 0

    def place_coin(state, t):
        if plan[t][1]:
            state.coin, state.coin_colour = plan[t][1]

    return simultaneous_trajectory(state, index, [joint for joint, _ in plan], ["l0", "l1"], place_coin)


def test_reward_memory_pushes_retaliation_after_a_grab_and_restraint_after_good_fortune():
    """The behaviour ``past=reward`` is for, on one batch of Coin Games: red's AA term at its
    second move favours taking blue's coin after blue took red's (retaliate) and favours leaving
    it after red took its own (cooperate) — both signs at once."""
    game = arena.load_game("coin_game(memory=2,horizon=2)")
    learners = [NeuralAgent(game, seed=i) for i in range(2)]
    for i, a in enumerate(learners):
        a.name = f"l{i}"
    UP, DOWN, LEFT, RIGHT = 0, 1, 2, 3
    blues = ((1, 1), 1)
    plans = {  # step 0: blue takes red's coin, or red takes its own; step 1: red takes blue's coin or not
        ("robbed", "take"): [((DOWN, LEFT), None), ((RIGHT, UP), blues)],
        ("robbed", "leave"): [((DOWN, LEFT), None), ((DOWN, UP), blues)],
        ("lucky", "take"): [((RIGHT, DOWN), None), ((DOWN, RIGHT), blues)],
        ("lucky", "leave"): [((RIGHT, DOWN), None), ((UP, RIGHT), blues)],
    }
    trajs = [_coin_trajectory(4 * i + j, plan) for i in range(4) for j, plan in enumerate(plans.values())]
    trainer = AdvantageAlignmentTrainer(game, learners, beta=1.0, advantage="group", past="reward")
    games = trainer.segments(trajs)
    assert [list(g[0].rewards) for g in games[:4]] == [[-2, 1], [-2, 0], [1, 1], [1, 0]]
    trainer.advantages(games)
    term = {
        kind: float(np.mean([g[0].shaped[1] - g[0].advantages[1] for g in games[j::4]])) for j, kind in enumerate(plans)
    }
    assert term["robbed", "take"] > 0 > term["robbed", "leave"]
    assert term["lucky", "leave"] > 0 > term["lucky", "take"]
