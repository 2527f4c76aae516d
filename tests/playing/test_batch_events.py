"""`arena_matches_finished`: one event per committed batch, every stored game in exactly one of
them; the per-game event is built only when some plugin implements `arena_match_finished`."""

import sqlite3

import arena


class BatchCounter:
    """A third-party observer that only counts: it implements the batch event alone."""

    def __init__(self):
        self.batches: dict[str, list[int]] = {}

    @arena.hookimpl
    def arena_matches_finished(self, results, context):
        self.batches.setdefault(context["kind"], []).append(len(results))
        assert "match_id" not in context  # the run's context, not a game's


def _cfg(tmp_path, games):
    from arena.config import load_config
    from arena.evaluation.tournament import TournamentConfig

    return load_config(
        TournamentConfig,
        None,
        base={
            "game": "kuhn_poker",
            "agents": ["random", {"name": "random", "label": "other"}],
            "format": {"kind": "round_robin", "games": games},
            "out": str(tmp_path / "t"),
            "progress": False,
            "plots": False,
            "tensorboard": False,
        },
    )


def test_batch_observer_hears_every_stored_game_once_per_commit(tmp_path, fresh_registry, monkeypatch):
    import arena.evaluation.tournament as T
    from arena.cli import main
    from arena.evaluation.tournament import run_tournament
    from arena.registry import get_registry

    counter = BatchCounter()
    reg = get_registry()
    reg.register(counter, "batch_counter")
    assert not any(  # no built-in plugin implements the per-game event: runs skip building it
        reg.pm.get_name(i.plugin) != "batch_counter" for i in reg.hook.arena_match_finished.get_hookimpls()
    )
    built = []
    monkeypatch.setattr(T, "PLAN_SLICE", 64)  # several commits per round
    import arena.registry as registry

    real = registry.direct_caller
    monkeypatch.setattr(registry, "direct_caller", lambda hook: built.append(hook.name) or real(hook))
    run_tournament(_cfg(tmp_path, 150), quiet=True)
    with sqlite3.connect(tmp_path / "t" / "arena.sqlite") as c:
        stored = c.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
    assert stored == 300 and sum(counter.batches["tournament"]) == 300 and len(counter.batches["tournament"]) > 1
    assert "arena_match_finished" not in built and "arena_matches_finished" in built
    run_tournament(_cfg(tmp_path, 150), quiet=True)  # resumed: nothing new stored, nothing announced
    assert sum(counter.batches["tournament"]) == 300
    assert main(["match", "--game", "kuhn_poker", "--agents", "random", "random", "--games", "30", "--json"]) == 0
    assert sum(counter.batches["match"]) == 30
