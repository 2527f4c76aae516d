"""Hugging Face ``transformers`` backend (CPU or GPU).

The model object is public (``backend.model``) and may be passed in already loaded, so a
trainer and the agent share one set of weights: an optimizer step is seen by the next
decision with no copy. Scoring runs each distinct prompt once and its continuations on a copy of
its KV cache (prefix reuse); generation is a small batched sampling loop with a KV cache whose
per-row random numbers come from each decision's own seed, so a decision's sample does not
depend on which other games were in its batch.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.plugins.agents.llm.backend import Generation, LocalBackend, cut_at_stop


class TransformersBackend(LocalBackend):
    name = "transformers"

    def __init__(self, model: Any, tokenizer: Any = None, device: str = "cpu", dtype: str = "float32",
                 max_batch_tokens: int = 32768) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        if isinstance(model, str):
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # one-line CLI output, not a progress bar per load
            try:
                tokenizer = tokenizer or AutoTokenizer.from_pretrained(model)
                model = AutoModelForCausalLM.from_pretrained(model, dtype=getattr(torch, dtype))
            except (OSError, ValueError, AttributeError) as exc:
                raise ArenaError(f"llm agent: cannot load model '{model}' with transformers: "
                                 f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
            finally:
                hf_logging.enable_progress_bar()
            model.to(device)
        if tokenizer is None:
            raise ArenaError("llm agent: a model object needs its tokenizer (tokenizer=...)")
        self.model, self.tokenizer = model, tokenizer
        self.device = next(model.parameters()).device
        self.max_batch_tokens = max_batch_tokens
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
        model.eval()

    # -- scoring ------------------------------------------------------------------------------
    def score_ids(self, pairs: Sequence[tuple[list[int], list[int]]]) -> list[list[float]]:
        """Prefix-shared: each distinct prompt runs once; its KV cache is copied to each of its
        continuations, which then run as one short batch (a legal-action list costs one prompt
        plus a few label tokens, not one prompt per action)."""
        groups: dict[tuple[int, ...], list[int]] = {}
        for i, (p, _) in enumerate(pairs):
            if not p:
                raise ArenaError("llm agent: cannot score a continuation after an empty prompt")
            groups.setdefault(tuple(p), []).append(i)
        out: list[list[float]] = [[] for _ in pairs]
        keys = sorted(groups, key=len)
        chunk: list[tuple[int, ...]] = []
        for key in keys + [None]:  # type: ignore[list-item]
            if key is not None and (not chunk or len(key) * (len(chunk) + 1) <= self.max_batch_tokens):
                chunk.append(key)
                continue
            self._score_shared(chunk, groups, pairs, out)
            chunk = [key] if key is not None else []
        return out

    def _score_shared(self, keys: list[tuple[int, ...]], groups: dict, pairs, out: list) -> None:
        torch = self.torch
        if not keys:
            return
        ids, mask, pos = self._left_pad([list(k) for k in keys])
        rows = [(b, i) for b, k in enumerate(keys) for i in groups[k]]
        with torch.inference_mode():
            res = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                             position_ids=pos.to(self.device), use_cache=True)
            first = torch.log_softmax(res.logits[:, -1].float(), dim=-1).cpu()
            longest = max(len(pairs[i][1]) for _, i in rows)
            rest = None
            if longest > 1:
                idx = torch.tensor([b for b, _ in rows], dtype=torch.long)
                past = res.past_key_values
                past.reorder_cache(idx.to(self.device))
                cont = torch.full((len(rows), longest - 1), self.pad_id, dtype=torch.long)
                cmask = torch.zeros((len(rows), longest - 1), dtype=torch.long)
                for r, (_, i) in enumerate(rows):
                    c = pairs[i][1][:-1]
                    cont[r, :len(c)] = torch.tensor(c, dtype=torch.long) if c else cont[r, :0]
                    cmask[r, :len(c)] = 1
                start = mask.sum(1)[idx]
                cpos = start[:, None] + torch.arange(longest - 1)[None, :]
                res2 = self.model(input_ids=cont.to(self.device), attention_mask=torch.cat([mask[idx], cmask], 1).to(self.device),
                                  position_ids=cpos.to(self.device), past_key_values=past, use_cache=True)
                rest = torch.log_softmax(res2.logits.float(), dim=-1).cpu()
        for r, (b, i) in enumerate(rows):
            c = pairs[i][1]
            if not c:
                continue
            lps = [float(first[b, c[0]])]
            if len(c) > 1:
                lps += rest[r, torch.arange(len(c) - 1), torch.tensor(c[1:], dtype=torch.long)].tolist()
            out[i] = lps

    def top_logprobs_ids(self, pairs: Sequence[tuple[list[int], list[int]]],
                         k: int) -> list[list[list[tuple[int, float]]]]:
        """One batched forward pass over each prompt + continuation (no prefix sharing: the
        server asks for this only when a client wants ``top_logprobs``)."""
        torch = self.torch
        out: list[list[list[tuple[int, float]]]] = [[] for _ in pairs]
        rows = [i for i, (p, c) in enumerate(pairs) if p and c]
        if not rows or k <= 0:
            return out
        ids, mask, pos = self._left_pad([list(pairs[i][0]) + list(pairs[i][1]) for i in rows])
        with torch.inference_mode():
            logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                                position_ids=pos.to(self.device)).logits.float()
            values, index = torch.log_softmax(logits, dim=-1).topk(k, dim=-1)
        values, index = values.cpu(), index.cpu()
        width = ids.shape[1]
        for r, i in enumerate(rows):
            c = len(pairs[i][1])
            at = range(width - c - 1, width - 1)  # the position before each continuation token predicts it
            out[i] = [list(zip(index[r, j].tolist(), values[r, j].tolist())) for j in at]
        return out

    def _left_pad(self, seqs: list[list[int]]):
        """Left-padded batch: every row's last token sits in the last column."""
        torch = self.torch
        longest = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), longest), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), longest), dtype=torch.long)
        for r, s in enumerate(seqs):
            ids[r, longest - len(s):] = torch.tensor(s, dtype=torch.long)
            mask[r, longest - len(s):] = 1
        return ids, mask, (mask.cumsum(1) - 1).clamp(min=0)

    # -- generation ---------------------------------------------------------------------------
    def generate_ids(self, prompts: Sequence[list[int]], *, max_tokens: int, temperature: float,
                     seeds: Sequence[int], stop: Sequence[str] = ()) -> list[Generation]:
        torch = self.torch
        n = len(prompts)
        if n == 0:
            return []
        ids, mask, pos = self._left_pad([list(p) for p in prompts])
        rngs = [np.random.default_rng(int(s)) for s in seeds]
        done = [False] * n
        toks: list[list[int]] = [[] for _ in range(n)]
        lps: list[list[float]] = [[] for _ in range(n)]
        texts = [""] * n
        reasons = ["length"] * n
        eos = self.tokenizer.eos_token_id
        with torch.inference_mode():
            res = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                             position_ids=pos.to(self.device), use_cache=True)
            past, last_pos = res.past_key_values, pos[:, -1]
            logits = res.logits[:, -1].float().cpu()
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
                res = self.model(input_ids=nxt[:, None].to(self.device), attention_mask=mask.to(self.device),
                                 position_ids=last_pos[:, None].to(self.device), past_key_values=past, use_cache=True)
                past, logits = res.past_key_values, res.logits[:, -1].float().cpu()
        return [Generation(texts[r], len(prompts[r]), len(toks[r]), list(prompts[r]), toks[r], lps[r], reasons[r])
                for r in range(n)]

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
