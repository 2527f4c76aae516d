"""Executors: the same seeds give the same games in-process, in a process pool and on Ray."""

import pytest

from arena.config import load_config
from arena.evaluation.store import RunStore
from arena.evaluation.tournament import TournamentConfig, run_tournament

AGENTS = [
    "random",
    {"name": "fixed", "path": "tests/data/kuhn_always_bet.json", "label": "always_bet"},
    {"name": "cfr", "iterations": 30, "label": "cfr"},
]


def games(tmp_path, name, executor):
    cfg = load_config(
        TournamentConfig,
        base={
            "game": "kuhn_poker",
            "agents": AGENTS,
            "out": str(tmp_path / name),
            "plots": False,
            "tensorboard": False,
            "progress": False,
            "format": {"kind": "round_robin", "games": 15},
            "ratings": {"bootstrap": 0},
            "executor": executor,
        },
    )
    res = run_tournament(cfg, quiet=True)
    with RunStore.open_existing(res.run_dir) as s:
        return [(r.id, r.seats, r.returns, r.plan_seq) for r in s.matches()], res


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return games(tmp_path_factory.mktemp("ex"), "inprocess", {"kind": "inprocess", "chunk": 7})


def test_process_pool_equals_in_process(tmp_path, reference):
    ref, ref_res = reference
    assert len(ref) == 3 * 2 * 15
    got, res = games(tmp_path, "pool", {"kind": "process", "workers": 2, "chunk": 4})
    assert got == ref
    assert [vars(r) for r in res.board["rows"]] == [vars(r) for r in ref_res.board["rows"]]


def test_ray_local_cluster_equals_in_process(tmp_path, reference):
    pytest.importorskip("ray")
    ref, _ = reference
    got, _ = games(tmp_path, "ray", {"kind": "ray", "workers": 2, "chunk": 10})
    assert got == ref


def test_unknown_executor_is_a_clear_error(tmp_path):
    from arena.errors import ArenaError

    with pytest.raises(ArenaError, match="unknown executor kind 'slurm'"):
        games(tmp_path, "x", {"kind": "slurm"})
    assert not (tmp_path / "x").exists()  # rejected before the run directory is made
