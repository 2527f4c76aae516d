"""Backend for any OpenAI-compatible HTTP server (vLLM's ``vllm serve``, arena's own
``arena llm-serve``, hosted APIs).

Scoring uses ``/v1/completions`` with ``echo``, ``logprobs`` and ``max_tokens=0`` (prompt
log-probs only, no generation; vLLM's server and arena's support it, most hosted chat APIs do
not). Generation sends one request per
decision, concurrently, so the server batches them and every decision keeps its own seed;
``chat=true`` uses ``/v1/chat/completions`` instead. The API key is read from the environment
variable named by ``api_key_env`` (never from a config file).

Failure rule: a connection error, timeout, HTTP 429/5xx or malformed body is retried up to
``retries`` times with exponential backoff (``backoff * 2**k`` seconds); then one
:class:`~arena.errors.ArenaError` line names the URL and the last problem. Other HTTP errors
(4xx) fail at once.
"""
from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

from arena.errors import ArenaError
from arena.plugins.agents.llm.backend import Backend, Generation, Scored, cut_at_stop


class BackendHTTPError(ArenaError):
    """The server could not give a usable answer (after retries)."""


class _Retryable(Exception):
    pass


class OpenAIBackend(Backend):
    name = "openai"

    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY", timeout: float = 60.0,
                 retries: int = 3, backoff: float = 0.5, chat: bool = False, concurrency: int = 16) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ArenaError(f"llm agent: base_url must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        if not self.base_url.endswith("/v1"):
            self.base_url += "/v1"
        self.model, self.timeout, self.retries, self.backoff = model, float(timeout), int(retries), float(backoff)
        self.api_key = os.environ.get(api_key_env, "") if api_key_env else ""
        self.chat = chat
        self.supports_scoring = not chat
        self.pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="arena-openai")
        self.http_retries = 0

    # -- transport ---------------------------------------------------------------------------
    def post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}{path}"
        body = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self.http_retries += 1
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                req = urllib.request.Request(url, data=body, headers=headers, method="POST")
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    raw = resp.read()
                try:
                    data = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    raise _Retryable(f"malformed response (not JSON): {raw[:80]!r}") from None
                if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
                    raise _Retryable(f"malformed response (no 'choices' list): {str(data)[:80]}")
                return data
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:200].decode(errors="replace")
                if exc.code == 429 or exc.code >= 500:
                    problem = f"HTTP {exc.code}: {detail}"
                    continue
                raise BackendHTTPError(f"llm agent: {url} answered HTTP {exc.code}: {detail}") from None
            except (socket.timeout, TimeoutError):
                problem = f"timed out after {self.timeout:g}s"
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, (socket.timeout, TimeoutError)):
                    problem = f"timed out after {self.timeout:g}s"
                else:
                    problem = f"cannot connect: {exc.reason}"
            except (ConnectionError, OSError) as exc:
                problem = f"connection error: {exc}"
            except _Retryable as exc:
                problem = str(exc)
        raise BackendHTTPError(f"llm agent: {url} failed after {self.retries + 1} attempts: {problem}")

    # -- scoring -----------------------------------------------------------------------------
    def score(self, prompts: Sequence[str], continuations: Sequence[Sequence[str]]) -> list[list[Scored]]:
        if self.chat:
            raise ArenaError("llm agent: the chat endpoint cannot score actions; use chat=false")
        flat = [(p, c) for p, cs in zip(prompts, continuations) for c in cs]
        if not flat:
            return [[] for _ in prompts]
        data = self.post("/completions", {"model": self.model, "prompt": [p + c for p, c in flat],
                                          "max_tokens": 0, "temperature": 0.0, "echo": True, "logprobs": 1})
        choices = sorted(data["choices"], key=lambda ch: ch.get("index", 0))
        if len(choices) != len(flat):
            raise BackendHTTPError(f"llm agent: {self.base_url}/completions returned {len(choices)} choices "
                                   f"for {len(flat)} prompts")
        scored = [self._echo_score(ch, p, c) for ch, (p, c) in zip(choices, flat)]
        out, k = [], 0
        for cs in continuations:
            out.append(scored[k:k + len(cs)])
            k += len(cs)
        return out

    def _echo_score(self, choice: dict, prompt: str, cont: str) -> Scored:
        """Sum the echoed log-probs of the tokens that start inside the continuation."""
        try:
            lp = choice["logprobs"]
            offsets, values = lp["text_offset"], lp["token_logprobs"]
            start, end = len(prompt), len(prompt) + len(cont)
            picked = [float(v) for o, v in zip(offsets, values) if start <= o < end]
            n_in = sum(1 for o in offsets if o < end)
        except (KeyError, TypeError, ValueError):
            raise BackendHTTPError(f"llm agent: {self.base_url}/completions: malformed logprobs in echo "
                                   "response (the server must support echo with logprobs for scored mode)") from None
        if not picked:
            raise BackendHTTPError(f"llm agent: {self.base_url}/completions: no echoed tokens for continuation {cont!r}")
        return Scored(sum(picked), picked, n_in)

    # -- generation --------------------------------------------------------------------------
    def generate(self, prompts: Sequence[str], *, max_tokens: int, temperature: float,
                 seeds: Sequence[int], stop: Sequence[str] = ()) -> list[Generation]:
        jobs = [self.pool.submit(self._one, p, max_tokens, temperature, int(s), list(stop)) for p, s in zip(prompts, seeds)]
        return [j.result() for j in jobs]

    def _one(self, prompt: str, max_tokens: int, temperature: float, seed: int, stop: list[str]) -> Generation:
        payload: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "temperature": temperature,
                                   "seed": seed}
        if stop:
            payload["stop"] = stop
        if self.chat:
            payload["messages"] = [{"role": "user", "content": prompt}]
            data = self.post("/chat/completions", payload)
        else:
            payload["prompt"] = prompt
            data = self.post("/completions", payload)
        try:
            ch = data["choices"][0]
            text = ch["message"]["content"] if self.chat else ch["text"]
            if not isinstance(text, str):
                raise TypeError
        except (KeyError, IndexError, TypeError):
            raise BackendHTTPError(f"llm agent: {self.base_url}: malformed completion (no text in choices[0])") from None
        usage = data.get("usage") or {}
        text, _ = cut_at_stop(text, stop)
        return Generation(text, int(usage.get("prompt_tokens", 0) or 0), int(usage.get("completion_tokens", 0) or 0),
                          finish_reason=str(ch.get("finish_reason", "")))

    def close(self) -> None:
        self.pool.shutdown(wait=False)
