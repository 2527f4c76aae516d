"""The quickstart's PPO league on Kuhn poker with its training games on the array path and on the
``State`` path (``arena bench array-games --ppo-league-seeds N``).

Each seed runs the league of ``configs/quickstart.yaml`` twice in this process, its seed and the
learner's ``neural:...,seed=`` set to the seed, torch on one thread, no plots or TensorBoard:
once as it is (every training game on the array path: the learner, its snapshots, ``random``,
``fixed`` and the tabular ``psro`` decide from arrays) and once with the learner told
``array_native=false`` (every training game has the learner in a seat, so all of them take the
``State`` path). Training games/s is the league's training games over the time spent in its
training phase (the games and the trainer's updates, :meth:`Rollouts.train`); the whole run's
wall time is reported too. The exact exploitability of the learner at each evaluation must be
the same both ways (the same games, so the same updates), or the benchmark fails.
"""

from __future__ import annotations

import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from arena.config import load_config
from arena.errors import ArenaError

QUICKSTART = Path(__file__).resolve().parents[2] / "configs" / "quickstart.yaml"


@contextmanager
def _timed_training(spent: list[float]) -> Iterator[None]:
    """Adds the seconds :meth:`Rollouts.train` calls take to ``spent[0]``, and those of the
    trainers' updates within them (:meth:`Rollouts._update`) to ``spent[1]``."""
    from arena.league.rollouts import Rollouts

    originals = {"train": Rollouts.train, "_update": Rollouts._update}

    def timer(name: str, slot: int) -> Any:
        method = originals[name]

        def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return method(self, *args, **kwargs)
            finally:
                spent[slot] += time.perf_counter() - t0

        return timed

    Rollouts.train, Rollouts._update = timer("train", 0), timer("_update", 1)  # type: ignore[method-assign]
    try:
        yield
    finally:
        Rollouts.train, Rollouts._update = originals["train"], originals["_update"]  # type: ignore[method-assign]


def league_run(seed: int, array: bool, steps: int, config: str | Path = QUICKSTART) -> dict[str, Any]:
    """One league run: training games, seconds in training and in all, exploitability by step."""
    from arena.league.config import LeagueConfig
    from arena.league.runner import run_league

    if not Path(config).exists():
        raise ArenaError(f"--ppo-league-config: no league config at {config}")
    with tempfile.TemporaryDirectory(prefix="arena-ppo-league-") as out:
        overrides = [f"out={out}", f"seed={seed}", f"steps={steps}", "torch_threads=1"]
        overrides += ["plots=false", "tensorboard=false", "progress=false"]
        cfg = load_config(LeagueConfig, config, overrides)
        learners = [m for m in cfg.population if m.role == "learner"]
        if len(learners) != 1 or not str(learners[0].agent).startswith("neural:"):
            raise ArenaError(f"--ppo-league-config: {config} needs one learner with a 'neural:...' agent")
        spec = str(learners[0].agent).split(",seed=")[0] + f",seed={seed}"
        learners[0].agent = spec if array else spec + ",array_native=false"
        spent = [0.0, 0.0]
        t0 = time.perf_counter()
        with _timed_training(spent):
            result = run_league(cfg, quiet=True)
        wall = time.perf_counter() - t0
    curve = {int(m["step"]): m["exploitability"] for m in result.metrics if "exploitability" in m}
    return {
        "train_games": result.train_games,
        "train_seconds": spent[0],
        "update_seconds": spent[1],
        "wall_seconds": wall,
        "exploitability": curve,
    }


def ppo_league(seeds: int, steps: int, config: str | Path = QUICKSTART) -> dict[str, Any]:
    """Both paths for seeds ``0..seeds-1``, interleaved (array, then State, per seed)."""
    out: dict[str, Any] = {"ppo_league_config": str(config), "ppo_league_steps": steps}
    ratios, per_seed = [], []
    for array in (True, False):  # warm-up: imports, torch, the face's tables
        league_run(0, array, 1, config)
    for seed in range(seeds):
        fast, slow = league_run(seed, True, steps, config), league_run(seed, False, steps, config)
        if fast["exploitability"] != slow["exploitability"]:
            raise AssertionError(
                f"ppo league seed {seed}: exploitability differs between the paths "
                f"({fast['exploitability']} vs {slow['exploitability']})"
            )
        row = {
            "seed": seed,
            "train_games": fast["train_games"],
            "array_train_games_per_second": round(fast["train_games"] / fast["train_seconds"], 1),
            "state_train_games_per_second": round(slow["train_games"] / slow["train_seconds"], 1),
            "array_update_seconds": round(fast["update_seconds"], 3),
            "state_update_seconds": round(slow["update_seconds"], 3),
            "array_rollout_games_per_second": round(
                fast["train_games"] / (fast["train_seconds"] - fast["update_seconds"]), 1
            ),
            "state_rollout_games_per_second": round(
                slow["train_games"] / (slow["train_seconds"] - slow["update_seconds"]), 1
            ),
            "array_wall_seconds": round(fast["wall_seconds"], 2),
            "state_wall_seconds": round(slow["wall_seconds"], 2),
            "exploitability_by_step": {str(k): round(v, 6) for k, v in sorted(fast["exploitability"].items())},
        }
        row["array_vs_state_train"] = round(slow["train_seconds"] / fast["train_seconds"], 2)
        row["array_vs_state_rollouts"] = round(
            row["array_rollout_games_per_second"] / row["state_rollout_games_per_second"], 2
        )
        ratios.append((row["array_vs_state_train"], row["array_vs_state_rollouts"]))
        per_seed.append(row)
    out["ppo_league_seeds"] = per_seed
    if ratios:
        out["ppo_league_array_vs_state_train"] = round(sum(r[0] for r in ratios) / len(ratios), 2)
        out["ppo_league_array_vs_state_rollouts"] = round(sum(r[1] for r in ratios) / len(ratios), 2)
    return out
