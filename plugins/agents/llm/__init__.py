"""``llm`` agent plugin: LLM policies with transformers, vLLM or OpenAI-compatible backends.

Spec string examples::

    llm:model=/tmp/tiny,mode=scored,temperature=1.0
    llm:model=/tmp/tiny,backend=vllm,mode=generated,retries=2,fallback=scored
    llm:backend=openai,base_url=http://127.0.0.1:8000,model=tiny,mode=generated
    llm:model=/tmp/base,adapter=/tmp/lora        (a LoRA adapter over a base shared in the process)
    llm:model=/tmp/snapshot/mixture              (a saved mixture, sppo's average: mixture: one member per game)

See docs/llm.md for every parameter, the retry/fallback rule and the accounting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.agent import AgentEntry
from arena.errors import ArenaError
from arena.game import Game
from arena.hookspecs import hookimpl
from arena.plugins.agents.llm.adapters import AdapterBackend, adapter_base, is_adapter_dir, shared_base
from arena.plugins.agents.llm.agent import LLMAgent, check_settings
from arena.plugins.agents.llm.backend import Backend, Generation, Scored
from arena.plugins.agents.llm.mixture import SampledMixture, is_mixture_dir, load_mixture
from arena.plugins.agents.llm.prompts import OBSERVATIONS, PromptBuilder, load_templates

BACKENDS = ("transformers", "vllm", "openai")

PARAMS: dict[str, Any] = {
    "model": None,
    "adapter": None,
    "backend": "transformers",
    "mode": "scored",
    "temperature": 1.0,
    "retries": 2,
    "fallback": "forfeit",
    "legal_moves": True,
    "observation": "text",
    "retry_temperature": 1.0,
    "max_new_tokens": 16,
    "max_text_tokens": 64,
    "cache": False,
    "score": "sum",
    "chat": "auto",
    "instruction": None,
    "templates": None,
    "device": "cpu",
    "dtype": "float32",
    "merge": True,
    "gpu_memory_utilization": 0.85,
    "max_model_len": None,
    "enforce_eager": False,
    "max_loras": 4,
    "max_lora_rank": 16,
    "lora_eviction": True,
    "base_url": None,
    "api_key_env": "OPENAI_API_KEY",
    "timeout": 60.0,
    "http_retries": 3,
    "backoff": 0.5,
    "concurrency": 16,
    "max_retry_after": 60.0,
}

_SHARED: dict[tuple, Backend] = {}
_REFS: dict[tuple, int] = {}


def make_backend(backend: str = "transformers", model: str | None = None, **kw: Any) -> Backend:
    """Build (or reuse, within this process) a backend. Agents on the same local model and
    settings share one model/engine: loading a vLLM engine per seat would waste memory."""
    if backend not in BACKENDS:
        raise ArenaError(f"llm agent: backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if backend == "openai":
        if not kw.get("base_url"):
            raise ArenaError("llm agent: backend 'openai' needs base_url=http://HOST:PORT")
        from arena.plugins.agents.llm.openai_http import OpenAIBackend

        return OpenAIBackend(
            kw["base_url"],
            model or "default",
            api_key_env=kw.get("api_key_env", "OPENAI_API_KEY"),
            timeout=kw.get("timeout", 60.0),
            retries=kw.get("http_retries", 3),
            backoff=kw.get("backoff", 0.5),
            chat=bool(kw.get("chat") is True),
            concurrency=kw.get("concurrency", 16),
            max_retry_after=kw.get("max_retry_after", 60.0),
        )
    if not model:
        raise ArenaError(
            f"llm agent: backend '{backend}' needs model=PATH (a local model directory; "
            "`arena tiny-model DIR` builds a tiny one)"
        )
    if not Path(str(model)).is_dir():  # a local directory only: nothing is downloaded at run time
        raise ArenaError(
            f"llm agent: model directory not found: {model} (backends load local model "
            "directories only; `arena tiny-model DIR` builds a tiny one)"
        )
    adapter = kw.pop("adapter", None)
    if adapter is not None or is_adapter_dir(model):
        return _adapter_backend(backend, str(model), adapter, kw)
    key = (backend, str(model), tuple(sorted((k, str(v)) for k, v in kw.items())))
    if key in _SHARED:
        _REFS[key] += 1
        return _SHARED[key]
    if backend == "transformers":
        from arena.plugins.agents.llm.hf import TransformersBackend

        b: Backend = TransformersBackend(
            str(model),
            device=kw.get("device", "cpu"),
            dtype=kw.get("dtype", "float32"),
            merge=bool(kw.get("merge", True)),
        )
    else:
        from arena.plugins.agents.llm.vllm_backend import VLLMBackend

        dtype = kw.get("dtype", "float32")
        b = VLLMBackend(
            str(model),
            dtype=dtype,
            max_model_len=kw.get("max_model_len"),
            gpu_memory_utilization=kw.get("gpu_memory_utilization", 0.85),
            enforce_eager=bool(kw.get("enforce_eager", False)),
            enable_lora=bool(kw.get("enable_lora", False)),
            max_loras=int(kw.get("max_loras", 4)),
            max_lora_rank=int(kw.get("max_lora_rank", 16)),
            lora_eviction=bool(kw.get("lora_eviction", True)),
        )
    _SHARED[key], _REFS[key] = b, 1
    return b


def _adapter_backend(backend: str, model: str, adapter: Any, kw: dict[str, Any]) -> Backend:
    """An adapter on the process's shared base: ``model=BASE,adapter=DIR|new`` or ``model=ADAPTER_DIR``."""
    if backend not in ("transformers", "vllm"):
        raise ArenaError(f"llm agent: LoRA adapters run on the transformers or vllm backends, not {backend!r}")
    if is_adapter_dir(model):
        if adapter is not None:
            raise ArenaError(
                f"llm agent: {model} is itself an adapter; give model=ADAPTER_DIR or model=BASE,adapter=DIR, not both"
            )
        model, adapter = adapter_base(model), model
    if backend == "vllm":  # one engine per base (shared like any vLLM engine), one LoRA id per adapter
        if str(adapter) == "new" or not Path(str(adapter)).is_dir():
            raise ArenaError(f"llm agent: a vLLM adapter agent needs an adapter directory, not {adapter!r}")
        from arena.plugins.agents.llm.vllm_backend import VLLMAdapterView

        engine: Any = make_backend("vllm", model, **{**kw, "enable_lora": True})
        return VLLMAdapterView(engine, engine.add_adapter(str(adapter)))
    base = shared_base(model, str(kw.get("device", "cpu")), str(kw.get("dtype", "float32")))
    if str(adapter) == "new":
        b = AdapterBackend(base, base.new_adapter({}, hint="new"), merge=bool(kw.get("merge", True)))
        b.fresh = True
        return b
    if not Path(str(adapter)).is_dir():
        raise ArenaError(f"llm agent: adapter directory not found: {adapter}")
    return AdapterBackend(base, base.load_adapter(str(adapter)), merge=bool(kw.get("merge", True)))


def release_backend(b: Backend) -> None:
    """An agent is done with ``b``: a shared backend closes when its last agent lets go."""
    for key, shared in list(_SHARED.items()):
        if shared is b:
            _REFS[key] -= 1
            if _REFS[key] > 0:
                return
            del _SHARED[key], _REFS[key]
            break
    b.close()


def reload_in_place(agent: Any, directory: str | Path) -> bool:
    """Load a newer checkpoint of ``agent``'s model (a directory ``save`` wrote) into its running
    vLLM engine through the engine's weight-sync extension, instead of starting a new engine:
    how a rollout worker follows a learner's versions. Only an engine this agent alone uses is
    changed (a shared one also serves other agents); returns False when it cannot, and the caller
    builds the agent afresh."""
    b = agent.backend
    key = next((k for k, shared in _SHARED.items() if shared is b), None)
    if getattr(b, "name", "") != "vllm" or key is None or _REFS[key] != 1:
        return False
    files = sorted(Path(directory).glob("*.safetensors"))
    if not files:
        return False
    from safetensors.torch import load_file

    tensors: dict[str, Any] = {}
    for f in files:
        tensors.update(load_file(str(f)))
    b.update_weights(tensors.items())
    refs = _REFS.pop(key)
    del _SHARED[key]
    moved = (key[0], str(directory), key[2])  # the engine now holds that directory's weights
    _SHARED[moved], _REFS[moved] = b, refs
    return True


def make_llm_agent(
    game: Game,
    model: str | None = None,
    backend: str = "transformers",
    mode: str = "scored",
    temperature: float = 1.0,
    retries: int = 2,
    fallback: str = "forfeit",
    retry_temperature: float = 1.0,
    max_new_tokens: int = 16,
    max_text_tokens: int = 64,
    cache: bool = False,
    score: str = "sum",
    chat: Any = "auto",
    legal_moves: bool = True,
    observation: str = "text",
    instruction: str | None = None,
    templates: str | None = None,
    **backend_kw: Any,
) -> LLMAgent | SampledMixture:
    spec = {k: v for k, v in locals().items() if k not in ("game", "backend_kw")} | backend_kw
    unknown = sorted(set(backend_kw) - set(PARAMS))
    if unknown:
        raise ArenaError(
            f"agent 'llm' has no parameter {', '.join(map(repr, unknown))}; parameters: {', '.join(sorted(PARAMS))}"
        )
    if chat not in ("auto", True, False):
        raise ArenaError(f"llm agent: chat must be auto, true or false, not {chat!r}")
    check_settings(mode, fallback, score, int(retries), int(max_new_tokens), int(max_text_tokens), float(temperature))
    if legal_moves not in (True, False):
        raise ArenaError(f"llm agent: legal_moves must be true or false, not {legal_moves!r}")
    if observation not in OBSERVATIONS:
        raise ArenaError(f"llm agent: observation must be text or json, not {observation!r}")
    if is_mixture_dir(model):  # a kept mixture (sppo average: mixture): one member per game
        return load_mixture(model, lambda member: make_llm_agent(game, **{**spec, "model": member}))
    b = make_backend(backend, model, chat=chat, **backend_kw)
    prompts = PromptBuilder(
        load_templates(templates),
        instruction,
        chat=b.render_chat,
        use_chat=chat is not False,
        legal_moves=legal_moves,
        observation=observation,
    )
    agent = LLMAgent(
        b,
        mode=mode,
        temperature=float(temperature),
        prompts=prompts,
        retries=int(retries),
        fallback=fallback,
        retry_temperature=float(retry_temperature),
        max_new_tokens=int(max_new_tokens),
        max_text_tokens=int(max_text_tokens),
        cache=bool(cache),
        score=score,
    )
    agent.release = release_backend
    agent.reload_weights = lambda directory: reload_in_place(agent, directory)  # type: ignore[attr-defined]
    return agent


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry(
            "llm",
            make_llm_agent,
            "LLM policy: prompt + backend (transformers, vllm, openai) + scored or generated actions",
            PARAMS,
            checkpoint_param="model",
            checkpoint_replaces=("adapter",),
        )
    ]


__all__ = ["LLMAgent", "Backend", "Generation", "Scored", "PromptBuilder", "make_backend", "make_llm_agent"]
