"""`arena match` reports built while games finish: the streamed document and the incremental
summary say what the whole list of results says."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

import arena
from arena.agent import Agent
from arena.playing.match import Forfeit, GameResult, play_games
from arena.playing.match_report import MatchSummary, ReportWriter, summarize


class Illegal(Agent):
    name = "illegal"

    def act(self, obs):
        return 99


def reference_summary(results, names):
    """The summary written out long-hand: team scores, wins/draws/losses, forfeits."""
    out = {n: {"games": 0, "wins": 0, "draws": 0, "losses": 0, "forfeits": 0, "total": 0.0} for n in names}
    for r in results:
        teams = r.info.get("teams") or [[s] for s in range(len(r.seats))]
        score = [sum(r.returns[s] for s in t) / len(t) for t in teams]
        top = [i for i, x in enumerate(score) if x == max(score)]
        for i, team in enumerate(teams):
            for seat in team:
                s = out[r.seats[seat]]
                s["games"] += 1
                s["total"] += r.returns[seat]
                s["wins" if i in top and len(top) == 1 else "draws" if i in top else "losses"] += 1
                s["forfeits"] += bool(r.forfeit and r.forfeit.player == seat)
    return {
        n: {
            **{k: v for k, v in s.items() if k != "total"},
            "mean_return": s["total"] / max(1, s["games"]),
            **{k: 0 for k in ("invalid_attempts", "retries", "substitutions")},  # no harness in these games
        }
        for n, s in out.items()
    }


def test_batches_stream_the_same_results_in_game_order():
    game = arena.load_game("leduc_poker")
    agents = [arena.load_agent("random", game, label="a"), arena.load_agent("random", game, label="b")]
    whole = play_games(game, agents, num_games=300, seed=5, rotate_seats=True, batch_size=64)
    streamed: list[GameResult] = []
    assert (
        play_games(
            game,
            agents,
            num_games=300,
            seed=5,
            rotate_seats=True,
            batch_size=64,
            on_batch=streamed.extend,
            collect=False,
        )
        == []
    )
    assert [(r.index, r.seats, r.returns) for r in streamed] == [(r.index, r.seats, r.returns) for r in whole]
    assert summarize(streamed, ["a", "b"]) == reference_summary(whole, ["a", "b"])


def test_summary_with_teams_ties_and_forfeits():
    results = [
        GameResult(0, 0, ["a", "b", "c", "d"], [1.0, -1.0, 1.0, -1.0], 3, 0.0, info={"teams": [[0, 2], [1, 3]]}),
        GameResult(1, 0, ["a", "b", "c", "d"], [0.5, 0.5, 0.5, 0.5], 3, 0.0, info={"teams": [[0, 2], [1, 3]]}),
        GameResult(2, 0, ["b", "a", "d", "c"], [2.0, 0.0, 2.0, -4.0], 1, 0.0),
        GameResult(3, 0, ["b", "a", "d", "c"], [-3.0, 1.0, 1.0, 1.0], 1, 0.0, forfeit=Forfeit(0, "b", "illegal")),
    ]
    assert summarize(results, ["a", "b", "c", "d"]) == reference_summary(results, ["a", "b", "c", "d"])
    summary = MatchSummary(["a", "b", "c", "d"])
    for r in results:
        summary.add(r)
    assert [r.index for r in summary.forfeits] == [3]


@pytest.mark.parametrize("returns", [[1.0, -1.0], [0.1 + 0.2, -0.30000000000000004], [1e300 * 10, float("nan")]])
def test_records_are_what_json_dumps_would_write(returns):
    stream = io.StringIO()
    writer = ReportWriter({"game": "g", "games": 2, "seed": 1}, stream)
    ok = GameResult(0, 1, ["x", "y"], returns, 2, 0.0)
    bad = GameResult(1, 1, ["y", "x"], [-2.0, 2.0], 1, 0.0, forfeit=Forfeit(0, "y", "illegal action 99"))
    writer.add([ok])
    writer.add([bad])
    writer.close({"x": {"games": 2}})
    doc = json.loads(stream.getvalue())
    expected = [
        {"index": r.index, "seats": r.seats, "returns": r.returns, "forfeit": r.forfeit.__dict__ if r.forfeit else None}
        for r in (ok, bad)
    ]
    assert json.dumps(doc["results"]) == json.dumps(expected)
    assert doc["agents"] == {"x": {"games": 2}} and doc["games"] == 2
    assert len(stream.getvalue().splitlines()) >= 3  # one line per game


class _IllegalPlugin:
    @arena.hookimpl
    def arena_agents(self):
        from arena.agent import AgentEntry

        return [AgentEntry("illegal_for_test", lambda game: Illegal())]


def test_cli_streams_forfeits_and_writes_the_same_file(tmp_path, capsys, fresh_registry):
    from arena.cli import main
    from arena.registry import get_registry

    get_registry().register(_IllegalPlugin(), "illegal_for_test_plugin")
    out = tmp_path / "m.json"
    assert (
        main(
            [
                "match",
                "--game",
                "kuhn_poker",
                "--agents",
                "illegal_for_test",
                "random",
                "--games",
                "7",
                "--json",
                f"out={out}",
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert len(printed["results"]) == 7 and all(r["forfeit"]["agent"] == "illegal_for_test" for r in printed["results"])
    assert printed["agents"]["illegal_for_test"]["forfeits"] == 7 and printed["agents"]["random"]["wins"] == 7
    assert not list(tmp_path.glob(".m.json.*"))  # no temp file left behind


def test_one_seat_games_report_a_mean_return_and_no_outcomes():
    """Alone at the table there is no one to beat: no wins, draws or losses, the mean return with
    its 95% interval instead."""
    results = [GameResult(i, 0, ["solo"], [x], 2, 0.0) for i, x in enumerate([1.0, -1.0, -1.0, 0.0, 1.0, -1.0])]
    summary = MatchSummary(["solo"])
    for r in results:
        summary.add(r)
    s = summary.as_dict()["solo"]
    assert summary.one_seat and not {"wins", "draws", "losses"} & set(s)
    assert s["games"] == 6 and s["mean_return"] == pytest.approx(-1 / 6)
    sd = float(np.std([r.returns[0] for r in results], ddof=1))
    assert s["return_ci95"] == pytest.approx(1.96 * sd / 6**0.5)
    two = MatchSummary(["a", "b"])
    two.add(GameResult(0, 0, ["a", "b"], [1.0, -1.0], 2, 0.0))
    assert not two.one_seat and two.as_dict()["a"]["wins"] == 1


def test_blackjack_match_agrees_with_a_plain_openspiel_loop(capsys):
    """`arena match` on OpenSpiel's blackjack (one seat against the dealer) reports no wins, and a
    random agent's mean return agrees with a plain pyspiel random-play loop: the reference mean
    (10,000 games) lies inside the match's 95% interval."""
    import pyspiel

    from arena.cli import main

    assert main(["match", "--game", "openspiel:blackjack", "--agents", "random", "--games", "4000", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)["agents"]["random"]
    assert "wins" not in s and s["games"] == 4000 and s["forfeits"] == 0
    game, rng, total, n = pyspiel.load_game("blackjack"), np.random.default_rng(0), 0.0, 10_000
    for _ in range(n):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(actions, p=probs)))
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
        total += state.returns()[0]
    assert abs(s["mean_return"] - total / n) < s["return_ci95"], (s, total / n)
