"""The one small interface every inference backend implements, and its results.

A backend knows two things: the log-probability of given continuations after given prompts
(``score``, used by scored action selection) and sampling text (``generate``). Local backends
(transformers, vllm) work on token ids and share :class:`LocalBackend`'s text layer; the HTTP
backend talks text to a server. Results carry token ids and per-token log-probs where the
backend can see them, because trainers need them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence


@dataclass
class Scored:
    """One continuation's log-probability given its prompt."""

    logprob: float
    token_logprobs: list[float]
    tokens_in: int
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None


@dataclass
class Generation:
    """One sampled completion."""

    text: str
    tokens_in: int
    tokens_out: int
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    token_logprobs: list[float] | None = None
    finish_reason: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class Backend:
    """Interface. ``score`` and ``generate`` take whole batches: one call per agent step."""

    name = "backend"
    supports_scoring = True

    def score(
        self, prompts: Sequence[str], continuations: Sequence[Sequence[str]], adapters: Sequence[str] | None = None
    ) -> list[list[Scored]]:
        """For each prompt, the log-probability of each of its continuations. ``adapters``: each
        prompt's LoRA adapter, on backends that route rows through adapters of one base model."""
        raise NotImplementedError

    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int,
        temperature: float,
        seeds: Sequence[int],
        stop: Sequence[str] = (),
        adapters: Sequence[str] | None = None,
    ) -> list[Generation]:
        """One completion per prompt, sampled with its own seed (reproducible per decision)."""
        raise NotImplementedError

    def render_chat(self, messages: list[dict[str, str]]) -> str | None:
        """The model's chat template applied to ``messages`` (None when it has none)."""
        return None

    def close(self) -> None:
        """Release the model/engine/connection."""


class LocalBackend(Backend):
    """Text layer over a token-level backend with a Hugging Face tokenizer."""

    tokenizer: Any

    def encode(self, text: str, special: bool = False) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=special)["input_ids"])

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True)

    def render_chat(self, messages: list[dict[str, str]]) -> str | None:
        if not getattr(self.tokenizer, "chat_template", None):
            return None
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def score_ids(self, pairs: Sequence[tuple[list[int], list[int]]]) -> list[list[float]]:
        """Per-token log-probs of each continuation (second) after its prompt (first)."""
        raise NotImplementedError

    def generate_ids(
        self,
        prompts: Sequence[list[int]],
        *,
        max_tokens: int,
        temperature: float,
        seeds: Sequence[int],
        stop: Sequence[str] = (),
    ) -> list[Generation]:
        raise NotImplementedError

    def top_logprobs_ids(
        self, pairs: Sequence[tuple[list[int], list[int]]], k: int
    ) -> list[list[list[tuple[int, float]]]]:
        """For each (prompt, continuation), at every continuation position the ``k`` most likely
        tokens and their log-probs, best first (the OpenAI ``top_logprobs`` field)."""
        raise NotImplementedError(f"the {self.name} backend does not report top log-probs")

    def prompt_ids(self, prompt: str) -> list[int]:
        """Prompt tokens; special tokens (BOS) only when the text has none of its own."""
        bos = getattr(self.tokenizer, "bos_token", None)
        return self.encode(prompt, special=not (bos and prompt.startswith(bos)))

    def score(
        self, prompts: Sequence[str], continuations: Sequence[Sequence[str]], adapters: Sequence[str] | None = None
    ) -> list[list[Scored]]:
        pairs, shape, names = [], [], []
        for k, (prompt, conts) in enumerate(zip(prompts, continuations)):
            p = self.prompt_ids(prompt)
            shape.append(len(conts))
            pairs += [(p, self.encode(c)) for c in conts]
            if adapters is not None:
                names += [adapters[k]] * len(conts)
        flat = self.score_ids(pairs, adapters=names) if adapters is not None else self.score_ids(pairs)
        out, k = [], 0
        for n in shape:
            row = []  # the prompt is counted once: local backends reuse its prefix
            for j, ((p, c), lps) in enumerate(zip(pairs[k : k + n], flat[k : k + n])):
                row.append(Scored(float(sum(lps)), lps, (0 if j else len(p)) + len(c), p, c))
            out.append(row)
            k += n
        return out

    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int,
        temperature: float,
        seeds: Sequence[int],
        stop: Sequence[str] = (),
        adapters: Sequence[str] | None = None,
    ) -> list[Generation]:
        routed = {"adapters": adapters} if adapters is not None else {}
        return self.generate_ids(
            [self.prompt_ids(p) for p in prompts],
            max_tokens=max_tokens,
            temperature=temperature,
            seeds=seeds,
            stop=stop,
            **routed,
        )


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """``text`` up to the first stop string (excluded), and whether one was found."""
    cut = min((i for i in (text.find(s) for s in stop if s) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)
