"""The tournament driver: a format's pairings played into a run store, resumably.

Game ``k`` of a group seats the group rotated by ``k mod n`` and plays that group's ``k div n``-th
deal, so seats swap with identical cards (duplicate style) and results do not depend on
batching. Deals are never shared between groups: each new ``(group, k div n)`` takes the next
deal number of the run, in plan order. Why: were deal ``d`` the same for every pairing, the
errors of all pairings would be correlated and no bootstrap over games could see it (the
rating intervals under-covered the truth); with independent deals per pairing the deal is the
independent unit, and the bootstrap resamples deals (:func:`arena.evaluation.rating.outcome_units`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import islice
from operator import attrgetter
from typing import Any, Sequence

from omegaconf import MISSING

from arena.errors import ArenaError
from arena.evaluation.formats import FormatConfig, Pairing, Results, Round, drive, make_format
from arena.evaluation.rating import RatingConfig, margin_scale
from arena.evaluation.schedule import PlannedGame, Planner, submit_planned
from arena.playing.executor import ExecutorConfig, task_games


@dataclass
class TournamentConfig:
    """``arena tournament CONFIG``: a pool of agents, a format, a run directory."""

    game: str = MISSING
    agents: list[Any] = MISSING
    format: FormatConfig = field(default_factory=FormatConfig)
    seed: int = 0
    out: str = MISSING
    executor: ExecutorConfig = field(default_factory=ExecutorConfig)
    ratings: RatingConfig = field(default_factory=RatingConfig)
    timeout: float | None = None
    transcripts: bool = False
    progress: bool = True
    tensorboard: bool = True
    plots: bool = True


# -- the driver ----------------------------------------------------------------------------------
PLAN_SLICE = 8192
"""Games planned, played and committed at a time: a round of 10⁶ games holds one slice in memory."""
GC_YOUNG = 64 * PLAN_SLICE
"""The cyclic GC's youngest-generation threshold during a tournament: above the objects a plan
slice holds (its planned games, records and results, a few dozen per game), so they die before
a collection scans them (at the default 50,000 every slice set off collections over its
records: ~4% of a 10⁵-game run; the tournament makes no cyclic garbage per game)."""


class StoredGames(Sequence[Any]):
    """One pairing's games of a round, read from the store when a format looks at them (plan
    order). Why lazy: round robin never reads its results, and a format that does (Swiss,
    elimination, adaptive) reads one match at a time, so no round holds every record."""

    def __init__(self, store: Any, lo: int, hi: int) -> None:
        self.store, self.lo, self.hi = store, lo, hi

    def __len__(self) -> int:
        return self.hi - self.lo

    def __iter__(self) -> Any:
        return self.store.iter_matches(self.lo, self.hi)

    def __getitem__(self, i: Any) -> Any:
        return list(self)[i]


@dataclass
class TournamentResult:
    run_dir: str
    names: list[str]
    format_ranking: list[str]
    board: dict[str, Any]
    played: int
    """Games played by this invocation (0 when everything was already in the store)."""
    total: int


def _plain(spec: Any) -> Any:
    from omegaconf import DictConfig, ListConfig, OmegaConf

    if isinstance(spec, (DictConfig, ListConfig)):
        return OmegaConf.to_container(spec, resolve=True)
    return spec


def fingerprint_of(cfg: TournamentConfig, labels: Sequence[str]) -> str:
    """What decides the results: game, agents, format, seed, timeout (not the executor or outputs)."""
    from dataclasses import asdict

    from arena.evaluation.store import fingerprint

    return fingerprint(
        {
            "game": cfg.game,
            "agents": [_plain(a) for a in cfg.agents],
            "labels": list(labels),
            "format": asdict(cfg.format),
            "seed": cfg.seed,
            "timeout": cfg.timeout,
            "outcome": cfg.ratings.outcome,
        }
    )


def run_tournament(cfg: TournamentConfig, config_text: str | None = None, quiet: bool = False) -> TournamentResult:
    """Play (or resume) the tournament ``cfg`` into its run directory ``cfg.out`` and write the
    leaderboard files. Safe to call again after a crash: finished games are never replayed."""
    from arena.evaluation.leaderboard import RANK_KEYS, plot_payoff, plot_ratings, write_files
    from arena.evaluation.leaderboard import board as leaderboard_board
    from arena.evaluation.rating import RatingState
    from arena.evaluation.store import RunStore
    from arena.loading import dedupe_names, load_agent, load_game
    from arena.playing.executor import check_config, remember_agent
    from arena.playing.executors import make_executor
    from arena.playing.match import relaxed_gc
    from arena.reporting import TensorBoard, progress

    check_config(cfg.executor)
    if cfg.ratings.rank_by not in RANK_KEYS:
        raise ArenaError(f"ratings.rank_by must be one of {', '.join(RANK_KEYS)}, got '{cfg.ratings.rank_by}'")
    game = load_game(cfg.game)
    specs = [_plain(a) for a in cfg.agents]
    agents = [load_agent(s, game) for s in specs]
    dedupe_names(agents)
    names = [a.name for a in agents]
    game_name = game.spec.full_name
    for s, a in zip(specs, agents):
        remember_agent(game, game_name, s, a.name, a)
    spec_of = dict(zip(names, specs))
    scale = margin_scale(game, cfg.ratings.outcome)
    fmt = make_format(cfg.format, names, game.spec.num_players, cfg.seed, scale)
    fp = fingerprint_of(cfg, names)
    store = RunStore.open(cfg.out, fp, config_text, lock=True)  # one writing process a run
    with store:  # closing it releases the run lock, whatever stops the run
        store.set_meta("margin_scale", "" if scale is None else repr(scale))
        store.set_meta("agents", json.dumps(names))
        tb = TensorBoard(store.path / "tb", enabled=cfg.tensorboard)
        planner = Planner(fp, cfg.seed)
        played = 0
        rc = cfg.ratings
        state = RatingState(names, scale=scale, elo_k=rc.elo_k, openskill_model=rc.openskill_model)
        done = store.snapshot_steps("bt")
        every = max(1, rc.snapshot_every)

        snapshots: dict[int, dict[str, tuple[float, None, None, int]]] = {}
        """Snapshots not written yet: :func:`feed` writes them in one transaction (a killed run
        loses some, and its resume recomputes them from the stored games)."""

        def snapshot(step: int) -> None:
            if step in done:
                return
            done.add(step)
            rating = state.bt_ratings(names)
            games = state.games()
            snapshots[step] = {a: (rating[i], None, None, games[a]) for i, a in enumerate(names)}
            tb.scalars({f"rating/bt/{a}": rating[i] for i, a in enumerate(names)}, step)

        fresh: list[Any] = []
        """Records this invocation stored and the rating state has not seen yet (commit order)."""

        def feed(upto: int, planned: Sequence[PlannedGame] = ()) -> None:
            """Give the rating state the games up to plan position ``upto`` in plan order,
            snapshotting every ``snapshot_every`` games: ``planned`` (a slice just played) from
            the records in memory, anything else streamed from the store — each game once,
            whatever the run's length."""
            if planned and planned[0].plan_seq == state.records and len(fresh) == len(planned):
                recs: Any = sorted(fresh, key=attrgetter("plan_seq"))  # the slice's games, in plan order
            else:
                recs = store.iter_matches(state.records, upto)
            recs = iter(recs)
            while True:  # up to the next snapshot at a time: runs of games through add_all
                before = state.records
                state.add_all(islice(recs, every - before % every))
                if state.records == before:
                    break
                if state.records % every == 0:
                    snapshot(state.records)
            fresh.clear()
            write_snapshots()

        def write_snapshots() -> None:
            if snapshots:
                store.record_snapshots("bt", snapshots)
                snapshots.clear()

        from arena.registry import get_registry

        hook = get_registry().hook
        context = {
            "kind": "tournament",
            "run_id": f"tournament-{id(store)}",
            "run_dir": str(store.path),
            "total": None,
            "unit": "games",
            "tensorboard": False,
            "progress": False,
        }  # its own bar and rating curves
        hook.arena_run_started(run=context)
        with (
            make_executor(cfg.executor) as ex,
            progress(f"{game_name} {cfg.format.kind}", 0, cfg.progress and not quiet) as bar,
            relaxed_gc(young=GC_YOUNG),
        ):

            def play_slice(planned: list[PlannedGame], where: str) -> None:
                nonlocal played
                lo, hi = planned[0].plan_seq, planned[-1].plan_seq + 1  # a slice is consecutive in the plan
                now = submit_planned(
                    ex,
                    store,
                    planned,
                    spec_of,
                    game=game_name,
                    seed=cfg.seed,
                    chunk=task_games(cfg.executor),
                    timeout=cfg.timeout,
                    transcripts=cfg.transcripts,
                    context=context,
                    skip_stored=store.plan_count(lo, hi) > 0,  # a fresh slice needs no id lookups
                    on_game=(lambda g, res: bar.advance(1)) if cfg.progress and not quiet else None,
                    on_stored=fresh.extend,
                    # the first slice commits every 512 games (a killed run soon has games stored),
                    # later ones once per slice (one transaction per 8192 games)
                    commit_every=PLAN_SLICE if played else 512,
                    start=False,
                )
                now.collect(keep=False)  # the games are read back from the store (and fresh)
                played += now.played
                bar.advance(len(planned) - now.played)
                missing = len(planned) - store.plan_count(lo, hi)
                if missing:
                    raise ArenaError(f"{missing} planned games are missing from the store after {where}")

            def play(rnd: int, pairings: Round) -> Results:
                bar.add_total(sum(p.games for p in pairings))
                results: Results = []
                todo: list[PlannedGame] = []
                for p in pairings:  # planned and played a slice at a time: memory does not grow with games
                    first, left = planner.seq, p.games
                    while left:
                        take = min(left, PLAN_SLICE - len(todo))
                        todo += planner.plan(rnd, [Pairing(p.group, take)])[0]
                        left -= take
                        if len(todo) >= PLAN_SLICE:
                            play_slice(todo, f"round {rnd}")
                            feed(planner.seq, todo)
                            todo = []
                    results.append(StoredGames(store, first, planner.seq))
                if todo:
                    play_slice(todo, f"round {rnd}")
                feed(planner.seq, todo)
                if state.records:
                    snapshot(state.records)
                    write_snapshots()
                return results

            ranking = drive(fmt, play)
        store.set_meta("format_ranking", json.dumps(ranking))
        feed(planner.seq)
        board = leaderboard_board(state, bootstrap=rc.bootstrap, alpha=rc.alpha, seed=cfg.seed, rank_by=rc.rank_by)
        title = f"{game_name} — {cfg.format.kind}"
        write_files(board, store.path, title, {"format": cfg.format.kind, "format_ranking": ranking, "seed": cfg.seed})
        if cfg.plots:
            plot_payoff(board, store.path / "payoff.png")
            plot_ratings(store.snapshots("bt"), store.path / "ratings.png")
        for row in board["rows"]:
            tb.scalar(f"final/bt/{row.agent}", row.rating, state.records)
        from arena.evaluation.leaderboard import to_markdown

        tb.text("leaderboard", to_markdown(board, title), state.records)
        tb.close()
        hook.arena_run_finished(
            run=context,
            summary={"status": "finished", "games": state.records, "leaderboard_markdown": to_markdown(board, title)},
        )
        return TournamentResult(str(store.path), names, ranking, board, played, state.records)
