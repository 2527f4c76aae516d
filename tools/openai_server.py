"""A small OpenAI-compatible HTTP server around a local arena backend (transformers or vLLM).

Why: the ``openai`` backend must be testable against a real server without network access,
and a laptop demo should not need ``vllm serve``. Checked with the official ``openai`` client
(tests/plugins/agents/test_llm_openai.py): ``GET /v1/models[/ID]``, ``POST /v1/completions`` (string or list
prompt, ``n``, ``max_tokens``, ``temperature``, ``seed``, ``stop``, ``echo``, ``logprobs`` =
top-k) and ``POST /v1/chat/completions`` (``n``, ``max_completion_tokens``/``max_tokens``,
``logprobs`` + ``top_logprobs``, ``stop``, ``seed``); ``stream: true`` answers server-sent
events ending in ``data: [DONE]`` (``stream_options.include_usage`` adds the usage chunk). The
chunks are sent once the completion is generated — the batcher generates whole completions —
one chunk per token. A model name other than the served one is a 404 ``model_not_found``; bad
parameters a 400 naming the parameter. Ids are ``cmpl-…`` / ``chatcmpl-…``; ``usage`` counts
each prompt once and every choice's tokens. Concurrent requests are micro-batched: a worker
thread waits ``batch_wait`` seconds for more requests and sends them to the backend as one batch.

``arena llm-serve MODEL_DIR --port 8000`` runs it; the line ``listening on URL`` is printed
once it accepts connections.
"""

from __future__ import annotations

import argparse
import json
import queue
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from arena.cli_api import Command
from arena.errors import ArenaError
from arena.hookspecs import hookimpl


class _Job:
    __slots__ = ("ids", "max_tokens", "temperature", "seed", "stop", "done", "result", "error")

    def __init__(self, ids: list[int], max_tokens: int, temperature: float, seed: int, stop: tuple[str, ...]) -> None:
        self.ids, self.max_tokens, self.temperature, self.seed, self.stop = ids, max_tokens, temperature, seed, stop
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class Batcher:
    """Collects generation jobs from request threads and runs them in batches on one thread."""

    def __init__(self, backend: Any, batch_wait: float = 0.005, max_batch: int = 256) -> None:
        self.backend, self.batch_wait, self.max_batch = backend, batch_wait, max_batch
        self.jobs: queue.Queue[_Job | None] = queue.Queue()
        self.lock = threading.Lock()  # the backend is used by one thread at a time
        self.batches = 0
        self.thread = threading.Thread(target=self._loop, daemon=True, name="arena-llm-batcher")
        self.thread.start()

    def submit(self, jobs: list[_Job]) -> None:
        for j in jobs:
            self.jobs.put(j)
        for j in jobs:
            j.done.wait()
            if j.error is not None:
                raise j.error

    def _loop(self) -> None:
        while True:
            first = self.jobs.get()
            if first is None:
                return
            batch = [first]
            deadline = time.monotonic() + self.batch_wait
            while len(batch) < self.max_batch:
                try:
                    j = self.jobs.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if j is None:
                    self.jobs.put(None)
                    break
                batch.append(j)
            groups: dict[tuple, list[_Job]] = {}
            for j in batch:
                groups.setdefault((j.max_tokens, j.temperature, j.stop), []).append(j)
            for (max_tokens, temperature, stop), js in groups.items():
                try:
                    with self.lock:
                        gens = self.backend.generate_ids(
                            [j.ids for j in js],
                            max_tokens=max_tokens,
                            temperature=temperature,
                            seeds=[j.seed for j in js],
                            stop=stop,
                        )
                    self.batches += 1
                    for j, g in zip(js, gens):
                        j.result = g
                except BaseException as exc:  # handed to the waiting request thread
                    for j in js:
                        j.error = exc
                for j in js:
                    j.done.set()

    def close(self) -> None:
        self.jobs.put(None)


class _HTTPError(Exception):
    """A request the server refuses: status code and an OpenAI-style error body."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.param, self.code = status, param, code

    def body(self) -> dict[str, Any]:
        kind = "invalid_request_error" if self.status < 500 else "server_error"
        return {"error": {"message": str(self), "type": kind, "param": self.param, "code": self.code}}


def _bad(message: str, param: str | None = None) -> _HTTPError:
    return _HTTPError(400, message, param)


def _token_offsets(tokenizer: Any, text: str, ids: list[int]) -> list[int]:
    """Character offset of each token in ``text`` (the OpenAI ``text_offset`` field)."""
    try:
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        if list(enc["input_ids"]) == list(ids):
            return [int(a) for a, _ in enc["offset_mapping"]]
    except (TypeError, ValueError, NotImplementedError, KeyError):
        pass
    return [len(tokenizer.decode(ids[:i], skip_special_tokens=True)) for i in range(len(ids))]


def _pieces(tokenizer: Any, ids: list[int], text: str) -> list[str]:
    """The text each generated token adds, for streaming: one string per token whose
    concatenation is exactly ``text`` (a token that ends mid-character, or past a stop string,
    adds nothing; the remainder goes to the last token)."""
    out, emitted = [], ""
    for k in range(len(ids)):
        cand = tokenizer.decode(ids[: k + 1], skip_special_tokens=True)[: len(text)]
        if len(cand) > len(emitted) and text.startswith(cand) and not cand.endswith("\ufffd"):
            out.append(cand[len(emitted) :])
            emitted = cand
        else:
            out.append("")
    if emitted != text:
        if out:
            out[-1] += text[len(emitted) :]
        else:
            out.append(text)
    return out


def _int(body: dict[str, Any], key: str, default: int | None, lo: int, hi: int) -> int | None:
    v = body.get(key)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _bad(f"'{key}' must be an integer in [{lo}, {hi}], got {v!r}", key)
    return v


class _Request:
    """A validated completions / chat request (only the fields this server implements)."""

    def __init__(self, body: dict[str, Any], chat: bool, model_name: str, render_chat: Any) -> None:
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise _bad("you must provide a 'model' parameter", "model")
        if model != model_name:
            raise _HTTPError(
                404,
                f"The model '{model}' does not exist (this server serves '{model_name}')",
                "model",
                "model_not_found",
            )
        self.chat = chat
        if chat:
            msgs = body.get("messages")
            if not isinstance(msgs, list) or not msgs or not all(isinstance(m, dict) for m in msgs):
                raise _bad("'messages' must be a non-empty list of objects", "messages")
            self.prompts = [render_chat(msgs) or "\n".join(str(m.get("content", "")) for m in msgs) + "\n"]
        else:
            p = body.get("prompt")
            prompts = [p] if isinstance(p, str) else p
            if not isinstance(prompts, list) or not prompts or not all(isinstance(x, str) for x in prompts):
                raise _bad("'prompt' must be a string or a non-empty list of strings", "prompt")
            self.prompts = prompts
        self.n = _int(body, "n", 1, 1, 128)
        key = "max_completion_tokens" if chat and body.get("max_completion_tokens") is not None else "max_tokens"
        self.max_tokens = _int(body, key, 16, 0 if not chat else 1, 1 << 20)
        t = body.get("temperature", 1.0)
        if t is None:
            t = 1.0
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0.0 <= t <= 2.0:
            raise _bad(f"'temperature' must be a number in [0, 2], got {t!r}", "temperature")
        self.temperature = float(t)
        self.seed = _int(body, "seed", None, -(1 << 63), (1 << 63) - 1)
        stop = body.get("stop") or ()
        stop = (stop,) if isinstance(stop, str) else stop
        if not isinstance(stop, (list, tuple)) or len(stop) > 4 or not all(isinstance(x, str) and x for x in stop):
            raise _bad("'stop' must be a string or a list of at most 4 non-empty strings", "stop")
        self.stop = tuple(stop)
        self.stream = bool(body.get("stream"))
        opts = body.get("stream_options") or {}
        if not isinstance(opts, dict):
            raise _bad("'stream_options' must be an object", "stream_options")
        self.include_usage = bool(opts.get("include_usage"))
        self.echo = False
        if chat:
            self.logprobs = bool(body.get("logprobs"))
            self.top = _int(body, "top_logprobs", 0, 0, 20)
            if self.top and not self.logprobs:
                raise _bad("'top_logprobs' needs 'logprobs': true", "top_logprobs")
        else:
            lp = _int(body, "logprobs", None, 0, 20)
            self.logprobs, self.top = lp is not None, lp or 0
            self.echo = bool(body.get("echo"))
        if self.max_tokens == 0 and not (self.echo and self.logprobs):
            raise _bad(
                "'max_tokens' 0 generates nothing; it is for prompt log-probs (echo with logprobs)", "max_tokens"
            )


class _Choice:
    """One generated choice and the per-token data its response and stream chunks show."""

    __slots__ = (
        "index",
        "prompt",
        "prompt_ids",
        "gen",
        "text",
        "finish",
        "token_ids",
        "token_lps",
        "tops",
        "echo_lps",
        "echo_tops",
    )

    def __init__(self, index: int, prompt: str, prompt_ids: list[int], gen: Any) -> None:
        self.index, self.prompt, self.prompt_ids, self.gen = index, prompt, prompt_ids, gen
        self.text = gen.text if gen is not None else ""
        self.finish = (gen.finish_reason if gen is not None else "length") or "length"
        self.token_ids = list(gen.completion_ids or []) if gen is not None else []
        self.token_lps = [float(x) for x in (gen.token_logprobs or [])] if gen is not None else []
        self.tops: list[list[tuple[int, float]]] = []
        self.echo_lps: list[float] = []
        self.echo_tops: list[list[tuple[int, float]]] = []


class Service:
    """The request logic, separate from HTTP plumbing: ``respond`` gives a response object, or
    the list of chunks of a streamed one."""

    def __init__(self, backend: Any, model_name: str, batch_wait: float = 0.005) -> None:
        self.backend, self.model_name = backend, model_name
        self.batcher = Batcher(backend, batch_wait)

    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [self.model(self.model_name)]}

    def model(self, name: str) -> dict[str, Any]:
        if name != self.model_name:
            raise _HTTPError(404, f"The model '{name}' does not exist", "model", "model_not_found")
        return {"id": self.model_name, "object": "model", "created": 0, "owned_by": "arena"}

    def completions(self, body: dict[str, Any], chat: bool = False) -> dict[str, Any] | list[dict[str, Any]]:
        req = _Request(body, chat, self.model_name, self.backend.render_chat)
        choices = self._generate(req)
        if req.logprobs:
            self._add_logprobs(req, choices)
        rid = f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}"
        head = {
            "id": rid,
            "object": "chat.completion" if chat else "text_completion",
            "created": int(time.time()),
            "model": self.model_name,
        }
        n_in = sum(len(c.prompt_ids) for c in choices if c.index % req.n == 0)  # each prompt once
        n_out = sum(c.gen.tokens_out for c in choices if c.gen is not None)
        usage = {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out}
        if req.stream:
            return self._chunks(req, head, choices, usage)
        out = []
        for c in choices:
            if chat:
                ch: dict[str, Any] = {
                    "index": c.index,
                    "message": {"role": "assistant", "content": c.text},
                    "logprobs": {"content": self._chat_lp(req, c, range(len(c.token_ids)))} if req.logprobs else None,
                    "finish_reason": c.finish,
                }
            else:
                ch = {
                    "index": c.index,
                    "text": c.prompt + c.text if req.echo else c.text,
                    "logprobs": self._completion_lp(req, c, echo=req.echo, tokens=range(len(c.token_ids)))
                    if req.logprobs
                    else None,
                    "finish_reason": c.finish,
                }
            out.append(ch)
        return {**head, "choices": out, "usage": usage}

    # -- generation --------------------------------------------------------------------------------
    def _generate(self, req: _Request) -> list[_Choice]:
        """``n`` choices per prompt (OpenAI order: prompt-major); choice ``i`` samples with
        ``seed + i``, so a request with a seed is reproducible."""
        seed = req.seed if req.seed is not None else int(time.time_ns() % 2**31)
        ids = [self.backend.prompt_ids(p) for p in req.prompts]
        slots = [(k, p, i) for k, (p, i) in enumerate(zip(req.prompts, ids)) for _ in range(req.n)]
        gens: list[Any] = [None] * len(slots)
        if req.max_tokens > 0:
            jobs = [_Job(i, req.max_tokens, req.temperature, seed + c, req.stop) for c, (_, _, i) in enumerate(slots)]
            self.batcher.submit(jobs)
            gens = [j.result for j in jobs]
        return [_Choice(c, p, i, g) for c, ((_, p, i), g) in enumerate(zip(slots, gens))]

    def _add_logprobs(self, req: _Request, choices: list[_Choice]) -> None:
        pairs = [(c.prompt_ids, c.token_ids) for c in choices]
        try:
            with self.batcher.lock:
                if req.echo:
                    echo_pairs = [(c.prompt_ids[:1], c.prompt_ids[1:]) for c in choices]
                    for c, lps in zip(choices, self.backend.score_ids(echo_pairs)):
                        c.echo_lps = [float(x) for x in lps]
                    if req.top:
                        for c, t in zip(choices, self.backend.top_logprobs_ids(echo_pairs, req.top)):
                            c.echo_tops = t
                if req.top:
                    for c, t in zip(choices, self.backend.top_logprobs_ids(pairs, req.top)):
                        c.tops = t
        except NotImplementedError as exc:
            raise _bad(str(exc), "top_logprobs" if req.top else "logprobs") from None

    # -- response shapes ---------------------------------------------------------------------------
    def _piece(self, t: int) -> str:
        return self.backend.tokenizer.decode([t])

    def _chat_lp(self, req: _Request, c: _Choice, tokens: Any) -> list[dict[str, Any]]:
        def entry(t: int, lp: float) -> dict[str, Any]:
            piece = self._piece(t)
            return {"token": piece, "logprob": lp, "bytes": list(piece.encode())}

        out = []
        for j in tokens:
            e = entry(c.token_ids[j], c.token_lps[j])
            e["top_logprobs"] = [entry(t, v) for t, v in c.tops[j]] if req.top else []
            out.append(e)
        return out

    def _completion_lp(self, req: _Request, c: _Choice, echo: bool, tokens: Any) -> dict[str, Any]:
        """The legacy completions ``logprobs`` object: echoed prompt tokens (first one has no
        log-prob), then the completion tokens in ``tokens``."""
        pieces, values, offsets, tops = [], [], [], []
        if echo:
            pieces = [self._piece(t) for t in c.prompt_ids]
            values = [None] + c.echo_lps
            offsets = _token_offsets(self.backend.tokenizer, c.prompt, c.prompt_ids)
            tops = (
                [None] + [{self._piece(t): v for t, v in row} for row in c.echo_tops]
                if req.top
                else [None] * len(pieces)
            )
        base = len(c.prompt) if req.echo else 0
        base += sum(len(self._piece(t)) for t in c.token_ids[: min(tokens, default=0)])
        for j in tokens:
            piece = self._piece(c.token_ids[j])
            pieces.append(piece)
            values.append(c.token_lps[j])
            offsets.append(base)
            tops.append({self._piece(t): v for t, v in c.tops[j]} if req.top else None)
            base += len(piece)
        return {"tokens": pieces, "token_logprobs": values, "text_offset": offsets, "top_logprobs": tops}

    def _chunks(
        self, req: _Request, head: dict[str, Any], choices: list[_Choice], usage: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """Server-sent event payloads: per choice a chunk per generated token, then one with the
        finish reason (and, with ``stream_options.include_usage``, a last chunk with usage and no
        choices, as OpenAI sends)."""
        obj = "chat.completion.chunk" if req.chat else "text_completion"
        extra = {"usage": None} if req.include_usage else {}
        chunks = []

        def chunk(choice: dict[str, Any]) -> None:
            chunks.append({**head, "object": obj, "choices": [choice], **extra})

        for c in choices:
            pieces = _pieces(self.backend.tokenizer, c.token_ids, c.text)
            if req.chat:
                chunk(
                    {
                        "index": c.index,
                        "delta": {"role": "assistant", "content": ""},
                        "logprobs": None,
                        "finish_reason": None,
                    }
                )
                for j, piece in enumerate(pieces):
                    lp = {"content": self._chat_lp(req, c, [j])} if req.logprobs and j < len(c.token_ids) else None
                    chunk({"index": c.index, "delta": {"content": piece}, "logprobs": lp, "finish_reason": None})
                chunk({"index": c.index, "delta": {}, "logprobs": None, "finish_reason": c.finish})
            else:
                if req.echo:
                    chunk(
                        {
                            "index": c.index,
                            "text": c.prompt,
                            "finish_reason": None,
                            "logprobs": self._completion_lp(req, c, echo=True, tokens=[]) if req.logprobs else None,
                        }
                    )
                for j, piece in enumerate(pieces):
                    lp = (
                        self._completion_lp(req, c, echo=False, tokens=[j])
                        if req.logprobs and j < len(c.token_ids)
                        else None
                    )
                    chunk({"index": c.index, "text": piece, "logprobs": lp, "finish_reason": None})
                chunk({"index": c.index, "text": "", "logprobs": None, "finish_reason": c.finish})
        if req.include_usage:
            chunks.append({**head, "object": obj, "choices": [], "usage": usage})
        return chunks


def make_handler(service: Service) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt: str, *args: Any) -> None:  # quiet by default
            pass

        def _send(self, code: int, data: dict[str, Any]) -> None:
            raw = json.dumps(data).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _stream(self, chunks: list[dict[str, Any]]) -> None:
            """Server-sent events over chunked transfer encoding (the connection stays usable)."""
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]:
                raw = event.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(raw), raw))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

        def do_GET(self) -> None:
            route = self.path.split("?")[0].rstrip("/")
            try:
                if route == "/v1/models":
                    self._send(200, service.models())
                elif route.startswith("/v1/models/"):
                    self._send(200, service.model(route[len("/v1/models/") :]))
                else:
                    raise _HTTPError(404, f"no route {self.path}")
            except _HTTPError as exc:
                self._send(exc.status, exc.body())

        def do_POST(self) -> None:
            route = self.path.split("?")[0].rstrip("/")
            try:
                n = int(self.headers.get("Content-Length", 0))
                try:
                    body = json.loads(self.rfile.read(n) or b"{}")
                except (json.JSONDecodeError, UnicodeDecodeError, RecursionError, ValueError) as exc:
                    raise _bad(f"body is not valid JSON: {str(exc)[:120]}") from None
                if not isinstance(body, dict):
                    raise _bad("body must be a JSON object")
                if route not in ("/v1/completions", "/v1/chat/completions"):
                    raise _HTTPError(404, f"no route {self.path}")
                result = service.completions(body, chat=route == "/v1/chat/completions")
                if isinstance(result, list):
                    self._stream(result)
                else:
                    self._send(200, result)
            except _HTTPError as exc:
                self._send(exc.status, exc.body())
            except Exception as exc:  # the server stays up; the client sees a 500 it may retry
                self._send(
                    500,
                    {
                        "error": {
                            "message": f"{type(exc).__name__}: {exc}",
                            "type": "server_error",
                            "param": None,
                            "code": None,
                        }
                    },
                )

    return Handler


def serve(
    backend: Any, host: str = "127.0.0.1", port: int = 0, model_name: str = "arena", batch_wait: float = 0.005
) -> ThreadingHTTPServer:
    """Start serving in a background thread; returns the server (``server.server_address``)."""
    server = ThreadingHTTPServer((host, port), make_handler(Service(backend, model_name, batch_wait)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True, name="arena-llm-serve").start()
    return server


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="local model directory (e.g. from `arena tiny-model DIR`)")
    p.add_argument("--backend", default="transformers", choices=["transformers", "vllm"])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    p.add_argument("--name", default=None, help="model name reported to clients (default: the directory name)")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--batch-wait", type=float, default=0.005, help="seconds to wait to fill a batch")


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from arena.plugins.agents.llm import make_backend

    if not Path(args.model).is_dir():
        raise ArenaError(f"llm-serve: model directory not found: {args.model}")
    backend = make_backend(args.backend, args.model, dtype=args.dtype)
    server = serve(backend, args.host, args.port, args.name or Path(args.model).name, args.batch_wait)
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}/v1", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.shutdown()
    return 0


@hookimpl
def arena_commands() -> list[Command]:
    return [
        Command(
            "llm-serve",
            "serve a local model over an OpenAI-compatible HTTP API (for the openai backend)",
            _add_arguments,
            _run,
        )
    ]
