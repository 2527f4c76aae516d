"""LoRA adapters on one shared base: mixed-adapter batches equal one-adapter passes, adapters
save and load as adapter directories, agents of one base decide together in a match, and bad
input is one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from arena.errors import ArenaError  # noqa: E402
from arena.loading import load_agent, load_game  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.plugins.agents.llm.adapters import AdapterBackend, shared_base  # noqa: E402
from arena.plugins.agents.llm.hf import TransformersBackend  # noqa: E402
from arena.tools.tiny_model import build_tiny_model, tiny_model_dir  # noqa: E402

PROMPTS = ["Kuhn poker. You hold the King. Your move:", "Kuhn poker. You hold the Jack. Opponent bet. Your move:"]
LABELS = [" bet", " pass", " call"]


@pytest.fixture(scope="module", params=["char", "bpe"])
def base(request):
    b = shared_base(str(tiny_model_dir(0, tokenizer=request.param)))
    names = [b.new_adapter({"rank": r}, f"t{r}", init="random", seed=r) for r in (2, 4, 8)]
    return b, names


def _pairs(backend):
    return [(backend.encode(p, special=True), backend.encode(c)) for p in PROMPTS for c in LABELS]


def test_mixed_adapter_scores_equal_one_adapter_passes(base):
    b, names = base
    view = AdapterBackend(b, names[0])
    pairs = _pairs(view)
    route = (names + ["__base__"]) * 2
    mixed = view.score_ids(pairs, adapters=route[: len(pairs)])
    for (pair, name), got in zip(zip(pairs, route), mixed):
        alone = AdapterBackend(b, name).score_ids([pair])[0] if name != "__base__" else None
        if alone is None:  # the bare base: peft's own path with every adapter disabled
            with b.model.disable_adapter():
                alone = TransformersBackend(b.model, b.tokenizer).score_ids([pair])[0]
        assert got == pytest.approx(alone, abs=1e-5)
    assert len({round(sum(m), 4) for m in mixed[:4]}) == 4  # the adapters really differ


def test_grouped_product_matches_peft_mixed_batches(base):
    b, names = base
    view = AdapterBackend(b, names[0])
    pairs = _pairs(view)
    route = [names[i % 3] for i in range(len(pairs))]
    ours = view.score_ids(pairs, adapters=route)
    peft_path = TransformersBackend(b.model, b.tokenizer).score_ids(pairs, adapters=route)  # peft's adapter_names
    for x, y in zip(ours, peft_path):
        assert x == pytest.approx(y, abs=1e-5)


def test_mixed_adapter_generation_equals_one_adapter_generation(base):
    b, names = base
    view = AdapterBackend(b, names[0])
    prompts = [view.encode(p, special=True) for p in PROMPTS] * 2
    route = [names[0], names[1], names[2], names[1]]
    seeds = [11, 12, 13, 14]
    mixed = view.generate_ids(prompts, max_tokens=6, temperature=1.0, seeds=seeds, adapters=route)
    for prompt, seed, name, got in zip(prompts, seeds, route, mixed):
        alone = AdapterBackend(b, name).generate_ids([prompt], max_tokens=6, temperature=1.0, seeds=[seed])[0]
        assert got.completion_ids == alone.completion_ids
        assert got.token_logprobs == pytest.approx(alone.token_logprobs, abs=1e-5)


def test_adapter_directory_round_trip_shares_the_base(tmp_path):
    model = str(tiny_model_dir(0))
    b = shared_base(model)
    name = b.new_adapter({"rank": 4}, "saved", init="random", seed=7)
    AdapterBackend(b, name).save(tmp_path / "a")
    files = {p.name for p in (tmp_path / "a").iterdir()}
    assert files == {"adapter_config.json", "adapter_model.safetensors"}
    weights = (tmp_path / "a" / "adapter_model.safetensors").stat().st_size
    assert weights < 0.1 * sum(p.stat().st_size for p in Path(model).glob("*.safetensors"))
    game = load_game("kuhn_poker")
    by_dir = load_agent(f"llm:model={tmp_path / 'a'}", game)
    by_pair = load_agent(f"llm:model={model},adapter={tmp_path / 'a'}", game)
    assert by_dir.backend.base is by_pair.backend.base is b  # one base model in the process
    pairs = _pairs(by_dir.backend)
    want = [x for row in AdapterBackend(b, name).score_ids(pairs) for x in row]
    for agent in (by_dir, by_pair):
        assert [x for row in agent.backend.score_ids(pairs) for x in row] == pytest.approx(want, abs=1e-6)


def test_adapters_decide_together_in_a_match(monkeypatch, tmp_path):
    game = load_game("kuhn_poker")
    model = str(tiny_model_dir(0))
    b = shared_base(model)
    dirs = []
    for seed in (1, 2):
        name = b.new_adapter({"rank": 4}, "m", init="random", seed=seed)
        d = tmp_path / f"adapter-{seed}"
        AdapterBackend(b, name).save(d)
        dirs.append(d)
    agents = [load_agent(f"llm:model={d}", game) for d in dirs]
    calls: list[int] = []
    real = AdapterBackend.score_ids

    def counted(self, pairs, adapters=None):
        calls.append(len(set(adapters or [self.adapter])))
        return real(self, pairs, adapters)

    monkeypatch.setattr(AdapterBackend, "score_ids", counted)
    together = play_games(game, agents, 24, seed=3, batch_size=24, rotate_seats=True)
    assert max(calls) == 2  # one call held both adapters' rows
    assert agents[0].stats()["decisions"] + agents[1].stats()["decisions"] == sum(r.length for r in together)
    calls.clear()
    monkeypatch.setattr(type(agents[0]), "cobatch_key", lambda self: None)
    alone = play_games(game, agents, 24, seed=3, batch_size=24, rotate_seats=True)
    assert max(calls) == 1
    assert [r.returns for r in together] == [r.returns for r in alone]


def test_bad_input_is_one_clear_line(tmp_path):
    game = load_game("kuhn_poker")
    model = str(tiny_model_dir(0))
    other = build_tiny_model(tmp_path / "other", seed=5)
    b = shared_base(str(other))
    AdapterBackend(b, b.new_adapter({"rank": 2}, "x")).save(tmp_path / "foreign")
    with pytest.raises(ArenaError, match=r"made for base model .*other.* not .*arena-tiny-model"):
        load_agent(f"llm:model={model},adapter={tmp_path / 'foreign'}", game)
    with pytest.raises(ArenaError, match="adapter directory not found"):
        load_agent(f"llm:model={model},adapter={tmp_path / 'missing'}", game)
    cfg = json.loads((tmp_path / "foreign" / "adapter_config.json").read_text())
    cfg["base_model_name_or_path"] = str(tmp_path / "gone")
    (tmp_path / "gone-adapter").mkdir()
    (tmp_path / "gone-adapter" / "adapter_config.json").write_text(json.dumps(cfg))
    with pytest.raises(ArenaError, match="base model directory not found"):
        load_agent(f"llm:model={tmp_path / 'gone-adapter'}", game)
    with pytest.raises(ArenaError, match="rank must be >= 1"):
        shared_base(model).new_adapter({"rank": 0})
    with pytest.raises(ArenaError, match="unknown key"):
        shared_base(model).new_adapter({"rnak": 4})
    if not torch.cuda.is_available():
        with pytest.raises(ArenaError, match="no CUDA GPU"):
            load_agent(f"llm:model={model},adapter=new,device=cuda", game)


def test_adapter_learner_frozen_references_are_released_when_dropped():
    import gc

    from arena.plugins.trainers.llm.model import TrainableLLM

    game = load_game("kuhn_poker")
    agent = load_agent(f"llm:model={tiny_model_dir(0)},adapter=new", game)
    learner = TrainableLLM(agent, lora={"rank": 4})
    before = set(learner.base.model.peft_config)
    ref = learner.frozen_copy()  # a DPO reference, refreshed below as DPO does
    assert set(learner.base.model.peft_config) - before == {ref.name}
    ref = learner.frozen_copy()
    gc.collect()
    assert set(learner.base.model.peft_config) - before == {ref.name}
