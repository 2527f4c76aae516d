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


class Clumsy(Agent):
    """Random, except that one decision in twenty is the illegal action 99 (a forfeit); the same
    draws on both paths: one uniform per decision from the game's stream."""

    name = "clumsy"

    def act_batch(self, observations):
        out = []
        for o in observations:
            u, legal = o.uniform(), o.legal_actions
            out.append(99 if u < 0.05 else legal[min(int(u * len(legal)), len(legal) - 1)])
        return out

    def act_arrays(self, games, rows, player=None):
        from arena.arrays import pick_uniform

        u = games.rng.uniform(rows)
        return np.where(u < 0.05, 99, pick_uniform(games.legal_mask(rows, player), u))


def report_both_ways(name, games, seed):
    """The streamed document and summary of one match, from the array path's columns and from
    the State path's GameResults (the same agents told to need a State)."""
    from arena.plugins.agents.basic import RandomAgent

    game = arena.load_game(name)
    out = []
    for array in (True, False):
        agents = [Clumsy()] + [RandomAgent() for _ in range(game.spec.num_players - 1)]
        for k, a in enumerate(agents):
            a.name, a.array_native = f"p{k}", array
        stream, summary = io.StringIO(), MatchSummary([a.name for a in agents])
        writer = ReportWriter({"game": name, "games": games, "seed": seed}, stream)

        def columns(cols):
            summary.add_columns(cols)
            writer.add_columns(cols)

        def batch(results):
            for r in results:
                summary.add(r)
            writer.add(results)

        assert (
            play_games(
                game, agents, games, seed, True, batch_size=500, on_batch=batch, on_columns=columns, collect=False
            )
            == []
        )
        writer.close(summary.as_dict())
        out.append((stream.getvalue(), summary.as_dict(), [(r.index, r.forfeit) for r in summary.forfeits]))
    return out


@pytest.mark.parametrize("name", ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker", "ipd(discount=0.9,horizon=6)"])
def test_the_array_paths_columns_report_what_the_state_path_reports(name):
    (fast_text, fast, fast_forfeits), (slow_text, slow, slow_forfeits) = report_both_ways(name, 3000, 7)
    assert fast_text == slow_text  # byte for byte: records, then the summary
    assert json.dumps(fast) == json.dumps(slow)  # float totals summed in the same order, to the bit
    assert fast_forfeits == slow_forfeits and len(fast_forfeits) > 50
    doc = json.loads(fast_text)
    assert len(doc["results"]) == 3000 and sum(s["forfeits"] for s in doc["agents"].values()) == len(fast_forfeits)
    if name.startswith("ipd"):  # outcome info per game travels with the columns
        game = arena.load_game(name)
        seen = []
        play_games(game, [Clumsy(), Clumsy()], 50, 7, on_columns=lambda c: seen.append(c), collect=False)
        assert seen and set(seen[0].info.values().__iter__().__next__()) == {"cooperation", "rounds"}


def test_columns_with_odd_floats_and_forfeits_write_json_dumps_records():
    from arena.playing.array_match import ArrayResults
    from arena.playing.match import array_results

    game = arena.load_game("kuhn_poker")
    returns = np.array(
        [[0.0, -0.0], [-0.0, 0.0], [0.0, -0.0], [np.inf, -np.inf], [np.nan, 1.0], [0.1 + 0.2, 0.3], [-1.0, 1.0]]
    )  # the last row: its forfeit returns
    cols = ArrayResults(
        game, 3, np.arange(10, 17), np.arange(10, 17) % 2, [["x", "y"], ["y", "x"]], returns,
        np.ones(7, dtype=np.int64), np.zeros(7), {6: (0, "x", "illegal action 99")}, {6: [-1.0, 1.0]},
    )  # fmt: skip
    texts, summaries = [], []
    for how in ("columns", "results"):
        stream, summary = io.StringIO(), MatchSummary(["x", "y"])
        writer = ReportWriter({"game": "kuhn_poker"}, stream)
        if how == "columns":
            writer.add_columns(cols)
            summary.add_columns(cols)
        else:
            writer.add(array_results(cols))
            for r in array_results(cols):
                summary.add(r)
        writer.close({})
        texts.append(stream.getvalue())
        summaries.append(json.dumps(summary.as_dict()))
    assert texts[0] == texts[1]
    assert '"returns": [0.0, -0.0]' in texts[0] and '"returns": [Infinity, -Infinity]' in texts[0]
    assert summaries[0] == summaries[1]  # nan totals included


def test_column_totals_are_summed_in_game_order_to_the_bit():
    """Returns of all magnitudes, where numpy's pairwise sum and a left-to-right sum differ."""
    from arena.playing.array_match import ArrayResults
    from arena.playing.match import array_results

    game = arena.load_game("kuhn_poker")
    rng = np.random.default_rng(0)
    b = 4096
    returns = rng.normal(size=(b, 2)) * 10.0 ** rng.integers(-8, 9, size=(b, 2))
    idx = np.arange(b)
    cols = ArrayResults(
        game, 0, idx, idx % 2, [["x", "y"], ["y", "x"]], returns, np.ones(b, dtype=np.int64), np.zeros(b)
    )
    by_columns, by_results = MatchSummary(["x", "y"]), MatchSummary(["x", "y"])
    by_columns.add_columns(cols)
    for r in array_results(cols):
        by_results.add(r)
    assert by_columns.as_dict() == by_results.as_dict()
    x = returns[np.column_stack([idx % 2 == 0, idx % 2 == 1])]
    assert by_columns.as_dict()["x"]["mean_return"] * b != float(np.sum(x))  # the pairwise sum is not it


def test_cli_array_path_prints_the_state_paths_bytes(capsys):
    from arena.cli import main

    printed = []
    for extra in ([], ["--timeout", "1000"]):  # a timeout keeps the match on the State path
        argv = ["match", "--game", "leduc_poker", "--agents", "random", "random", "--games", "5000", "--json"]
        assert main(argv + extra) == 0
        printed.append(capsys.readouterr().out)
    assert printed[0] == printed[1] and printed[0].count("\n") > 5000


@pytest.mark.parametrize("collide", [False, True])
def test_distinct_rows_are_numpys_even_when_hashes_collide(collide, monkeypatch):
    from arena.playing import match_report

    if collide:  # every row hashes alike: the row check must catch it and count exactly
        monkeypatch.setattr(match_report, "_mix", lambda z: z * np.uint64(0))
    rng = np.random.default_rng(3)
    values = np.array([0.0, -0.0, 1.0, -1.0, 2.0, 0.1 + 0.2])[rng.integers(0, 6, size=(5000, 2))]
    key = np.column_stack([rng.integers(0, 3, 5000), values.view(np.int64)])
    first, which = match_report._distinct_rows(key)
    rows, ref_first, ref_which = np.unique(key, axis=0, return_index=True, return_inverse=True)
    assert len(first) == len(rows) == 3 * 36
    assert (key[first][which] == key).all()
    assert sorted(first.tolist()) == sorted(ref_first.tolist())  # the same first rows
