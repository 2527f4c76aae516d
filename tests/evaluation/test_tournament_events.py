"""A tournament tells observers what it does through the event hooks, as every run does: its
context, totals that grow round by round, rating snapshots and final ratings, its games and its
end — and the built-in observers turn that into the progress display and TensorBoard files."""

import pytest

import arena
from arena.config import load_config
from arena.evaluation.tournament import TournamentConfig, run_tournament
from arena.hookspecs import RunContext
from arena.reporting import read_scalars


class Recorder:
    def __init__(self):
        self.started, self.totals, self.metrics, self.games, self.finished = [], [], [], [], []

    @arena.hookimpl
    def arena_run_started(self, run):
        self.started.append(run)

    @arena.hookimpl
    def arena_run_planned(self, run):
        self.totals.append(run.total)

    @arena.hookimpl
    def arena_metrics_recorded(self, step, metrics, context):
        self.metrics.append((step, sorted(metrics)))

    @arena.hookimpl
    def arena_match_finished(self, result, context):
        self.games.append((context["match_id"], context["pairing"], context["round"], context.kind))

    @arena.hookimpl
    def arena_run_finished(self, run, summary):
        self.finished.append(summary)


def _cfg(tmp_path, **over):
    base = {
        "game": "kuhn_poker",
        "agents": ["random", {"name": "random", "label": "r2"}, {"name": "random", "label": "r3"}, "cfr:iterations=20"],
        "format": {"kind": "swiss", "games": 10, "rounds": 2},
        "ratings": {"snapshot_every": 15, "bootstrap": 10},
        "out": str(tmp_path / "t"),
        "plots": False,
    }
    base.update(over)
    return load_config(TournamentConfig, None, base=base)


@pytest.fixture
def recorder(fresh_registry):
    from arena.registry import get_registry

    rec = Recorder()
    get_registry().register(rec, "recorder")
    return rec


def test_a_tournament_reports_through_the_event_hooks(tmp_path, recorder, capsys):
    res = run_tournament(_cfg(tmp_path), quiet=False)
    (run,) = recorder.started
    assert isinstance(run, RunContext) and (run.kind, run.unit, run.done) == ("tournament", "games", 0)
    assert run.run_dir == res.run_dir and run.tensorboard and run.progress and run.total is None
    assert recorder.totals == [20, 40] == [20, 20 + 20]  # Swiss: each round planned once the last is played
    snaps = [step for step, tags in recorder.metrics if tags[0].startswith("rating/bt/")]
    assert snaps == [15, 20, 30, 40] and recorder.metrics[-1] == (40, [f"final/bt/{a}" for a in sorted(res.names)])
    assert len(recorder.games) == 40 and {g[3] for g in recorder.games} == {"tournament"}
    assert {g[2] for g in recorder.games} == {0, 1} and all(g[0] and "|" in g[1] for g in recorder.games)
    (summary,) = recorder.finished
    assert summary["status"] == "finished" and summary["step"] == 40 and "| rank |" in summary["leaderboard_markdown"]
    assert "tournament: 40/40 games" in capsys.readouterr().err  # the built-in progress display
    scalars = read_scalars(tmp_path / "t" / "tb")  # the built-in TensorBoard writer
    assert [s for s, _ in scalars[f"rating/bt/{res.names[-1]}"]] == [15, 20, 30, 40]
    assert scalars["final/bt/r2"][0][0] == 40


def test_a_resumed_tournament_says_what_is_behind_it_and_a_quiet_one_asks_for_no_display(tmp_path, recorder, capsys):
    run_tournament(_cfg(tmp_path, tensorboard=False), quiet=True)
    assert not recorder.started[0].progress and "games" not in capsys.readouterr().err
    run_tournament(_cfg(tmp_path, tensorboard=False), quiet=False)  # everything stored: nothing played
    again = recorder.started[1]
    assert again.done == 40 and again.progress and not again.tensorboard and len(recorder.games) == 40
    assert recorder.totals[-2:] == [20, 40] and recorder.finished[-1]["games"] == 40
    assert "tournament: 40/40 games" in capsys.readouterr().err
    assert not (tmp_path / "t" / "tb").exists()


def test_a_tournament_that_stops_tells_observers(tmp_path, recorder, monkeypatch):
    from arena.evaluation.tournament import Tournament

    def crash(self, planned, where):
        raise RuntimeError("the machine went away")

    monkeypatch.setattr(Tournament, "play_slice", crash)
    with pytest.raises(RuntimeError):
        run_tournament(_cfg(tmp_path), quiet=True)
    assert recorder.finished == [{"status": "stopped", "games": 0}]
