"""``arena bench cfr``: seconds per CFR+ iteration on Leduc — arena's vectorized solver against
OpenSpiel's C++ ``pyspiel.CFRPlusSolver`` and Python ``cfr.CFRPlusSolver``, in one process, at
equal exploitability (same algorithm and conventions, so the same iterates) — plus tree-compile
time, memory, and a larger game to show how cost grows with tree size."""

from __future__ import annotations

import argparse
import time

from arena.cli_api import Benchmark
from arena.hookspecs import hookimpl


def _interleaved(game, rounds: int, block: int, device: str) -> dict[str, float]:
    """Seconds per CFR+ iteration of arena and of OpenSpiel's C++ solver, timed in alternating
    blocks (best block of each) so that load from other processes hits both alike, as wall and
    as process CPU time (both solvers run on this thread; CPU time moves less with the machine's
    load). Returns the four times, both NashConvs and the iterations run."""
    import pyspiel

    from arena.plugins.agents.cfr import TreeSolver, make_rule

    ours = TreeSolver(game, make_rule("cfr+"), device=device)
    theirs = pyspiel.CFRPlusSolver(game.pyspiel_game)
    ours.iterate(1)  # warm-up iteration, untimed for both
    theirs.evaluate_and_update_policy()
    t_ours, t_theirs, c_ours, c_theirs = [], [], [], []
    for _ in range(rounds):
        start, cpu = time.perf_counter(), time.process_time()
        ours.iterate(block)
        t_ours.append(time.perf_counter() - start)
        c_ours.append(time.process_time() - cpu)
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(block):
            theirs.evaluate_and_update_policy()
        t_theirs.append(time.perf_counter() - start)
        c_theirs.append(time.process_time() - cpu)
    return {
        "ours": min(t_ours) / block,
        "theirs": min(t_theirs) / block,
        "ours_cpu": min(c_ours) / block,
        "theirs_cpu": min(c_theirs) / block,
        "nc_ours": ours.nash_conv(),
        "nc_theirs": pyspiel.nash_conv(game.pyspiel_game, theirs.average_policy()),
        "iterations": 1 + rounds * block,
    }


def _python(pyspiel_game, iterations: int):
    from open_spiel.python.algorithms import cfr, exploitability

    solver = cfr.CFRPlusSolver(pyspiel_game)
    start = time.perf_counter()
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    per_it = (time.perf_counter() - start) / iterations
    return per_it, exploitability.nash_conv(pyspiel_game, solver.average_policy())


def _compile(name: str) -> tuple[object, dict]:
    import arena
    from arena.exact.tree import get_tree

    game = arena.load_game(name)
    tree = get_tree(game)
    tree.derived()
    return game, tree.size_report() | {"megabytes": round(tree.nbytes / 2**20, 2)}


def run(args: argparse.Namespace) -> dict:
    from arena.plugins.agents.cfr import TreeSolver, make_rule

    game, size = _compile(args.game)
    t = _interleaved(game, args.rounds, args.block, args.device)
    p_it, p_nc = _python(game.pyspiel_game, args.py_iterations)
    short = TreeSolver(game, make_rule("cfr+"), device=args.device)
    short.iterate(args.py_iterations)
    out = {
        "game": size["game"],
        "histories": size["histories"],
        "infosets": size["infosets"],
        "compile_seconds": size["compile_seconds"],
        "tree_megabytes": size["megabytes"],
        "device": args.device,
        "iterations": t["iterations"],
        "arena_cfr+_seconds_per_iteration": round(t["ours"], 7),
        "openspiel_cpp_cfr+_seconds_per_iteration": round(t["theirs"], 7),
        "speedup_vs_openspiel_cpp": round(t["theirs"] / t["ours"], 2),
        "arena_cfr+_cpu_seconds_per_iteration": round(t["ours_cpu"], 7),
        "openspiel_cpp_cfr+_cpu_seconds_per_iteration": round(t["theirs_cpu"], 7),
        "cpu_speedup_vs_openspiel_cpp": round(t["theirs_cpu"] / t["ours_cpu"], 2),
        "arena_nash_conv": t["nc_ours"],
        "openspiel_cpp_nash_conv": t["nc_theirs"],
        "nash_conv_abs_difference": abs(t["nc_ours"] - t["nc_theirs"]),
        "openspiel_python_cfr+_seconds_per_iteration": round(p_it, 5),
        "speedup_vs_openspiel_python": round(p_it / t["ours"], 1),
        f"nash_conv_at_{args.py_iterations}_arena_vs_python": f"{short.nash_conv():.12g} vs {p_nc:.12g}",
    }
    if args.large_game:
        big, bsize = _compile(args.large_game)
        b = _interleaved(big, args.large_rounds, args.large_block, args.device)
        out.update(
            {
                "large_game": bsize["game"],
                "large_histories": bsize["histories"],
                "large_infosets": bsize["infosets"],
                "large_compile_seconds": bsize["compile_seconds"],
                "large_tree_megabytes": bsize["megabytes"],
                "large_iterations": b["iterations"],
                "large_arena_cfr+_seconds_per_iteration": round(b["ours"], 6),
                "large_openspiel_cpp_cfr+_seconds_per_iteration": round(b["theirs"], 6),
                "large_speedup_vs_openspiel_cpp": round(b["theirs"] / b["ours"], 2),
                "large_cpu_speedup_vs_openspiel_cpp": round(b["theirs_cpu"] / b["ours_cpu"], 2),
            }
        )
    import resource

    out["peak_rss_megabytes"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def _rss_mib() -> float:
    """Resident memory of this process now (Linux), in MiB."""
    import os

    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return float("nan")


def best_response(args: argparse.Namespace) -> dict:
    """Exact best response and exploitability on a game far larger than Leduc: arena's compiled
    tree against OpenSpiel's C++ ``TabularBestResponse`` on the same policy (CFR+'s average after
    a few iterations: mixed, non-uniform), value by value."""
    import pyspiel

    import arena
    from arena.exact.exploitability import best_response as arena_br
    from arena.exact.exploitability import policy_value
    from arena.exact.tree import compile_tree
    from arena.plugins.agents.cfr import TreeSolver, make_rule

    game = arena.load_game(args.game)
    leduc = compile_tree(arena.load_game("leduc_poker")).num_nodes
    rss0 = _rss_mib()
    start = time.perf_counter()
    tree = compile_tree(game)
    tree.derived()
    compile_s = time.perf_counter() - start
    rss_tree = _rss_mib()
    solver = TreeSolver(game, make_rule("cfr+"), tree=tree)
    solver.iterate(args.iterations)
    sigma = solver.average()
    table = solver.average_policy().table
    del solver
    start = time.perf_counter()
    ours = [arena_br(tree, sigma, p)[0] for p in range(tree.num_players)]
    on = policy_value(game, sigma, tree)
    br_s = time.perf_counter() - start
    rss_arena = _rss_mib()
    policy = {k: list(row.items()) for k, row in table.items()}
    start = time.perf_counter()
    theirs = []
    for p in range(tree.num_players):
        br = pyspiel.TabularBestResponse(game.pyspiel_game, p, policy)
        theirs.append(br.value(game.pyspiel_game.new_initial_state().history_str()))
        del br
    os_s = time.perf_counter() - start
    rss_os = _rss_mib()
    diff = max(abs(a - b) for a, b in zip(ours, theirs))
    return {
        "game": tree.game_name,
        "histories": tree.num_nodes,
        "times_leduc": round(tree.num_nodes / leduc, 1),
        "infosets": tree.num_infosets,
        "policy": f"cfr+ average after {args.iterations} iterations",
        "arena_compile_seconds": round(compile_s, 2),
        "arena_tree_mib": round(tree.nbytes / 2**20, 1),
        "arena_rss_growth_compile_mib": round(rss_tree - rss0, 1),
        "arena_best_response_seconds": round(br_s, 3),
        "openspiel_cpp_best_response_seconds": round(os_s, 3),
        "openspiel_rss_growth_mib": round(rss_os - rss_arena, 1),
        "best_response_values_arena": ours,
        "best_response_values_openspiel": theirs,
        "max_abs_difference": diff,
        "exploitability": (sum(ours) - sum(on)) / tree.num_players,
        "speedup_vs_openspiel_cpp": round(os_s / br_s, 2),
        "speedup_incl_compile_vs_openspiel_cpp": round(os_s / (br_s + compile_s), 2),
    }


def best_response_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", default="liars_dice(dice_sides=7)", help="a tree-view OpenSpiel-backed game")
    p.add_argument("--iterations", type=int, default=5, help="CFR+ iterations for the evaluated policy")


def curves(args: argparse.Namespace) -> dict:
    """Every tree variant on one game: exploitability curves (CSV + one PNG) and final values."""
    import csv
    from pathlib import Path

    import arena
    from arena.plugins.agents.cfr.cli import plot_curves
    from arena.plugins.agents.cfr.rules import ALGORITHMS
    from arena.plugins.agents.cfr.run import make_solve, run_solve

    game = arena.load_game(args.game)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    results, all_curves = {}, {}
    runs = [(algo, algo, {}) for algo in ALGORITHMS] + [_variant(v) for v in args.variant]
    for label, algo, params in runs:
        solve = run_solve(make_solve(game, algo, updates=args.updates, **params), args.iterations, args.log_every)
        all_curves[label] = solve.curve
        results[f"{label}_exploitability"] = solve.curve[-1]["exploitability"]
        results[f"{label}_seconds"] = round(solve.seconds, 3)
    with open(out_dir / "cfr_curves.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["algo", "iteration", "seconds", "nash_conv", "exploitability"])
        for algo, curve in all_curves.items():
            for c in curve:
                w.writerow([algo, c["iteration"], c["seconds"], c["nash_conv"], c["exploitability"]])
    plot_curves(
        all_curves,
        out_dir / "cfr_curves.png",
        f"{game.spec.full_name}: exploitability of the average policy ({args.updates} updates)",
    )
    best = min((k for k in results if k.endswith("_exploitability")), key=results.get)
    return {
        "game": game.spec.full_name,
        "iterations": args.iterations,
        **results,
        "best": best.replace("_exploitability", ""),
        "plot": str(out_dir / "cfr_curves.png"),
        "best_over_cfr+_exploitability": results[best] / results["cfr+_exploitability"],
    }


def _variant(text: str) -> tuple[str, str, dict]:
    """``ALGO:KEY=VALUE[,KEY=VALUE...]`` → (label ``ALGO[KEY=VALUE,...]``, algo, params)."""
    from arena.errors import ArenaError
    from arena.plugins.agents.cfr.cli import _params

    algo, _, rest = text.partition(":")
    if not algo or not rest:
        raise ArenaError(f"bench cfr-curves: --variant takes ALGO:KEY=VALUE[,KEY=VALUE...], got {text!r}")
    return f"{algo}[{rest}]", algo, _params(rest.split(","))


def curves_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", default="leduc_poker")
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--updates", default="alternating", choices=["alternating", "simultaneous"])
    p.add_argument("--out", default=".", help="directory for cfr_curves.csv and cfr_curves.png")
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="ALGO:KEY=VALUE[,...]",
        help="also run ALGO with these parameters, e.g. vad-cfr:base_beta=0 (repeatable)",
    )


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", default="leduc_poker")
    p.add_argument("--rounds", type=int, default=3, help="timed blocks per solver (best block counts)")
    p.add_argument("--block", type=int, default=33, help="CFR+ iterations per block (1 + rounds x block in all)")
    p.add_argument("--py-iterations", type=int, default=3, help="iterations of OpenSpiel's (slow) Python CFR+")
    p.add_argument("--device", default="numpy", help="arena backend: numpy, torch, cuda")
    p.add_argument("--large-game", default="liars_dice", help="a larger game ('' to skip)")
    p.add_argument("--large-rounds", type=int, default=3)
    p.add_argument("--large-block", type=int, default=3)


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "cfr",
            "CFR+ seconds/iteration on Leduc: arena vs OpenSpiel C++ and Python solvers",
            run,
            add_arguments,
            baseline="OpenSpiel C++ pyspiel.CFRPlusSolver, same game, same iterates",
            ratio="speedup_vs_openspiel_cpp",
        ),
        Benchmark(
            "cfr-curves",
            "every CFR variant's exploitability curve on one game (CSV + PNG)",
            curves,
            curves_arguments,
            baseline="CFR+ (OpenSpiel's algorithm) at the same iterations",
            ratio="_over_cfr+_exploitability",
        ),
        Benchmark(
            "cfr-br",
            "exact best response on liars_dice(dice_sides=7), 170x Leduc: arena vs OpenSpiel C++ TabularBestResponse",
            best_response,
            best_response_arguments,
            baseline="OpenSpiel C++ pyspiel.TabularBestResponse on the same policy",
            ratio="vs_openspiel_cpp",
        ),
    ]
