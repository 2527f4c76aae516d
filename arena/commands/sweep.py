"""``arena sweep CONFIG seeds=0-9 [key=value ...]``: one config over many seeds, aggregated
(see :mod:`arena.experiments.sweep`)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from arena.cli_api import Command, emit_json
from arena.commands.tables import print_table
from arena.config import load_config
from arena.errors import ArenaError, ConfigError
from arena.experiments import sweep as S
from arena.hookspecs import hookimpl
from arena.registry import get_registry


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", help="a YAML config of a sweepable command (train, league, llm-train, solve, ...)")
    p.add_argument("overrides", nargs="*", help="seeds=0-9 (or 0,3,7) and key=value overrides for every seed")
    p.add_argument("--command", help="the command that runs CONFIG (default: the one whose config accepts it)")
    p.add_argument("--dir", help="sweep directory (default: the config's out + '-sweep'); one seed-S/ per seed")
    p.add_argument("--jobs", type=int, default=1, help="seeds run at once, each its own process (default 1)")
    p.add_argument("--nice", type=int, default=0, help="run the seeds' processes at this niceness increment")
    p.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="PATTERN",
        help="final metrics to report (glob, repeatable; default: all but step, seconds, train/*)",
    )
    p.add_argument(
        "--reach",
        action="append",
        default=[],
        metavar="METRIC>=LEVEL",
        help="sample efficiency: per seed, the first evaluated step at which METRIC reached LEVEL (from "
        "metrics.csv; repeatable; a seed that never did counts at its last step and is named)",
    )
    p.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    p.add_argument("--report-only", action="store_true", help="aggregate the finished seeds; run nothing")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-plot", action="store_true", help="skip report.png")
    p.add_argument(
        "--compare",
        metavar="CONFIG_B",
        help="sequential comparison with a second config (AdaStop): needs --adastop ALPHA and one --metric",
    )
    p.add_argument("--adastop", type=float, metavar="ALPHA", help="family-wise error of the sequential comparison")
    p.add_argument("--batch", type=int, default=5, help="seeds per method per stage of --compare (default 5)")
    p.add_argument("--permutations", type=int, default=10000, help="permutations of the AdaStop test (default 10000)")


def sweepable() -> dict[str, Any]:
    """Commands that declare a config with ``seed`` and ``out`` keys."""
    reg = get_registry()
    out = {}
    for name, _ in reg.summaries("command"):
        cmd = reg.get("command", name)
        cfg = getattr(cmd, "config", None)
        if cfg is not None and {"seed", "out"} <= {f.name for f in dataclasses.fields(cfg)}:
            out[name] = cfg
    return out


def resolve(config: str, overrides: list[str], command: str | None) -> tuple[str, Any]:
    """The command owning ``config`` and the loaded config (its ``out`` names the sweep)."""
    if not Path(config).is_file():
        raise ArenaError(f"config file not found: {config}")
    cands = sweepable()
    if command is not None:
        if command not in cands:
            raise ArenaError(f"--command {command}: not a sweepable command; sweepable: {', '.join(sorted(cands))}")
        return command, load_config(cands[command], config, overrides)
    fits, errors = {}, []
    for name, schema in cands.items():
        try:
            fits[name] = load_config(schema, config, overrides)
        except ConfigError as exc:
            errors.append(f"{name}: {exc}")
    if len(fits) == 1:
        return next(iter(fits.items()))
    if not fits:
        raise ArenaError(
            f"{config} is not a config of any sweepable command ({', '.join(sorted(cands))}); " + "; ".join(errors[:4])
        )
    raise ArenaError(f"{config} fits several commands ({', '.join(sorted(fits))}); choose one with --command")


def _run(args: argparse.Namespace) -> int:
    seeds, overrides = S.split_overrides(args.overrides)
    command, cfg = resolve(args.config, overrides, args.command)
    directory = Path(args.dir) if args.dir else Path(f"{cfg.out}-sweep")
    if seeds is None:
        state = directory / S.SWEEP_FILE
        if not (args.report_only and state.exists()):
            raise ArenaError("arena sweep needs seeds=..., e.g. seeds=0-4")
        seeds = json.loads(state.read_text()).get("seeds", [])
    if args.jobs < 1 or args.resamples < 1:
        raise ArenaError("--jobs and --resamples must be at least 1")
    plan = S.SweepPlan(command, args.config, overrides, list(seeds), directory)
    say = (lambda s: None) if args.json else (lambda s: print(s, file=sys.stderr, flush=True))
    if args.compare or args.adastop is not None:
        return _compare(args, plan, say)
    status: dict[int, str] = {}
    if not args.report_only:
        status = S.run_seeds(plan, S.arena_argv(), jobs=args.jobs, log=say, nice=args.nice)
    finals = S.final_metrics(directory, plan.seeds)
    censored = S.add_reach(directory, finals, args.reach)
    patterns = args.metric + [k for k in censored] if args.metric else args.metric
    rep = S.report(finals, patterns, resamples=args.resamples)
    rep["never_reached"] = censored
    failed = {s: v for s, v in status.items() if v.startswith("failed")}
    line = f"arena sweep {args.config} seeds={','.join(map(str, plan.seeds))}" + "".join(f" {o}" for o in overrides)
    title = f"{Path(args.config).stem} over {rep['n']} seeds ({command})"
    files = S.write_report(dict(rep, failed=failed), directory, title, line, plots=not args.no_plot)
    if args.json:
        emit_json(dict(rep, failed=failed, directory=str(directory), command=line))
    else:
        _print_report(title, rep, censored)
        print(f"wrote {', '.join(str(f) for f in files)}")
    return _failed({f"seed {s}": v for s, v in failed.items()})


def _print_report(title: str, rep: dict[str, Any], censored: dict[str, list]) -> None:
    """The metrics table, its note, and the seeds that never reached a ``--reach`` level."""
    rows = [
        [
            k,
            f"{m['iqm']:.4g}",
            f"[{m['iqm_ci'][0]:.4g}, {m['iqm_ci'][1]:.4g}]",
            f"{m['mean']:.4g}",
            f"{m['min']:.4g}",
            f"{m['max']:.4g}",
        ]
        for k, m in rep["metrics"].items()
    ]
    print_table(title, ("metric", "IQM", "95% CI", "mean", "min", "max"), rows, figures=True)
    if rep.get("note"):
        print(rep["note"])
    for k, never in censored.items():
        if never:
            print(f"{k}: seed(s) {', '.join(map(str, never))} never reached it (counted at their last step)")


def _compare(args: argparse.Namespace, plan: Any, say: Any) -> int:
    """``--compare CONFIG_B --adastop ALPHA --metric M``: AdaStop between two configs."""
    if not (args.compare and args.adastop is not None and len(args.metric) == 1):
        raise ArenaError("a sequential comparison needs --compare CONFIG_B, --adastop ALPHA and exactly one --metric")
    if args.report_only:
        raise ArenaError("--report-only does not apply to --compare (a rerun reuses the finished seeds)")
    command_b, cfg_b = resolve(args.compare, plan.overrides, args.command)
    plan_b = S.SweepPlan(command_b, args.compare, plan.overrides, plan.seeds, Path(f"{cfg_b.out}-sweep"))
    if plan_b.directory.resolve() == plan.directory.resolve():
        raise ArenaError(f"{args.config} and {args.compare} would share the sweep directory {plan.directory}")
    decision, failed = S.adastop_sweep(
        (plan, plan_b),
        S.arena_argv(),
        args.metric[0],
        args.batch,
        alpha=args.adastop,
        permutations=args.permutations,
        jobs=args.jobs,
        nice=args.nice,
        log=say,
    )
    a, b = Path(args.config).stem, Path(args.compare).stem
    line = decision.summary(a, b, args.metric[0])
    out = dict(decision.as_dict(), a=args.config, b=args.compare, metric=args.metric[0], summary=line, failed=failed)
    (plan.directory / f"adastop-vs-{b}.json").write_text(json.dumps(out, indent=2))
    if args.json:
        emit_json(out)
    else:
        print(line)
        print(f"wrote {plan.directory / f'adastop-vs-{b}.json'}")
    return _failed(failed)


def _failed(failed: dict[str, Any]) -> int:
    """One error line for the seeds that failed (exit 1), or 0."""
    if not failed:
        return 0
    print(
        f"arena: error: {len(failed)} seed(s) failed: " + "; ".join(f"{k}: {v}" for k, v in failed.items()),
        file=sys.stderr,
    )
    return 1


@hookimpl
def arena_commands() -> list[Command]:
    return [
        Command(
            "sweep",
            "run a train/league/llm-train/solve config over many seeds; IQM, bootstrap CIs, performance profiles",
            _args,
            _run,
        )
    ]
