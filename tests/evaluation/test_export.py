"""``arena export``: the stored LLM decisions of recorded games stream out in every format with
their game, seat, seed and step; memory does not grow with the run; bad input is one line."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from arena.agent import Agent
from arena.cli import main
from arena.evaluation.decisions import decision_rows
from arena.evaluation.export import rows
from arena.evaluation.store import MatchRecord, RunStore
from arena.loading import load_agent, load_game
from arena.playing.match import play_games


class Prompted(Agent):
    """Plays the first legal move and reports a prompt, as an LLM agent does."""

    name = "prompted"

    def act_batch_info(self, observations):
        infos = [{"prompt": f"{o.text}\nAction:", "attempts": ["[1]"], "invalid_attempts": 0} for o in observations]
        return [o.legal_actions[0] for o in observations], infos


def _run(path, games, seed=0):
    """A run store of ``games`` recorded Kuhn games, seat 0 prompted."""
    game = load_game("kuhn_poker")
    store = RunStore.open(path, fingerprint="export-test", config_text="x")
    results = play_games(game, [Prompted(), load_agent("random", game)], games, seed=seed, record=True)
    with store.batch():
        for r in results:
            rec = MatchRecord.from_result(r, id=f"g{r.index:06d}", pairing="p", game="kuhn_poker")
            store.record_match(rec, None, decision_rows(r.trajectory))
    store.close()
    return results


def test_rows_carry_the_game_seat_seed_step_and_return(tmp_path):
    results = _run(tmp_path / "run", 6)
    out = list(rows(tmp_path / "run", "jsonl"))
    assert len(out) == sum(1 for r in results for s in r.trajectory.steps if s.player == 0) > 0
    by_game = {r.index: r for r in results}
    for row in out:
        r = by_game[row["game_index"]]
        step = r.trajectory.steps[row["step"]]
        assert row["seed"] == r.seed and row["seat"] == step.player and row["return"] == r.returns[step.player]
        assert row["prompt"] == step.extra["prompt"] and row["completion"] == "[1]" and row["split"] == "evaluation"
    trl = next(rows(tmp_path / "run", "trl-prompt"))
    assert list(trl)[:2] == ["prompt", "completion"]


def test_memory_does_not_grow_with_the_run(tmp_path, monkeypatch):
    from arena.evaluation import export

    monkeypatch.setattr(export, "PAGE", 16)  # pages of 16 games: a small run already spans many

    def peak(games):
        _run(tmp_path / f"r{games}", games)
        tracemalloc.start()
        with open(tmp_path / f"r{games}.jsonl", "w") as fh:
            for row in rows(tmp_path / f"r{games}", "trl-prompt"):
                fh.write(json.dumps(row) + "\n")
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return top

    small, large = peak(48), peak(480)
    assert large < 2 * small, (small, large)


def test_bad_input_is_one_line(tmp_path, capsys):
    _run(tmp_path / "run", 2)
    plain = RunStore.open(tmp_path / "plain", fingerprint="plain", config_text="x")
    plain.close()
    cases = [
        (["export", str(tmp_path / "nowhere"), "--format", "jsonl"], "run directory not found"),
        (["export", str(tmp_path / "plain"), "--format", "trl-prompt"], "holds no LLM decisions"),
        (["export", str(tmp_path / "run"), "--format", "trl-preference"], "holds no preference pairs"),
        (["export", str(tmp_path / "run"), "--format", "verl", "--out", "-"], "cannot stream to stdout"),
    ]
    for argv, message in cases:
        assert main(argv) != 0
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "plain" / "export" / "trl-prompt.jsonl").exists()  # nothing half-written


def test_stdout_streams_json_lines(tmp_path, capsys):
    _run(tmp_path / "run", 3)
    assert main(["export", str(tmp_path / "run"), "--format", "trl-prompt", "--out", "-"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(json.loads(line)["game"] == "kuhn_poker" for line in lines)


def test_parquet_needs_pyarrow_or_writes_verl_rows(tmp_path):
    pa = pytest.importorskip("pyarrow.parquet", reason="verl export writes parquet (pip install 'arena-rl[bridges]')")
    _run(tmp_path / "run", 3)
    assert main(["export", str(tmp_path / "run"), "--format", "verl"]) == 0
    table = pa.read_table(tmp_path / "run" / "export" / "verl.parquet")
    assert table.column_names == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    first = table.to_pylist()[0]
    assert first["reward_model"]["ground_truth"] in first["extra_info"]["legal"]
