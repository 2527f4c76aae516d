"""``arena tiny-model --arch --params``: random models of real architectures, sized by parameter count,
load with transformers and play through the llm agent."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")

from arena.cli import main  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.loading import load_agent, load_game  # noqa: E402
from arena.tools.tiny_model import SHAPES, parse_params, real_shape  # noqa: E402


def test_real_shapes_are_the_published_ones_and_fit_the_target():
    big = real_shape("qwen2", parse_params("0.5B"), vocab=151936)  # Qwen2.5-0.5B's own vocabulary
    assert (big["hidden"], big["heads"], big["kv_heads"], big["intermediate"]) == SHAPES["qwen2"][:4]
    assert big["layers"] == 24  # the published depth comes out of the published size
    for arch in ("qwen2", "llama"):
        small = real_shape(arch, parse_params("3M"), vocab=600)
        assert small["hidden"] == small["heads"] * 64 and small["layers"] >= 2
    assert parse_params("75M") == 75_000_000 and parse_params("2e6") == 2_000_000
    with pytest.raises(ArenaError, match="--params must look like"):
        parse_params("big")


@pytest.mark.parametrize("arch", ["qwen2", "llama"])
def test_cli_builds_a_model_of_the_arch_that_plays(tmp_path, arch, capsys):
    out = tmp_path / arch
    assert main(["tiny-model", str(out), "--arch", arch, "--params", "1M"]) == 0
    meta = json.loads((out / "arena_tiny_model.json").read_text())
    config = json.loads((out / "config.json").read_text())
    assert config["model_type"] == arch and meta["arch"] == arch
    assert 0.5e6 < meta["parameters"] < 2e6
    agent = load_agent(f"llm:model={out}", load_game("kuhn_poker"))
    from arena.playing.match import play_games

    assert len(play_games(load_game("kuhn_poker"), [agent, agent], 4, seed=0)) == 4
