"""Werewolf rules: scripted histories with known outcomes, and hypothesis properties over
random play, random seeds and random variant knobs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arena
from arena.errors import ArenaError
from arena.game import CHANCE, IllegalActionError
from arena.games.werewolf import WerewolfGame
from arena.games.werewolf.rules import DOCTOR, ROLE_NAMES, SEER, VILLAGER, WOLF

V, W, S, D = VILLAGER, WOLF, SEER, DOCTOR


def dealt(roles, **params):
    """A state with ``roles`` dealt (seat order) through the explicit chance nodes."""
    s = WerewolfGame(players=len(roles), wolves=roles.count(W), **params).new_initial_state()
    for r in roles:
        assert s.current_player() == CHANCE
        assert r in dict(s.chance_outcomes())
        s.apply_action(r)
    return s


def play(s, *actions):
    for a in actions:
        s.apply_action(a)
    return s


def test_deal_probabilities_are_uniform_over_assignments():
    s = WerewolfGame(players=5).new_initial_state()
    assert dict(s.chance_outcomes()) == pytest.approx({V: 2 / 5, W: 1 / 5, S: 1 / 5, D: 1 / 5})
    # probability of one full assignment = 1 / (5! / 2!) = 1/60
    p = 1.0
    for r in (W, V, S, V, D):
        p *= dict(s.chance_outcomes())[r]
        s.apply_action(r)
    assert p == pytest.approx(1 / 60)


def test_night_kill_dawn_discussion_vote_exile_village_wins():
    # seats: 0 wolf, 1 seer, 2 doctor, 3 villager, 4 villager
    s = dealt([W, S, D, V, V])
    assert s.current_player() == 0 and s.decision() == "kill"
    assert s.legal_actions() == [1, 2, 3, 4]  # living non-wolves only
    play(s, 3)  # wolf targets 3
    assert s.current_player() == 2 and s.decision() == "protect"
    play(s, 4)  # doctor protects 4
    assert s.current_player() == 1 and s.decision() == "inspect"
    assert 1 not in s.legal_actions()
    play(s, 0)  # seer inspects the wolf
    assert not s.alive[3] and s.phase == "discussion"
    assert "player_0 is a werewolf" in s.observation_text(1)
    assert "werewolf" not in s.observation_text(4).split("Dawn")[-1].lower().replace("werewolves", "")
    # structured discussion: seats 0,1,2,4 in order (day 1 starts at seat 0)
    L = s.layout
    assert [p for p, _ in s.queue] == [0, 1, 2, 4]
    play(s, L.accuse + 1, L.report_wolf + 0, L.silent, L.accuse + 0)
    assert s.phase == "vote"
    assert s.legal_actions() == [1, 2, 4, L.abstain]
    play(s, 1, 0, 0)
    assert "player_0→" not in s.observation_text(2)  # ballots stay secret until all are in
    play(s, 0)
    assert s.is_terminal() and s.winner == "village"
    assert s.returns() == [-1, 1, 1, 1, 1]  # dead teammates share the win
    info = s.outcome_info()
    assert info["teams"] == [[1, 2, 3, 4], [0]] and info["winner"] == "village"
    assert info["roles"] == ["Werewolf", "Seer", "Doctor", "Villager", "Villager"]


def test_doctor_save_and_tie_exiles_nobody_then_wolves_reach_parity():
    s = dealt([W, S, D, V, V], talk="none")
    play(s, 3, 3, 0)  # kill 3, protect 3, inspect 0
    assert all(s.alive) and "nobody died" in s.observation_text(4)
    assert s.phase == "vote"
    play(s, 1, 0, 1, 0, s.layout.abstain)  # 2 votes each for 0 and 1 -> tie
    assert all(s.alive) and s.day == 2 and "nobody is exiled (a tie)" in s.observation_text(3)
    play(s, 4, 2, 0)  # night 2: kill 4, doctor protects self
    assert not s.alive[4]
    play(s, 3, 3, 3, 0)  # village exiles villager 3: wolves 1 vs 2 others
    assert not s.alive[3] and not s.is_terminal()
    play(s, 1, 2, 0)  # night 3: kill the seer; 1 wolf vs 1 doctor -> parity
    assert s.is_terminal() and s.winner == "wolves" and s.returns()[0] == 1


def test_wolf_win_majority_variant_needs_more_than_parity():
    s = dealt([W, S, D, V, V], talk="none", wolf_win="majority")
    play(s, 4, 2, 0, 3, 3, 3, 0)  # kill 4; exile 3 -> 1 wolf vs seer+doctor
    play(s, 1, 2, 0)  # kill the seer: 1 vs 1 is not a majority
    assert not s.is_terminal()


def test_wolves_see_each_others_picks_and_the_last_pick_is_the_target():
    s = dealt([W, W, S, D, V, V, V])
    assert "The werewolves are player_0, player_1" in s.observation_text(0)
    play(s, 4)
    assert "player_0 picks player_4" in s.observation_text(1)
    assert "picks" not in s.observation_text(4)
    play(s, 5, 6, 4)  # second wolf overrides; doctor protects 6; seer inspects 4
    assert s.alive[4] and not s.alive[5]


def test_runoff_and_random_tiebreak_and_majority_rules():
    # runoff: tie between 0 and 1, re-vote among them
    s = dealt([W, S, D, V, V], talk="none", vote_rule="runoff")
    play(s, 3, 3, 0)
    play(s, 1, 0, 1, 0, s.layout.abstain)
    assert s.phase == "runoff" and s.candidates == [0, 1]
    assert s.legal_actions() == [1, s.layout.abstain]  # player 0 cannot vote for itself
    play(s, 1, 0, 0, 0, 0)
    assert s.is_terminal() and s.winner == "village"
    # random tie-break: a chance node over the tied players
    s = dealt([W, S, D, V, V], talk="none", vote_rule="random_tiebreak")
    play(s, 3, 3, 0, 1, 0, 1, 0, s.layout.abstain)
    assert s.current_player() == CHANCE and s.chance_outcomes() == [(0, 0.5), (1, 0.5)]
    play(s, 0)
    assert s.winner == "village"
    # majority: 2 of 5 votes is not more than half
    s = dealt([W, S, D, V, V], talk="none", vote_rule="majority")
    play(s, 3, 3, 0, 1, 0, s.layout.abstain, s.layout.abstain, s.layout.abstain)
    assert all(s.alive) and s.day == 2


def test_knobs_first_night_doctor_seer_reveal_abstain():
    s = dealt(
        [W, S, D, V, V],
        first_night_kill=False,
        doctor_self_protect=False,
        doctor_repeat_target=False,
        seer_learns="role",
        reveal_role_on_death=True,
        allow_abstain=False,
        talk="none",
    )
    assert s.decision() == "protect" and 2 not in s.legal_actions()
    play(s, 3, 2)
    assert "player_2 is a Doctor" in s.observation_text(1)
    assert s.layout.abstain not in s.legal_actions()
    play(s, 3, 3, 3, 0, 3)
    assert "player_3 was a Villager" in s.observation_text(4)
    play(s, 4, 1)  # night 2: kill 4; doctor may not protect 3 (dead) again nor itself
    assert s.decision() == "inspect"


def test_day_limit_is_a_draw_with_zero_returns():
    s = dealt([W, S, D, V, V], talk="none", max_days=1)
    play(s, 3, 3, 0, 1, 0, 1, 0, s.layout.abstain)
    assert s.is_terminal() and s.winner == "draw" and s.returns() == [0.0] * 5
    assert s.outcome_info()["winner"] is None and s.outcome_info()["truncated"]


def test_illegal_actions_and_text_are_refused():
    s = dealt([W, S, D, V, V])
    with pytest.raises(IllegalActionError):
        s.apply_action(0)  # a wolf cannot target a wolf
    with pytest.raises(IllegalActionError):
        s.apply_action("hello")
    s = dealt([W, S, D, V, V], talk="text", max_message_chars=40)
    play(s, 3, 4, 0)
    assert s.decision_kind(0) == "text" and s.legal_actions() == []
    with pytest.raises(IllegalActionError):
        s.apply_action("x" * 41)
    s.apply_action("I accuse player_3 and claim seer")  # parsed into public claims
    assert s.accused_today[3] == 1 and s.claims[0] == SEER and s.seer_rank[0] == 1
    assert 'player_0 says: "I accuse player_3' in s.observation_text(2)


@pytest.mark.parametrize(
    "params, fragment",
    [
        ({"players": 4}, "'players' must be between 5 and 9"),
        ({"talk": "loud"}, "'talk' must be one of"),
        ({"wolves": 3, "players": 6}, "'wolves'"),
        ({"vote_rule": "dice"}, "'vote_rule'"),
        ({"max_days": "ten"}, "'max_days' must be int"),
    ],
)
def test_bad_parameters_are_one_clear_error(params, fragment):
    with pytest.raises(ArenaError, match=fragment):
        arena.load_game("werewolf", **params)


# -- properties -------------------------------------------------------------------------------
KNOBS = st.fixed_dictionaries(
    {
        "players": st.integers(5, 9),
        "talk": st.sampled_from(["structured", "none", "text"]),
        "vote_rule": st.sampled_from(["plurality", "random_tiebreak", "majority", "runoff"]),
        "discussion_rounds": st.integers(0, 2),
        "max_days": st.integers(1, 6),
        "first_night_kill": st.booleans(),
        "doctor_self_protect": st.booleans(),
        "doctor_repeat_target": st.booleans(),
        "seer_learns": st.sampled_from(["team", "role"]),
        "reveal_role_on_death": st.booleans(),
        "wolf_decision": st.sampled_from(["last", "plurality"]),
        "wolf_win": st.sampled_from(["parity", "majority"]),
        "allow_abstain": st.booleans(),
    }
)


def random_history(game, seed):
    """Play one random game; yield (state before the move, move) for every move."""
    rng = np.random.default_rng(seed)
    s = game.new_initial_state()
    while not s.is_terminal():
        if s.is_chance_node():
            outcomes = s.chance_outcomes()
            a = outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0]
        elif s.decision_kind(s.current_player()) == "text":
            a = f"I accuse player_{rng.integers(game.spec.num_players)}."
        else:
            legal = s.legal_actions()
            a = legal[rng.integers(len(legal))]
        yield s, a
        s.apply_action(a)
    yield s, None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(knobs=KNOBS, seed=st.integers(0, 2**31 - 1))
def test_random_play_respects_the_rules(knobs, seed):
    knobs["wolves"] = 0
    game = WerewolfGame(**knobs)
    cfg = game.cfg
    n = cfg.players
    for s, a in random_history(game, seed):
        if a is None:
            break
        if s.is_chance_node():
            continue
        p = s.current_player()
        assert s.alive[p], "a dead player acted"
        kind, legal, alive = s.decision(), s.legal_actions(), s.living()
        if kind == "kill":
            assert s.roles[p] == WOLF and legal and set(legal) <= {q for q in alive if s.roles[q] != WOLF}
        elif kind == "protect":
            assert s.roles[p] == DOCTOR and legal and set(legal) <= set(alive)
        elif kind == "inspect":
            assert s.roles[p] == SEER and set(legal) <= set(alive) - {p}
        elif kind == "vote":
            named = [q for q in legal if q < n]
            pool = set(s.candidates) if s.candidates is not None else set(alive)
            assert set(named) <= (pool & set(alive)) - {p}
            assert (s.layout.abstain in legal) == (cfg.allow_abstain or not named)
        assert len(s.history) <= game.spec.max_game_length
    # role counts as configured
    counts = [s.roles.count(r) for r in range(4)]
    assert counts == cfg.role_counts() and counts[WOLF] == cfg.num_wolves
    # exactly one side wins, or the day limit ends the game
    wolves = sum(1 for q in s.living() if s.roles[q] == WOLF)
    others = len(s.living()) - wolves
    if s.winner == "village":
        assert wolves == 0
    elif s.winner == "wolves":
        assert wolves > 0 and (wolves > others or (wolves == others and cfg.wolf_win == "parity"))
    else:
        assert s.winner == "draw" and s.day == cfg.max_days and wolves > 0
        assert wolves < others or (wolves == others and cfg.wolf_win == "majority")
    r = s.returns()
    assert sorted(set(r)) == ([0.0] if s.winner == "draw" else [-1.0, 1.0])


def swapped_history(history, a, b):
    """The same moves with the roles dealt to seats ``a`` and ``b`` exchanged."""
    out = list(history)
    out[a], out[b] = out[b], out[a]
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(5, 9),
    talk=st.sampled_from(["structured", "none", "text"]),
    text=st.sampled_from(["full", "brief"]),
    seed=st.integers(0, 2**31 - 1),
    data=st.data(),
)
def test_observations_leak_nothing_a_role_may_not_know(players, talk, text, seed, data):
    """Exchanging the hidden roles of two seats that ``p`` cannot tell apart (any two others for
    a Villager or Doctor; two non-wolves for a Werewolf or a team-mode Seer), and replaying the
    same moves, must leave ``p``'s text, info-state key, tensor and structured view unchanged at every step (until
    the two worlds' turn structure diverges, e.g. a kill removes the Doctor in one world only).
    Both text renderings: the full log and ``text=brief``."""
    game = WerewolfGame(players=players, talk=talk, text=text)
    moves = [a for _, a in random_history(game, seed)][:-1]
    roles = moves[:players]
    p = data.draw(st.integers(0, players - 1), label="observer")
    if roles[p] in (VILLAGER, DOCTOR):
        pool = [q for q in range(players) if q != p]
    else:
        pool = [q for q in range(players) if q != p and roles[q] != WOLF]
    a, b = data.draw(st.lists(st.sampled_from(pool), min_size=2, max_size=2, unique=True), label="swap")
    s1, s2 = game.new_initial_state(), game.new_initial_state()
    for t, move in enumerate(moves):
        other = swapped_history(moves, a, b)[t] if t < players else move
        if t >= players and not isinstance(move, str) and move not in s2.legal_actions():
            break  # the swapped world forbids this move (e.g. a wolf would target a wolf)
        s1.apply_action(move)
        s2.apply_action(other)
        if s1.is_terminal() or s2.is_terminal() or [k for _, k in s1.queue] != [k for _, k in s2.queue]:
            break  # the worlds' turn structure diverged (a Doctor died in one world only, ...)
        assert s1.observation_text(p) == s2.observation_text(p)
        assert s1.information_state_key(p) == s2.information_state_key(p)
        assert np.array_equal(s1.observation_tensor(p), s2.observation_tensor(p))
        assert s1.observation_struct(p) == s2.observation_struct(p)
    # and the two worlds really differ for someone
    assert s1.roles != s2.roles or roles[a] == roles[b]


def test_a_villagers_view_never_names_another_role():
    game = WerewolfGame(players=7, talk="none")  # no speech: any role word would be a leak
    for seed in range(40):
        for s, _ in random_history(game, seed):
            if s.is_terminal() or s.is_chance_node() or len(s.roles) < 7:
                continue
            for p in range(7):
                if s.roles[p] != VILLAGER:
                    continue
                text = s.observation_text(p).split("\n", 1)[1]
                for name in ROLE_NAMES[1:]:
                    assert name not in text, (name, text)


def test_brief_text_is_the_current_day_in_short_phrases():
    # seats: 0 wolf, 1 seer, 2 doctor, 3 villager, 4 villager
    s = dealt([W, S, D, V, V], talk="text", text="brief")
    play(s, 3, 4, 0)  # kill 3, protect 4, inspect the wolf
    assert s.observation_text(1) == "p1 seer day 1/10\nchecked p0 wolf\nalive p0 p1 p2 p4\np3 killed"
    assert s.observation_text(0) == "p0 werewolf day 1/10\nalive p0 p1 p2 p4\np0 picks p3\np3 killed\nsay"
    assert (
        s.observation_text(2) == "p2 doctor day 1/10\nlast protected p4\nalive p0 p1 p2 p4\nyou protect p4\np3 killed"
    )
    assert s.observation_text(3) == "p3 villager day 1/10 dead"
    play(s, "I accuse p2.", "p0 is a werewolf", "I defend p1.", "...")
    assert s.accused_today[2] == 1 and s.reports[1][0] == 1 and s.defended_today[1] == 1  # `pN` is understood
    assert s.current_player() == 0 and s.observation_text(0).endswith(
        "p0: I accuse p2.\np1: p0 is a werewolf\np2: I defend p1.\np4: ...\nvote"
    )
    assert [s.action_label(0, a) for a in s.legal_actions()] == ["p1", "p2", "p4", "abstain"]
    play(s, 1, 0, 0, 0)  # p0 votes p1; the village exiles the wolf
    assert s.observation_text(1) == "p1 seer day 1/10 over: village win, you +1"
    # the next day starts afresh: yesterday's talk and votes are left out
    s = dealt([W, S, D, V, V], talk="text", text="brief")
    play(s, 3, 4, 2, "a", "b", "c", "d", 4, 4, 4, 0)  # the village exiles p4
    assert s.observation_text(4) == "p4 villager day 2/10 dead" and s.current_player() == 0
    assert s.observation_text(1) == "p1 seer day 2/10\nchecked p2 ok\nalive p0 p1 p2"
    assert s.observation_text(0) == "p0 werewolf day 2/10\nalive p0 p1 p2\nkill"
    full = WerewolfGame(players=7, talk="text")
    brief = WerewolfGame(players=7, talk="text", text="brief")
    lengths = {"full": [], "brief": []}
    for name, game in (("full", full), ("brief", brief)):
        for st_, _ in random_history(game, 3):
            if not st_.is_terminal() and not st_.is_chance_node():
                lengths[name].append(len(st_.observation_text(st_.current_player())))
    assert np.mean(lengths["brief"]) * 4 < np.mean(lengths["full"])
