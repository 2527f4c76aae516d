"""LoRA adapters over one shared base model: many agents for the memory of one.

A league of language agents is mostly the same weights: learners, their snapshots and the PFSP
opponents differ only in small low-rank adapters (LoRA: "LoRA: Low-Rank Adaptation of Large
Language Models", arXiv:2106.09685). In a process, :func:`shared_base` loads a base model once per
(path, device, dtype); every adapter agent, learner, snapshot and frozen reference that names it is
a named peft adapter on that one model. An :class:`AdapterBackend` is a transformers backend that
sends its rows through its own adapter, and a batch that mixes adapters runs as one forward pass
(:class:`GroupedLoRA`: each LoRA layer adds every row's own low-rank product with two batched
matrix products over the stacked adapters, the way multi-LoRA servers batch adapters; peft's own
mixed-adapter path loops over adapters and rows in Python at every layer, measured 0.51x of a
single-adapter batch on an H100).

On disk an adapter is a peft adapter directory (``adapter_config.json`` naming its base,
``adapter_model.safetensors``): megabytes, not the model. ``llm:model=BASE,adapter=DIR`` plays one;
``llm:model=DIR`` does too when DIR is an adapter directory (its base is read from the config).
"""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.plugins.agents.llm.hf import TransformersBackend, quiet_transformers

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
LORA_KEYS = {"rank", "r", "alpha", "dropout", "targets"}
BASE = "__base__"
"""peft's name for "no adapter" in a mixed batch: the bare base model."""


def is_adapter_dir(path: str | Path) -> bool:
    return (Path(path) / ADAPTER_CONFIG).is_file()


def adapter_base(directory: str | Path) -> str:
    """The base model path an adapter directory was made for."""
    try:
        cfg = json.loads((Path(directory) / ADAPTER_CONFIG).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ArenaError(f"llm agent: {directory} is not a LoRA adapter directory ({exc})") from None
    base = cfg.get("base_model_name_or_path")
    if not base:
        raise ArenaError(f"llm agent: {Path(directory) / ADAPTER_CONFIG} names no base model")
    return str(base)


def adapter_rank(directory: str | Path) -> int:
    """The LoRA rank ``r`` an adapter directory was made with."""
    return int(json.loads((Path(directory) / ADAPTER_CONFIG).read_text()).get("r", 0))


def lora_config(spec: dict[str, Any]) -> Any:
    """A peft ``LoraConfig`` from ``{rank, alpha, dropout, targets}`` (``r`` is accepted for rank)."""
    try:
        from peft import LoraConfig
    except ImportError:
        raise ArenaError("LoRA adapters need the peft package (pip install -e '.[llm]')") from None
    bad = sorted(set(spec) - LORA_KEYS)
    if bad:
        raise ArenaError(f"lora: unknown key(s) {', '.join(bad)}; keys: rank, alpha, dropout, targets")
    rank = int(spec.get("rank", spec.get("r", 8)))
    if rank < 1:
        raise ArenaError(f"lora: rank must be >= 1, not {rank}")
    return LoraConfig(
        r=rank,
        lora_alpha=int(spec.get("alpha", 2 * rank)),
        lora_dropout=float(spec.get("dropout", 0.0)),
        target_modules=list(spec.get("targets") or LORA_TARGETS),
        task_type="CAUSAL_LM",
    )


class SharedBase:
    """One base model in this process and the named adapters loaded on it."""

    def __init__(self, path: str, device: str, dtype: str) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.path, self.device, self.dtype = path, device, dtype
        if str(device).startswith("cuda") and not torch.cuda.is_available():
            raise ArenaError(f"llm agent: device {device!r} requested but torch sees no CUDA GPU")
        try:
            with quiet_transformers():
                self.tokenizer = AutoTokenizer.from_pretrained(path)
                base = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype))
        except (OSError, ValueError, AttributeError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ArenaError(f"llm agent: cannot load base model '{path}': {first}") from None
        self.model: Any = base.to(device).eval()
        self.peft = False  # becomes a PeftModel with the first adapter
        self.adapters: dict[str, int] = {}  # name -> agents using it
        self.count = 0
        self.lock = threading.RLock()
        self.grouped = GroupedLoRA()

    @contextlib.contextmanager
    def routed(self, names: list[str] | None):
        """Forward passes inside send row ``i`` through adapter ``names[i]`` (``__base__``: none)."""
        if names is None or not self.peft:
            yield
            return
        with self.lock, self.grouped.routing(self.model, names):
            yield

    def changed(self) -> None:
        """Adapter weights changed (an optimiser step, a load): the grouped stacks are rebuilt."""
        self.grouped.version += 1

    # -- adapters in and out ------------------------------------------------------------------------
    def _name(self, hint: str) -> str:
        self.count += 1
        return f"{hint}-{self.count}"

    def _install(self, name: str, config: Any) -> None:
        if not self.peft:
            from peft import get_peft_model

            self.model = get_peft_model(self.model, config, adapter_name=name).eval()
            self.peft = True
        else:
            self.model.add_adapter(name, config)
        self.grouped.wrap(self.model)
        self.changed()

    def new_adapter(self, spec: dict[str, Any], hint: str = "lora", init: str = "zero", seed: int = 0) -> str:
        """A fresh adapter (``init``: ``zero`` leaves the base's outputs unchanged, as LoRA starts;
        ``random`` gives it a seeded non-zero B, for tests and benchmarks of distinct agents)."""
        with self.lock:
            name = self._name(hint)
            self._install(name, lora_config(spec))
            self.adapters[name] = 1
            if init == "random":
                self._randomise(name, seed)
            return name

    def load_adapter(self, directory: str | Path, hint: str = "adapter") -> str:
        """An adapter directory loaded under a new name; refuses one made for another base."""
        want = adapter_base(directory)
        if Path(want).resolve() != Path(self.path).resolve():
            raise ArenaError(
                f"llm agent: adapter {directory} was made for base model {want}, not {self.path}; "
                "give the base it was trained on (llm:model=BASE,adapter=DIR)"
            )
        from peft import PeftConfig

        config = PeftConfig.from_pretrained(str(directory))
        with self.lock:
            name = self._name(hint)
            self._install(name, config)
            self.set_state(name, _read_weights(Path(directory)))
            self.adapters[name] = 1
            return name

    def copy_adapter(self, source: str, hint: str = "copy") -> str:
        """A frozen copy of ``source``'s current weights under a new name (snapshots, references)."""
        import copy

        with self.lock:
            name = self._name(hint)
            self._install(name, copy.deepcopy(self.model.peft_config[source]))
            self.set_state(name, self.state(source))
            self.adapters[name] = 1
            return name

    def state(self, name: str) -> dict[str, Any]:
        """The adapter's tensors (detached copies), keys without the adapter name."""
        from peft import get_peft_model_state_dict

        return {k: v.detach().clone() for k, v in get_peft_model_state_dict(self.model, adapter_name=name).items()}

    def set_state(self, name: str, tensors: dict[str, Any]) -> None:
        from peft import set_peft_model_state_dict

        result = set_peft_model_state_dict(self.model, tensors, adapter_name=name)
        self.changed()
        missing = [k for k in getattr(result, "unexpected_keys", []) if "lora_" in k]
        if missing:
            raise ArenaError(f"llm agent: adapter weights do not fit the base model {self.path} ({missing[0]})")

    def save_adapter(self, name: str, directory: str | Path) -> None:
        """A peft adapter directory (config naming this base + weights): what ``adapter=DIR`` loads."""
        from safetensors.torch import save_file

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        config = self.model.peft_config[name].to_dict()
        config["base_model_name_or_path"] = str(Path(self.path).resolve())
        config["target_modules"] = sorted(config["target_modules"]) if config.get("target_modules") else None
        (out / ADAPTER_CONFIG).write_text(json.dumps(config, indent=2, sort_keys=True, default=str))
        save_file({k: v.detach().cpu().contiguous() for k, v in self.state(name).items()}, str(out / ADAPTER_WEIGHTS))

    def named_parameters(self, name: str) -> dict[str, Any]:
        """Name → tensor of one adapter's weights (its optimiser's parameters)."""
        return {n: p for n, p in self.model.named_parameters() if f".{name}." in n and "lora_" in n}

    def parameters(self, name: str) -> list[Any]:
        return list(self.named_parameters(name).values())

    def release(self, name: str) -> None:
        """An agent is done with ``name``; the adapter is deleted when no agent uses it."""
        with self.lock:
            left = self.adapters.get(name, 0) - 1
            if left > 0:
                self.adapters[name] = left
                return
            self.adapters.pop(name, None)
            if self.peft and name in self.model.peft_config and len(self.model.peft_config) > 1:
                if self.model.active_adapter == name:  # hand "active" to another first (peft warns otherwise)
                    self.model.set_adapter(next(n for n in self.model.peft_config if n != name))
                self.model.delete_adapter(name)
                self.changed()

    def _randomise(self, name: str, seed: int) -> None:
        import torch

        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for n, p in self.named_parameters(name).items():
                if "lora_B" in n:
                    p.copy_((torch.randn(p.shape, generator=gen) * 0.02).to(p.dtype))
        self.changed()


class GroupedLoRA:
    """Mixed-adapter batches as two batched products per LoRA layer.

    For a layer with adapters ``A_k`` (r×in), ``B_k`` (out×r) and scale ``s_k``, row ``i`` routed
    to adapter ``k(i)`` gets ``base(x_i) + s_k B_k A_k x_i``. The adapters of a batch are stacked
    (ranks zero-padded to the largest, which adds exact zeros; ``__base__`` is an all-zero adapter),
    gathered per row and applied with ``bmm``: the cost no longer grows with the number of
    adapters in a batch, and nothing loops over rows. Stacks are cached per (adapters, version),
    in the base layer's dtype (peft keeps adapters in fp32 beside a bf16 base and casts every
    activation up; a copy of the small adapter weights in bf16 avoids that)."""

    def __init__(self) -> None:
        self.version = 0
        self.local = threading.local()

    @contextlib.contextmanager
    def routing(self, model: Any, names: list[str]):
        import torch

        order = list(dict.fromkeys(names))
        device = next(model.parameters()).device
        index = torch.tensor([order.index(n) for n in names], dtype=torch.long, device=device)
        self.local.route = (tuple(order), index)
        try:
            yield
        finally:
            self.local.route = None

    def wrap(self, model: Any) -> None:
        """Give every LoRA linear layer the grouped forward (once per layer)."""
        from peft.tuners.lora import Linear as LoraLinear

        for module in model.modules():
            if isinstance(module, LoraLinear) and not getattr(module, "_arena_grouped", False):
                module._arena_grouped = True
                module.forward = self._forward_of(module, module.forward)

    def _forward_of(self, module: Any, plain: Any) -> Any:
        def forward(x: Any, *args: Any, **kwargs: Any) -> Any:
            route = getattr(self.local, "route", None)
            if route is None or module.training or module.merged or module.disable_adapters:
                return plain(x, *args, **kwargs)
            order, index = route
            a, b, scale = self._stacks(module, order)
            out = module.base_layer(x, *args, **kwargs)
            h = x if x.dtype == a.dtype else x.to(a.dtype)
            h = h.reshape(h.shape[0], -1, h.shape[-1]) if h.dim() != 3 else h
            delta = (h @ a[index].transpose(1, 2)) @ b[index].transpose(1, 2)
            delta = delta * scale[index][:, None, None]
            return out + delta.reshape(out.shape).to(out.dtype)

        return forward

    def _stacks(self, module: Any, order: tuple[str, ...]) -> tuple[Any, Any, Any]:
        import torch

        key = (order, self.version)
        cached = getattr(module, "_arena_stacks", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        ref = module.base_layer.weight  # stacks in the base's dtype: a bf16 batch is never cast to fp32
        rank = max((module.lora_A[n].weight.shape[0] for n in order if n in module.lora_A), default=1)
        a = torch.zeros((len(order), rank, module.in_features), dtype=ref.dtype, device=ref.device)
        b = torch.zeros((len(order), module.out_features, rank), dtype=ref.dtype, device=ref.device)
        scale = torch.zeros(len(order), dtype=ref.dtype, device=ref.device)
        with torch.no_grad():
            for k, n in enumerate(order):
                if n in module.lora_A:
                    r = module.lora_A[n].weight.shape[0]
                    a[k, :r] = module.lora_A[n].weight
                    b[k, :, :r] = module.lora_B[n].weight
                    scale[k] = float(module.scaling[n])
        module._arena_stacks = (key, (a, b, scale))
        return a, b, scale


def _read_weights(directory: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    path = directory / ADAPTER_WEIGHTS
    if not path.exists():
        raise ArenaError(f"llm agent: adapter directory {directory} has no {ADAPTER_WEIGHTS}")
    return load_file(str(path))


_BASES: dict[tuple[str, str, str], SharedBase] = {}


def shared_base(path: str, device: str = "cpu", dtype: str = "float32") -> SharedBase:
    """The one :class:`SharedBase` of this process for (path, device, dtype)."""
    if not Path(path).is_dir():
        raise ArenaError(
            f"llm agent: base model directory not found: {path} (local directories only; "
            "`arena tiny-model DIR` builds one)"
        )
    key = (str(Path(path).resolve()), str(device), str(dtype))
    if key not in _BASES:
        _BASES[key] = SharedBase(key[0], key[1], key[2])
    return _BASES[key]


def loaded_bases() -> list[SharedBase]:
    return list(_BASES.values())


class AdapterBackend(TransformersBackend):
    """A transformers backend whose rows run through one adapter of a :class:`SharedBase`."""

    name = "transformers"
    fresh = False
    """A new, untrained adapter (``adapter=new``): a trainer's ``lora`` setting may reshape it."""

    def __init__(self, base: SharedBase, adapter: str, merge: bool = True) -> None:
        super().__init__(base.model, base.tokenizer, merge=merge)
        self.base = base
        self.adapter = adapter

    @property  # type: ignore[override]
    def model(self) -> Any:
        """The shared model as it is now (it becomes a PeftModel when its first adapter is added)."""
        return self.base.model

    @model.setter
    def model(self, value: Any) -> None:  # the parent's constructor assigns it
        pass

    def _forward(self, names: Any, **inputs: Any) -> Any:
        with self.base.routed(list(names) if names is not None else None):
            return self.model(**inputs)

    def save(self, directory: Any) -> None:
        """This agent's adapter as a peft adapter directory (megabytes; the base is not copied)."""
        self.base.save_adapter(self.adapter, directory)

    def close(self) -> None:
        self.base.release(self.adapter)
