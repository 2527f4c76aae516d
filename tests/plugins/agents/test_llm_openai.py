"""The OpenAI-compatible backend against real HTTP servers on 127.0.0.1: arena's own
``arena llm-serve`` (a subprocess around the tiny model), plus deliberately broken servers for
the timeout, malformed-response, server-error, Retry-After and keep-alive rules. The server
side is checked with the official ``openai`` client (streaming, n, max tokens, logprobs, stop,
404 for an unknown model, ids, usage)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

pytest.importorskip("transformers")

from arena.agent import Observation  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.loading import load_agent, load_game  # noqa: E402
from arena.playing.match import game_rng, play_games, sample_chance  # noqa: E402
from arena.plugins.agents.llm.openai_http import BackendHTTPError, OpenAIBackend  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402
from support import arena_cmd  # noqa: E402


@pytest.fixture(scope="module")
def server():
    """``arena llm-serve`` in a subprocess, on a free port."""
    proc = subprocess.Popen(
        arena_cmd() + ["llm-serve", str(tiny_model_dir()), "--port", "0", "--name", "tiny"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("listening on "):
            url = line.split()[-1]
            break
    if url is None:
        proc.kill()
        pytest.fail(f"arena llm-serve did not start: {proc.stdout.read()}")
    yield url
    proc.terminate()
    proc.wait(timeout=30)


def _observations(game, n=6):
    obs = []
    for i in range(n):
        s = game.new_initial_state()
        sample_chance(s, game_rng(5, i))
        if i % 2:
            s.apply_action(s.legal_actions()[i % len(s.legal_actions())])
            sample_chance(s, game_rng(5, i))
        obs.append(Observation(s, s.current_player(), np.random.default_rng(i), game.spec.full_name))
    return obs


def test_scores_over_http_match_the_transformers_backend(server):
    game = load_game("leduc_poker")
    local = load_agent({"name": "llm", "model": str(tiny_model_dir()), "chat": False}, game)
    remote = load_agent({"name": "llm", "backend": "openai", "base_url": server, "model": "tiny"}, game)
    for o in _observations(game):
        a, b = local.policy(o), remote.policy(o)
        assert a.keys() == b.keys()
        assert max(abs(a[k] - b[k]) for k in a) < 1e-4
    assert remote.stats()["tokens_in"] > 0 and remote.stats()["backend_calls"] == 6


def test_generated_games_over_http_are_reproducible(server):
    game = load_game("kuhn_poker")
    spec = {
        "name": "llm",
        "backend": "openai",
        "base_url": server,
        "model": "tiny",
        "mode": "generated",
        "retries": 1,
        "fallback": "scored",
        "max_new_tokens": 4,
    }
    runs = []
    for _ in range(2):
        agent = load_agent(spec, game)
        res = play_games(game, [agent, agent], num_games=2, seed=3, record=True)
        assert all(r.forfeit is None for r in res)
        steps = [s for r in res for s in r.trajectory.steps]
        runs.append([(s.action, s.extra["attempts"]) for s in steps])
        assert agent.stats()["tokens_out"] > 0
        assert agent.stats()["invalid_attempts"] == sum(s.extra["invalid_attempts"] for s in steps) > 0
    assert runs[0] == runs[1]  # per-decision seeds: same seed, same attempts, batched or not


class _Broken(BaseHTTPRequestHandler):
    """A server that misbehaves as told by ``plan`` (one entry per request; the last repeats)."""

    plan: list[str] = []
    hits = 0

    def log_message(self, *args):
        pass

    def do_POST(self):
        cls = type(self)
        what = cls.plan[min(cls.hits, len(cls.plan) - 1)]
        cls.hits += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if what == "sleep":
            time.sleep(1.0)
            body, code = b'{"choices": [{"text": "late"}]}', 200
        elif what == "garbage":
            body, code = b"<html>not json", 200
        elif what == "nochoices":
            body, code = b'{"result": 1}', 200
        elif what == "500":
            body, code = b'{"error": "boom"}', 500
        elif what == "400":
            body, code = b'{"error": "bad model"}', 400
        elif what == "429":
            body, code = b'{"error": "slow down"}', 429
        else:
            body, code = (
                json.dumps(
                    {
                        "choices": [{"index": 0, "text": "bet", "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
                    }
                ).encode(),
                200,
            )
        try:
            self.send_response(code)
            if code == 429:
                self.send_header("Retry-After", "1")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture
def broken():
    handler = type("H", (_Broken,), {"plan": [], "hits": 0})
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield handler, f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def _gen(url, **kw):
    b = OpenAIBackend(url, "m", timeout=kw.pop("timeout", 0.3), retries=kw.pop("retries", 2), backoff=0.01)
    try:
        return b.generate(["Action:"], max_tokens=4, temperature=1.0, seeds=[1]), b
    finally:
        b.close()


def test_timeout_is_retried_then_a_clear_error(broken):
    handler, url = broken
    handler.plan = ["sleep"]
    with pytest.raises(BackendHTTPError, match=r"failed after 3 attempts: timed out after 0.3s"):
        _gen(url)
    assert handler.hits == 3


def test_malformed_responses_are_retried_and_recovered(broken):
    handler, url = broken
    handler.plan = ["garbage", "nochoices", "ok"]
    (g,), b = _gen(url)
    assert g.text == "bet" and g.tokens_in == 3 and b.http_retries == 2


def test_malformed_response_every_time_is_one_clear_error(broken):
    handler, url = broken
    handler.plan = ["garbage"]
    with pytest.raises(BackendHTTPError, match="malformed response \\(not JSON\\)"):
        _gen(url, retries=1)


def test_server_errors_retry_and_client_errors_do_not(broken):
    handler, url = broken
    handler.plan = ["500", "ok"]
    (g,), _ = _gen(url)
    assert g.text == "bet"
    handler.plan, handler.hits = ["400"], 0
    with pytest.raises(BackendHTTPError, match="HTTP 400"):
        _gen(url)
    assert handler.hits == 1


def test_bad_http_config_is_an_arena_error():
    game = load_game("kuhn_poker")
    with pytest.raises(ArenaError, match="needs base_url"):
        load_agent({"name": "llm", "backend": "openai"}, game)
    with pytest.raises(ArenaError, match="cannot connect"):
        b = OpenAIBackend("http://127.0.0.1:9", "m", timeout=1, retries=0)
        b.generate(["x"], max_tokens=1, temperature=0, seeds=[0])


def test_api_key_comes_from_the_named_environment_variable(broken, monkeypatch):
    handler, url = broken
    seen = {}

    def do_POST(self):
        seen["auth"] = self.headers.get("Authorization")
        _Broken.do_POST(self)

    handler.do_POST = do_POST
    handler.plan = ["ok"]
    monkeypatch.setenv("ARENA_TEST_KEY", "sekret")
    b = OpenAIBackend(url, "m", api_key_env="ARENA_TEST_KEY")
    b.generate(["x"], max_tokens=1, temperature=0, seeds=[0])
    assert seen["auth"] == "Bearer sekret"


def test_retry_after_is_honoured(broken):
    """A 429 with ``Retry-After: 1`` waits one second (not the 0.01 s backoff), then succeeds."""
    handler, url = broken
    handler.plan = ["429", "ok"]
    start = time.monotonic()
    (g,), b = _gen(url)
    assert g.text == "bet" and b.http_retries == 1 and handler.hits == 2
    assert 1.0 <= time.monotonic() - start < 5.0
    handler.plan, handler.hits = ["429"], 0
    b = OpenAIBackend(url, "m", timeout=2, retries=1, backoff=0.01, max_retry_after=0.2)
    start = time.monotonic()
    with pytest.raises(BackendHTTPError, match=r"HTTP 429.*Retry-After 1"):
        b.generate(["x"], max_tokens=1, temperature=0, seeds=[0])
    assert time.monotonic() - start < 1.0  # capped at max_retry_after


def test_connections_are_kept_alive(broken):
    """24 requests in 3 rounds of 8 concurrent ones ride on at most 8 TCP connections (one per
    request before: 24), and a connection the server dropped is replaced without a retry."""
    handler, url = broken
    handler.protocol_version = "HTTP/1.1"
    ports = []

    def do_POST(self):
        ports.append(self.client_address[1])
        _Broken.do_POST(self)

    handler.do_POST = do_POST
    handler.plan = ["ok"]
    b = OpenAIBackend(url, "m", timeout=5, retries=0, concurrency=8)
    try:
        for _ in range(3):
            gens = b.generate(["x"] * 8, max_tokens=1, temperature=0, seeds=list(range(8)))
            assert [g.text for g in gens] == ["bet"] * 8
        assert len(ports) == 24 and len(set(ports)) <= 8 and b.connections.opened <= 8
        for c in b.connections.idle:  # the server side goes away: idle connections are now dead
            c.sock.shutdown(2)
        b.generate(["x"], max_tokens=1, temperature=0, seeds=[0])
        assert b.http_retries == 0
    finally:
        b.close()


# -- the server, driven by the official openai client ---------------------------------------------
@pytest.fixture(scope="module")
def client(server):
    openai = pytest.importorskip("openai")
    return openai.OpenAI(base_url=server, api_key="unused", max_retries=0)


def test_client_models_and_unknown_model_is_404(client):
    import openai

    assert [m.id for m in client.models.list()] == ["tiny"]
    assert client.models.retrieve("tiny").id == "tiny"
    with pytest.raises(openai.NotFoundError, match="model 'gpt-4o' does not exist"):
        client.completions.create(model="gpt-4o", prompt="hi", max_tokens=2)
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("gpt-4o")
    with pytest.raises(openai.BadRequestError, match="'n' must be an integer"):
        client.completions.create(model="tiny", prompt="hi", n=0)


def test_client_completions_n_max_tokens_logprobs_usage(client):
    r = client.completions.create(model="tiny", prompt=["Kuhn poker:", "Leduc:"], n=3, max_tokens=4, seed=7, logprobs=2)
    assert r.id.startswith("cmpl-") and r.object == "text_completion" and r.model == "tiny"
    assert [c.index for c in r.choices] == list(range(6))
    assert len({c.text for c in r.choices[:3]}) > 1  # n samples, each with its own seed
    for c in r.choices:
        lp = c.logprobs
        assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) <= 4
        assert "".join(lp.tokens).startswith(c.text)
        assert all(
            len(top) <= 2 and max(top.values()) >= v - 1e-4 for top, v in zip(lp.top_logprobs, lp.token_logprobs)
        )
    assert r.usage.completion_tokens == sum(len(c.logprobs.tokens) for c in r.choices)
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    again = client.completions.create(model="tiny", prompt=["Kuhn poker:", "Leduc:"], n=3, max_tokens=4, seed=7)
    assert [c.text for c in again.choices] == [c.text for c in r.choices]
    greedy = client.completions.create(model="tiny", prompt="Kuhn poker:", max_tokens=4, temperature=0, logprobs=3)
    lp = greedy.choices[0].logprobs
    assert all(abs(max(top.values()) - v) < 1e-4 for top, v in zip(lp.top_logprobs, lp.token_logprobs))


def test_client_chat_n_max_completion_tokens_logprobs(client):
    msgs = [{"role": "user", "content": "Pick an action."}]
    r = client.chat.completions.create(
        model="tiny", messages=msgs, n=2, max_completion_tokens=3, seed=1, logprobs=True, top_logprobs=2
    )
    assert r.id.startswith("chatcmpl-") and r.object == "chat.completion" and len(r.choices) == 2
    for c in r.choices:
        assert c.message.role == "assistant" and c.finish_reason in ("length", "stop")
        content = c.logprobs.content
        assert 1 <= len(content) <= 3 and all(len(t.top_logprobs) == 2 for t in content)
        assert "".join(t.token for t in content).startswith(c.message.content)
    assert r.usage.completion_tokens == sum(len(c.logprobs.content) for c in r.choices) <= 6
    old_style = client.chat.completions.create(model="tiny", messages=msgs, max_tokens=2, seed=1)
    assert old_style.usage.completion_tokens <= 2 and old_style.choices[0].logprobs is None


def test_client_streaming_matches_the_plain_response(client):
    kw = {"model": "tiny", "max_tokens": 6, "seed": 3, "n": 2}
    plain = client.completions.create(prompt="Leduc:", **kw)
    chunks = list(client.completions.create(prompt="Leduc:", stream=True, **kw))
    assert len(chunks) > 4 and all(ch.id == chunks[0].id and ch.id.startswith("cmpl-") for ch in chunks)
    for i in range(2):
        mine = [ch.choices[0] for ch in chunks if ch.choices and ch.choices[0].index == i]
        assert "".join(c.text for c in mine) == plain.choices[i].text
        assert mine[-1].finish_reason == plain.choices[i].finish_reason
    msgs = [{"role": "user", "content": "Your move?"}]
    plain = client.chat.completions.create(model="tiny", messages=msgs, max_completion_tokens=5, seed=2)
    stream = client.chat.completions.create(
        model="tiny",
        messages=msgs,
        max_completion_tokens=5,
        seed=2,
        stream=True,
        stream_options={"include_usage": True},
        logprobs=True,
    )
    chunks = list(stream)
    assert chunks[0].id.startswith("chatcmpl-") and chunks[0].object == "chat.completion.chunk"
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text == plain.choices[0].message.content
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == plain.usage.completion_tokens
    assert (
        sum(len(ch.choices[0].logprobs.content) for ch in chunks if ch.choices and ch.choices[0].logprobs)
        == plain.usage.completion_tokens
    )


def test_client_stop_sequences(client):
    full = client.completions.create(model="tiny", prompt="Kuhn poker:", max_tokens=12, temperature=0)
    text = full.choices[0].text
    assert full.choices[0].finish_reason == "length" and len(text) > 4
    stop = text[3:5]
    cut = client.completions.create(model="tiny", prompt="Kuhn poker:", max_tokens=12, temperature=0, stop=[stop])
    assert cut.choices[0].text == text[: text.index(stop)] and cut.choices[0].finish_reason == "stop"
