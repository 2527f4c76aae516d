"""Array backends for the tree solvers: numpy (always there) and torch (``device: cpu|cuda``),
selected by name. torch is optional: asking for it without it installed is a clear error."""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.errors import ArenaError
from arena.exact.tree import NumpyOps, Tree


class NumpyBackend(NumpyOps):
    name = "numpy"

    def __init__(self, dtype: str = "float64") -> None:
        self.dtype = np.dtype(dtype)

    def zeros(self, n):
        return np.zeros(n, dtype=self.dtype)

    def convert(self, x):
        return x

    @staticmethod
    def segmax(x, starts, seg, n):
        return np.maximum.reduceat(x, starts)

    @staticmethod
    def minimum(a, b):
        return np.minimum(a, b)

    @staticmethod
    def normalize(x, tot, fallback):
        """``x / tot`` where ``tot > 0``, else ``fallback`` (a new array)."""
        out = fallback.copy()
        return np.divide(x, tot, out=out, where=tot > 0)

    @staticmethod
    def copy(x):
        return x.copy()


class TorchBackend:
    """The same operations on torch tensors (segment sums by ``index_add_``)."""

    def __init__(self, device: str = "cpu", dtype: str = "float64") -> None:
        try:
            import torch
        except ImportError:
            raise ArenaError("device '%s' needs torch: pip install 'arena-rl[torch]'" % device) from None
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise ArenaError(f"device '{device}' requested but torch sees no CUDA GPU")
        self.torch = torch
        self.device = torch.device(device)
        self.dtype = getattr(torch, dtype)
        self.name = f"torch:{device}"

    def convert(self, x):
        t = self.torch
        if isinstance(x, np.ndarray):
            if x.dtype == np.bool_:
                return t.as_tensor(x, device=self.device)
            if np.issubdtype(x.dtype, np.integer):
                return t.as_tensor(x, dtype=t.long, device=self.device)
            return t.as_tensor(x, dtype=self.dtype, device=self.device)
        if isinstance(x, (list, tuple)):
            return type(x)(self.convert(v) for v in x)
        return x

    def zeros(self, n):
        return self.torch.zeros(n, dtype=self.dtype, device=self.device)

    def segsum(self, x, starts, seg, n):
        out = self.torch.zeros(x.shape[:-1] + (n,), dtype=x.dtype, device=x.device)
        return out.index_add_(x.dim() - 1, seg, x)

    def segmax(self, x, starts, seg, n):
        out = self.torch.zeros(n, dtype=x.dtype, device=x.device)
        return out.scatter_reduce_(0, seg, x, reduce="amax", include_self=False)

    def scatter_sum(self, index, weights, n):
        return self.torch.zeros(n, dtype=weights.dtype, device=weights.device).index_add_(0, index, weights)

    def where(self, c, a, b):
        return self.torch.where(c, a, b)

    def minimum(self, a, b):
        b = b if self.torch.is_tensor(b) else self.torch.full_like(a, b)
        return self.torch.minimum(a, b)

    def normalize(self, x, tot, fallback):
        pos = tot > 0
        return self.torch.where(pos, x / self.torch.where(pos, tot, 1.0), fallback)

    @staticmethod
    def clip0(x):
        return x.clamp(min=0.0)

    @staticmethod
    def copy(x):
        return x.clone()

    @staticmethod
    def to_numpy(x):
        return x.detach().cpu().numpy()


def get_backend(device: str | None) -> Any:
    """``numpy``/``cpu`` (default: numpy), ``torch`` or ``torch:cpu`` (torch on CPU), or a torch
    GPU (``cuda``, ``cuda:1``)."""
    device = (device or "numpy").lower()
    if device in ("numpy", "cpu"):
        return NumpyBackend()
    if device == "torch":
        device = "torch:cpu"
    if device.startswith("torch:"):
        device = device.split(":", 1)[1]
    if device == "cpu" or device.startswith("cuda") or device == "mps":
        return TorchBackend(device)
    raise ArenaError(f"unknown device {device!r}: use numpy (cpu), torch (torch on CPU), cuda or cuda:N")


def tree_arrays(tree: Tree, backend: Any) -> dict[str, Any]:
    """The tree's index arrays on the backend's device."""
    d = tree.derived()
    keys = ("edge", "owner_mask", "opp_edge", "levels", "player_edges", "slot_node", "slot_nact", "probs", "own_paths")
    return {k: backend.convert(d[k]) for k in keys}
