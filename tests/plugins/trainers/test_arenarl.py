"""ArenaRL and judges with a tiny local LLM: the ``llm`` judge cancels position bias; an
``arenarl`` learner with an ``llm`` judge trains in a league from YAML, survives SIGKILL and
shows on the leaderboard; bad input (group < 2, unknown judge, a judge returning NaN) is one
clear line and the run keeps its committed steps."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("transformers")

from arena.cli import main  # noqa: E402
from arena.judge import Candidate, checked_compare
from arena.loading import (
    load_game,  # noqa: E402
    load_judge,  # noqa: E402
)
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402
from arena.trainer import Trajectory  # noqa: E402
from support.league import committed, kill_when  # noqa: E402


def _answer(game, instance, text):
    s = game.new_initial_state()
    s.apply_action(instance)
    s.apply_action(text)
    return Candidate(Trajectory(0, 0, ["x"], [], [0.0]), 0, s)


def test_llm_judge_both_orders_is_antisymmetric_and_accounted():
    game = load_game("open_task")
    judge = load_judge({"name": "llm", "model": str(tiny_model_dir(1))}, game)
    a, b, c = _answer(game, 0, "buy food"), _answer(game, 0, "zzzz"), _answer(game, 0, "go to the park")
    m = checked_compare(judge, [(a, b), (b, a), (a, c), (a, a)])
    # a random tiny model has a strong position bias and (almost) no taste: asked in both orders
    # the bias cancels, and what is left is antisymmetric
    assert m[0] == pytest.approx(-m[1], abs=1e-6) and m[3] == pytest.approx(0.0, abs=1e-6)
    assert all(abs(x) < 1e-3 for x in m)
    st = judge.stats()
    assert st["calls"] == 1 and st["comparisons"] == 4 and st["tokens_in"] > 0  # 8 prompts in one backend call
    one_order = load_judge({"name": "llm", "model": str(tiny_model_dir(1)), "both_orders": False}, game)
    raw = checked_compare(one_order, [(a, b), (b, a)])
    assert raw[0] > 0.1 and raw[1] > 0.1  # one order: "the first one is better" whichever it is


def league(out: Path, judge, steps: int = 2, group: int = 4) -> dict:
    return {
        "game": "open_task(length=8)",
        "seed": 0,
        "steps": steps,
        "out": str(out),
        "progress": False,
        "tensorboard": False,
        "plots": False,
        "population": [
            {
                "label": "base",
                "agent": {"name": "llm", "model": str(tiny_model_dir(1)), "mode": "generated", "max_text_tokens": 8},
            },
            {
                "label": "arl",
                "role": "learner",
                "matchmaking": "self_play",
                "games_per_step": 2,
                "snapshot_every": 1,
                "agent": {"name": "llm", "model": str(tiny_model_dir(1)), "mode": "generated", "max_text_tokens": 8},
                "trainer": {
                    "name": "arenarl",
                    "params": {"group": group, "judge": judge, "lr": 0.001, "torch_threads": 1},
                },
            },
        ],
        "evaluation": {"every": 1, "games": 2, "ratings": {"bootstrap": 0, "rank_by": "mean_return"}},
    }


@pytest.mark.slow
def test_arenarl_league_with_llm_judge_resumes_after_sigkill(tmp_path):
    judge = {"name": "llm", "model": str(tiny_model_dir(1))}
    cfg = tmp_path / "league.yaml"
    out = tmp_path / "run"
    cfg.write_text(yaml.safe_dump(league(out, judge)))
    cmd = [sys.executable, "-m", "arena.cli", "league", str(cfg), "--quiet"]
    kill_when(cmd, out / "arena.sqlite", lambda c: c >= 1)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    board = json.loads((out / "leaderboard.json").read_text())
    assert "arl@2" in {r["agent"] for r in board["rows"]}
    assert (out / "snapshots" / "arl@2" / "model.safetensors").exists()
    rows = (out / "metrics.csv").read_text().splitlines()
    assert "true_score" in rows[0] and "train/arl/comparisons" in rows[0]


def nan_after_first_step(c):
    nan_after_first_step.calls += 1  # type: ignore[attr-defined]
    return math.nan if nan_after_first_step.calls > 40 else 0.1  # type: ignore[attr-defined]


nan_after_first_step.calls = 0  # type: ignore[attr-defined]


def test_bad_judges_and_groups_are_one_line_and_keep_committed_steps(tmp_path, capsys):
    for judge, group, msg in (("nope", 4, "unknown judge 'nope'"), ("scorer", 1, "group must be at least 2")):
        cfg = tmp_path / "bad.yaml"
        cfg.write_text(yaml.safe_dump(league(tmp_path / "bad", judge, group=group)))
        assert main(["league", str(cfg), "--quiet"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and msg in err[0], err
    nan_after_first_step.calls = 0  # type: ignore[attr-defined]
    cfg = tmp_path / "nan.yaml"
    cfg.write_text(
        yaml.safe_dump(league(tmp_path / "nan", "scorer:fn=tests.plugins.trainers.test_arenarl:nan_after_first_step"))
    )
    assert main(["league", str(cfg), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "non-finite" in err[-1] and "judge 'scorer'" in err[-1]
    assert committed(tmp_path / "nan" / "arena.sqlite") == 1
    assert (tmp_path / "nan" / "snapshots" / "arl@1" / "model.safetensors").exists()


def test_sppo_outcome_judge_is_the_playout_preference_centred_and_halved():
    """Same playouts: P_judge(a) − ½ = ((P_play(a) − ½) − Σ_b π(b)(P_play(b) − ½)) / 2 on Kuhn
    (outcome judge margin (R_a − R_b)/4, playout version (1 + Q/2)/2)."""
    from arena.loading import load_agent
    from arena.playing.match import play_games
    from arena.plugins.trainers.llm.sppo import SPPO

    game = load_game("kuhn_poker")
    make = lambda: load_agent({"name": "llm", "model": str(tiny_model_dir(1)), "temperature": 16}, game)  # noqa: E731
    played = load_agent({"name": "llm", "model": str(tiny_model_dir(1)), "temperature": 16}, game)
    trajs = [r.trajectory for r in play_games(game, [played, played], num_games=3, seed=2, record=True)]
    plain = SPPO(game, [make()], rollouts=2, torch_threads=1)
    judged = SPPO(game, [make()], rollouts=2, judge="outcome", torch_threads=1)
    for t in trajs:
        t.seats = [plain.agent.name] * 2
    p_play, _ = plain.preferences(trajs)
    p_judge, _ = judged.preferences(trajs)
    assert set(p_play) == set(p_judge) and p_play
    for key, (obs, pa) in p_play.items():
        pol = plain.agent.policy(obs)
        centre = sum(pol[b] * (pa[b] - 0.5) for b in pa)
        for a in pa:
            assert p_judge[key][1][a] - 0.5 == pytest.approx((pa[a] - 0.5 - centre) / 2, abs=1e-9)


def test_sppo_outcome_judge_against_opponents_is_the_playout_version():
    """``against: opponents`` with the ``outcome`` judge on Kuhn (two-player zero-sum): the same
    preferences, bit for bit, and after two SPPO iterations the same weights."""
    import torch

    from arena.loading import load_agent
    from arena.playing.match import play_games
    from arena.plugins.trainers.llm.sppo import SPPO

    game = load_game("kuhn_poker")
    make = lambda: load_agent({"name": "llm", "model": str(tiny_model_dir(1)), "temperature": 16}, game)  # noqa: E731
    plain = SPPO(game, [make()], rollouts=2, epochs=2, torch_threads=1)
    judged = SPPO(game, [make()], rollouts=2, epochs=2, judge="outcome", against="opponents", torch_threads=1)
    for it in range(2):
        trajs = [r.trajectory for r in play_games(game, [plain.agent] * 2, num_games=3, seed=it, record=True)]
        for t in trajs:
            t.seats = [plain.agent.name] * 2
        p_play, _ = plain.preferences(trajs)
        p_judge, _ = judged.preferences(trajs)
        assert p_play and {k: v[1] for k, v in p_play.items()} == {k: v[1] for k, v in p_judge.items()}
        assert any(abs(p - 0.5) > 0.05 for _, c in p_play.values() for p in c.values())  # not all ties
        plain.update(trajs)
        judged.update(trajs)
    for (name, a), (_, b) in zip(plain._params().items(), judged._params().items()):
        assert torch.equal(a, b), name
    with pytest.raises(Exception, match="against must be"):
        SPPO(game, [make()], judge="outcome", against="everyone")


def test_sppo_kept_iterate_is_the_mean_of_the_iterates_and_what_snapshots_save(tmp_path):
    import torch

    from arena.loading import load_agent
    from arena.playing.match import play_games
    from arena.plugins.trainers.llm.sppo import SPPO

    game = load_game("kuhn_poker")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir(1)), "temperature": 16}, game)
    tr = SPPO(game, [agent], rollouts=1, epochs=2, average=True, torch_threads=1)
    seen = []
    for it in range(2):
        trajs = [r.trajectory for r in play_games(game, [agent, agent], num_games=2, seed=it, record=True)]
        out = tr.update(trajs)
        seen.append({n: p.detach().clone() for n, p in tr._params().items()})
        assert "sppo/kept_exploitability" in out and "sppo/last_exploitability" in out
    name = next(iter(seen[0]))
    assert torch.allclose(tr.kept[name], (seen[0][name] + seen[1][name]) / 2)
    agent.save(tmp_path / "snap")  # the kept iterate; the live weights are untouched
    assert torch.equal(tr._params()[name], seen[1][name])
    from safetensors.torch import load_file

    saved = load_file(str(tmp_path / "snap" / "model.safetensors"))
    assert torch.allclose(saved[name], tr.kept[name])
    state = tr.state_dict()
    tr.kept = None
    tr.load_state_dict(state)
    assert torch.allclose(tr.kept[name], (seen[0][name] + seen[1][name]) / 2)
