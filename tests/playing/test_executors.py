"""``arena.playing.executors.make_executor``: the one place an executor is chosen from its config."""

from __future__ import annotations

import pytest

from arena.errors import ArenaError
from arena.playing.executor import ExecutorConfig, InProcessExecutor, ProcessPoolExecutor
from arena.playing.executors import make_executor


@pytest.mark.parametrize("cfg", [None, {}, {"kind": "inprocess"}, ExecutorConfig()])
def test_in_process_is_the_default(cfg):
    with make_executor(cfg) as ex:
        assert isinstance(ex, InProcessExecutor)


def test_a_mapping_names_a_process_pool():
    with make_executor({"kind": "process", "workers": 1}) as ex:
        assert isinstance(ex, ProcessPoolExecutor)


@pytest.mark.parametrize(
    "cfg, words",
    [
        ({"kind": "threads"}, "unknown executor kind 'threads'"),
        ({"kind": "process", "workers": 0}, "executor.workers"),
        ({"kind": "ray", "agents": {"ppo": {"gpus": 1}}}, "executor.agents.ppo: unknown key(s) gpus"),
    ],
)
def test_a_config_no_executor_can_serve_is_refused_before_any_work(cfg, words):
    with pytest.raises(ArenaError, match=words.replace("(", r"\(").replace(")", r"\)")):
        make_executor(cfg)
