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
        self.source = model if isinstance(model, str) else None
        """The model directory this backend loaded (None: a model object was passed in)."""
        self.dtype_name = dtype
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
        self.adapter: str | None = None
        """The LoRA adapter this backend's rows run through (None: the model as it is, no routing);
        set by :class:`arena.plugins.agents.llm.adapters.AdapterBackend`."""
        model.eval()

    def save(self, directory: Any) -> None:
        """The model and tokenizer as a Hugging Face directory (``llm:model=DIR`` loads it)."""
        with quiet_transformers():
            self.model.save_pretrained(directory, safe_serialization=True)
            self.tokenizer.save_pretrained(directory)

    # -- scoring ------------------------------------------------------------------------------
    def score_ids(
        self, pairs: Sequence[tuple[list[int], list[int]]], adapters: Sequence[str] | None = None
    ) -> list[list[float]]:
        """Prefix-shared: each prompt runs once, all prompts of a chunk in one left-padded
        forward pass; its KV cache is then copied to each of its continuations, which run as one
        short batch (a legal-action list costs one prompt plus a few label tokens, not one prompt
        per action). With ``merge`` identical prompts of different games are one row."""
        torch = self.torch
        out: list[list[float]] = [[] for _ in pairs]
        with torch.inference_mode():
            for members, token_lp in self._scored_chunks(pairs, adapters):
                values = token_lp.tolist()
                for r, i in enumerate(members):
                    out[i] = values[r][: len(pairs[i][1])]
        return out

    def sequence_logprobs(
        self, pairs: Sequence[tuple[list[int], list[int]]], adapters: Sequence[str] | None = None
    ) -> Any:
        """Summed log-prob of each continuation after its prompt, one tensor, by the same
        prefix-shared passes as ``score_ids``; differentiable when the caller enables grad (the
        trainers' recomputation: a scored decision's labels share one prompt, so the prompt's
        forward and backward run once instead of once per label)."""
        torch = self.torch
        total = torch.zeros(len(pairs), dtype=torch.float32, device=self.device)
        for members, token_lp in self._scored_chunks(pairs, adapters):
            total = total.index_put((torch.tensor(members, dtype=torch.long, device=self.device),), token_lp.sum(-1))
        return total

    def _scored_chunks(
        self, pairs: Sequence[tuple[list[int], list[int]]], adapters: Sequence[str] | None = None
    ) -> Iterator[tuple[list[int], Any]]:
        """(indices into ``pairs``, per-token log-probs [rows, longest continuation], 0 past each
        continuation's end) for each chunk of at most ``max_batch_tokens`` prompt tokens.
        ``adapters``: each pair's LoRA adapter (default: this backend's own)."""
        names = self._names(len(pairs), adapters)
        rows: list[tuple[list[int], list[int]]] = []  # (prompt ids, indices of its pairs)
        seen: dict[tuple, int] = {}
        last = None
        for i, (p, _) in enumerate(pairs):
            if not p:
                raise ArenaError("llm agent: cannot score a continuation after an empty prompt")
            if self.merge:
                k = seen.setdefault((names[i] if names else None, tuple(p)), len(rows))
                if k == len(rows):
                    rows.append((p, []))
                rows[k][1].append(i)
            elif p is last and (not names or names[i] == names[i - 1]):
                rows[-1][1].append(i)  # a decision's continuations share its prompt list (LocalBackend.score)
            else:
                rows.append((p, [i]))
            last = p
        packed = {id(r): len(r[0]) + sum(max(0, len(pairs[i][1]) - 1) for i in r[1]) for r in rows}
        rows.sort(key=lambda r: packed[id(r)])  # a row is its prompt and its continuations, packed
        chunk: list[tuple[list[int], list[int]]] = []
        for row in rows + [None]:  # type: ignore[list-item]
            if row is not None and (not chunk or packed[id(row)] * (len(chunk) + 1) <= self.max_batch_tokens):
                chunk.append(row)
                continue
            if chunk:
                members = [i for _, m in chunk for i in m]
                row_names = [names[m[0]] for _, m in chunk] if names else None
                yield members, self._chunk_logprobs(chunk, [pairs[i][1] for i in members], row_names)
            chunk = [row] if row is not None else []

    def _chunk_logprobs(
        self, rows: list[tuple[list[int], list[int]]], conts: list[Sequence[int]], names: list[str] | None = None
    ) -> Any:
        """Per-token log-probs [len(conts), longest] of each row's continuations in two passes.

        The prompts' common prefix runs once (batch 1) and its KV cache is copied to each row.
        Each row then packs its prompt's tail and all its continuations into one sequence with a
        tree-shaped attention mask: a continuation's tokens see the prefix, the tail and their own
        earlier tokens, never a sibling's, and take the positions they would have right after
        the prompt. So a scored decision costs one prompt plus its label tokens, with no copy of
        the prompt's cache per label (which dominated the trainers' backward pass). ``names``: each
        row's LoRA adapter (a mixed batch: one forward pass, each row through its own adapter)."""
        torch = self.torch
        prompts = [p for p, _ in rows]
        shared = min(_common_prefix(prompts), min(len(p) for p in prompts) - 1)
        if len(prompts) < 2 or shared < self.MIN_SHARED_PREFIX:
            shared = 0
        past = None
        if shared:
            past = self._shared_head(prompts[0][:shared], len(rows), names)
        # one packed row per prompt: tail (segment 0), then each continuation but its last token (segment j)
        seqs, segs, poss, member_of = [], [], [], []
        for b, (p, members) in enumerate(rows):
            tail = list(p[shared:])
            seq, seg, pos = tail, [0] * len(tail), list(range(shared, len(p)))
            for j, i in enumerate(members, 1):
                c = list(conts[len(member_of)])
                member_of.append((b, len(seq)))  # (row, column of its first input token)
                seq, seg, pos = (
                    seq + c[:-1],
                    seg + [j] * max(0, len(c) - 1),
                    pos + list(range(len(p), len(p) + len(c) - 1)),
                )
            seqs.append(seq), segs.append(seg), poss.append(pos)
        width = max(len(q) for q in seqs)
        pad = [width - len(q) for q in seqs]
        ids = torch.tensor([[self.pad_id] * n + q for n, q in zip(pad, seqs)], dtype=torch.long)
        seg = torch.tensor([[-1] * n + g for n, g in zip(pad, segs)], dtype=torch.long)
        pos = torch.tensor([[0] * n + q for n, q in zip(pad, poss)], dtype=torch.long)
        col = torch.arange(width)
        see = (col[None, None, :] <= col[None, :, None]) & (seg[:, None, :] >= 0) & (seg[:, :, None] >= 0)
        see &= (seg[:, None, :] == 0) | (seg[:, None, :] == seg[:, :, None])
        see |= torch.eye(width, dtype=torch.bool)[None]  # padding sees itself (no empty softmax row)
        if shared:
            see = torch.cat([torch.ones((len(rows), width, shared), dtype=torch.bool), see], 2)
        dtype = next(self.model.parameters()).dtype
        mask = torch.zeros(see.shape, dtype=dtype).masked_fill_(~see, torch.finfo(dtype).min)[:, None]
        # each continuation token is predicted at the column before it: the tail's last token for
        # the first, the continuation's own previous token for the rest
        last_tail = [pad[b] + len(rows[b][0]) - shared - 1 for b in range(len(rows))]
        want_row, want_col, want_tok, at = [], [], [], []
        for r, ((b, start), c) in enumerate(zip(member_of, conts)):
            for k, t in enumerate(c):
                want_row.append(b), want_tok.append(t), at.append((r, k))
                want_col.append(last_tail[b] if k == 0 else pad[b] + start + k - 1)
        keep = width - min(last_tail)
        out = self._forward(
            names,
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=pos.to(self.device),
            past_key_values=past,
            use_cache=False,
            **({next(iter(self._last_only)): keep} if self._last_only else {}),
        )
        logits = out.logits[:, -keep:] if self._last_only else out.logits
        offset = width - logits.shape[1]
        longest = max((len(c) for c in conts), default=0)
        token_lp = torch.zeros((len(conts), max(1, longest)), dtype=torch.float32, device=self.device)
        if want_tok:
            dev = logits.device
            index = (torch.tensor(want_row, device=dev), torch.tensor(want_col, device=dev) - offset)
            picked = torch.log_softmax(logits[index].float(), dim=-1)
            lp = picked.gather(1, torch.tensor(want_tok, device=dev)[:, None])[:, 0]
            r_idx, k_idx = zip(*at)
            token_lp = token_lp.index_put((torch.tensor(r_idx, device=dev), torch.tensor(k_idx, device=dev)), lp)
        return token_lp

    MIN_SHARED_PREFIX = 8
    """Shortest common prompt prefix worth a pass of its own (below it, rows run whole)."""

    # -- adapter routing ------------------------------------------------------------------------
    def _names(self, n: int, adapters: Sequence[str] | None) -> list[str] | None:
        """Each row's adapter name, or None when this backend does not route (a plain model)."""
        if adapters is not None:
            if len(adapters) != n:
                raise ArenaError(f"llm agent: {len(adapters)} adapter names for {n} rows")
            return list(adapters)
        return [self.adapter] * n if self.adapter is not None else None

    def _forward(self, names: Sequence[str] | None, **inputs: Any) -> Any:
        """One forward pass of the model, each row through its adapter when ``names`` is given
        (here: peft's mixed-adapter batches; an adapter backend routes with its grouped product)."""
        return self.model(**inputs, **({"adapter_names": list(names)} if names is not None else {}))

    def _shared_head(self, head_ids: list[int], rows: int, names: list[str] | None) -> Any:
        """The KV cache of a prefix every row shares, expanded to one copy per row. The prefix runs
        once per distinct adapter among the rows (a LoRA changes the keys and values it makes)."""
        torch = self.torch
        groups = list(dict.fromkeys(names)) if names is not None else [None]
        head = torch.tensor([head_ids] * len(groups), dtype=torch.long, device=self.device)
        past = self._forward(
            groups if names is not None else None,
            input_ids=head,
            position_ids=torch.arange(len(head_ids), device=self.device)[None].expand(len(groups), -1),
            use_cache=True,
            **self._last_only,
        ).past_key_values
        index = [groups.index(x) for x in names] if names is not None else [0] * rows
        past.reorder_cache(torch.tensor(index, dtype=torch.long, device=self.device))
        return past

    def _prefill(self, prompts: list[list[int]], names: list[str] | None = None):
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
            res = self._forward(
                names,
                input_ids=ids.to(self.device),
                attention_mask=mask.to(self.device),
                position_ids=pos.to(self.device),
                use_cache=True,
                **self._last_only,
            )
            return res.logits[:, -1], res.past_key_values, mask, pos[:, -1] + 1
        past = self._shared_head(prompts[0][:shared], len(prompts), names)
        ids, tmask, tpos = self._left_pad([p[shared:] for p in prompts])
        mask = torch.cat([torch.ones((len(prompts), shared), dtype=torch.long), tmask], 1)
        pos = tpos + shared
        res = self._forward(
            names,
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

            base = getattr(self.model, "get_base_model", lambda: self.model)()  # a LoRA wrapper passes it on
            names = inspect.signature(base.forward).parameters
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
            logits = self._forward(
                self._names(len(rows), None),
                input_ids=ids.to(self.device),
                attention_mask=mask.to(self.device),
                position_ids=pos.to(self.device),
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
        """Left-padded batch: every row's last token sits in the last column."""
        torch = self.torch
        longest = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), longest), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), longest), dtype=torch.long)
        for r, s in enumerate(seqs):
            ids[r, longest - len(s) :] = torch.tensor(s, dtype=torch.long)
            mask[r, longest - len(s) :] = 1
        return ids, mask, (mask.cumsum(1) - 1).clamp(min=0)

    # -- generation ---------------------------------------------------------------------------
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
        torch = self.torch
        n = len(prompts)
        if n == 0:
            return []
        names = self._names(n, adapters)
        rngs = [np.random.default_rng(int(s)) for s in seeds]
        done = [False] * n
        toks: list[list[int]] = [[] for _ in range(n)]
        lps: list[list[float]] = [[] for _ in range(n)]
        texts = [""] * n
        reasons = ["length"] * n
        eos = self.tokenizer.eos_token_id
        with torch.inference_mode():
            last, past, mask, next_pos = self._prefill([list(p) for p in prompts], names)
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
                res = self._forward(
                    names,
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
