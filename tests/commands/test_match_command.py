"""``arena match``: observers hear the run through typed contexts, and the flags win over the
config file and its overrides."""

from __future__ import annotations

import json

import arena
from arena.hookspecs import RunContext


class Listener:
    """An observer on every event ``arena match`` fires."""

    def __init__(self):
        self.heard: list[tuple[str, RunContext]] = []

    @arena.hookimpl
    def arena_run_started(self, run):
        self.heard.append(("started", run))

    @arena.hookimpl
    def arena_match_finished(self, result, context):
        assert context["match_id"] == result.index
        self.heard.append(("game", context))

    @arena.hookimpl
    def arena_matches_finished(self, results, context):
        self.heard.append(("batch", context))

    @arena.hookimpl
    def arena_run_finished(self, run, summary):
        self.heard.append((summary["status"], run))


def test_events_carry_a_run_context_and_each_game_its_id(fresh_registry, capsys):
    from arena.cli import main
    from arena.registry import get_registry

    listener = Listener()
    get_registry().register(listener, "match_listener")
    assert main(["match", "--game", "kuhn_poker", "--agents", "random", "random", "--games", "6", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["games"] == 6
    kinds = [k for k, _ in listener.heard]
    assert kinds[0] == "started" and kinds[-1] == "finished" and kinds.count("game") == 6
    contexts = [c for _, c in listener.heard]
    assert all(isinstance(c, RunContext) and c.kind == "match" for c in contexts)
    assert len({c.run_id for c in contexts}) == 1
    started = contexts[0]
    assert started.total == 6 and started.unit == "games" and started.run_dir is None
    assert not started.progress  # --json: no progress display
    assert sorted(c["match_id"] for k, c in listener.heard if k == "game") == list(range(6))
    assert all("match_id" not in c for k, c in listener.heard if k == "batch")


def test_flags_win_over_the_config_and_its_overrides(tmp_path, capsys):
    from arena.cli import main

    cfg = tmp_path / "m.yaml"
    cfg.write_text("game: leduc_poker\nagents: [random, random]\ngames: 50\nseed: 1\n")
    assert main(["match", str(cfg), "seed=2", "--game", "kuhn_poker", "--games", "4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["game"], doc["games"], doc["seed"]) == ("kuhn_poker", 4, 2)
