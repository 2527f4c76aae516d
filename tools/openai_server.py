"""A small OpenAI-compatible HTTP server around a local arena backend (transformers or vLLM).

Why: the ``openai`` backend must be testable against a real server without network access,
and a laptop demo should not need ``vllm serve``. It implements what the agent uses:
``GET /v1/models``, ``POST /v1/completions`` (string or list prompt, ``max_tokens``,
``temperature``, ``seed``, ``stop``, ``echo`` + ``logprobs`` for prompt log-probs) and
``POST /v1/chat/completions``. Concurrent requests are micro-batched: a worker thread waits
``batch_wait`` seconds for more requests and sends them to the backend as one batch.

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
                        gens = self.backend.generate_ids([j.ids for j in js], max_tokens=max_tokens,
                                                         temperature=temperature, seeds=[j.seed for j in js], stop=stop)
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


class _BadRequest(Exception):
    pass


def _token_offsets(tokenizer: Any, text: str, ids: list[int]) -> list[int]:
    """Character offset of each token in ``text`` (the OpenAI ``text_offset`` field)."""
    try:
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        if list(enc["input_ids"]) == list(ids):
            return [int(a) for a, _ in enc["offset_mapping"]]
    except (TypeError, ValueError, NotImplementedError, KeyError):
        pass
    return [len(tokenizer.decode(ids[:i], skip_special_tokens=True)) for i in range(len(ids))]


class Service:
    """The request logic, separate from HTTP plumbing."""

    def __init__(self, backend: Any, model_name: str, batch_wait: float = 0.005) -> None:
        self.backend, self.model_name = backend, model_name
        self.batcher = Batcher(backend, batch_wait)

    def completions(self, body: dict[str, Any], chat: bool = False) -> dict[str, Any]:
        if chat:
            msgs = body.get("messages")
            if not isinstance(msgs, list) or not msgs:
                raise _BadRequest("'messages' must be a non-empty list")
            prompt = self.backend.render_chat(msgs) or "\n".join(str(m.get("content", "")) for m in msgs) + "\n"
            prompts = [prompt]
        else:
            p = body.get("prompt")
            prompts = [p] if isinstance(p, str) else p
            if not isinstance(prompts, list) or not prompts or not all(isinstance(x, str) for x in prompts):
                raise _BadRequest("'prompt' must be a string or a non-empty list of strings")
        try:
            max_tokens = int(body.get("max_tokens", 16) if body.get("max_tokens") is not None else 16)
            temperature = float(body.get("temperature", 1.0))
            seed = int(body["seed"]) if body.get("seed") is not None else int(time.time_ns() % 2**31)
        except (TypeError, ValueError):
            raise _BadRequest("max_tokens, temperature and seed must be numbers") from None
        stop = body.get("stop") or ()
        stop = (stop,) if isinstance(stop, str) else tuple(stop)
        echo, want_lp = bool(body.get("echo")), body.get("logprobs") is not None
        ids = [self.backend.prompt_ids(p) for p in prompts]
        gens = [None] * len(prompts)
        if max_tokens > 0:
            jobs = [_Job(i, max_tokens, temperature, seed + k, stop) for k, i in enumerate(ids)]
            self.batcher.submit(jobs)
            gens = [j.result for j in jobs]
        echo_lps: list[list[float]] = [[] for _ in prompts]
        if echo and want_lp:
            with self.batcher.lock:
                echo_lps = self.backend.score_ids([(i[:1], i[1:]) for i in ids])
        choices, n_in, n_out = [], 0, 0
        for k, (prompt, pid, g) in enumerate(zip(prompts, ids, gens)):
            text = g.text if g is not None else ""
            n_in += len(pid)
            n_out += g.tokens_out if g is not None else 0
            ch: dict[str, Any] = {"index": k, "finish_reason": (g.finish_reason if g is not None else "length") or "length"}
            if chat:
                ch["message"] = {"role": "assistant", "content": text}
            else:
                ch["text"] = prompt + text if echo else text
                ch["logprobs"] = self._logprobs(prompt, pid, echo_lps[k], g, echo) if want_lp else None
            choices.append(ch)
        return {"id": f"cmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion" if chat else "text_completion",
                "created": int(time.time()), "model": self.model_name, "choices": choices,
                "usage": {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out}}

    def _logprobs(self, prompt: str, pid: list[int], echo_lp: list[float], g: Any, echo: bool) -> dict[str, Any]:
        tok = self.backend.tokenizer
        tokens, values, offsets = [], [], []
        if echo:
            tokens = [tok.decode([t]) for t in pid]
            values = [None] + [float(x) for x in echo_lp]
            offsets = _token_offsets(tok, prompt, pid)
        if g is not None:
            base = len(prompt) if echo else 0
            comp = g.completion_ids or []
            for t, lp in zip(comp, g.token_logprobs or []):
                offsets.append(base)
                piece = tok.decode([t])
                tokens.append(piece)
                values.append(float(lp))
                base += len(piece)
        return {"tokens": tokens, "token_logprobs": values, "text_offset": offsets,
                "top_logprobs": [None] * len(tokens)}


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

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": service.model_name, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            route = self.path.rstrip("/")
            try:
                n = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(n) or b"{}")
                if not isinstance(body, dict):
                    raise _BadRequest("body must be a JSON object")
                if route == "/v1/completions":
                    self._send(200, service.completions(body))
                elif route == "/v1/chat/completions":
                    self._send(200, service.completions(body, chat=True))
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
            except (_BadRequest, json.JSONDecodeError) as exc:
                self._send(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
            except Exception as exc:  # the server stays up; the client sees a 500 it may retry
                self._send(500, {"error": {"message": f"{type(exc).__name__}: {exc}", "type": "server_error"}})

    return Handler


def serve(backend: Any, host: str = "127.0.0.1", port: int = 0, model_name: str = "arena",
          batch_wait: float = 0.005) -> ThreadingHTTPServer:
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
    return [Command("llm-serve", "serve a local model over an OpenAI-compatible HTTP API (for the openai backend)",
                    _add_arguments, _run)]
