"""Per-agent usage counters: tokens in/out, latency, invalid attempts, fallbacks, forfeits.

Each decision's own numbers also go into its ``act_batch_info`` dict, so recorded
trajectories (and the run store that keeps them) carry them; ``write_tensorboard`` puts the
totals under ``llm/<agent>/...`` on any writer with ``add_scalar``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Usage:
    decisions: int = 0
    backend_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    invalid_attempts: int = 0
    retries: int = 0
    fallbacks: int = 0
    forfeits: int = 0
    cache_hits: int = 0

    def add_share(self, batch: "Usage", infos: list[dict[str, Any]], share: float) -> None:
        """This agent's part of a batch decided together with others: its own decisions' numbers
        from their info dicts, the batch's calls, and its share of the batch's latency."""
        self.decisions += len(infos)
        self.backend_calls += batch.backend_calls
        self.latency_s += batch.latency_s * share
        self.tokens_in += sum(int(i.get("tokens_in", 0)) for i in infos)
        self.tokens_out += sum(int(i.get("tokens_out", 0)) for i in infos)
        self.invalid_attempts += sum(int(i.get("invalid_attempts", 0)) for i in infos)
        self.retries += sum(int(i.get("retries", 0)) for i in infos)
        self.fallbacks += sum(1 for i in infos if i.get("fallback"))
        self.forfeits += sum(1 for i in infos if i.get("forfeit"))

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["decisions_per_s"] = self.decisions / self.latency_s if self.latency_s > 0 else 0.0
        d["invalid_rate"] = self.invalid_attempts / max(1, self.decisions)
        return d

    def write_tensorboard(self, writer: Any, agent: str, step: int) -> None:
        for k, v in self.as_dict().items():
            writer.add_scalar(f"llm/{agent}/{k}", v, step)
