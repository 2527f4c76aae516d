"""``arena bench array-games``: its loops play the games they claim, and the PGX option fails in one line."""

from __future__ import annotations

import sys

import pytest

from arena.errors import ArenaError
from arena.tools.bench import array_games


def test_both_runner_paths_play_the_same_games():
    t_array, array = array_games.runner("leduc_poker", 300, True, seed=4)
    t_state, state = array_games.runner("leduc_poker", 300, False, seed=4)
    assert array == state and len(array) == 300 and t_array > 0 and t_state > 0


def test_face_loop_plays_every_game():
    assert array_games.face_loop("kuhn_poker", 500, 64) > 0


def test_pgx_without_pgx_is_one_clear_error():
    try:
        import pgx  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("this interpreter has pgx")
    with pytest.raises(ArenaError, match="--pgx-python .* could not time PGX: ModuleNotFoundError"):
        array_games.pgx(sys.executable, "kuhn_poker", 8, 4, 1)


def test_an_openspiel_game_is_timed_in_pyspiel_by_openspiels_name():
    import argparse

    parser = argparse.ArgumentParser()
    array_games.add_arguments(parser)
    small = "--games 200 --state-games 50 --baseline-games 50 --batch 64 --repeats 1"
    args = parser.parse_args(small.split())
    out = array_games.measure("openspiel:connect_four", args)
    assert out["pyspiel_loop_games_per_second"] > 0 and out["array_face_games_per_second"] > 0


def test_torch_face_plays_the_numpy_faces_games():
    """The torch face's checksum (each seat's returns summed) is the numpy face's on the same
    seed's games, and the MLP option runs the neural agent's network on the device."""
    import numpy as np

    pytest.importorskip("torch")
    import arena
    from arena.arrays import ArrayRandom, pick_uniform

    for name in array_games.TORCH_FACES:
        t, total = array_games.torch_face("cpu", 3000, 1024, "random", 2, name)
        played = array_games.games_in_batches(3000, 1024)  # whole batches: 3,072 games
        assert played == 3072 and array_games.games_in_batches(500, 4096) == 500
        g = arena.load_game(name).array_face().reset(ArrayRandom(2, range(played)))
        while (live := np.flatnonzero(g.player >= 0)).size:
            g.step(live, pick_uniform(g.legal_mask(live), g.rng.uniform(live)))
        assert t > 0 and total == g.returns().sum(0).tolist() and total[0] != 0
    t_mlp, total_mlp = array_games.torch_face("cpu", 500, 256, "mlp")
    assert t_mlp > 0 and total_mlp[0] == -total_mlp[1]
    with pytest.raises(ArenaError, match="game must be one of"):
        array_games.torch_face("cpu", 10, 10, "random", 0, "liars_dice")
    with pytest.raises(ArenaError, match="--torch-device"):
        import torch

        if torch.cuda.is_available():
            pytest.skip("this machine has CUDA")
        array_games.torch_face("cuda", 10, 10)


def test_the_coin_game_is_timed_on_both_faces_without_a_pyspiel_loop():
    """arena's own simultaneous game: the face loop draws seat by seat, and OpenSpiel's unrelated
    ``coin_game`` is not timed as its baseline."""
    import argparse

    assert array_games.pyspiel_twin("coin_game") is None
    assert array_games.pyspiel_twin("openspiel:connect_four") == "connect_four"
    assert array_games.face_loop("coin_game(memory=2)", 300, 64) > 0
    parser = argparse.ArgumentParser()
    array_games.add_arguments(parser)
    args = parser.parse_args("--games 300 --state-games 100 --batch 64 --repeats 1".split())
    out = array_games.measure("coin_game", args)
    assert out["array_face_games_per_second"] > 0 and out["state_runner_games_per_second"] > 0
    assert out["face_vs_state_runner"] > 0 and out["pyspiel_loop"].startswith("none")
    assert not any("pyspiel_loop_games" in k or k.endswith("vs_pyspiel") for k in out)
