"""The match runner counts what a harness did per seat (invalid attempts, retries,
substituted moves) into ``GameResult.info["harness"]``, forfeits a decision an agent gives up
with the agent's reason, and the match summary reports the counts per agent."""

from __future__ import annotations

from arena.agent import Agent
from arena.loading import load_agent, load_game
from arena.playing.match import play_games
from arena.playing.match_report import MatchSummary


class GivesUp(Agent):
    """Answers nothing legal and says so, like a harness with ``fallback: forfeit``."""

    name = "gives_up"

    def act_batch_info(self, observations):
        infos = [{"invalid_attempts": 3, "retries": 2, "forfeit": "3 answers named no legal action"}]
        return [None] * len(observations), infos * len(observations)


class Substitutes(Agent):
    """Plays the first legal move, marked as substituted after one invalid answer."""

    name = "substitutes"

    def act_batch_info(self, observations):
        infos = [{"invalid_attempts": 1, "retries": 1, "substituted": True} for _ in observations]
        return [o.legal_actions[0] for o in observations], infos


def test_an_agent_that_gives_up_forfeits_every_game_with_its_reason():
    game = load_game("kuhn_poker")
    for record in (False, True):
        summary = MatchSummary(["gives_up", "random"])
        results = play_games(game, [GivesUp(), load_agent("random", game)], 6, seed=1, rotate_seats=True, record=record)
        for r in results:
            summary.add(r)
            assert r.forfeit is not None and r.forfeit.agent == "gives_up"
            assert r.forfeit.reason == "no legal move: 3 answers named no legal action"
            seat = r.seats.index("gives_up")
            assert r.info["harness"]["invalid_attempts"][seat] == 3
            assert r.info["harness"]["substituted"] == [0, 0]
        row = summary.as_dict()["gives_up"]
        assert row["forfeits"] == 6 and row["losses"] == 6
        assert (row["invalid_attempts"], row["retries"], row["substitutions"]) == (18, 12, 0)
        assert summary.as_dict()["random"]["invalid_attempts"] == 0


def test_substituted_moves_are_counted_per_agent_and_a_plain_agent_reports_zeros():
    game = load_game("kuhn_poker")
    summary = MatchSummary(["substitutes", "random"])
    results = play_games(game, [Substitutes(), load_agent("random", game)], 8, seed=2, rotate_seats=True)
    decisions = 0
    for r in results:
        summary.add(r)
        assert r.forfeit is None
        decisions += r.info["harness"]["substituted"][r.seats.index("substitutes")]
    row = summary.as_dict()["substitutes"]
    assert decisions > 8 and row["substitutions"] == decisions == row["invalid_attempts"] == row["retries"]
    plain = play_games(game, [load_agent("random", game)] * 2, 4, seed=2)
    assert all("harness" not in r.info for r in plain)
