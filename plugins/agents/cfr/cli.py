"""``arena solve``: run a CFR-family or MCCFR solver on a game, show progress, and write the
policy (JSON), the exploitability curve (CSV + PNG), TensorBoard scalars and ``results.json``
(``final``: exploitability, NashConv, seconds) to ``--out``.

The same run from a YAML config (keys of :class:`SolveConfig`) — what ``arena sweep`` runs over
seeds: ``arena solve configs/solve/kuhn_es_mccfr.yaml seed=3 out=runs/x``."""

from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.cli_api import Command
from arena.errors import ArenaError
from arena.game import parse_scalar

from .run import ALGOS, Solve, make_solve, run_solve


@dataclass
class SolveConfig:
    """``arena solve CONFIG [key=value ...]``: the flags as YAML keys (``params``: ``--set``)."""

    game: str = ""
    algo: str = "cfr+"
    iterations: int = 1000
    out: str | None = None
    log_every: int = 0
    device: str = "numpy"
    updates: str = "alternating"
    seed: int = 0
    max_nodes: int | None = None
    params: dict[str, Any] = field(default_factory=dict)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", nargs="?", help="optional YAML config (keys of SolveConfig) instead of the flags")
    p.add_argument("overrides", nargs="*", help="key=value overrides of the config, e.g. seed=3 out=runs/x")
    p.add_argument("--game", help="game name, e.g. leduc_poker or 'kuhn_poker(players=3)'")
    p.add_argument("--algo", default="cfr+", choices=ALGOS, help="solver (default cfr+)")
    p.add_argument("--iterations", type=int, default=1000, help="iterations (default 1000)")
    p.add_argument("--out", help="directory for policy.json, curve.csv, curve.png and TensorBoard events")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--log-every", type=int, default=0, help="log exploitability every K iterations (default: about 50 points)"
    )
    p.add_argument("--device", default="numpy", help="numpy (default), torch (torch on CPU) or cuda[:N]")
    p.add_argument("--updates", default="alternating", choices=["alternating", "simultaneous"])
    p.add_argument("--seed", type=int, default=0, help="seed of the sampling solvers")
    p.add_argument("--max-nodes", type=int, help="refuse to enumerate trees with more histories than this")
    p.add_argument(
        "--set",
        dest="params",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="algorithm parameter, e.g. --set alpha=1.5 (repeatable)",
    )


def _params(items: list[str]) -> dict[str, Any]:
    out = {}
    for item in items:
        if "=" not in item:
            raise ArenaError(f"--set {item!r} is not KEY=VALUE")
        k, v = item.split("=", 1)
        out[k.strip()] = parse_scalar(v.strip())
    return out


def _from_config(args: argparse.Namespace) -> None:
    """Fill ``args`` from the YAML config (its keys win over flags)."""
    from arena.cli_api import config_and_overrides
    from arena.config import load_config

    if args.config is None:
        if not args.game:
            raise ArenaError("arena solve: give --game NAME (or a YAML config)")
        return
    cfg = load_config(SolveConfig, *config_and_overrides(args.config, args.overrides))
    if not cfg.game:
        raise ArenaError(f"{args.config}: missing required key 'game'")
    if cfg.algo not in ALGOS:
        raise ArenaError(f"{args.config}: algo '{cfg.algo}' is not one of {', '.join(ALGOS)}")
    for key in ("game", "algo", "iterations", "out", "log_every", "device", "updates", "seed", "max_nodes"):
        setattr(args, key, getattr(cfg, key))
    args.params = [f"{k}={v}" for k, v in cfg.params.items()] + list(args.params)


def run(args: argparse.Namespace) -> int:
    from arena.loading import load_game

    _from_config(args)
    game = load_game(args.game)
    log_every = args.log_every if args.log_every > 0 else max(1, args.iterations // 50)
    solve = make_solve(
        game,
        args.algo,
        device=args.device,
        updates=args.updates,
        seed=args.seed,
        max_nodes=args.max_nodes,
        **_params(args.params),
    )
    out = Path(args.out) if args.out else None
    writer = None
    if out:
        out.mkdir(parents=True, exist_ok=True)
        from tensorboard.summary import Writer

        writer = Writer(str(out / "tb"))

    def on_log(point: dict) -> None:
        if writer and point["nash_conv"] is not None:
            writer.add_scalar("solve/nash_conv", point["nash_conv"], point["iteration"])
            writer.add_scalar("solve/exploitability", point["exploitability"], point["iteration"])
            writer.add_scalar("solve/seconds", point["seconds"], point["iteration"])

    if args.json:
        run_solve(solve, args.iterations, log_every, on_log)
    else:
        _with_progress(solve, args, log_every, on_log)
    if writer:
        writer.close()
    last = solve.curve[-1]
    result = {
        "game": game.spec.full_name,
        "algo": args.algo,
        "iterations": solve.iteration,
        "nash_conv": last["nash_conv"],
        "exploitability": last["exploitability"],
        "seconds": round(solve.seconds, 4),
    }
    if out:
        from arena.atomic import write_json_atomic

        solve.policy().save(out / "policy.json")
        write_curve(solve, out)
        write_json_atomic(out / "results.json", {"game": result["game"], "seed": args.seed, "final": result}, indent=2)
    if args.json:
        from arena.cli_api import emit_json

        emit_json(result)
    else:
        expl = "n/a (no tree view)" if last["exploitability"] is None else f"{last['exploitability']:.6g}"
        print(
            f"{result['game']} {args.algo}: {solve.iteration} iterations in {result['seconds']:.2f}s, "
            f"exploitability {expl}" + (f"; wrote {out}/policy.json, curve.csv, curve.png, tb/" if out else "")
        )
    return 0


def _with_progress(solve: Solve, args: argparse.Namespace, log_every: int, on_log) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(file=sys.stderr)
    with Progress(
        TextColumn(f"{args.algo} on {solve.game.spec.full_name}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[expl]}"),
        console=console,
        disable=not console.is_terminal,
    ) as progress:
        task = progress.add_task("solve", total=args.iterations, expl="")

        def log(point: dict) -> None:
            on_log(point)
            e = point["exploitability"]
            progress.update(task, completed=point["iteration"], expl="" if e is None else f"exploitability {e:.3g}")
            if not console.is_terminal:
                print(
                    f"iteration {point['iteration']}: exploitability "
                    f"{'n/a' if e is None else format(e, '.6g')} ({point['seconds']:.2f}s)",
                    file=sys.stderr,
                )

        run_solve(solve, args.iterations, log_every, log)


def write_curve(solve: Solve, out: Path) -> None:
    with open(out / "curve.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["iteration", "seconds", "nash_conv", "exploitability"])
        w.writeheader()
        w.writerows(solve.curve)
    plot_curves({solve.algo: solve.curve}, out / "curve.png", f"{solve.game.spec.full_name}")


def plot_curves(curves: dict[str, list[dict]], path: Path, title: str) -> None:
    """Exploitability against iterations, log-log, one line per solver."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, curve in curves.items():
        pts = [(c["iteration"], c["exploitability"]) for c in curve if c["exploitability"]]
        if pts:
            ax.plot(*zip(*pts), label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel("exploitability (NashConv / players)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


COMMAND = Command(
    "solve",
    "solve a game with CFR-family or Monte-Carlo CFR; writes policy, curve, TensorBoard",
    add_arguments,
    run,
    config=SolveConfig,
)
