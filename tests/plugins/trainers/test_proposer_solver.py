"""``proposer_solver``: the proposer's reward oracles (SSP's 4p(1-p), SvS's band), the verifier's
rejections in the proposer's batch (invalid, hostile, leaky, held-out shape, duplicate by
normalised AST), the over-used-shape penalty, the solver's group advantages, resume, bad
settings and a short ``arena llm-train`` run with a tiny local model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformers")

from arena.cli import main  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.games.arithmetic import parse_task, render, shape_of  # noqa: E402
from arena.loading import load_agent, load_game  # noqa: E402
from arena.plugins.agents.llm.backend import Generation  # noqa: E402
from arena.plugins.trainers.llm.proposer_solver import (  # noqa: E402
    ProposerSolver,
    ShapeWindow,
    band_reward,
    intermediate_reward,
    proposer_reward,
)
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402

AGENT = {"name": "llm", "mode": "generated", "max_text_tokens": 4, "temperature": 1.0}


def test_intermediate_reward_oracle():
    # Search Self-play: solver success 2/5 => 4 * 0.4 * 0.6 = 0.96; 0/5 and 5/5 => 0
    assert intermediate_reward(2 / 5) == pytest.approx(0.96)
    assert intermediate_reward(0.0) == 0.0 and intermediate_reward(1.0) == 0.0
    assert intermediate_reward(0.5) == 1.0
    assert proposer_reward("one_minus_acc", 2 / 5) == pytest.approx(0.6)


def test_band_reward_oracle():
    # SvS: 1..5 correct of 8 => 1; 0, 6, 7, 8 => 0
    assert [band_reward(k / 8) for k in range(9)] == [0, 1, 1, 1, 1, 1, 0, 0, 0]
    assert [proposer_reward("band", k / 8, (1 / 8, 5 / 8)) for k in range(9)] == [0, 1, 1, 1, 1, 1, 0, 0, 0]


def test_shape_window_counts_the_recent_shapes():
    w = ShapeWindow(size=4, cap=2)
    w.add(["n+n", "n+n"])
    assert not w.overused("n+n")
    w.add(["n+n"])
    assert w.overused("n+n") and not w.overused("n*n")
    w.add(["n*n", "n*n", "n*n"])  # the window forgets the oldest
    assert not w.overused("n+n") and w.overused("n*n")


def _trainer(tmp_path: Path | None = None, **params) -> ProposerSolver:
    game = load_game("arithmetic")
    agent = load_agent({**AGENT, "model": str(tiny_model_dir(1))}, game)
    agent.name = "learner"
    return ProposerSolver(game, [agent], **{"torch_threads": 1, "proposals": 8, "group": 4, **params})


def _scripted(trainer: ProposerSolver, proposals: list[str], answers) -> list:
    """Replace the backend's sampler: proposals come from the list, a solver's answer from
    ``answers(task_text)``; token ids are the real encodings (the update trains on them)."""
    backend = trainer.agent.backend
    enc = backend.encode
    seen: list[str] = []

    def generate(prompts, *, max_tokens, temperature, seeds, stop=(), adapters=None):
        out = []
        for k, p in enumerate(prompts):
            seen.append(p)
            marker = "role: solver\ntask: "
            text = answers(p.split(marker)[1].split("\n")[0]) if marker in p else proposals[k]
            ids = enc(text)
            out.append(Generation(text, 0, len(ids), enc(p), ids, [-0.5] * len(ids)))
        return out

    backend.generate = generate
    return seen


def test_proposals_are_verified_deduplicated_and_checked_for_leaks_and_heldout_shapes():
    tr = _trainer()
    held = tr.game.shapes("heldout", 2)[0]
    held_task = held.replace("n", "2")
    proposals = ["3+4", "4+3", "7*1", "__import__('os').system('x')", held_task, "2*3", "10+1", "(5+1)*2"]
    seen = _scripted(tr, proposals, lambda t: "0")
    gens, nodes, why = tr.propose()
    assert why == [None, "duplicate", "leaky", "invalid", "heldout", None, "invalid", None]
    assert [render(n) for n in nodes if n is not None] == ["3+4", "2*3", "(5+1)*2"]
    prompt = seen[0]
    assert prompt.endswith("role: proposer\ntask: ") and "role: solver" not in prompt


def test_update_rewards_the_frontier_and_gives_group_advantages():
    tr = _trainer(proposals=4, group=4)
    # the scripted solver is right on "3+4" twice in four, always on "2*3", never on "(1+2)*3"
    calls = {"3+4": 0}

    def answers(task):
        if task == "3+4":
            calls["3+4"] += 1
            return "7" if calls["3+4"] % 2 else "8"
        return {"2*3": "6", "(1+2)*3": "5"}[task]

    _scripted(tr, ["3+4", "2*3", "(1+2)*3", "nonsense"], answers)
    before = {k: v.detach().clone() for k, v in tr.model.trainable_parameters().items()}
    stats = tr.update([])
    assert stats["ps/valid_rate"] == 0.75 and stats["ps/invalid_rate"] == 0.25
    assert stats["ps/proposed_solve_rate"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert stats["ps/in_band_frac"] == pytest.approx(1 / 3)  # only "3+4" sits in [1/8, 5/8]
    # proposer rewards: 4p(1-p) = 1, 0, 0 for the kept, invalid_reward -0.5 for the nonsense
    assert stats["ps/proposer_reward"] == pytest.approx((1 + 0 + 0 - 0.5) / 4)
    assert stats["ps/solver_informative_groups"] == 1.0 and stats["ps/tasks"] == 3.0
    # decisions with nonzero advantage: 4 solver answers of "3+4" (+-0.5) and the 4 proposals
    assert stats["ps/decisions"] == 8.0
    after = tr.model.trainable_parameters()
    assert any(not np.allclose(before[k].numpy(), after[k].detach().numpy()) for k in before)
    assert list(tr.window.recent) == ["n+n", "n*n", "(n+n)*n"]


def test_overused_shapes_are_penalised():
    tr = _trainer(proposals=2, group=2, shape_window=8, shape_cap=1, shape_penalty=0.5)
    tr.window.add(["n+n", "n+n"])
    nodes = [parse_task("3+4"), parse_task("2*3")]
    r, stats = tr.proposer_rewards(nodes, [None, None], np.array([0.5, 0.5]))
    assert r == [0.5, 1.0] and stats["ps/shape_penalised"] == 1.0
    r, _ = tr.proposer_rewards(nodes, [None, None], np.array([0.0, 0.0]))
    assert r == [0.0, 0.0]  # an over-used shape the solver cannot solve: 0, still above invalid_reward
    assert stats["ps/distinct_shape_ratio"] == 1.0 and shape_of(nodes[0]) == "n+n"


def test_resume_round_trip_continues_the_same_run(tmp_path):
    a = _trainer(proposals=4, group=2, seed=3)
    a.update([])
    state = a.state_dict()
    b = _trainer(proposals=4, group=2, seed=3)
    b.load_state_dict(state)
    assert b.updates == a.updates == 1 and list(b.window.recent) == list(a.window.recent)
    sa, sb = a.update([]), b.update([])
    assert sa == sb and "ps/valid_rate" in sa  # the resumed trainer draws and learns what the unbroken one does
    pa, pb = a.model.trainable_parameters(), b.model.trainable_parameters()
    assert all(np.allclose(pa[k].detach().numpy(), pb[k].detach().numpy()) for k in pa)


@pytest.mark.parametrize(
    "params,word",
    [
        ({"mode": "adversarial"}, "mode"),
        ({"reward": "hard"}, "reward"),
        ({"band": [0.7, 0.2]}, "band"),
        ({"group": 1}, "group"),
        ({"proposals": 0}, "proposals"),
        ({"temperature": 0}, "temperature"),
        ({"shape_penalty": 2}, "shape_penalty"),
        ({"invalid_reward": 1}, "invalid_reward"),
        ({"solver_samples": 8}, "solver_samples"),
    ],
)
def test_bad_settings_are_one_clear_error(params, word):
    with pytest.raises(ArenaError, match=word):
        _trainer(**params)


def test_needs_a_game_with_a_verifier():
    game = load_game("kuhn_poker")
    agent = load_agent({**AGENT, "model": str(tiny_model_dir(1))}, game)
    with pytest.raises(ArenaError, match="verifier"):
        ProposerSolver(game, [agent])


@pytest.mark.parametrize("mode", ["selfplay", "fixed"])
def test_llm_train_runs_end_to_end(tmp_path, mode):
    cfg = {
        "game": "arithmetic(probe_tasks=4,probe_samples=2)",
        "model": {"dir": str(tmp_path / "model"), "seed": 1},
        "agent": {"mode": "generated", "max_text_tokens": 4, "templates": "configs/llm/arithmetic_templates.yaml"},
        "trainer": "proposer_solver",
        "params": {"mode": mode, "proposals": 4, "group": 2, "torch_threads": 1},
        "iterations": 2,
        "games_per_iter": 4,
        "eval_every": 2,
        "eval_games": 0,
        "eval_opponents": [],
        "out": str(tmp_path / "run"),
        "quiet": True,
    }
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps(cfg))
    assert main(["llm-train", str(path)]) == 0
    rows = (tmp_path / "run" / "metrics.csv").read_text().splitlines()
    head = rows[0].split(",")
    assert "heldout_pass1" in head and "heldout_pass2" in head and "heldout_entropy" in head
    assert any("league_solve_rate" in h for h in head)
    assert (mode == "selfplay") == any(h.endswith("valid_rate") for h in head)
    last = dict(zip(head, rows[-1].split(",")))
    assert last["step"] == "2" and 0.0 <= float(last["heldout_pass1"]) <= 1.0


@pytest.fixture(scope="module")
def answering_model(tmp_path_factory) -> str:
    """The tiny model after a short warm-up on guessed answers (:class:`ArithmeticGuesser`): it
    writes numbers, right by chance now and then, so a group of answers has some spread."""
    import torch

    from arena.plugins.trainers.llm.pretrain import pretrain

    torch.set_num_threads(1)
    game = load_game(SMALL)
    agent = load_agent({**AGENT, "model": str(tiny_model_dir(1))}, game)
    trainable, losses = pretrain(
        agent, game, games=64, steps=20, batch=16, players="arithmetic_guesser", loss="response"
    )
    assert losses[-1] < 0.5 * losses[0]
    out = tmp_path_factory.mktemp("answering")
    trainable.save(out)
    return str(out)


SMALL = "arithmetic(max_depth=2,heldout_depths=[2],max_operand=2,probe_tasks=2,probe_samples=2)"


def test_passes_check_trainer(answering_model):
    from arena.testing import check_trainer

    llm = {**AGENT, "model": answering_model}
    check_trainer("proposer_solver", SMALL, [llm], params={"mode": "fixed", "group": 8, "torch_threads": 1}, games=4)
