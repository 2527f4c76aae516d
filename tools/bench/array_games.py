"""``arena bench array-games``: random games/s on the array face (:mod:`arena.arrays`) against
today's ``State`` runner and a plain ``pyspiel`` loop, Kuhn poker and Leduc hold'em by default
(``--game-names``: any games with a face, ``openspiel:`` ones timed in ``pyspiel`` by OpenSpiel's name;
arena's own games, the Coin Game and the iterated matrix games, without the pyspiel loop), in one run.

Four ways to play the same random games: the face stepped directly (random decisions from the
games' streams, no per-game output: the speed limit of the face in this process), the match
runner on its array path (a ``GameResult`` per game), the runner on the ``State`` path (the
same agents told to need a ``State``: what ran before the face existed), and OpenSpiel's Python
loop (``tools/bench/match.py``'s ``pyspiel_random_loop``). Optionally a whole ``arena match
--json`` process per path (``--process-games``), and PGX (jitted and vmapped, batch ``--batch``)
through another interpreter that has ``pgx`` and ``jax`` (``--pgx-python``: arena does not
depend on them). The two runner paths are checked to give the same returns on the games both played.
``--torch-device D``: Kuhn poker and Leduc hold'em as torch tensors on ``D`` (:mod:`arena.games.card_torch`),
random seats and the neural agent's default MLP in every seat, the whole rollout on the device.
``--ppo-league-seeds N``: the quickstart's PPO league on Kuhn poker, its training games on each
path (:mod:`arena.tools.bench.ppo_league`): training games/s, their ratio, exploitability per seed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from functools import partial
from typing import Any

import numpy as np

from arena.arrays import ArrayRandom, pick_uniform
from arena.cli_api import Benchmark
from arena.errors import ArenaError
from arena.game import SIMULTANEOUS
from arena.hookspecs import hookimpl
from arena.tools.bench.match import pyspiel_random_loop


def face_loop(game_name: str, games: int, batch: int, seed: int = 0) -> float:
    """Seconds for ``games`` random games stepped on the face in batches of ``batch``; at a
    simultaneous node the players draw seat by seat, as the runner asks them."""
    import arena

    game = arena.load_game(game_name)
    face, n = game.array_face(), game.spec.num_players
    start = time.perf_counter()
    for first in range(0, games, batch):
        rng = ArrayRandom(seed, range(first, min(games, first + batch)))
        g = face.reset(rng)
        while True:
            turn, joint = np.flatnonzero(g.player >= 0), np.flatnonzero(g.player == SIMULTANEOUS)
            if not turn.size and not joint.size:
                break
            if turn.size:
                g.step(turn, pick_uniform(g.legal_mask(turn), rng.uniform(turn)))
            if joint.size:
                moves = [pick_uniform(g.legal_mask(joint, p), rng.uniform(joint)) for p in range(n)]
                g.step(joint, np.stack(moves, axis=1))
        g.returns()
    return time.perf_counter() - start


def pyspiel_twin(game_name: str) -> str | None:
    """OpenSpiel's name for the game arena plays through the OpenSpiel adapter (``kuhn_poker``,
    ``openspiel:connect_four``), or ``None`` for arena's own games (the Coin Game, the iterated
    matrix games): those have no pyspiel loop to time."""
    import arena

    if getattr(arena.load_game(game_name), "pyspiel_game", None) is None:
        return None
    return game_name.removeprefix("openspiel:")


TORCH_FACES = ("kuhn_poker", "leduc_poker")
"""Games with a torch face (:mod:`arena.games.card_torch`)."""


def torch_face(
    device: str,
    games: int,
    batch: int,
    policy: str = "random",
    seed: int = 0,
    game_name: str = "kuhn_poker",
    compiled: bool = False,
) -> tuple[float, list[float]]:
    """Seconds for ``games`` games of ``game_name`` (two-player Kuhn poker or Leduc hold'em) as
    torch tensors on ``device`` in batches of ``batch``, every seat ``policy`` (``random``, or ``mlp``: the neural agent's default network,
    hidden 64, 2 layers, seed 0), nothing leaving the device until the end; and each seat's
    returns summed over the games (a checksum to compare devices). It plays whole batches
    (:func:`games_in_batches`). ``compiled``: the rollout
    ``torch.compile``-d (:func:`~arena.games.card_torch.compiled_rollout`), compiled in the
    warm-up, outside the timing."""
    try:
        import torch
    except ImportError:
        raise ArenaError("--torch-device: the torch face needs torch: pip install 'arena-rl[torch]'") from None
    import arena
    from arena.games.card_torch import KuhnTorch, LeducTorch, TorchRandom, compiled_rollout, rollout

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ArenaError(f"--torch-device: {device!r} requested but CUDA is not available")
    if policy not in ("random", "mlp"):
        raise ArenaError(f"torch face: policy must be 'random' or 'mlp', got {policy!r}")
    if game_name not in TORCH_FACES:
        raise ArenaError(f"torch face: game must be one of {', '.join(TORCH_FACES)}, got {game_name!r}")
    game = KuhnTorch(2, device) if game_name == "kuhn_poker" else LeducTorch(device)
    net: Any = "random"
    if policy == "mlp":
        net = getattr(arena.load_agent("neural", arena.load_game(game_name), device=device, seed=0), "net").actor
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    batch = min(batch, games)
    with torch.no_grad():
        play = compiled_rollout(game, [net, net]) if compiled else partial(rollout, game, [net, net])
        play(TorchRandom(seed, range(batch), device))  # warm-up: kernels (and compiling)
        sync()
        total = torch.zeros(2, dtype=torch.float64, device=game.device)
        start = time.perf_counter()
        for first in range(0, games, batch):  # whole batches only: a compiled rollout has one batch size
            total += play(TorchRandom(seed, range(first, first + batch), device))[0].sum(0)
        sync()
        seconds = time.perf_counter() - start
    return seconds, total.tolist()


def games_in_batches(games: int, batch: int) -> int:
    """The games :func:`torch_face` plays: ``games`` rounded up to whole batches of ``min(batch, games)``."""
    batch = min(batch, games)
    return -(-games // batch) * batch


def runner(game_name: str, games: int, array: bool, seed: int = 0, record: bool = False) -> tuple[float, list[Any]]:
    """Seconds for ``games`` random games through ``play_games`` on one path (``record``: keeping
    trajectories, as training rollouts do), and the returns (and actions) of its first 2,000 games."""
    import arena
    from arena.playing.match import play_games

    game = arena.load_game(game_name)
    agents = [arena.load_agent("random", game, label=f"r{k}") for k in range(game.spec.num_players)]
    for a in agents:
        a.array_native = array
    kept: list[Any] = []

    def keep(results: list[Any]) -> None:
        if len(kept) < 2000:
            kept.extend(
                (r.returns, r.trajectory and [s.action for s in r.trajectory.steps])
                for r in results[: 2000 - len(kept)]
            )

    start = time.perf_counter()
    play_games(game, agents, games, seed=seed, on_batch=keep, collect=False, record=record)
    return time.perf_counter() - start, kept


def process(game_name: str, games: int, array: bool) -> float:
    """Seconds for a whole ``arena match --json`` process (stdout to /dev/null); the ``State``
    path by a ``--timeout`` no random agent comes near, which the array path does not take."""
    cmd = [sys.executable, "-m", "arena.cli", "match", "--game", game_name, "--agents", "random", "random"]
    cmd += ["--games", str(games), "--json"] + ([] if array else ["--timeout", "1000"])
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ.copy())
    return time.perf_counter() - start


def pgx(python: str, game_name: str, games: int, batch: int, repeats: int) -> float:
    """PGX's random games/s, timed by ``tools/bench/pgx_loop.py`` under ``python``."""
    from arena.tools.bench import pgx_loop

    cmd = [python, pgx_loop.__file__, game_name, str(games), str(batch), str(repeats)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ArenaError(f"bench array-games: --pgx-python {python} could not time PGX: {last}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])[game_name])


def measure(game_name: str, args: argparse.Namespace) -> dict[str, Any]:
    reps = range(args.repeats)
    t_face = min(face_loop(game_name, args.games, args.batch, seed=r) for r in reps)
    array_runs = [runner(game_name, args.games, True, seed=r) for r in reps]
    state_runs = [runner(game_name, args.state_games, False, seed=r) for r in reps]
    same = min(len(array_runs[0][1]), len(state_runs[0][1]))
    if array_runs[0][1][:same] != state_runs[0][1][:same]:
        raise AssertionError(f"{game_name}: the runner's two paths disagree on the same games")
    gps = {
        "array_face": args.games / t_face,
        "array_runner": args.games / min(t for t, _ in array_runs),
        "state_runner": args.state_games / min(t for t, _ in state_runs),
    }
    pyspiel_name = pyspiel_twin(game_name)
    if pyspiel_name is not None:
        gps["pyspiel_loop"] = args.baseline_games / min(
            pyspiel_random_loop(pyspiel_name, args.baseline_games, seed=r) for r in reps
        )
    out: dict[str, Any] = {f"{k}_games_per_second": round(v, 1) for k, v in gps.items()}
    if pyspiel_name is None:
        out["pyspiel_loop"] = "none: arena's own game, not OpenSpiel's"
    else:
        out["face_vs_pyspiel"] = round(gps["array_face"] / gps["pyspiel_loop"], 2)
        out["array_runner_vs_pyspiel"] = round(gps["array_runner"] / gps["pyspiel_loop"], 2)
    out["array_runner_vs_state_runner"] = round(gps["array_runner"] / gps["state_runner"], 2)
    out["face_vs_state_runner"] = round(gps["array_face"] / gps["state_runner"], 2)
    if pyspiel_name is not None:
        out["state_runner_vs_pyspiel"] = round(gps["state_runner"] / gps["pyspiel_loop"], 2)
    if args.pgx_python:
        gps_pgx = pgx(args.pgx_python, game_name, args.games, args.batch, args.repeats)
        out["pgx_games_per_second"] = round(gps_pgx, 1)
        out["face_vs_pgx"] = round(gps["array_face"] / gps_pgx, 3)
    if args.recorded_games:  # trajectories kept, as a training rollout keeps them
        rec = [
            runner(game_name, args.recorded_games, array, seed=r, record=True) for array in (True, False) for r in reps
        ]
        if rec[0][1] != rec[len(reps)][1]:
            raise AssertionError(f"{game_name}: the runner's two paths record different games")
        t_rec_arr, t_rec_st = min(t for t, _ in rec[: len(reps)]), min(t for t, _ in rec[len(reps) :])
        out["recorded_array_runner_games_per_second"] = round(args.recorded_games / t_rec_arr, 1)
        out["recorded_state_runner_games_per_second"] = round(args.recorded_games / t_rec_st, 1)
        out["recorded_array_vs_state_runner"] = round(t_rec_st / t_rec_arr, 2)
    if args.process_games:
        t_arr = min(process(game_name, args.process_games, True) for _ in reps)
        t_st = min(process(game_name, args.process_games, False) for _ in reps)
        out["process_array_games_per_second"] = round(args.process_games / t_arr, 1)
        out["process_state_games_per_second"] = round(args.process_games / t_st, 1)
        if pyspiel_name is not None:
            out["process_array_vs_pyspiel"] = round(args.process_games / t_arr / gps["pyspiel_loop"], 2)
    return out


def run(args: argparse.Namespace) -> dict:
    face_loop("kuhn_poker", 1000, 1000)  # warm-up: imports, the face's info-state tables
    runner("kuhn_poker", 1000, True)
    out: dict[str, Any] = {
        "games": args.games,
        "state_games": args.state_games,
        "baseline_games": args.baseline_games,
        "batch": args.batch,
        "process_games": args.process_games,
        "recorded_games": args.recorded_games,
        "pgx": args.pgx_python or "not measured (--pgx-python: an interpreter with pgx and jax)",
    }
    for name in args.game_names.split(",") if args.game_names else []:
        out.update({f"{name}_{k}": v for k, v in measure(name, args).items()})
    if args.torch_device:
        out["torch_face_device"] = args.torch_device
        out["torch_face_batch"] = args.torch_batch
        for name in [g for g in args.game_names.split(",") if g in TORCH_FACES]:
            for policy in ("random", "mlp"):
                for compiled in (False, True) if args.torch_compile else (False,):
                    reps = range(args.repeats)
                    t = min(
                        torch_face(args.torch_device, args.games, args.torch_batch, policy, r, name, compiled)[0]
                        for r in reps
                    )
                    kind = "torch_face_compiled" if compiled else "torch_face"
                    out[f"{name}_{kind}_{policy}_games_per_second"] = round(
                        games_in_batches(args.games, args.torch_batch) / t, 1
                    )
    if args.ppo_league_seeds:
        from arena.tools.bench.ppo_league import QUICKSTART, ppo_league

        out.update(ppo_league(args.ppo_league_seeds, args.ppo_league_steps, args.ppo_league_config or QUICKSTART))
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--game-names",
        default="kuhn_poker,leduc_poker",
        help="comma-separated games with an array face (e.g. liars_dice,openspiel:tic_tac_toe,coin_game); "
        "arena's own games (coin_game, ipd) have no pyspiel loop",
    )
    p.add_argument("--games", type=int, default=200_000, help="games on the array face and the array path")
    p.add_argument("--state-games", type=int, default=50_000, help="games on the State path")
    p.add_argument("--baseline-games", type=int, default=50_000, help="games through the pyspiel loop")
    p.add_argument("--batch", type=int, default=4096, help="games in flight on the face")
    p.add_argument("--process-games", type=int, default=0, help="also time whole `arena match --json` processes")
    p.add_argument("--recorded-games", type=int, default=0, help="also time both paths keeping trajectories")
    p.add_argument("--pgx-python", default="", help="also time PGX with this interpreter (it needs pgx and jax)")
    p.add_argument("--torch-device", default="cpu", help="also Kuhn/Leduc as torch tensors on this device ('' to skip)")
    p.add_argument("--torch-batch", type=int, default=4096, help="games in flight on the torch face")
    p.add_argument(
        "--torch-compile", action="store_true", help="also the torch face's rollout torch.compile-d (compiles first)"
    )
    p.add_argument("--repeats", type=int, default=3, help="best of N timings")
    p.add_argument(
        "--ppo-league-seeds", type=int, default=0, help="also the quickstart's PPO league, N seeds, both paths"
    )
    p.add_argument("--ppo-league-steps", type=int, default=15, help="league steps per PPO-league run")
    p.add_argument("--ppo-league-config", default="", help="league YAML (default: configs/quickstart.yaml)")


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "array-games",
            "random games/s: the array face and the runner's array path vs the State path and a pyspiel loop",
            run,
            add_arguments,
            baseline="a plain pyspiel loop (new_initial_state, chance by its probabilities, random legal moves)",
            ratio="vs_pyspiel",
        )
    ]
