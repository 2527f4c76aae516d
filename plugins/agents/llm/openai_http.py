"""Backend for any OpenAI-compatible HTTP server (vLLM's ``vllm serve``, arena's own
``arena llm-serve``, hosted APIs).

Scoring uses ``/v1/completions`` with ``echo``, ``logprobs`` and ``max_tokens=0`` (prompt
log-probs only, no generation; vLLM's server and arena's support it, most hosted chat APIs do
not). Generation sends one request per
decision, concurrently, so the server batches them and every decision keeps its own seed;
``chat=true`` uses ``/v1/chat/completions`` instead. The API key is read from the environment
variable named by ``api_key_env`` (never from a config file).

Transport: HTTP/1.1 keep-alive connections from a small pool (one per concurrent request at
most, reused by the next request), so a game of many decisions does not pay a TCP (and TLS)
handshake per decision; a pooled connection the server has closed meanwhile is replaced
at once, without counting as a retry.

Failure rule: a connection error, timeout, HTTP 429/5xx or malformed body is retried up to
``retries`` times with exponential backoff (``backoff * 2**k`` seconds) — or, when the server
says how long to wait (``Retry-After``, seconds or an HTTP date, on a 429/503), that long,
capped at ``max_retry_after`` seconds; then one :class:`~arena.errors.ArenaError` line names
the URL and the last problem. Other HTTP errors (4xx) fail at once.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from email.utils import parsedate_to_datetime
from typing import Any, Sequence

from arena.errors import ArenaError
from arena.plugins.agents.llm.backend import Backend, Generation, Scored, cut_at_stop


class BackendHTTPError(ArenaError):
    """The server could not give a usable answer (after retries)."""


class _Retryable(Exception):
    pass


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds from now: delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


class ConnectionPool:
    """Idle keep-alive connections to one origin; a request takes one (or opens one) and gives
    it back when the response was read and the server keeps the connection open."""

    def __init__(self, url: str, timeout: float) -> None:
        u = urllib.parse.urlsplit(url)
        self.https = u.scheme == "https"
        self.host, self.port = u.hostname or "", u.port or (443 if self.https else 80)
        self.prefix = u.path.rstrip("/")
        self.timeout = timeout
        self.idle: list[http.client.HTTPConnection] = []
        self.lock = threading.Lock()
        self.opened = 0
        """Connections opened so far (a test and the benchmark read it)."""

    def take(self) -> tuple[http.client.HTTPConnection, bool]:
        """A connection and whether it is a reused (possibly stale) one."""
        with self.lock:
            if self.idle:
                return self.idle.pop(), True
            self.opened += 1
        if self.https:
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=self.timeout, context=ssl.create_default_context()
            ), False
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout), False

    def give_back(self, conn: http.client.HTTPConnection) -> None:
        with self.lock:
            self.idle.append(conn)

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for c in idle:
            c.close()


class OpenAIBackend(Backend):
    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
        chat: bool = False,
        concurrency: int = 16,
        max_retry_after: float = 60.0,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ArenaError(f"llm agent: base_url must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        if not self.base_url.endswith("/v1"):
            self.base_url += "/v1"
        self.model, self.timeout, self.retries, self.backoff = model, float(timeout), int(retries), float(backoff)
        self.max_retry_after = float(max_retry_after)
        self.api_key = os.environ.get(api_key_env, "") if api_key_env else ""
        self.chat = chat
        self.supports_scoring = not chat
        self.pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="arena-openai")
        self.connections = ConnectionPool(self.base_url, self.timeout)
        self.http_retries = 0

    # -- transport ---------------------------------------------------------------------------
    def _exchange(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, str | None]:
        """One request on a pooled connection: ``(status, body, Retry-After)``. A reused
        connection that turns out closed by the server is dropped and the next one tried (at
        worst a fresh one), at no retry cost."""
        while True:
            conn, reused = self.connections.take()
            try:
                conn.request("POST", self.connections.prefix + path, body=body, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
            except (
                http.client.RemoteDisconnected,
                BrokenPipeError,
                ConnectionResetError,
                http.client.CannotSendRequest,
                http.client.BadStatusLine,
            ):
                conn.close()
                if reused:
                    continue
                raise
            except BaseException:
                conn.close()
                raise
            if resp.will_close:
                conn.close()
            else:
                self.connections.give_back(conn)
            return resp.status, raw, resp.getheader("Retry-After")

    def post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}{path}"
        body = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json", "Connection": "keep-alive"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        problem = ""
        wait: float | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                self.http_retries += 1
                time.sleep(wait if wait is not None else self.backoff * 2 ** (attempt - 1))
            wait = None
            try:
                status, raw, retry_after = self._exchange(path, body, headers)
                if status == 429 or status >= 500:
                    problem = f"HTTP {status}: {raw[:200].decode(errors='replace')}"
                    after = retry_after_seconds(retry_after)
                    if after is not None:
                        wait = min(after, self.max_retry_after)
                        problem += f" (Retry-After {retry_after})"
                    continue
                if status >= 400:
                    raise BackendHTTPError(
                        f"llm agent: {url} answered HTTP {status}: {raw[:200].decode(errors='replace')}"
                    )
                try:
                    data = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    raise _Retryable(f"malformed response (not JSON): {raw[:80]!r}") from None
                if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
                    raise _Retryable(f"malformed response (no 'choices' list): {str(data)[:80]}")
                return data
            except (socket.timeout, TimeoutError):
                problem = f"timed out after {self.timeout:g}s"
            except (ConnectionRefusedError, socket.gaierror) as exc:
                problem = f"cannot connect: {exc}"
            except (http.client.HTTPException, ConnectionError, OSError) as exc:
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
        data = self.post(
            "/completions",
            {
                "model": self.model,
                "prompt": [p + c for p, c in flat],
                "max_tokens": 0,
                "temperature": 0.0,
                "echo": True,
                "logprobs": 1,
            },
        )
        choices = sorted(data["choices"], key=lambda ch: ch.get("index", 0))
        if len(choices) != len(flat):
            raise BackendHTTPError(
                f"llm agent: {self.base_url}/completions returned {len(choices)} choices for {len(flat)} prompts"
            )
        scored = [self._echo_score(ch, p, c) for ch, (p, c) in zip(choices, flat)]
        out, k = [], 0
        for cs in continuations:
            out.append(scored[k : k + len(cs)])
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
            raise BackendHTTPError(
                f"llm agent: {self.base_url}/completions: malformed logprobs in echo "
                "response (the server must support echo with logprobs for scored mode)"
            ) from None
        if not picked:
            raise BackendHTTPError(
                f"llm agent: {self.base_url}/completions: no echoed tokens for continuation {cont!r}"
            )
        return Scored(sum(picked), picked, n_in)

    # -- generation --------------------------------------------------------------------------
    def generate(
        self,
        prompts: Sequence[str],
        *,
        max_tokens: int,
        temperature: float,
        seeds: Sequence[int],
        stop: Sequence[str] = (),
    ) -> list[Generation]:
        jobs = [
            self.pool.submit(self._one, p, max_tokens, temperature, int(s), list(stop)) for p, s in zip(prompts, seeds)
        ]
        return [j.result() for j in jobs]

    def _one(self, prompt: str, max_tokens: int, temperature: float, seed: int, stop: list[str]) -> Generation:
        payload: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "seed": seed,
        }
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
            raise BackendHTTPError(
                f"llm agent: {self.base_url}: malformed completion (no text in choices[0])"
            ) from None
        usage = data.get("usage") or {}
        text, _ = cut_at_stop(text, stop)
        return Generation(
            text,
            int(usage.get("prompt_tokens", 0) or 0),
            int(usage.get("completion_tokens", 0) or 0),
            finish_reason=str(ch.get("finish_reason", "")),
        )

    def close(self) -> None:
        self.pool.shutdown(wait=False)
        self.connections.close()
