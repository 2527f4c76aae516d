"""The trainable side of an ``llm`` agent: its weights, optimizer, optional LoRA, checkpoints and
the push of new weights into a running vLLM engine.

Two kinds of learner. A *full-model* learner owns a private copy of the weights (below). An
*adapter* learner (a ``lora`` setting, or an agent already on an adapter: ``llm:model=BASE,adapter=new``)
is one named LoRA adapter on the process's shared base model
(:mod:`arena.plugins.agents.llm.adapters`): its optimiser, checkpoints, snapshots and frozen
references are adapters only (megabytes), and every other agent on that base keeps sharing it.

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

LOGPROB_BATCH_TOKENS = 16384
"""Prompt tokens per forward pass when recomputing log-probs (without grad this bounds memory:
one pass over a whole Deal or No Deal batch asked for 4.7 GB)."""


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise ArenaError("llm trainers need torch and transformers (pip install -e '.[llm]')") from None
    return torch


class AdapterRef:
    """A frozen adapter on the shared base, usable wherever a frozen model is (``logprobs(model=...)``).
    The adapter is deleted from the base when the reference is dropped (a DPO reference refreshed
    every few updates does not pile up adapters)."""

    def __init__(self, base: Any, name: str) -> None:
        import weakref

        self.base, self.name = base, name
        weakref.finalize(self, base.release, name)


class TrainableLLM:
    """Owns the learner's weights. ``logprobs`` gives differentiable per-sequence log-probs."""

    base: Any = None
    """The shared base model (:class:`~arena.plugins.agents.llm.adapters.SharedBase`) of an adapter learner."""
    adapter: str | None = None

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
        self.lora = dict(lora) if lora else None
        if self._adapter_learner(backend, device):
            self._finish(lr, weight_decay, max_grad_norm)
            return
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
        if self.lora:
            model = _with_lora(model, self.lora)
        self.model = model
        self.tokenizer = tokenizer
        if self.engine is None:  # the agent samples from the weights being trained
            agent.backend = TransformersBackend(model, tokenizer)
            agent.backend.model.eval()
        self.params = [p for p in model.parameters() if p.requires_grad]
        self._finish(lr, weight_decay, max_grad_norm)

    def _finish(self, lr: float, weight_decay: float, max_grad_norm: float) -> None:
        torch = _torch()
        self.optimizer = torch.optim.Adam(self.params, lr=lr, weight_decay=weight_decay)
        self.optimizers = [self.optimizer]
        self.max_grad_norm = max_grad_norm
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0

    def _adapter_learner(self, backend: Any, device: str | None) -> bool:
        """Become an adapter learner when the agent is on an adapter or ``lora`` asks for one on a
        local transformers model (the agent then plays through that adapter of the shared base)."""
        from arena.plugins.agents.llm.adapters import AdapterBackend, shared_base
        from arena.plugins.agents.llm.vllm_backend import VLLMAdapterView

        if isinstance(backend, VLLMAdapterView):
            return self._vllm_adapter_learner(backend, device)
        on_adapter = isinstance(backend, AdapterBackend)
        if not on_adapter and not (self.lora and getattr(backend, "name", "") == "transformers"):
            return False
        if on_adapter and self.lora and not backend.fresh:
            _same_shape(backend, self.lora)  # a resumed or snapshotted learner: train the adapter it plays
        if on_adapter:
            base = backend.base
        else:
            path = getattr(backend, "source", None)
            if path is None:
                raise ArenaError("llm trainers: lora on a shared base needs an agent loaded from a model directory")
            base = shared_base(path, device or str(backend.device), str(backend.dtype_name))
        if device and str(device) != base.device:
            raise ArenaError(
                f"llm trainers: an adapter learner trains on its base model's device ({base.device}), not {device}"
            )
        if not on_adapter or (self.lora and backend.fresh):
            name = base.new_adapter(self.lora or {}, hint=str(getattr(self.agent, "name", "learner")))
            old = backend
            self.agent.backend = AdapterBackend(base, name)
            if on_adapter:
                base.release(old.adapter)
            elif callable(getattr(self.agent, "release", None)):
                self.agent.release(old)
        self.base, self.adapter = base, self.agent.backend.adapter
        self.agent.backend.fresh = False
        base.model.set_adapter(self.adapter)  # a plain forward of the shared model now runs this learner's adapter
        self.model, self.tokenizer = base.model, base.tokenizer
        self.params = base.parameters(self.adapter)
        return True

    def _vllm_adapter_learner(self, view: Any, device: str | None) -> bool:
        """An adapter the agent plays on a vLLM engine: the trainer trains a transformers copy of it
        (fp32, on ``device``) and each :meth:`sync` hands the engine the new version as a new LoRA
        id (a directory of megabytes; no weight sync, and vLLM evicts unused versions)."""
        import shutil
        import tempfile
        import weakref

        from arena.plugins.agents.llm.adapters import shared_base

        engine = view.base
        base = shared_base(engine.model_path, device or "cpu", "float32")
        self.base = base
        self.adapter = base.load_adapter(engine.loras[view.adapter].lora_path, hint="vllm-learner")
        self.view = view
        self.versions = Path(tempfile.mkdtemp(prefix="arena-lora-versions-"))
        weakref.finalize(self, shutil.rmtree, self.versions, True)  # the versions go with the learner
        self.version = 0
        self.model, self.tokenizer = base.model, base.tokenizer
        self.params = base.parameters(self.adapter)
        return True

    # -- log-probabilities ----------------------------------------------------------------------
    def logprobs(
        self, pairs: Sequence[tuple[Sequence[int], Sequence[int]]], grad: bool = True, model: Any = None
    ) -> Any:
        """Summed log-prob of each continuation (second) after its prompt (first), one tensor.

        The agent's own prefix-shared passes (``TransformersBackend.sequence_logprobs``) with
        grad on: identical pairs run once (a Kuhn batch has 12 distinct information sets, not
        256), and each distinct prompt's forward and backward run once for all its labels (a
        scored Deal or No Deal decision is ~50 labels behind one ~600-token prompt)."""
        torch = _torch()
        from arena.plugins.agents.llm.hf import TransformersBackend

        keys: dict[tuple, int] = {}
        index = []
        for p, c in pairs:
            index.append(keys.setdefault((tuple(p), tuple(c)), len(keys)))
        uniq = [(list(p), list(c)) for p, c in keys]
        if self.base is not None:
            seq_lp = self._adapter_logprobs(uniq, grad, model)
        else:
            model = model or self.model
            was_training = model.training
            view = TransformersBackend(model, self.tokenizer, max_batch_tokens=LOGPROB_BATCH_TOKENS)
            model.train(grad)
            with torch.enable_grad() if grad else torch.no_grad():
                seq_lp = view.sequence_logprobs(uniq)
            model.train(was_training)
        return seq_lp[torch.tensor(index, dtype=torch.long, device=seq_lp.device)]

    def _adapter_logprobs(self, pairs: list[tuple[list[int], list[int]]], grad: bool, ref: Any) -> Any:
        """Log-probs through this learner's adapter (or a frozen ``AdapterRef``). With grad the
        adapter is made the active one and the model trains (peft routes rows by name only in
        eval mode); without, rows are routed by name and nothing else changes."""
        torch = _torch()
        from arena.plugins.agents.llm.adapters import AdapterBackend

        name = ref.name if isinstance(ref, AdapterRef) else self.adapter
        view = AdapterBackend(self.base, str(name))
        view.max_batch_tokens = LOGPROB_BATCH_TOKENS
        with self.base.lock:
            if not grad:
                with torch.no_grad():
                    return view.sequence_logprobs(pairs, adapters=[name] * len(pairs))
            self.base.model.set_adapter(name)
            self.base.model.train(True)
            try:
                with torch.enable_grad():
                    return view.sequence_logprobs(pairs)
            finally:
                self.base.model.train(False)

    # -- hidden states (a value head's features) -------------------------------------------------
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    def device(self) -> Any:
        return next(self.model.parameters()).device

    def prompt_features(self, prompts: Sequence[Sequence[int]]) -> Any:
        """The last layer's hidden state at each prompt's last token ([n, hidden], no grad, the
        learner's current weights): one right-padded forward per batch of distinct prompts of up
        to :data:`LOGPROB_BATCH_TOKENS` tokens (a value head's input, :mod:`.credit`)."""
        torch = _torch()
        keys: dict[tuple[int, ...], int] = {}
        index = [keys.setdefault(tuple(p), len(keys)) for p in prompts]
        uniq = list(keys)
        order = sorted(range(len(uniq)), key=lambda i: len(uniq[i]))
        dev = self.device()
        out: list[Any] = [None] * len(uniq)
        import contextlib

        with self.base.lock if self.base is not None else contextlib.nullcontext():
            if self.base is not None:
                self.base.model.set_adapter(str(self.adapter))
            was_training = self.model.training
            self.model.eval()
            start = 0
            while start < len(order):
                stop = start + 1
                while stop < len(order) and len(uniq[order[stop]]) * (stop - start + 1) <= LOGPROB_BATCH_TOKENS:
                    stop += 1
                part = order[start:stop]
                width = max(len(uniq[i]) for i in part)
                ids = torch.full((len(part), width), int(self.pad_id), dtype=torch.long, device=dev)
                mask = torch.zeros((len(part), width), dtype=torch.long, device=dev)
                for r, i in enumerate(part):
                    ids[r, : len(uniq[i])] = torch.tensor(uniq[i], dtype=torch.long, device=dev)
                    mask[r, : len(uniq[i])] = 1
                with torch.no_grad():
                    hs = self.model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states[-1]
                last = mask.sum(dim=1) - 1
                rows = hs[torch.arange(len(part), device=dev), last]
                for r, i in enumerate(part):
                    out[i] = rows[r].float()
                start = stop
            self.model.train(was_training)
        return torch.stack([out[i] for i in index]) if index else torch.zeros((0, self.hidden_size()), device=dev)

    def step(self, loss: Any, optimizer: Any = None) -> float:
        """One optimizer step (``optimizer``: another one over the same weights, e.g. SPPO's
        averaged iterate's; default this learner's); returns the gradient norm before clipping."""
        torch = _torch()
        opt = optimizer if optimizer is not None else self.optimizer
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(self.params, self.max_grad_norm)
        opt.step()
        self.model.eval()
        if self.base is not None:
            self.base.changed()
        return float(norm)

    def backend_for(self, frozen: Any) -> Any:
        """An inference backend over a :meth:`frozen_copy` (to play the frozen weights as an agent)."""
        from arena.plugins.agents.llm.adapters import AdapterBackend
        from arena.plugins.agents.llm.hf import TransformersBackend

        if isinstance(frozen, AdapterRef):
            return AdapterBackend(frozen.base, frozen.name)
        return TransformersBackend(frozen, self.tokenizer)

    def trainable_parameters(self) -> dict[str, Any]:
        """Name → tensor of the weights this learner trains (its adapter's, or the whole model's)."""
        if self.base is not None:
            return dict(self.base.named_parameters(str(self.adapter)))
        return {n: p for n, p in self.model.named_parameters() if p.requires_grad}

    def frozen_copy(self) -> Any:
        """A detached copy of the current weights (SPPO's pi_t, a KL reference); an adapter
        learner's is a frozen adapter on the same base."""
        if self.base is not None:
            return AdapterRef(self.base, self.base.copy_adapter(str(self.adapter), hint=f"{self.adapter}-frozen"))
        m = copy.deepcopy(self.model)
        for p in m.parameters():
            p.requires_grad_(False)
        return m.eval()

    def refresh(self, frozen: Any) -> Any:
        """Copy the current weights into ``frozen`` (a :meth:`frozen_copy`) and return it: a
        reference that moves reuses its copy instead of adding an adapter or a model each time."""
        if isinstance(frozen, AdapterRef):
            frozen.base.set_state(frozen.name, frozen.base.state(str(self.adapter)))
        else:
            frozen.load_state_dict(self.model.state_dict())
        return frozen

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

    view: Any = None
    """The vLLM adapter view an adapter learner's agent plays through (it follows each version)."""

    def sync(self) -> None:
        """Push the new weights into the vLLM engine (no-op for the transformers backend); an
        adapter learner on vLLM publishes its adapter as a new version instead."""
        if self.view is not None:
            self.version += 1
            directory = self.versions / f"v{self.version:06d}"
            self.base.save_adapter(str(self.adapter), directory)
            self.view.follow(str(directory))
            return
        if self.engine is not None:
            self.engine.update_weights(list(self.merged_state()))

    def save(self, directory: str | Path) -> None:
        """A Hugging Face model directory (merged weights + tokenizer): ``llm:model=DIR`` loads it;
        an adapter learner writes its adapter directory only (``llm:model=DIR`` loads that too)."""
        from transformers import AutoModelForCausalLM

        if self.base is not None:
            self.base.save_adapter(str(self.adapter), directory)
            return
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        base = self.model.get_base_model() if self.lora else self.model
        clean = AutoModelForCausalLM.from_config(base.config)
        clean.load_state_dict({k: v.detach().cpu() for k, v in self.merged_state()})
        with quiet_transformers():  # a league saves every step: no progress bar per save
            clean.save_pretrained(out, safe_serialization=True)
            self.tokenizer.save_pretrained(out)

    def state_dict(self) -> dict[str, Any]:
        if self.base is not None:  # the adapter only: the base never changes
            return {"adapter": self.base.state(str(self.adapter)), "optimizer": self.optimizer.state_dict()}
        return {
            "model": {k: v.detach().clone() for k, v in self.model.state_dict().items()},
            "optimizer": self.optimizer.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self.base is not None:
            if "adapter" not in state:
                raise ArenaError("llm trainers: this checkpoint holds a full model, but the learner is a LoRA adapter")
            self.base.set_state(str(self.adapter), state["adapter"])
        else:
            self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.sync()


def _same_shape(backend: Any, lora: dict[str, Any]) -> None:
    """A trainer's ``lora`` setting must describe the trained adapter the agent already plays."""
    from arena.plugins.agents.llm.adapters import lora_config

    have = backend.base.model.peft_config[backend.adapter]
    want = lora_config(lora)
    if (have.r, have.lora_alpha, set(have.target_modules)) != (want.r, want.lora_alpha, set(want.target_modules)):
        raise ArenaError(
            f"llm trainers: the agent plays an adapter of rank {have.r} (alpha {have.lora_alpha}) but the "
            f"trainer's lora asks for rank {want.r} (alpha {want.lora_alpha}); drop lora to train the adapter as it is"
        )


def _device(torch: Any, device: str) -> Any:
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise ArenaError(f"llm trainers: device {device!r} requested but torch sees no CUDA GPU")
    return torch.device(device)


def _with_lora(model: Any, cfg: dict[str, Any]) -> Any:
    """A private LoRA-wrapped copy (a vLLM learner's trainer copy; merged into the engine)."""
    from peft import get_peft_model

    from arena.plugins.agents.llm.adapters import lora_config

    return get_peft_model(model, lora_config(cfg))


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
