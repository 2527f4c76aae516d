"""The batched match runner: reproducibility, lockstep batching, seat rotation, forfeits."""

from __future__ import annotations

import time

import pytest

import arena
from arena.agent import Agent, PolicyAgent
from arena.errors import ArenaError


@pytest.fixture(scope="module")
def kuhn():
    return arena.load_game("kuhn_poker")


class CountingRandom(PolicyAgent):
    def __init__(self):
        self.calls = []

    def policy(self, obs):
        return {a: 1 / len(obs.legal_actions) for a in obs.legal_actions}

    def act_batch(self, observations):
        self.calls.append(len(observations))
        return [self.act(o) for o in observations]


def outcomes(results):
    return [(r.index, r.seats, r.returns, r.length) for r in results]


def test_same_seed_same_results_any_batch_size(kuhn):
    def run(batch):
        agents = [arena.load_agent("random", kuhn), arena.load_agent("random", kuhn, label="other")]
        return outcomes(arena.play(kuhn, agents, games=300, seed=11, rotate_seats=True, batch_size=batch))

    full = run(None)
    assert full == run(7) == run(1)
    agents = [arena.load_agent("random", kuhn), arena.load_agent("random", kuhn, label="other")]
    assert full != outcomes(arena.play(kuhn, agents, games=300, seed=12, rotate_seats=True))


def test_one_act_batch_call_per_agent_per_step(kuhn):
    a, b = CountingRandom(), CountingRandom()
    a.name, b.name = "a", "b"
    arena.play(kuhn, [a, b], games=64, seed=0)
    # Kuhn has at most 3 decisions; each step every unfinished game asks its current player.
    assert len(a.calls) <= 2 and len(b.calls) <= 2
    assert a.calls[0] == 64 and b.calls[0] == 64
    shared = CountingRandom()
    arena.play(kuhn, [shared, shared], games=64, seed=0)
    assert len(shared.calls) == 3 and shared.calls[0] == 64  # one call per step, both seats


def test_seat_rotation(kuhn):
    a, b = arena.load_agent("random", kuhn, label="a"), arena.load_agent("random", kuhn, label="b")
    res = arena.play(kuhn, [a, b], games=4, seed=0, rotate_seats=True)
    assert [r.seats for r in res] == [["a", "b"], ["b", "a"], ["a", "b"], ["b", "a"]]
    res = arena.play(kuhn, [a, b], games=2, seed=0)
    assert all(r.seats == ["a", "b"] for r in res)


class Illegal(Agent):
    name = "illegal"

    def act(self, obs):
        return 7


class Crashing(Agent):
    name = "crashing"

    def act(self, obs):
        raise RuntimeError("boom")


class Hanging(Agent):
    name = "hanging"

    def act(self, obs):
        time.sleep(5)
        return obs.legal_actions[0]


@pytest.mark.parametrize(
    "bad, reason", [(Illegal(), "illegal action 7"), (Crashing(), "RuntimeError: boom"), (Hanging(), "timeout")]
)
def test_faults_forfeit_the_game_not_the_run(kuhn, bad, reason):
    good = arena.load_agent("random", kuhn)
    start = time.perf_counter()
    res = arena.play(kuhn, [bad, good], games=10, seed=3, rotate_seats=True, timeout=0.5)
    assert time.perf_counter() - start < 4
    assert len(res) == 10
    for r in res:
        bad_seat = r.seats.index(bad.name)
        assert r.forfeit is not None and r.forfeit.player == bad_seat and reason in r.forfeit.reason
        assert r.returns[bad_seat] == kuhn.spec.min_utility and sum(r.returns) == 0


def test_trajectories_rewards_sum_to_returns():
    game = arena.load_game("leduc_poker")
    res = arena.play(game, [arena.load_agent("random", game)] * 2, games=30, seed=5, record=True)
    for r in res:
        t = r.trajectory
        assert t is not None and len(t.steps) == r.length
        for p in range(2):
            assert sum(s.reward for s in t.for_player(p)) == pytest.approx(r.returns[p])
        assert r.transcript[-1].startswith("result:")
        assert all(s.observation.text and s.observation.info_state for s in t.steps)


def test_wrong_number_of_agents(kuhn):
    with pytest.raises(ArenaError, match="needs 2 agents"):
        arena.play(kuhn, [arena.load_agent("random", kuhn)], games=1)


def test_simultaneous_games_step_jointly():
    game = arena.load_game("openspiel:goofspiel(num_cards=4)")
    agents = [arena.load_agent("random", game, label=f"r{i}") for i in range(2)]
    res = arena.play(game, agents, games=20, seed=2, record=True)
    assert all(r.length == 2 * 3 or r.length == 2 * 4 for r in res)
    assert outcomes(res) == outcomes(arena.play(game, agents, games=20, seed=2, batch_size=3))


def test_streams_started_in_a_batch_are_the_games_own():
    """``start_games`` (numpy, draws ahead) gives each game exactly ``GameRandom(seed, i)`` after
    its ``bits()`` draw: the same seed, the same uniforms, clones, counters and later ``bits``."""
    from arena.rng import GameRandom, start_games

    indices = [0, 1, 7, 255, 10**6, 2**40]
    for seed in (0, -5, 2**70 + 3):
        for ahead in (0, 1, 3, 8):
            streams, first = start_games(seed, indices, ahead)
            for i, s, bits in zip(indices, streams, first):
                r = GameRandom(seed, i)
                assert bits == r.bits() and s._counter == r._counter == 1
                for k in range(12):
                    if k == 2:
                        c, d = s.clone(), r.clone()
                        assert [c.uniform() for _ in range(5)] == [d.uniform() for _ in range(5)]
                    if k == 5:
                        assert s.bits() == r.bits()
                    else:
                        assert s.uniform() == r.uniform()
                assert s._counter == r._counter


def test_results_do_not_depend_on_draws_ahead(kuhn, monkeypatch):
    import arena.playing.match as match

    def run():
        agents = [arena.load_agent("random", kuhn), arena.load_agent("random", kuhn, label="other")]
        return outcomes(arena.play(kuhn, agents, games=700, seed=5, rotate_seats=True, batch_size=100))

    full = run()
    for ahead in (0, 1, 2, 64):
        monkeypatch.setattr(match, "DRAW_AHEAD", ahead)
        assert run() == full


def test_agent_without_info_dicts_while_recording_forfeits_with_a_clear_reason():
    """``act_batch_info`` must return one info dict per observation when games are recorded."""

    class NoInfo(Agent):
        name = "no_info"

        def act_batch(self, observations):
            return [o.legal_actions[0] for o in observations]

        def act_batch_info(self, observations):
            return self.act_batch(observations), None

    game = arena.load_game("kuhn_poker")
    results = arena.play(game, [NoInfo(), arena.load_agent("random", game)], games=2, seed=0, record=True)
    assert all(r.forfeit and r.forfeit.agent == "no_info" for r in results)
    assert all("no info dicts" in r.forfeit.reason for r in results)
