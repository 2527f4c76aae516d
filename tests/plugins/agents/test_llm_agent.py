"""The llm agent's parts with the tiny model: tiny-model builder, prompts and templates, the
scored policy's exactness, batching invariance, generated-mode parsing, accounting, errors."""

from __future__ import annotations

import json
import math
import subprocess

import numpy as np
import pytest

pytest.importorskip("transformers")

from arena.agent import Observation  # noqa: E402
from arena.cli import main  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.loading import load_agent, load_game  # noqa: E402
from arena.playing.match import game_rng, sample_chance  # noqa: E402
from arena.plugins.agents.llm.selection import parse_choice, softmax_policy  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402
from support import arena_cmd  # noqa: E402


@pytest.fixture(scope="module")
def model() -> str:
    return str(tiny_model_dir())


@pytest.fixture(scope="module")
def game():
    return load_game("leduc_poker")


def _obs(game, n, seed=3):
    out = []
    for i in range(n):
        s = game.new_initial_state()
        sample_chance(s, game_rng(seed, i))
        for _ in range(i % 3):
            if s.is_terminal():
                break
            s.apply_action(s.legal_actions()[-1])
            sample_chance(s, game_rng(seed, i))
        if s.is_terminal():
            s = game.new_initial_state()
            sample_chance(s, game_rng(seed, i))
        out.append(Observation(s, s.current_player(), np.random.default_rng(100 + i), game.spec.full_name))
    return out


def test_tiny_model_cli_builds_a_loadable_model(tmp_path, model, capsys):
    out = tmp_path / "tiny"
    assert main(["tiny-model", str(out), "--seed", "0"]) == 0
    assert "parameters" in capsys.readouterr().out
    meta = json.loads((out / "arena_tiny_model.json").read_text())
    assert 100_000 <= meta["parameters"] <= 1_000_000
    config = json.loads((out / "config.json").read_text())
    assert config["hidden_size"] // config["num_attention_heads"] == 64
    # same seed, same weights as the shared test model
    assert (out / "model.safetensors").read_bytes() == (tiny_model_dir() / "model.safetensors").read_bytes()
    assert main(["tiny-model", str(tmp_path / "x"), "--heads", "3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "head dim 64" in err


def test_prompt_uses_chat_template_and_game_instruction(model, game):
    o = _obs(game, 1)[0]
    chat = load_agent({"name": "llm", "model": model}, game)
    prompt = chat.prompts.build(o)
    assert prompt.startswith("<|system|>\nYou are playing Leduc hold'em") and prompt.endswith("<|assistant|>\n")
    assert o.text in prompt and "Legal actions: " + ", ".join(o.action_labels) in prompt
    assert chat.prompts.continuation("call") == "call\n"
    plain = load_agent({"name": "llm", "model": model, "chat": False}, game)
    p2 = plain.prompts.build(o)
    assert p2.startswith("You are playing Leduc") and p2.endswith("Action:")
    assert plain.prompts.continuation("call") == " call\n"


def test_templates_from_a_yaml_file(tmp_path, model, game):
    path = tmp_path / "t.yaml"
    path.write_text("default:\n  choice: 'Moves: {actions}. Pick:'\nleduc_poker:\n  instruction: Play tight.\n")
    agent = load_agent({"name": "llm", "model": model, "chat": False, "templates": str(path)}, game)
    assert (
        agent.prompts.build(_obs(game, 1)[0])
        == "Play tight.\n\nMoves: " + ", ".join(_obs(game, 1)[0].action_labels) + ". Pick:"
    )
    agent = load_agent(
        {"name": "llm", "model": model, "chat": False, "templates": str(path), "instruction": "Bluff."}, game
    )
    assert agent.prompts.build(_obs(game, 1)[0]).startswith("Bluff.\n")
    path.write_text("leduc_poker:\n  colour: red\n")
    with pytest.raises(ArenaError, match="t.yaml, key 'leduc_poker'"):
        load_agent({"name": "llm", "model": model, "templates": str(path)}, game)
    path.write_text("default:\n  choice: '{board}'\n")
    agent = load_agent({"name": "llm", "model": model, "templates": str(path)}, game)
    with pytest.raises(ArenaError, match="unknown field 'board'"):
        agent.prompts.build(_obs(game, 1)[0])


def test_scored_policy_is_softmax_of_continuation_logprobs(model, game):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    agent = load_agent({"name": "llm", "model": model, "temperature": 2.0}, game)
    o = _obs(game, 1)[0]
    probs = agent.policy(o)
    tok = AutoTokenizer.from_pretrained(model)
    lm = AutoModelForCausalLM.from_pretrained(model)
    prompt = agent.prompts.build(o)
    scores = []
    for lbl in o.action_labels:  # independent reference: one full forward pass per action
        p = tok(prompt, add_special_tokens=False)["input_ids"]
        c = tok(lbl + "\n", add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            lp = torch.log_softmax(lm(torch.tensor([p + c])).logits[0], -1)
        scores.append(sum(float(lp[len(p) - 1 + j, t]) for j, t in enumerate(c)))
    expected = softmax_policy(o.legal_actions, scores, 2.0)
    assert max(abs(probs[a] - expected[a]) for a in o.legal_actions) < 1e-5
    greedy = load_agent({"name": "llm", "model": model, "temperature": 0}, game).policy(o)
    assert sorted(greedy.values())[-1] == 1.0 and greedy[o.legal_actions[int(np.argmax(scores))]] == 1.0


def test_scored_sampling_follows_the_policy(model, game):
    agent = load_agent({"name": "llm", "model": model, "temperature": 3.0, "cache": True}, game)
    o = _obs(game, 1)[0]
    probs = agent.policy(o)
    n = 2000
    counts = {a: 0 for a in o.legal_actions}
    for k in range(n):
        o.rng = np.random.default_rng(k)
        counts[agent.act(o)] += 1
    for a in o.legal_actions:  # 4.5 standard errors: a real bug fails, noise does not
        assert abs(counts[a] / n - probs[a]) < 4.5 * math.sqrt(probs[a] * (1 - probs[a]) / n) + 1e-9
    assert agent.stats()["cache_hits"] >= n


@pytest.mark.parametrize("mode", ["scored", "generated"])
def test_batched_equals_one_at_a_time(model, game, mode):
    """Per-decision generators and seeds: a decision does not depend on its batch mates."""
    spec = {"name": "llm", "model": model, "mode": mode, "max_new_tokens": 4, "retries": 1}
    batched = load_agent(spec, game)
    acts, infos = batched.act_batch_info(_obs(game, 5))
    single = load_agent(spec, game)
    one = [single.act_batch_info([o]) for o in _obs(game, 5)]
    assert acts == [a[0][0] for a in one]
    if mode == "generated":
        assert [i["attempts"] for i in infos] == [a[1][0]["attempts"] for a in one]
    assert batched.stats()["backend_calls"] < single.stats()["backend_calls"]
    assert batched.stats()["decisions"] == single.stats()["decisions"] == 5


def test_parse_choice_rule(game):
    o = _obs(game, 1)[0]
    labels = o.action_labels
    first = o.legal_actions[0]
    assert parse_choice(f"I will {labels[0]}.\n[{labels[0]}]", o) == first
    assert parse_choice(f"\\boxed{{{labels[0]}}}", o) == first
    assert parse_choice(f"{labels[0].upper()}!", o) == first
    assert parse_choice("1", o) == first
    assert parse_choice("", o) is None and parse_choice("zzz qqq", o) is None


def test_generated_fallback_rules(model, game):
    obs = _obs(game, 3)
    for fallback in ("first", "random", "scored"):
        agent = load_agent(
            {
                "name": "llm",
                "model": model,
                "mode": "generated",
                "retries": 0,
                "fallback": fallback,
                "max_new_tokens": 2,
            },
            game,
        )
        acts, infos = agent.act_batch_info(obs)
        for o, a, info in zip(obs, acts, infos):
            assert a in o.legal_actions and len(info["attempts"]) == 1
            if info["fallback"] and fallback == "first":
                assert a == o.legal_actions[0]
            if info["fallback"] and fallback == "scored":
                assert "log_prob" in info and info["log_prob"] <= 0
        assert agent.stats()["fallbacks"] == sum(i["fallback"] for i in infos)


def test_accounting_reaches_tensorboard_and_the_run_store(tmp_path, model, game):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from torch.utils.tensorboard import SummaryWriter

    agent = load_agent({"name": "llm", "model": model, "mode": "generated", "max_new_tokens": 3, "label": "bot"}, game)
    agent.act_batch(_obs(game, 4))
    stats = agent.stats()
    assert stats["tokens_in"] > 0 and stats["tokens_out"] > 0 and stats["latency_s"] > 0
    writer = SummaryWriter(str(tmp_path))
    agent.write_tensorboard(writer, step=7)
    writer.close()
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    assert acc.Scalars("llm/bot/tokens_out")[0].value == stats["tokens_out"]
    assert acc.Scalars("llm/bot/invalid_attempts")[0].step == 7
    from arena.evaluation.store import RunStore

    with RunStore.open(tmp_path / "run", "fp") as store:
        agent.write_store(store)
    with RunStore.open_existing(tmp_path / "run") as store:
        saved = json.loads(store.meta()["llm_usage/bot"])
    assert saved["tokens_in"] == stats["tokens_in"] and saved["invalid_attempts"] == stats["invalid_attempts"]


def test_model_object_is_shared_with_trainers(model, game):
    import torch

    agent = load_agent({"name": "llm", "model": model, "temperature": 1.0}, game)
    o = _obs(game, 1)[0]
    before = agent.policy(o)
    with torch.no_grad():  # an in-place update, as an optimizer step would make
        agent.model.lm_head.weight.mul_(3.0)
    after = agent.policy(o)
    with torch.no_grad():
        agent.model.lm_head.weight.div_(3.0)
    assert max(abs(before[a] - after[a]) for a in o.legal_actions) > 1e-3


@pytest.mark.parametrize(
    "spec, message",
    [
        ("llm:model=/nonexistent/dir", "model directory not found: /nonexistent/dir"),
        ("llm:model=MODEL,mode=guess", "mode must be one of scored, generated"),
        ("llm:model=MODEL,fallback=pray", "fallback must be one of"),
        ("llm:model=MODEL,backend=tgi", "backend must be one of transformers, vllm, openai"),
        ("llm:model=MODEL,colour=red", "has no parameter 'colour'"),
        ("llm:backend=transformers", "needs model=PATH"),
    ],
)
def test_bad_agent_specs_are_one_line_errors(model, spec, message, capsys):
    assert (
        main(["match", "--game", "kuhn_poker", "--games", "1", "--agents", spec.replace("MODEL", model), "random"]) == 2
    )
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and message in err, err


def test_cli_match_with_the_llm_agent(model):
    proc = subprocess.run(
        arena_cmd()
        + [
            "match",
            "--game",
            "kuhn_poker",
            "--games",
            "6",
            "--json",
            "--agents",
            f"llm:model={model},mode=generated,max_new_tokens=2",
            "random",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert len(data["results"]) == 6
    # fallback: forfeit (the default): an answer naming no legal move forfeits, nothing is substituted
    forfeits = [r["forfeit"] for r in data["results"] if r["forfeit"]]
    assert all(f["reason"].startswith("no legal move:") and f["agent"].startswith("llm") for f in forfeits)
    llm_row = next(v for k, v in data["agents"].items() if k.startswith("llm"))
    assert llm_row["forfeits"] == len(forfeits) and llm_row["substitutions"] == 0


def test_agents_on_one_model_share_one_backend_until_the_last_closes(model, game):
    from arena.plugins.agents import llm

    a = load_agent({"name": "llm", "model": model, "dtype": "float32", "device": "cpu"}, game)
    b = load_agent({"name": "llm", "model": model, "mode": "generated", "dtype": "float32", "device": "cpu"}, game)
    assert a.backend is b.backend
    key = next(k for k, v in llm._SHARED.items() if v is a.backend)
    refs = llm._REFS[key]
    a.close()
    assert llm._REFS[key] == refs - 1
    b.close()
    assert llm._REFS.get(key, 0) == refs - 2


@pytest.mark.parametrize("merge", [True, False])
def test_a_batch_runs_its_common_prefix_once_and_scores_as_one_at_a_time(model, game, merge):
    """Shared-prefix prefill: the prompts' common prefix is one batch-1 pass, then only the
    tails run; the policies equal those of one decision per call."""
    agent = load_agent({"name": "llm", "model": model, "merge": merge}, game)
    obs = _obs(game, 6)
    prompts = [agent.prompts.build(o) for o in obs]
    shapes = []
    hook = agent.model.register_forward_pre_hook(
        lambda m, a, kw: shapes.append(tuple(kw["input_ids"].shape)), with_kwargs=True
    )
    try:
        batched = agent._policies(obs, prompts)
    finally:
        hook.remove()
    single = [agent._policies([o], [p])[0] for o, p in zip(obs, prompts)]
    for (pb, _), (ps, _) in zip(batched, single):
        assert max(abs(pb[a] - ps[a]) for a in ps) < 1e-5
    ids = [tuple(agent.backend.prompt_ids(p)) for p in prompts]
    rows = set(ids) if merge else ids
    whole = sum(len(r) for r in rows)
    (one, prefix), (n, tail) = shapes[0], shapes[1]
    assert one == 1 and prefix >= 8 and n == len(rows)
    assert prefix + n * tail < whole  # fewer tokens than running every prompt whole
