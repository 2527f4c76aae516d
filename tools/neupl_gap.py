"""How far the ``neupl`` conditional policy is from the exact best response to random mixtures.

For every seed: a basis population of ``--basis-size`` random policies (``basis_seed`` = seed), a
``neupl`` agent trained ``--iterations`` iterations, then, for ``--mixtures`` mixtures drawn from
Dirichlet(1) (held out: their own seed), the exact value of the best response to the mixture
(:func:`arena.exact.exploitability.correlated_best_response`) minus the exact value of the
policy conditioned on it, averaged over seats. Reported per seed: the largest and mean gap, the
untrained policy's, seconds; over seeds: IQM and mean of the largest gap with 95% bootstrap
intervals (:func:`arena.experiments.sweep.aggregate`).

    python -m arena.tools.neupl_gap --game kuhn_poker --seeds 0,1,2,3,4 --iterations 400 --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from typing import Any, Sequence


def run_seed(game: str, seed: int, basis: str, size: int, iterations: int, mixtures: int, batch: int) -> dict:
    from arena.loading import load_agent, load_game
    from arena.plugins.agents.neupl import EVAL_SEED

    g = load_game(game)
    start = time.perf_counter()
    agent = load_agent(
        {"name": "neupl", "basis": basis, "basis_size": size, "basis_seed": seed, "seed": seed, "batch": batch}, g
    )
    mix = agent.eval_mixtures(mixtures, seed=EVAL_SEED + seed)
    before = agent.gaps(mix)
    for _ in range(iterations):
        agent.train_step()
    gaps = agent.gaps(mix)
    return {
        "seed": seed,
        "max_gap": float(gaps.max()),
        "mean_gap": float(gaps.mean()),
        "untrained_max_gap": float(before.max()),
        "untrained_mean_gap": float(before.mean()),
        "seconds": round(time.perf_counter() - start, 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m arena.tools.neupl_gap", description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="kuhn_poker")
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--basis", default="random")
    ap.add_argument("--basis-size", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=400)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--mixtures", type=int, default=20)
    ap.add_argument("--torch-threads", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    import torch

    from arena.experiments.sweep import aggregate, parse_seeds

    torch.set_num_threads(a.torch_threads)
    rows = []
    for seed in parse_seeds(a.seeds):
        rows.append(run_seed(a.game, seed, a.basis, a.basis_size, a.iterations, a.mixtures, a.batch))
        if not a.json:
            print(json.dumps(rows[-1]), flush=True)
    out: dict[str, Any] = {"config": vars(a), "seeds": rows}
    agg = aggregate([r["max_gap"] for r in rows])
    out["max_gap"] = {k: v for k, v in asdict(agg).items() if k != "values"}
    print(json.dumps(out, indent=None if a.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
