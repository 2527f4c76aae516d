"""The trainable side of an ``llm`` agent: its weights, optimizer, optional LoRA, checkpoints and
the push of new weights into a running vLLM engine.

Why a private copy: the ``llm`` agent plugin shares one backend between agents built from the
same model path in a process, so training that object in place would also train every frozen
opponent or baseline built from the same path. The learner therefore gets its own copy. With
the transformers backend the agent then samples from exactly the weights being trained (no
sync at all); with vLLM the trainer keeps a transformers copy and after each update streams
every (merged) tensor into the engine with ``VLLMBackend.update_weights`` (in place, never a
reload from disk).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Iterator, Sequence

from arena.errors import ArenaError
from arena.plugins.agents.llm.hf import quiet_transformers

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
LOGPROB_BATCH_TOKENS = 16384
"""Prompt + continuation tokens per batch when recomputing log-probs (each continuation holds a
copy of its prompt's KV cache): a scored Deal or No Deal decision is ~50 labels behind a
~600-token prompt, and one pass over a whole batch asked for 4.7 GB."""


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise ArenaError("llm trainers need torch and transformers (pip install -e '.[llm]')") from None
    return torch


class TrainableLLM:
    """Owns the learner's weights. ``logprobs`` gives differentiable per-sequence log-probs."""

    def __init__(
        self,
        agent: Any,
        lr: float = 1e-3,
        lora: dict[str, Any] | None = None,
        max_grad_norm: float = 1.0,
        weight_decay: float = 0.0,
        model_path: str | None = None,
        device: str | None = None,
    ) -> None:
        torch = _torch()
        from arena.plugins.agents.llm.hf import TransformersBackend

        backend = getattr(agent, "backend", None)
        if backend is None or not hasattr(backend, "tokenizer"):
            raise ArenaError(
                f"llm trainers train 'llm' agents with a local backend (transformers or vllm); "
                f"agent '{getattr(agent, 'name', agent)}' has none"
            )
        self.agent = agent
        self.engine = None  # a vLLM backend to keep in sync
        if isinstance(backend, TransformersBackend):
            model = copy.deepcopy(backend.model)
            if device:
                model.to(_device(torch, device))
            tokenizer = backend.tokenizer
        elif getattr(backend, "name", "") == "vllm":
            from transformers import AutoModelForCausalLM

            path = model_path or _vllm_model_path(backend)
            model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).to(_device(torch, device or "cpu"))
            tokenizer = backend.tokenizer
            self.engine = backend
            backend.weight_updates = True  # the engine was started by this process; we push weights below
        else:
            raise ArenaError(
                f"llm trainers cannot train through backend '{getattr(backend, 'name', '?')}' "
                "(use transformers or vllm)"
            )
        self.lora = dict(lora) if lora else None
        if self.lora:
            model = _with_lora(model, self.lora)
        self.model = model
        self.tokenizer = tokenizer
        if self.engine is None:  # the agent samples from the weights being trained
            agent.backend = TransformersBackend(model, tokenizer)
            agent.backend.model.eval()
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.Adam(self.params, lr=lr, weight_decay=weight_decay)
        self.optimizers = [self.optimizer]
        self.max_grad_norm = max_grad_norm
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0

    # -- log-probabilities ----------------------------------------------------------------------
    def logprobs(
        self, pairs: Sequence[tuple[Sequence[int], Sequence[int]]], grad: bool = True, model: Any = None
    ) -> Any:
        """Summed log-prob of each continuation (second) after its prompt (first), one tensor.

        Identical pairs run once (a Kuhn batch has 12 distinct information sets, not 256), and
        a prompt runs once for all its continuations: its KV cache is copied to each of them, as
        the scoring backend does (``TransformersBackend.score_ids``). A scored decision is one
        prompt and every legal label (Deal or No Deal: ~25-50), so recomputing the prompt per
        label cost ~10x the tokens. Batches hold at most ``LOGPROB_BATCH_TOKENS`` prompt +
        continuation tokens (the copied caches are the memory that grows)."""
        torch = _torch()
        model = model or self.model
        keys: dict[tuple, int] = {}
        index = []
        for p, c in pairs:
            k = (tuple(p), tuple(c))
            index.append(keys.setdefault(k, len(keys)))
        uniq = list(keys)
        dev = next(model.parameters()).device  # the trainer's copy may live on a GPU (device: cuda)
        ctx = torch.enable_grad() if grad else torch.no_grad()
        was_training = model.training
        model.train(grad)
        parts, order = [], []
        with ctx:
            for chunk in _chunks(uniq, LOGPROB_BATCH_TOKENS):
                parts.append(self._shared_prefix_logprobs(model, [uniq[i] for i in chunk], dev))
                order += chunk
            seq_lp = torch.cat(parts)
        model.train(was_training)
        at = torch.empty(len(order), dtype=torch.long)
        at[torch.tensor(order, dtype=torch.long)] = torch.arange(len(order))
        return seq_lp[at.to(dev)[torch.tensor(index, dtype=torch.long, device=dev)]]

    def _shared_prefix_logprobs(self, model: Any, rows: Sequence[tuple[tuple, tuple]], dev: Any) -> Any:
        """One left-padded pass over the distinct prompts of ``rows``, then one pass over all
        continuations on the copied KV caches; differentiable when grad is on."""
        torch = _torch()
        from arena.plugins.agents.llm.hf import left_pad

        prompt_of: dict[tuple, int] = {}
        src = [prompt_of.setdefault(p, len(prompt_of)) for p, _ in rows]
        ids, mask, pos = left_pad(torch, list(prompt_of), self.pad_id)
        res = model(input_ids=ids.to(dev), attention_mask=mask.to(dev), position_ids=pos.to(dev), use_cache=True)
        s = torch.tensor(src, dtype=torch.long, device=dev)
        conts = [c for _, c in rows]
        heads = torch.tensor([c[0] if c else 0 for c in conts], dtype=torch.long, device=dev)
        first = torch.log_softmax(res.logits[:, -1].float(), dim=-1)[s, heads]
        out = first * torch.tensor([1.0 if c else 0.0 for c in conts], device=dev)
        width = max(len(c) for c in conts) - 1
        if width > 0:
            past = res.past_key_values
            past.reorder_cache(s)
            cont = torch.tensor([list(c[:-1]) + [self.pad_id] * (width - len(c) + 1) for c in conts], dtype=torch.long)
            want = torch.tensor([list(c[1:]) + [0] * (width - len(c) + 1) for c in conts], dtype=torch.long)
            cmask = torch.tensor([[1] * (len(c) - 1) + [0] * (width - len(c) + 1) for c in conts], dtype=torch.long)
            cpos = (pos[:, -1] + 1)[s.cpu()][:, None] + torch.arange(width)[None, :]
            res2 = model(
                input_ids=cont.to(dev),
                attention_mask=torch.cat([mask[s.cpu()], cmask], 1).to(dev),
                position_ids=cpos.to(dev),
                past_key_values=past,
                use_cache=True,
            )
            rest = torch.log_softmax(res2.logits.float(), dim=-1).gather(-1, want.to(dev)[:, :, None]).squeeze(-1)
            out = out + (rest * cmask.to(dev)).sum(-1)
        return out

    def step(self, loss: Any) -> float:
        """One optimizer step; returns the gradient norm before clipping."""
        torch = _torch()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(self.params, self.max_grad_norm)
        self.optimizer.step()
        self.model.eval()
        return float(norm)

    def frozen_copy(self) -> Any:
        """A detached copy of the current weights (SPPO's pi_t, a KL reference)."""
        m = copy.deepcopy(self.model)
        for p in m.parameters():
            p.requires_grad_(False)
        return m.eval()

    # -- weights out ---------------------------------------------------------------------------
    def merged_state(self) -> Iterator[tuple[str, Any]]:
        """(HF name, tensor) of the full model, LoRA adapters merged in (what vLLM and a
        snapshot directory need)."""
        if not self.lora:
            yield from self.model.state_dict().items()
            return
        self.model.merge_adapter()
        try:
            base = self.model.get_base_model()
            for name, t in base.state_dict().items():
                if "lora_" in name:
                    continue
                yield name.replace(".base_layer.", "."), t.detach().clone()
        finally:
            self.model.unmerge_adapter()

    def sync(self) -> None:
        """Push the new weights into the vLLM engine (no-op for the transformers backend)."""
        if self.engine is not None:
            self.engine.update_weights(list(self.merged_state()))

    def save(self, directory: str | Path) -> None:
        """A Hugging Face model directory (merged weights + tokenizer): ``llm:model=DIR`` loads it."""
        from transformers import AutoModelForCausalLM

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        base = self.model.get_base_model() if self.lora else self.model
        clean = AutoModelForCausalLM.from_config(base.config)
        clean.load_state_dict({k: v.detach().cpu() for k, v in self.merged_state()})
        with quiet_transformers():  # a league saves every step: no progress bar per save
            clean.save_pretrained(out, safe_serialization=True)
            self.tokenizer.save_pretrained(out)

    def state_dict(self) -> dict[str, Any]:
        return {
            "model": {k: v.detach().clone() for k, v in self.model.state_dict().items()},
            "optimizer": self.optimizer.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.sync()


def _chunks(rows: Sequence[tuple[tuple, tuple]], budget: int) -> Iterator[list[int]]:
    """Indices of ``rows`` (prompt, continuation) in batches of at most ``budget`` tokens, a
    prompt's rows together (sorted by prompt, so a prompt's cache is built once per batch)."""
    order = sorted(range(len(rows)), key=lambda i: (len(rows[i][0]), rows[i][0]))
    chunk: list[int] = []
    used = 0
    for i in order:
        cost = len(rows[i][0]) + len(rows[i][1])
        if chunk and used + cost > budget:
            yield chunk
            chunk, used = [], 0
        chunk.append(i)
        used += cost
    if chunk:
        yield chunk


def _device(torch: Any, device: str) -> Any:
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise ArenaError(f"llm trainers: device {device!r} requested but torch sees no CUDA GPU")
    return torch.device(device)


def _with_lora(model: Any, cfg: dict[str, Any]) -> Any:
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError:
        raise ArenaError("llm trainers: lora needs the peft package (pip install peft)") from None
    known = {"r", "alpha", "dropout", "targets"}
    bad = sorted(set(cfg) - known)
    if bad:
        raise ArenaError(f"llm trainers: unknown lora key(s) {', '.join(bad)}; keys: {', '.join(sorted(known))}")
    conf = LoraConfig(
        r=int(cfg.get("r", 8)),
        lora_alpha=int(cfg.get("alpha", 16)),
        lora_dropout=float(cfg.get("dropout", 0.0)),
        target_modules=list(cfg.get("targets", LORA_TARGETS)),
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, conf)


def _vllm_model_path(backend: Any) -> str:
    try:
        return str(backend.llm.llm_engine.model_config.model)
    except AttributeError:
        raise ArenaError("llm trainers: cannot find the vLLM engine's model path; pass model_path=DIR") from None


def attach(agent: Any, **kw: Any) -> TrainableLLM:
    """A :class:`TrainableLLM` for ``agent``; the agent's ``save`` then writes the trained weights
    (a league snapshots its learners through ``agent.save``)."""
    trainable = TrainableLLM(agent, **kw)
    agent.save = trainable.save
    return trainable
