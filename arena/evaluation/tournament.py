"""The tournament driver: a format's pairings played into a run store, resumably, a slice of a
round at a time (games and deals planned by :class:`arena.evaluation.schedule.Planner`), rated as
they are stored, and reported to observers through the event hooks like every other run.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from itertools import islice
from operator import attrgetter
from typing import Any, Iterator, Sequence

from omegaconf import MISSING, DictConfig, ListConfig, OmegaConf

from arena.errors import ArenaError
from arena.evaluation.formats import SEEDED_FORMATS, FormatConfig, Pairing, Results, Round, drive, make_format
from arena.evaluation.leaderboard import RANK_KEYS, RatingConfig, plot_payoff, plot_ratings, to_markdown, write_files
from arena.evaluation.leaderboard import board as leaderboard_board
from arena.evaluation.ratings.outcomes import margin_scale
from arena.evaluation.ratings.state import RatingState
from arena.evaluation.schedule import PlannedGame, Planner, submit_planned
from arena.evaluation.store import RunStore, fingerprint
from arena.hookspecs import RunContext
from arena.loading import dedupe_names, load_agent, load_game
from arena.playing.executor import Executor, ExecutorConfig, check_config, remember_agent, task_games
from arena.playing.executors import make_executor
from arena.playing.match import relaxed_gc
from arena.registry import get_registry


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
    if isinstance(spec, (DictConfig, ListConfig)):
        return OmegaConf.to_container(spec, resolve=True)
    return spec


def fingerprint_of(cfg: TournamentConfig, labels: Sequence[str]) -> str:
    """What decides the results: game, agents, format, seed, timeout (not the executor or outputs)."""
    return fingerprint(
        {
            "game": cfg.game,
            "agents": [_plain(a) for a in cfg.agents],
            "labels": list(labels),
            "format": asdict(cfg.format),
            "seed": cfg.seed,
            "timeout": cfg.timeout,
            "outcome": cfg.ratings.outcome,
            **({"seeds": "derive_seed"} if cfg.format.kind in SEEDED_FORMATS else {}),
        }
    )


def run_tournament(cfg: TournamentConfig, config_text: str | None = None, quiet: bool = False) -> TournamentResult:
    """Play (or resume) the tournament ``cfg`` into its run directory ``cfg.out`` and write the
    leaderboard files. Safe to call again after a crash: finished games are never replayed."""
    return Tournament(cfg, config_text, quiet).run()


class Tournament:
    """One invocation of a tournament: its agents and format, then (:meth:`run`) its store and rounds."""

    store: RunStore
    state: RatingState
    context: RunContext
    executor: Executor

    def __init__(self, cfg: TournamentConfig, config_text: str | None = None, quiet: bool = False) -> None:
        check_config(cfg.executor)
        if cfg.ratings.rank_by not in RANK_KEYS:
            raise ArenaError(f"ratings.rank_by must be one of {', '.join(RANK_KEYS)}, got '{cfg.ratings.rank_by}'")
        self.cfg, self.config_text, self.quiet = cfg, config_text, quiet
        game = load_game(cfg.game)
        specs = [_plain(a) for a in cfg.agents]
        agents = [load_agent(s, game) for s in specs]
        dedupe_names(agents)
        self.names = [a.name for a in agents]
        self.game_name = game.spec.full_name
        for s, a in zip(specs, agents):
            remember_agent(game, self.game_name, s, a.name, a)
        self.spec_of = dict(zip(self.names, specs))
        self.scale = margin_scale(game, cfg.ratings.outcome)
        self.fmt = make_format(cfg.format, self.names, game.spec.num_players, cfg.seed, self.scale)
        self.fp = fingerprint_of(cfg, self.names)
        self.planner = Planner(self.fp, cfg.seed)
        self.hook = get_registry().hook
        self.played = 0
        self.every = max(1, cfg.ratings.snapshot_every)
        self.fresh: list[Any] = []
        """Records this invocation stored and the rating state has not seen yet (commit order)."""
        self.snapshots: dict[int, dict[str, tuple[float, float | None, float | None, int | None]]] = {}
        """Snapshots not written yet: :meth:`feed` writes them in one transaction (a killed run
        loses some, and its resume recomputes them from the stored games)."""

    def run(self) -> TournamentResult:
        cfg = self.cfg
        with RunStore.open(cfg.out, self.fp, self.config_text, lock=True) as store:  # one writing process a run
            self.open(store)  # closing the store releases the run lock, whatever stops the run
            self.hook.arena_run_started(run=self.context)
            try:
                with make_executor(cfg.executor) as self.executor, relaxed_gc(young=GC_YOUNG):
                    ranking = drive(self.fmt, self.play_round)
            except BaseException:
                self.hook.arena_run_finished(
                    run=self.context, summary={"status": "stopped", "games": self.state.records}
                )
                raise
            return self.finish(ranking)

    def open(self, store: RunStore) -> None:
        """The run's store, its rating state and what observers are told about the run."""
        cfg, rc = self.cfg, self.cfg.ratings
        self.store = store
        store.set_meta("margin_scale", "" if self.scale is None else repr(self.scale))
        store.set_meta("agents", json.dumps(self.names))
        self.state = RatingState(self.names, scale=self.scale, elo_k=rc.elo_k, openskill_model=rc.openskill_model)
        self.snapshot_steps = store.snapshot_steps("bt")
        run_id, show = f"tournament-{id(store)}", cfg.progress and not self.quiet
        self.context = RunContext(  # done: a resumed run's stored games are not played again
            "tournament", run_id, str(store.path), tensorboard=cfg.tensorboard, progress=show, done=store.count()
        )

    # -- playing ------------------------------------------------------------------------------
    def play_round(self, rnd: int, pairings: Round) -> Results:
        """One round of the format, planned, played and rated a slice at a time: memory does
        not grow with the games."""
        self.context = self.context.with_(total=(self.context.total or 0) + sum(p.games for p in pairings))
        self.hook.arena_run_planned(run=self.context)
        results: Results = []
        for planned in self.plan_slices(rnd, pairings, results):
            if planned:
                self.play_slice(planned, f"round {rnd}")
            self.feed(self.planner.seq, planned)
        if self.state.records:
            self.snapshot(self.state.records)
            self.write_snapshots()
        return results

    def plan_slices(self, rnd: int, pairings: Round, results: Results) -> Iterator[list[PlannedGame]]:
        """The round's games in slices of :data:`PLAN_SLICE` (the last one shorter, maybe empty);
        each pairing's games, read back from the store, join ``results`` once it is planned."""
        todo: list[PlannedGame] = []
        for p in pairings:
            first, left = self.planner.seq, p.games
            while left:
                take = min(left, PLAN_SLICE - len(todo))
                todo += self.planner.plan(rnd, [Pairing(p.group, take)])[0]
                left -= take
                if len(todo) >= PLAN_SLICE:
                    yield todo
                    todo = []
            results.append(StoredGames(self.store, first, self.planner.seq))
        yield todo

    def play_slice(self, planned: list[PlannedGame], where: str) -> None:
        """Play the slice's games the store does not hold yet and check that it holds them all."""
        cfg, store = self.cfg, self.store
        lo, hi = planned[0].plan_seq, planned[-1].plan_seq + 1  # a slice is consecutive in the plan
        now = submit_planned(
            self.executor,
            store,
            planned,
            self.spec_of,
            game=self.game_name,
            seed=cfg.seed,
            chunk=task_games(cfg.executor),
            timeout=cfg.timeout,
            transcripts=cfg.transcripts,
            context=self.context,
            skip_stored=store.plan_count(lo, hi) > 0,  # a fresh slice needs no id lookups
            on_stored=self.fresh.extend,
            # the first slice commits every 512 games (a killed run soon has games stored),
            # later ones once per slice (one transaction per 8192 games)
            commit_every=PLAN_SLICE if self.played else 512,
            start=False,
        )
        now.collect(keep=False)  # the games are read back from the store (and fresh)
        self.played += now.played
        missing = len(planned) - store.plan_count(lo, hi)
        if missing:
            raise ArenaError(f"{missing} planned games are missing from the store after {where}")

    # -- rating -------------------------------------------------------------------------------
    def feed(self, upto: int, planned: Sequence[PlannedGame] = ()) -> None:
        """Give the rating state the games up to plan position ``upto`` in plan order,
        snapshotting every ``snapshot_every`` games: ``planned`` (a slice just played) from the
        records in memory, anything else streamed from the store — each game once, whatever
        the run's length."""
        state, fresh = self.state, self.fresh
        if planned and planned[0].plan_seq == state.records and len(fresh) == len(planned):
            recs: Any = iter(sorted(fresh, key=attrgetter("plan_seq")))  # the slice's games, in plan order
        else:
            recs = self.store.iter_matches(state.records, upto)
        while True:  # up to the next snapshot at a time: runs of games through add_all
            before = state.records
            state.add_all(islice(recs, self.every - before % self.every))
            if state.records == before:
                break
            if state.records % self.every == 0:
                self.snapshot(state.records)
        fresh.clear()
        self.write_snapshots()

    def snapshot(self, step: int) -> None:
        """The Bradley–Terry ratings after ``step`` games, for the store and for observers
        (``rating/bt/AGENT``), unless the store has them from an earlier invocation."""
        if step in self.snapshot_steps:
            return
        self.snapshot_steps.add(step)
        rating, games = self.state.bt_ratings(self.names), self.state.games()
        self.snapshots[step] = {a: (rating[i], None, None, games[a]) for i, a in enumerate(self.names)}
        metrics = {f"rating/bt/{a}": float(rating[i]) for i, a in enumerate(self.names)}
        self.hook.arena_metrics_recorded(step=step, metrics=metrics, context=self.context)

    def write_snapshots(self) -> None:
        if self.snapshots:
            self.store.record_snapshots("bt", self.snapshots)
            self.snapshots.clear()

    # -- the end ------------------------------------------------------------------------------
    def finish(self, ranking: list[str]) -> TournamentResult:
        """The leaderboard of every stored game: files, plots, and the final ratings and table
        for observers."""
        cfg, store, state, rc = self.cfg, self.store, self.state, self.cfg.ratings
        store.set_meta("format_ranking", json.dumps(ranking))
        self.feed(self.planner.seq)
        board = leaderboard_board(state, bootstrap=rc.bootstrap, alpha=rc.alpha, seed=cfg.seed, rank_by=rc.rank_by)
        title = f"{self.game_name} — {cfg.format.kind}"
        write_files(board, store.path, title, {"format": cfg.format.kind, "format_ranking": ranking, "seed": cfg.seed})
        if cfg.plots:
            plot_payoff(board, store.path / "payoff.png")
            plot_ratings(store.snapshots("bt"), store.path / "ratings.png")
        finals = {f"final/bt/{row.agent}": row.rating for row in board["rows"]}
        self.hook.arena_metrics_recorded(step=state.records, metrics=finals, context=self.context)
        markdown = to_markdown(board, title)
        summary = {
            "status": "finished",
            "games": state.records,
            "step": state.records,
            "leaderboard_markdown": markdown,
        }
        self.hook.arena_run_finished(run=self.context, summary=summary)
        return TournamentResult(str(store.path), self.names, ranking, board, self.played, state.records)
