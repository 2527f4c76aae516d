"""Meta-solver matchmaking (nash, ce, cce, rae): the meta-game from the payoff table's mean returns,
the opponent distribution against hand-solved games, the league's draws from it, bad input as one
line, and a league run from the CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import yaml

from arena.cli import main
from arena.errors import ArenaError
from arena.evaluation.store import RunStore
from arena.league.config import LeagueConfig, MemberConfig, MetaSolverConfig, fingerprint_of
from arena.league.matchmaking import PayoffTable, meta_distribution, meta_game
from arena.league.population import Member, Population
from arena.league.workspace import LeagueState


def chicken() -> PayoffTable:
    """The learner 'me' plays Chicken's C, the fixed member 'D' plays D: (D,D)=0, (D,C)=(7,2), (C,C)=6."""
    t = PayoffTable(0.99)
    t.record("me", "me", 6, 6)
    t.record("me", "D", 2, 7)
    t.record("D", "D", 0, 0)
    return t


def test_meta_game_is_the_mean_returns_and_unplayed_pairs_read_the_mean():
    U0, U1 = meta_game(["me", "D"], chicken())
    assert np.array_equal(U0, [[6, 2], [7, 0]]) and np.array_equal(U1, U0.T)
    t = PayoffTable(0.5)
    t.update("a", "b", 1.0, -1.0)
    t.update("a", "b", -1.0, 1.0)  # decayed: a's mean is (0.5 * 1 - 1) / 1.5
    assert t.mean_return("a", "b") == pytest.approx(-1 / 3) and t.mean_return("b", "a") == pytest.approx(1 / 3)
    assert t.win_rate("a", "b") == pytest.approx(0.5 / 1.5)  # the PFSP counts are kept as before
    t.update("a", "a", 1.0, -1.0)  # a game against itself: once, at its seats' mean
    t.update("a", "a", -1.0, 1.0)
    assert t.mean_return("a", "a") == 0.0
    U0, _ = meta_game(["a", "b", "c"], t)
    assert U0[0, 2] == U0[2, 2] == pytest.approx(0.0)  # never played: the mean of the known (zero-sum) entries


@pytest.mark.parametrize(
    "solver, criterion, expected",
    [
        # max-welfare CE of Chicken {(C,C): 1/2, (D,C): 1/4, (C,D): 1/4}: given C, C w.p. 2/3
        ("ce", "max_welfare", [2 / 3, 1 / 3]),
        # CCE: the column marginal of the same joint
        ("cce", "max_welfare", [3 / 4, 1 / 4]),
        # max-entropy CE {DD .1483, DC .2967, CD .2967, CC .2583}: given C, .2583 / .5550
        ("ce", "max_entropy", [0.4654, 0.5346]),
        ("cce", "max_entropy", [0.5550, 0.4450]),
    ],
)
def test_correlated_solvers_give_the_learners_conditional(solver, criterion, expected):
    p = meta_distribution(meta_game(["me", "D"], chicken()), 0, solver, criterion)
    assert np.allclose(p, expected, atol=2e-3), p


def test_nash_of_a_weighted_rock_paper_scissors_and_rae_of_a_stag_hunt():
    t = PayoffTable()
    t.record("me", "P", -1, 1)  # me plays rock: [[0,-1,2],[1,0,-1],[-2,1,0]], Nash (1, 2, 1) / 4
    t.record("me", "S", 2, -2)
    t.record("P", "S", -1, 1)
    assert np.allclose(meta_distribution(meta_game(["me", "P", "S"], t), 0, "nash"), [0.25, 0.5, 0.25], atol=1e-6)
    s = PayoffTable()
    s.record("me", "me", 4, 4)  # me hunts stag, 'H' hare: against uniform beliefs hare has mean 3, variance 0
    s.record("me", "H", 0, 3)
    s.record("H", "H", 3, 3)
    p = meta_distribution(meta_game(["me", "H"], s), 0, "rae", risk=0.1, iterations=300)
    assert p[1] > 0.99  # the risk-dominant (H, H)


def test_bad_meta_solver_input_is_one_clear_error():
    chick = meta_game(["me", "D"], chicken())
    with pytest.raises(ArenaError, match="matchmaking 'nash': the meta-game is not zero-sum.*use ce, cce or rae"):
        meta_distribution(chick, 0, "nash")
    with pytest.raises(ArenaError, match="matchmaking solver must be one of nash, ce, cce, rae, not 'mgce'"):
        meta_distribution(chick, 0, "mgce")
    with pytest.raises(ArenaError, match="criterion must be one of max_entropy, max_welfare"):
        meta_distribution(chick, 0, "ce", "gini")
    with pytest.raises(ArenaError, match="needs a symmetric two-player meta-game"):
        meta_distribution([chick[0], chick[0]], 0, "cce")


def _population(matchmaking: str, table: PayoffTable, games: int) -> tuple[Population, Member]:
    """A population of a learner 'me' and a fixed 'D', as the league's opponent draws see it."""
    learner = MemberConfig(label="me", agent="neural", role="learner", matchmaking=matchmaking, games_per_step=games)
    cfg = LeagueConfig(game="kuhn_poker", population=[learner, MemberConfig(label="D", agent="random")], out="x")
    pop = Population.__new__(Population)
    pop.cfg, pop.state, pop.payoff = cfg, LeagueState(), table
    pop.members = {m.label: Member(m, m.agent, None) for m in cfg.population}
    return pop, pop.members["me"]


@pytest.mark.parametrize("solver, expected", [("ce", [2 / 3, 1 / 3]), ("cce", [3 / 4, 1 / 4])])
def test_the_league_draws_opponents_from_the_solvers_distribution(solver, expected):
    pop, me = _population(solver, chicken(), 20_000)
    pop.cfg.population[0].meta = MetaSolverConfig(criterion="max_welfare")
    picks = pop.choose(me, np.random.default_rng(0))
    freq = np.array([picks.count("me"), picks.count("D")]) / len(picks)
    assert np.allclose(freq, expected, atol=4 * np.sqrt(0.25 / 20_000)), freq  # 4 standard errors


def test_meta_settings_leave_other_runs_fingerprints_alone():
    a = LeagueConfig(game="kuhn_poker", population=[MemberConfig(label="r", agent="random")], out="x")
    b = LeagueConfig(game="kuhn_poker", population=[MemberConfig(label="r", agent="random")], out="x")
    b.population[0].meta.risk = 0.5  # not a meta-solver member: the setting decides nothing
    assert fingerprint_of(a) == fingerprint_of(b)
    a.population[0].matchmaking = b.population[0].matchmaking = "rae"
    assert fingerprint_of(a) != fingerprint_of(b)


LEARNER = {
    "label": "ppo",
    "agent": "neural:hidden=8",
    "role": "learner",
    "trainer": {"name": "ppo"},
    "games_per_step": 8,
}


def _write(tmp_path, population, **extra):
    cfg = {"game": "kuhn_poker", "steps": 3, "out": str(tmp_path / "run"), "population": population, **extra}
    path = tmp_path / "league.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize(
    "learner, message",
    [
        (dict(LEARNER, matchmaking="mgce"), "matchmaking must be one of self_play, uniform, pfsp, main"),
        (dict(LEARNER, matchmaking="ce", meta={"criterion": "gini"}), "meta.criterion must be one of max_entropy"),
        (dict(LEARNER, matchmaking="rae", meta={"risk": -1}), "meta.risk must be at least 0"),
    ],
)
def test_bad_meta_matchmaking_config_is_one_line(tmp_path, capsys, learner, message):
    path = _write(tmp_path, [{"label": "r", "agent": "random"}, learner])
    assert main(["league", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err, err
    assert not (tmp_path / "run").exists()


def test_cce_league_from_the_cli(tmp_path):
    learner = dict(LEARNER, matchmaking="cce", games_per_step=200, snapshot_every=1)
    population = [{"label": "random", "agent": "random"}, {"label": "cfr", "agent": "cfr:iterations=30"}, learner]
    path = _write(tmp_path, population, evaluation={"every": 1, "games": 4, "ratings": {"bootstrap": 0}})
    out = subprocess.run(
        [sys.executable, "-m", "arena.cli", "league", str(path), "--json"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout)["train_games"] == 3 * 200
    run = tmp_path / "run"
    before = json.loads((run / "checkpoints" / "step-000002" / "state.json").read_text())
    assert "ppo@1|cfr" in before["payoff_returns"]  # the gauntlet's games between members are in the meta-game
    # step 3 drew its opponents from the CCE marginal of the meta-game as committed after step 2
    table = PayoffTable(0.99)
    table.returns = before["payoff_returns"]
    labels = ["ppo", "random", "cfr", "ppo@1", "ppo@2"]
    p = meta_distribution(meta_game(labels, table), 0, "cce")
    opponents = [r.pairing.rsplit("|", 1)[-1] for r in RunStore.open_existing(run / "train").iter_matches()]
    step3 = [
        r.pairing.rsplit("|", 1)[-1]
        for r in RunStore.open_existing(run / "train").iter_matches()
        if r.pairing.startswith("train|3|")
    ]
    assert len(step3) == 200 and set(opponents) >= {"random", "cfr"}
    drawn = np.array([step3.count(x) for x in labels]) / 200
    assert np.abs(drawn - p).max() < 4 * np.sqrt(0.25 / 200), (drawn, p)


def test_meta_matchmaking_in_a_three_player_game_is_one_line(tmp_path, capsys):
    path = _write(tmp_path, [{"label": "r", "agent": "random"}, dict(LEARNER, matchmaking="cce")])
    assert main(["league", str(path), "game=kuhn_poker(players=3)"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "matchmaking 'cce' solves a two-player meta-game" in err, err
