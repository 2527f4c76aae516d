"""Per-side, per-role and per-agent win rates of finished Werewolf games.

Input is a list of :class:`arena.playing.match.GameResult` whose ``info`` is the game's
``outcome_info()`` (roles, winner, teams). A draw (day limit) counts as a game but no win;
forfeited games (no info) are skipped and counted.
"""

from __future__ import annotations

from typing import Any, Sequence

from arena.errors import ArenaError


def _rate(wins: int, games: int) -> float:
    return wins / games if games else 0.0


def win_rates(results: Sequence[Any]) -> dict[str, Any]:
    """``{"games", "draws", "forfeits", "sides": {side: rate}, "roles": {role: {...}},
    "agents": {agent: {"games", "wins", "win_rate", "by_role": {role: {...}}}}}``."""
    done = [r for r in results if r.info and "roles" in r.info]
    if not done:
        raise ArenaError("werewolf win_rates: no finished werewolf results with outcome info")
    sides = {"village": 0, "wolves": 0}
    roles: dict[str, list[int]] = {}
    agents: dict[str, dict[str, Any]] = {}
    for r in done:
        winner = r.info["winner"]
        if winner in sides:
            sides[winner] += 1
        for seat, role in enumerate(r.info["roles"]):
            side = "wolves" if role == "Werewolf" else "village"
            won = int(winner == side)
            tally = roles.setdefault(role, [0, 0])
            tally[0] += 1
            tally[1] += won
            a = agents.setdefault(r.seats[seat], {"games": 0, "wins": 0, "by_role": {}})
            a["games"] += 1
            a["wins"] += won
            br = a["by_role"].setdefault(role, [0, 0])
            br[0] += 1
            br[1] += won
    n = len(done)
    return {
        "games": n,
        "draws": sum(1 for r in done if r.info["winner"] is None),
        "forfeits": len(results) - n,
        "sides": {s: _rate(w, n) for s, w in sides.items()},
        "roles": {role: {"seats": g, "win_rate": _rate(w, g)} for role, (g, w) in sorted(roles.items())},
        "agents": {
            name: {
                "games": a["games"],
                "wins": a["wins"],
                "win_rate": _rate(a["wins"], a["games"]),
                "by_role": {
                    role: {"seats": g, "win_rate": _rate(w, g)} for role, (g, w) in sorted(a["by_role"].items())
                },
            }
            for name, a in agents.items()
        },
    }


def format_report(rep: dict[str, Any]) -> str:
    """The report as plain text lines (sides, roles, then agents by role)."""
    lines = [
        f"{rep['games']} games ({rep['draws']} draws at the day limit, {rep['forfeits']} forfeited)",
        "side win rates: " + ", ".join(f"{s} {r:.3f}" for s, r in rep["sides"].items()),
        "role win rates: "
        + ", ".join(f"{role} {x['win_rate']:.3f} ({x['seats']} seats)" for role, x in rep["roles"].items()),
    ]
    for name, a in sorted(rep["agents"].items(), key=lambda kv: -kv[1]["win_rate"]):
        roles = ", ".join(f"{role} {x['win_rate']:.2f}/{x['seats']}" for role, x in a["by_role"].items())
        lines.append(f"  {name}: won {a['wins']}/{a['games']} ({a['win_rate']:.3f}); by role: {roles}")
    return "\n".join(lines)


def _args(p: Any) -> None:
    p.add_argument("run_dir", help="a run directory written by `arena tournament` on a werewolf game")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def _run(args: Any) -> int:
    from arena.evaluation.store import RunStore

    with RunStore.open_existing(args.run_dir) as store:
        records = store.matches()
    rep = win_rates(records)
    if args.json:
        from arena.cli_api import emit_json

        emit_json(rep)
    else:
        print(format_report(rep))
    return 0


def report_command() -> Any:
    from arena.cli_api import Command

    return Command(
        "werewolf-report", "per-side, per-role and per-agent win rates of a werewolf run directory", _args, _run
    )
