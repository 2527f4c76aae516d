"""The OpenAI-compatible backend against real HTTP servers on 127.0.0.1: arena's own
``arena llm-serve`` (a subprocess around the tiny model), plus deliberately broken servers for
the timeout, malformed-response and server-error rules."""
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
from arena.match import game_rng, play_games, sample_chance  # noqa: E402
from arena.plugins.agents.llm.openai_http import BackendHTTPError, OpenAIBackend  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402
from conftest import arena_cmd  # noqa: E402


@pytest.fixture(scope="module")
def server():
    """``arena llm-serve`` in a subprocess, on a free port."""
    proc = subprocess.Popen(arena_cmd() + ["llm-serve", str(tiny_model_dir()), "--port", "0", "--name", "tiny"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
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
    spec = {"name": "llm", "backend": "openai", "base_url": server, "model": "tiny", "mode": "generated",
            "retries": 1, "fallback": "scored", "max_new_tokens": 4}
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
        else:
            body, code = json.dumps({"choices": [{"index": 0, "text": "bet", "finish_reason": "stop"}],
                                     "usage": {"prompt_tokens": 3, "completion_tokens": 1}}).encode(), 200
        try:
            self.send_response(code)
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
