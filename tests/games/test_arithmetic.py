"""The arithmetic game: the verifier (exact values, rejected and hostile input, leakage), the
normalised AST, the shape counts, the held-out split by structure and the chance stream."""

from __future__ import annotations

import numpy as np
import pytest

from arena.errors import ArenaError
from arena.games.arithmetic import (
    InvalidTask,
    check_answer,
    depth_of,
    fill,
    leaks_answer,
    normal_form,
    parse_task,
    render,
    shape_of,
    shapes_up_to,
    value_of,
)
from arena.loading import load_agent, load_game
from arena.playing.match import game_rng, sample_chance


@pytest.mark.parametrize(
    "text,value,depth",
    [("(3+4)*2", 14, 2), ("1-(2-3)", 2, 2), ("2-3*4", -10, 2), ("9*9*9", 729, 2), (" 0 + 7 ", 7, 1), ("5-9", -4, 1)],
)
def test_verifier_values(text, value, depth):
    node = parse_task(text, max_depth=3)
    assert value_of(node) == value and depth_of(node) == depth
    assert check_answer(node, str(value)) and check_answer(node, f" {value} ")
    assert not check_answer(node, str(value + 1))


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('echo hi')",
        "().__class__.__bases__",
        "open('/etc/passwd')",
        "lambda: 1",
        "1 if 1 else 2",
        "3+4 # 7",
        "1;2",
        "1\n+2",
        "a+1",
        "2**3",
        "7//2",
        "1/2",
        "-1+2",
        "+1+2",
        "1_0+1",
        "0x1+1",
        "1.5+1",
        "10+1",
        "((((1+1)+1)+1)+1)",
        "7",
        "",
        "   ",
        "1+" * 60 + "1",
        "(" * 200 + "1" + ")" * 200,
        "1+",
        "()",
        None,
        12,
    ],
)
def test_verifier_rejects_invalid_and_hostile_input(text):
    with pytest.raises(InvalidTask):
        parse_task(text, max_depth=3, max_operand=9)


def test_answers_are_checked_as_integers_only():
    node = parse_task("(3+4)*2")
    assert check_answer(node, "+14")
    for bad in ["14.0", "1e1", "fourteen", "14 # x", "0x0e", "__import__('os')", "", "1 4", "14\n15"]:
        assert not check_answer(node, bad), bad
    assert not check_answer(node, 14)  # not text
    assert check_answer(parse_task("2-3*4"), "-10") and not check_answer(parse_task("2-3*4"), "10")


def test_leakage_is_the_answer_written_as_a_literal():
    assert leaks_answer(parse_task("7*1")) and leaks_answer(parse_task("4+3-3")) and leaks_answer(parse_task("0+5"))
    assert not leaks_answer(parse_task("3+4")) and not leaks_answer(parse_task("3-3"))
    assert not leaks_answer(parse_task("2*2"))


def test_render_round_trips_every_shape_and_matches_python():
    rng = np.random.default_rng(0)
    for depth, shapes in enumerate(shapes_up_to(2)[1:], start=1):
        for shape in shapes:
            node = fill(shape, [int(x) for x in rng.integers(10, size=shape.count("n"))])
            text = render(node)
            assert parse_task(text, max_depth=3) == node and shape_of(node) == shape and depth_of(node) == depth
            assert value_of(node) == eval(text, {"__builtins__": {}})  # noqa: S307 (our own digits-and-ops text)


def test_normal_form_merges_commutative_rewrites_only():
    nf = lambda t: normal_form(parse_task(t))  # noqa: E731
    assert nf("3+4") == nf("4+3") and nf("2*(1+5)") == nf("(5+1)*2") and nf("(1+2)*(3+4)") == nf("(4+3)*(2+1)")
    assert nf("3-4") != nf("4-3") and nf("1+2+3") != nf("1+(2+3)") and nf("2*3") != nf("2+3")


def test_shape_counts_are_the_binary_tree_recurrence():
    # trees of height <= h over 3 operators: T(0) = 1, T(h) = 1 + 3 T(h-1)^2 = 4, 49, 7204
    assert [len(s) for s in shapes_up_to(3)] == [1, 3, 45, 7155]
    assert len({s for ss in shapes_up_to(3) for s in ss}) == 7204


def test_heldout_split_is_disjoint_and_never_drawn_in_training():
    game = load_game("arithmetic(max_depth=2)")
    train = {s for d in game.depths("train") for s in game.shapes("train", d)}
    held = {s for d in game.depths("heldout") for s in game.shapes("heldout", d)}
    assert train.isdisjoint(held) and train | held == set(shapes_up_to(2)[1]) | set(shapes_up_to(2)[2])
    assert 5 <= len(held) <= 20 and game.depths("heldout") == [2]  # ~25% of the 45 depth-2 shapes
    drawn = set()
    for i in range(600):  # the chance stream, as a match draws it
        s = game.new_initial_state()
        sample_chance(s, game_rng(3, i))
        assert s.current_player() == 0
        drawn.add(s.shape)
        assert s.shape in train and not game.is_heldout_shape(s.shape, s.depth)
    assert len(drawn) > 0.9 * len(train)
    assert {shape_of(t) for t in game.grid("heldout")} <= held and {shape_of(t) for t in game.grid("train")} <= train
    only1 = load_game("arithmetic(max_depth=2,heldout_depths=[2])")
    assert only1.depths("train") == [1] and len(only1.shapes("heldout", 2)) == 45
    other = load_game("arithmetic(max_depth=2,split_seed=1)")
    assert set(other.shapes("heldout", 2)) != held  # the seed picks which shapes


def test_returns_and_views():
    game = load_game("arithmetic")
    s = game.state_for("(3+4)*2")
    assert s.observation_text(0) == "role: solver\ntask: (3+4)*2"
    v = s.observation_struct(0)
    assert v["task"] == "(3+4)*2" and v["shape"] == "(n+n)*n" and v["depth"] == 2 and v["your_turn"]
    for answer, ret in [("14", 1.0), ("13", 0.0), ("__import__('os')", 0.0)]:
        t = s.clone()
        t.apply_action(answer)
        assert t.is_terminal() and t.returns() == [ret]


def test_chance_probabilities_and_guesser():
    game = load_game("arithmetic")
    s = game.new_initial_state()
    while s.current_player() < 0:
        probs = [p for _, p in s.chance_outcomes()]
        assert abs(sum(probs) - 1) < 1e-9 and len(set(probs)) == 1
        s.apply_action(s.chance_outcomes()[0][0])
    guesser = load_agent("arithmetic_guesser", game)
    from arena.agent import Observation

    a = guesser.act(Observation(game.state_for("1+1"), 0, game_rng(0, 0), "arithmetic"))
    b = guesser.act(Observation(game.state_for("9*9"), 0, game_rng(0, 0), "arithmetic"))
    assert a == b and int(a) == int(a)  # an integer, and the same whatever the task


def test_guesser_accuracy_is_the_share_of_right_answers():
    from arena.agent import Observation

    game = load_game("arithmetic")
    tasks = [game.sample_task(np.random.default_rng(i)) for i in range(400)]

    def right(spec: str) -> float:
        agent = load_agent(spec, game)
        hits = [
            check_answer(t, agent.act(Observation(game.state_for(t), 0, game_rng(7, i), "arithmetic")))
            for i, t in enumerate(tasks)
        ]
        return float(np.mean(hits))

    assert right("arithmetic_guesser:accuracy=1.0") == 1.0
    assert 0.4 < right("arithmetic_guesser:accuracy=0.5") < 0.65  # the right value, or a guess that may hit
    assert right("arithmetic_guesser") < 0.2
    with pytest.raises(ArenaError, match="accuracy"):
        load_agent("arithmetic_guesser:accuracy=1.5", game)
    with pytest.raises(ArenaError, match="accuracy"):
        load_agent("arithmetic_guesser:depth=2", game)


@pytest.mark.parametrize(
    "spec,word",
    [
        ("arithmetic(max_depth=4)", "max_depth"),
        ("arithmetic(split=test)", "split"),
        ("arithmetic(heldout_fraction=1.5)", "heldout_fraction"),
        ("arithmetic(max_operand=0)", "max_operand"),
        ("arithmetic(max_depth=1,heldout_depths=[1])", "split has no shapes"),
    ],
)
def test_bad_parameters_are_one_clear_error(spec, word):
    with pytest.raises(ArenaError, match=word):
        load_game(spec)
