"""A hosted series: config → seats (people and agents) → server → games → run store → ratings.

Seats are agent specs, except ``human`` (optionally ``human:name=alice``), which makes the seat
a person joining over the network with that seat's token. The series plays ``games`` games with
fixed seats through :func:`arena.playing.match.play_games`; each finished game is committed to the run
store ``out`` (with its transcript) under a stable id, and the leaderboard files are rewritten at
the end, exactly as for tournaments, so ``arena leaderboard OUT`` rates hosted games like any
other. Re-running with the same seed into the same directory plays only the missing games.
"""

from __future__ import annotations

import random
import re
import sys
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Callable, TextIO

from arena.errors import ArenaError, ConfigError
from arena.hookspecs import RunContext
from arena.tools.host.hub import DEFAULT_ACTIONS, Hub
from arena.tools.host.remote import HostedGame, Notifying, RemoteHuman
from arena.tools.host.server import HostServer


@dataclass
class HostConfig:
    """``arena host``: one match or a series between people and agents."""

    game: str = "kuhn_poker"
    seats: list[Any] = field(default_factory=lambda: ["human", "random"])
    """One entry per seat: an agent spec, or ``human`` / ``human:name=alice`` for a person."""
    games: int = 1
    seed: int | None = None
    """Seed of the series (default: random). With a fixed seed, a rerun resumes the store."""
    move_time: float | None = 120.0
    """Seconds a person has for each decision (null: no limit)."""
    default_action: str = "random"
    """What the clock plays for a person who runs out of time: ``random`` or ``first``."""
    default_text: str = ""
    """What the clock says at a text decision."""
    join_timeout: float | None = None
    """Seconds to wait for every person to connect before the first game (null: forever)."""
    bind: str = "127.0.0.1"
    port: int = 8765
    public_host: str | None = None
    """Host name printed in join links (default: the bind address)."""
    out: str | None = ""
    """Run directory for results, transcripts and ratings; empty: ``runs/host/<game>``; null:
    keep nothing. One directory pools every hosted game of one game, whoever sat where."""
    transcripts: bool = True
    linger: float = 5.0
    """Seconds to keep serving after the series so clients can read the end."""
    tokens: dict[str, str] = field(default_factory=dict)
    """Fixed join tokens by seat number (for scripted setups); default: fresh random tokens."""
    rate_limit: float = 20.0
    """API requests (moves, event streams) per second per seat token (per client address without one), sustained; 0: no limit."""
    rate_burst: int = 40
    """Requests a client may make at once before the rate applies."""
    idle_timeout: float = 30.0
    """Seconds before a connection that sends nothing is closed."""


def human_seat(spec: Any) -> str | None:
    """The display name if ``spec`` is a human seat (``human`` or ``human:name=X``), else None."""
    from arena.loading import parse_agent_spec

    name, params = parse_agent_spec(spec)
    if name != "human":
        return None
    extra = sorted(set(params) - {"name"})
    if extra:
        raise ConfigError(f"seat spec {spec!r}: a human seat takes only 'name', not '{extra[0]}'")
    return str(params.get("name", "human"))


def check(cfg: HostConfig, num_players: int) -> None:
    if len(cfg.seats) != num_players:
        raise ConfigError(f"key 'seats': game '{cfg.game}' has {num_players} seats, {len(cfg.seats)} given")
    if cfg.games < 1:
        raise ConfigError("key 'games': must be at least 1")
    if cfg.move_time is not None and cfg.move_time <= 0:
        raise ConfigError("key 'move_time': must be positive (or null for no limit)")
    if cfg.default_action not in DEFAULT_ACTIONS:
        raise ConfigError(
            f"key 'default_action': must be one of {', '.join(DEFAULT_ACTIONS)}, got '{cfg.default_action}'"
        )
    if not 0 <= cfg.port <= 65535:
        raise ConfigError(f"key 'port': {cfg.port} is not a TCP port")
    if cfg.rate_limit < 0 or cfg.rate_burst < 1:
        raise ConfigError("keys 'rate_limit'/'rate_burst': need rate_limit >= 0 (0: no limit) and rate_burst >= 1")
    if cfg.idle_timeout <= 0:
        raise ConfigError("key 'idle_timeout': must be positive (seconds)")
    for k in cfg.tokens:
        if not str(k).isdigit() or int(k) >= num_players:
            raise ConfigError(f"key 'tokens': '{k}' is not a seat number of this game")


@dataclass
class HostResult:
    run_dir: str | None
    seed: int
    results: list[Any]
    totals: dict[str, float]


def renderer_source(game: Any) -> str:
    """The JavaScript of the game's table renderer (``Game.web_renderer``), or "" without one."""
    where = getattr(game, "web_renderer", None)
    if not where:
        return ""
    package, name = where
    try:
        return resources.files(package).joinpath(name).read_text(encoding="utf-8")
    except (ImportError, OSError, TypeError, ValueError) as exc:
        raise ArenaError(f"game '{game.spec.name}': web_renderer {package}/{name} cannot be read: {exc}") from None


def run_host(
    cfg: HostConfig,
    config_text: str | None = None,
    out: TextIO | None = None,
    on_ready: Callable[[HostServer, Hub], None] | None = None,
) -> HostResult:
    """Host the series ``cfg``; print join links to ``out``; block until it is over."""
    from arena.loading import dedupe_names, load_agent, load_game
    from arena.playing.match import play_games

    out = out or sys.stdout
    game = load_game(cfg.game)
    spec = game.spec
    check(cfg, spec.num_players)
    humans: dict[int, str] = {}
    seats: list[Any] = []
    for p, s in enumerate(cfg.seats):
        who = human_seat(s)
        if who is not None:
            humans[p] = who
            seats.append(None)
        else:
            seats.append(load_agent(s, game))
    if not humans:
        raise ConfigError("key 'seats': no seat is 'human'; use `arena match` for agents only")
    placeholders = [RemoteHuman(None, p, humans[p]) if a is None else a for p, a in enumerate(seats)]
    dedupe_names(placeholders)
    names = [a.name for a in placeholders]
    seed = cfg.seed if cfg.seed is not None else random.randrange(2**31)
    store, planned = _open_store(cfg, spec, names, seed, config_text)
    todo = [k for k, mid in enumerate(planned) if store is None or not store.has_match(mid)]
    hub = Hub(
        spec.full_name,
        names,
        {p: names[p] for p in humans},
        games=cfg.games,
        move_time=cfg.move_time,
        default_action=cfg.default_action,
        default_text=cfg.default_text,
        tokens={int(k): str(v) for k, v in cfg.tokens.items()},
        text_decisions=spec.text_decisions,
        renderer=renderer_source(game),
    )
    agents = []
    for p, a in enumerate(placeholders):
        if isinstance(a, RemoteHuman):
            a.hub = hub
            agents.append(a)
        else:
            agents.append(Notifying(a, hub))
    server = HostServer(hub, cfg.bind, cfg.port, cfg.rate_limit, cfg.rate_burst, cfg.idle_timeout).start()
    try:
        url = server.url(cfg.public_host)
        say = lambda s: (out.write(s + "\n"), out.flush())
        say(f"arena host: {spec.full_name}, {cfg.games} game(s), seed {seed}, serving {url}")
        for p, name in enumerate(names):
            if p in humans:
                tok = hub.seats[p].token
                say(f"  seat {p} {name}: {url}/#token={tok}   (terminal: arena join {url} --token={tok})")
            else:
                say(f"  seat {p} {name}: agent")
        if on_ready is not None:
            on_ready(server, hub)
        if not todo:
            say("every game of this series is already in the store; nothing to play")
        elif not hub.wait_connected(cfg.join_timeout):
            raise ArenaError(f"not every person joined within join_timeout={cfg.join_timeout}s")
        results = []
        from arena.registry import get_registry

        hook = get_registry().hook
        run = RunContext("host", f"host-{id(hub)}", str(store.path) if store else None, total=len(todo))
        hook.arena_run_started(run=run)

        def on_result(res: Any) -> None:
            _record(store, res, planned, spec.full_name, names, cfg.transcripts)
            hook.arena_match_finished(result=res, context=run.with_(match_id=planned[res.index]))
            hook.arena_matches_finished(results=[res], context=run)
            reason = f"{res.forfeit.agent} forfeits: {res.forfeit.reason}" if res.forfeit else None
            for p in humans:
                final = hub.state.observation_text(p) if hub.state is not None else ""
                view = hub.state.observation_struct(p) if hub.state is not None else None
                hub.game_over(p, res.returns, final, reason, _outcome(res.returns, p), view)
            results.append(res)
            say(f"game {res.index}: returns {res.returns}" + (f" ({reason})" if reason else ""))

        if todo:
            play_games(
                HostedGame(game, hub, todo),
                agents,
                seed=seed,
                indices=todo,
                batch_size=1,
                record=True,
                on_result=on_result,
            )
        totals = {n: 0.0 for n in names}
        for r in results:
            for n, x in zip(r.seats, r.returns):
                totals[n] = totals.get(n, 0.0) + x
        hub.finish({"games": len(results), "totals": totals})
        hook.arena_run_finished(run=run, summary={"status": "finished", "games": len(results), "totals": totals})
        if store is not None:
            _rate(store, spec, names)
            say(f"results and transcripts: {store.path} (arena leaderboard {store.path})")
        hub.wait_delivered(cfg.linger)
        return HostResult(str(store.path) if store is not None else None, seed, results, totals)
    finally:
        server.close()
        if store is not None:
            store.close()
        for a in agents:
            a.close()


def _outcome(returns: list[float], p: int) -> str:
    """won / lost / drew for seat ``p``: won when it got the best return and someone got less —
    so every member of a winning team (Werewolf's village) won, not "drew"."""
    best, worst = max(returns), min(returns)
    if returns[p] < best:
        return "lost"
    return "won" if worst < best else "drew"


def _open_store(
    cfg: HostConfig, spec: Any, names: list[str], seed: int, config_text: str | None
) -> tuple[Any, list[str]]:
    """The run store (or None) and the stable ids of the series' planned games."""
    from arena.evaluation.store import RunStore, fingerprint, match_id

    fp = fingerprint({"kind": "host", "game": spec.full_name})
    pairing = "|".join(names)
    planned = [match_id(fp, pairing, seed, k) for k in range(cfg.games)]
    if cfg.out is None:
        return None, planned
    path = cfg.out or "runs/host/" + re.sub(r"[^\w.=-]+", "_", spec.full_name).strip("_")
    store = RunStore.open(path, fp, config_text, kind="host")
    span = float(spec.max_utility) - float(spec.min_utility)
    store.set_meta("margin_scale", repr(span) if span > 0 and span != float("inf") else "")
    return store, planned


def _record(store: Any, res: Any, planned: list[str], game_name: str, names: list[str], transcripts: bool) -> None:
    from arena.evaluation.decisions import decision_rows
    from arena.evaluation.store import MatchRecord

    if store is None:
        return
    rec = MatchRecord.from_result(
        res, id=planned[res.index], pairing="|".join(names), game=game_name, plan_seq=store.count()
    )  # arrival order: sessions append to the pool
    # the people's decisions (what each saw, what each chose) go to decisions/<id>.jsonl before
    # the game's row is committed: a game in the store always has them, and a game cut off by a
    # killed host is not in the store and is played again on resume
    store.record_match(rec, res.transcript if transcripts else None, decision_rows(res.trajectory))


def _rate(store: Any, spec: Any, names: list[str]) -> None:
    """Rewrite the leaderboard files from every game in the store (as tournaments do)."""
    from arena.evaluation.leaderboard import compute, write_files

    records = store.matches()
    board = compute(records, names, scale=store.margin_scale(), bootstrap=100)
    write_files(board, store.path, f"{spec.full_name} — hosted", {"format": "host"})
