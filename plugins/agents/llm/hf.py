"""Hugging Face ``transformers`` backend (CPU or GPU).

The model object is public (``backend.model``) and may be passed in already loaded, so a
trainer and the agent share one set of weights: an optimizer step is seen by the next
decision with no copy. Scoring runs each distinct prompt once and its continuations on a copy of
its KV cache (prefix reuse); generation is a small batched sampling loop with a KV cache whose
per-row random numbers come from each decision's own seed, so a decision's sample does not
depend on which other games were in its batch.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.plugins.agents.llm.backend import Generation, LocalBackend, cut_at_stop


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """No transformers progress bars while loading or saving: one-line CLI output and logs."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.enable_progress_bar()


def left_pad(torch: Any, seqs: Sequence[Sequence[int]], pad_id: int) -> tuple[Any, Any, Any]:
    """Left-padded batch (ids, attention mask, position ids): every row's last token sits in the
    last column, so its next-token logits and the position its continuation starts at line up."""
    longest = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), longest), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), longest), dtype=torch.long)
    for r, s in enumerate(seqs):
        ids[r, longest - len(s) :] = torch.tensor(list(s), dtype=torch.long)
        mask[r, longest - len(s) :] = 1
    return ids, mask, (mask.cumsum(1) - 1).clamp(min=0)


class TransformersBackend(LocalBackend):
    name = "transformers"

    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        device: str = "cpu",
        dtype: str = "float32",
        max_batch_tokens: int = 32768,
        merge: bool = True,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        if isinstance(model, str):
            try:
                with quiet_transformers():
                    tokenizer = tokenizer or AutoTokenizer.from_pretrained(model)
                    model = AutoModelForCausalLM.from_pretrained(model, dtype=getattr(torch, dtype))
            except (OSError, ValueError, AttributeError) as exc:
                raise ArenaError(
                    f"llm agent: cannot load model '{model}' with transformers: "
                    f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                ) from None
            model.to(device)
        if tokenizer is None:
            raise ArenaError("llm agent: a model object needs its tokenizer (tokenizer=...)")
        self.model, self.tokenizer = model, tokenizer
        self.device = next(model.parameters()).device
        self.max_batch_tokens = max_batch_tokens
        self.merge = merge
        """Score identical prompts of different games once (off: every decision is its own row,
        which is what batching distinct prompts costs)."""
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
        model.eval()

    def save(self, directory: Any) -> None:
        """The model and tokenizer as a Hugging Face directory (``llm:model=DIR`` loads it)."""
        with quiet_transformers():
            self.model.save_pretrained(directory, safe_serialization=True)
            self.tokenizer.save_pretrained(directory)

    # -- scoring ------------------------------------------------------------------------------
    def score_ids(self, pairs: Sequence[tuple[list[int], list[int]]]) -> list[list[float]]:
        """Prefix-shared: each prompt runs once, all prompts of a chunk in one left-padded
        forward pass; its KV cache is then copied to each of its continuations, which run as one
        short batch (a legal-action list costs one prompt plus a few label tokens, not one prompt
        per action). With ``merge`` identical prompts of different games are one row."""
        rows: list[tuple[list[int], list[int]]] = []  # (prompt ids, indices of its pairs)
        seen: dict[tuple[int, ...], int] = {}
        last = None
        for i, (p, _) in enumerate(pairs):
            if not p:
                raise ArenaError("llm agent: cannot score a continuation after an empty prompt")
            if self.merge:
                k = seen.setdefault(tuple(p), len(rows))
                if k == len(rows):
                    rows.append((p, []))
                rows[k][1].append(i)
            elif p is last:  # a decision's continuations share its prompt list (LocalBackend.score)
                rows[-1][1].append(i)
            else:
                rows.append((p, [i]))
            last = p
        out: list[list[float]] = [[] for _ in pairs]
        rows.sort(key=lambda r: len(r[0]))
        chunk: list[tuple[list[int], list[int]]] = []
        for row in rows + [None]:  # type: ignore[list-item]
            if row is not None and (not chunk or len(row[0]) * (len(chunk) + 1) <= self.max_batch_tokens):
                chunk.append(row)
                continue
            self._score_shared(chunk, pairs, out)
            chunk = [row] if row is not None else []
        return out

    def _score_shared(self, rows: list[tuple[list[int], list[int]]], pairs, out: list) -> None:
        """One forward pass over the chunk's prompts, one over all their continuations (on the
        copied KV caches), and one gather of the log-probs the continuations need."""
        torch = self.torch
        if not rows:
            return
        flat = [(b, i) for b, (_, members) in enumerate(rows) for i in members]
        conts = [pairs[i][1] for _, i in flat]
        with torch.inference_mode():
            last, past, mask, ends = self._prefill([p for p, _ in rows])
            first = torch.log_softmax(last.float(), dim=-1)
            src = torch.tensor([b for b, _ in flat], dtype=torch.long, device=first.device)
            heads = torch.tensor([c[0] if c else 0 for c in conts], dtype=torch.long, device=first.device)
            lp_first = first[src, heads].tolist()
            longest = max(len(c) for c in conts)
            lp_rest: list[list[float]] = [[] for _ in flat]
            if longest > 1:
                past.reorder_cache(src)
                width = longest - 1
                cont = torch.tensor(
                    [c[:-1] + [self.pad_id] * (width - len(c) + 1) if c else [self.pad_id] * width for c in conts],
                    dtype=torch.long,
                )
                want = torch.tensor(
                    [c[1:] + [0] * (width - len(c) + 1) if c else [0] * width for c in conts], dtype=torch.long
                )
                cmask = torch.tensor(
                    [[1] * max(0, len(c) - 1) + [0] * (width - max(0, len(c) - 1)) for c in conts], dtype=torch.long
                )
                cpos = ends[src.cpu()][:, None] + torch.arange(width)[None, :]
                res2 = self.model(
                    input_ids=cont.to(self.device),
                    attention_mask=torch.cat([mask[src.cpu()], cmask], 1).to(self.device),
                    position_ids=cpos.to(self.device),
                    past_key_values=past,
                    use_cache=True,
                )
                rest = torch.log_softmax(res2.logits.float(), dim=-1)
                picked = rest.gather(2, want.to(rest.device)[:, :, None])[:, :, 0].tolist()
                lp_rest = [picked[r][: max(0, len(c) - 1)] for r, c in enumerate(conts)]
        for r, (_, i) in enumerate(flat):
            if conts[r]:
                out[i] = [lp_first[r]] + lp_rest[r]

    MIN_SHARED_PREFIX = 8
    """Shortest common prompt prefix worth a pass of its own (below it, rows run whole)."""

    def _prefill(self, prompts: list[list[int]]):
        """Run a batch of prompts; return each row's next-token logits, the KV cache, the
        attention mask over the cache, and the position the next token of each row takes.

        Prompts of one batch mostly share a long prefix (instructions, rules, the chat
        template) and differ in a short tail (the cards, the history). The prefix runs once,
        its KV cache is copied to every row, and only the tails run as a left-padded batch (the
        padding sits between prefix and tail and is masked), so a batch of N distinct prompts
        costs one prefix plus N tails instead of N whole prompts."""
        torch = self.torch
        shared = _common_prefix(prompts)
        shared = min(shared, min(len(p) for p in prompts) - 1)  # every row keeps a token to run
        if len(prompts) < 2 or shared < self.MIN_SHARED_PREFIX:
            ids, mask, pos = self._left_pad(prompts)
            res = self.model(
                input_ids=ids.to(self.device),
                attention_mask=mask.to(self.device),
                position_ids=pos.to(self.device),
                use_cache=True,
                **self._last_only,
            )
            return res.logits[:, -1], res.past_key_values, mask, pos[:, -1] + 1
        head = torch.tensor([prompts[0][:shared]], dtype=torch.long)
        res = self.model(
            input_ids=head.to(self.device),
            position_ids=torch.arange(shared)[None].to(self.device),
            use_cache=True,
            **self._last_only,
        )
        past = res.past_key_values
        past.reorder_cache(torch.zeros(len(prompts), dtype=torch.long, device=self.device))
        ids, tmask, tpos = self._left_pad([p[shared:] for p in prompts])
        mask = torch.cat([torch.ones((len(prompts), shared), dtype=torch.long), tmask], 1)
        pos = tpos + shared
        res = self.model(
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=pos.to(self.device),
            past_key_values=past,
            use_cache=True,
            **self._last_only,
        )
        return res.logits[:, -1], res.past_key_values, mask, pos[:, -1] + 1

    @property
    def _last_only(self) -> dict[str, int]:
        """Ask the model for the last position's logits only, where it supports that."""
        if not hasattr(self, "_keep_kw"):
            import inspect

            names = inspect.signature(self.model.forward).parameters
            self._keep_kw = next(({k: 1} for k in ("logits_to_keep", "num_logits_to_keep") if k in names), {})
        return self._keep_kw

    def top_logprobs_ids(
        self, pairs: Sequence[tuple[list[int], list[int]]], k: int
    ) -> list[list[list[tuple[int, float]]]]:
        """One batched forward pass over each prompt + continuation (no prefix sharing: the
        server asks for this only when a client wants ``top_logprobs``)."""
        torch = self.torch
        out: list[list[list[tuple[int, float]]]] = [[] for _ in pairs]
        rows = [i for i, (p, c) in enumerate(pairs) if p and c]
        if not rows or k <= 0:
            return out
        ids, mask, pos = self._left_pad([list(pairs[i][0]) + list(pairs[i][1]) for i in rows])
        with torch.inference_mode():
            logits = self.model(
                input_ids=ids.to(self.device), attention_mask=mask.to(self.device), position_ids=pos.to(self.device)
            ).logits.float()
            values, index = torch.log_softmax(logits, dim=-1).topk(k, dim=-1)
        values, index = values.cpu(), index.cpu()
        width = ids.shape[1]
        for r, i in enumerate(rows):
            c = len(pairs[i][1])
            at = range(width - c - 1, width - 1)  # the position before each continuation token predicts it
            out[i] = [list(zip(index[r, j].tolist(), values[r, j].tolist())) for j in at]
        return out

    def _left_pad(self, seqs: list[list[int]]):
        return left_pad(self.torch, seqs, self.pad_id)

    # -- generation ---------------------------------------------------------------------------
    def generate_ids(
        self,
        prompts: Sequence[list[int]],
        *,
        max_tokens: int,
        temperature: float,
        seeds: Sequence[int],
        stop: Sequence[str] = (),
    ) -> list[Generation]:
        torch = self.torch
        n = len(prompts)
        if n == 0:
            return []
        rngs = [np.random.default_rng(int(s)) for s in seeds]
        done = [False] * n
        toks: list[list[int]] = [[] for _ in range(n)]
        lps: list[list[float]] = [[] for _ in range(n)]
        texts = [""] * n
        reasons = ["length"] * n
        eos = self.tokenizer.eos_token_id
        with torch.inference_mode():
            last, past, mask, next_pos = self._prefill([list(p) for p in prompts])
            last_pos = next_pos - 1
            logits = last.float().cpu()
            for _ in range(max_tokens):
                logp = torch.log_softmax(logits, dim=-1)
                nxt = self._pick(logits, temperature, rngs, done)
                for r in range(n):
                    if done[r]:
                        continue
                    t = int(nxt[r])
                    if t == eos:
                        done[r], reasons[r] = True, "stop"
                        continue
                    toks[r].append(t)
                    lps[r].append(float(logp[r, t]))
                    text, hit = cut_at_stop(self.decode(toks[r]), stop)
                    texts[r] = text
                    if hit:
                        done[r], reasons[r] = True, "stop"
                if all(done):
                    break
                mask = torch.cat([mask, torch.ones((n, 1), dtype=torch.long)], dim=1)
                last_pos = last_pos + 1
                res = self.model(
                    input_ids=nxt[:, None].to(self.device),
                    attention_mask=mask.to(self.device),
                    position_ids=last_pos[:, None].to(self.device),
                    past_key_values=past,
                    use_cache=True,
                )
                past, logits = res.past_key_values, res.logits[:, -1].float().cpu()
        return [
            Generation(texts[r], len(prompts[r]), len(toks[r]), list(prompts[r]), toks[r], lps[r], reasons[r])
            for r in range(n)
        ]

    def _pick(self, logits, temperature: float, rngs, done) -> Any:
        """Greedy at temperature 0, else inverse-CDF sampling with each row's own generator."""
        torch = self.torch
        if temperature <= 0:
            return logits.argmax(dim=-1)
        probs = torch.softmax(logits / temperature, dim=-1).double().numpy()
        picks = []
        for r, rng in enumerate(rngs):
            u = rng.random()
            if done[r]:
                picks.append(self.pad_id)
                continue
            cdf = np.cumsum(probs[r])
            picks.append(int(min(np.searchsorted(cdf, u * cdf[-1], side="right"), len(cdf) - 1)))
        return torch.tensor(picks, dtype=torch.long)


def _common_prefix(seqs: Sequence[Sequence[int]]) -> int:
    """Length of the longest prefix all sequences share."""
    first, n = seqs[0], min(len(q) for q in seqs)
    for q in seqs[1:]:
        k = 0
        while k < n and q[k] == first[k]:
            k += 1
        n = k
        if n == 0:
            break
    return n
