"""From planned games to stored games: plan → skip stored → group by seats → tasks → record.

Tournaments, league evaluation, league training rollouts and learner metrics all play games
the same way, so they share this one path: every game has a stable id (from the run, the
pairing, the seed and its number within the pairing), a seating and a deal; games an earlier
(crashed) invocation already stored are skipped (or, for training, replayed and not stored
twice); the rest are grouped by seating into :class:`~arena.playing.executor.GameTask` chunks for
whichever executor runs them; finished games are committed to the run store in batches
(:meth:`arena.evaluation.store.RunStore.batch`) and each stored game is announced to observers
(``arena_match_finished``) exactly once, after its batch commits.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple, Sequence

from arena.errors import ArenaError
from arena.evaluation.decisions import decision_rows
from arena.evaluation.store import MatchRecord, RunStore, match_id, match_ids
from arena.hookspecs import RunContext
from arena.playing.executor import Executor, GameTask
from arena.registry import event_caller, get_registry


class PlannedGame(NamedTuple):
    """One game of a plan. A named tuple, not a frozen dataclass: a tournament plans one per
    game, and a frozen dataclass's ``__init__`` cost more than the rest of planning."""

    id: str
    plan_seq: int
    round: int
    pairing: str
    seats: tuple[str, ...]
    deal: int
    rotate_from: tuple[str, ...] | None = None
    """Set when the game is one of a rotated series over this base seating: it then shares a
    task with the series (one batch, as :func:`arena.playing.match.play_games` with ``rotate_seats``)."""


class Planner:
    """Turns pairings into games with stable ids: game ``k`` of a group (counted over the whole
    run) seats the group rotated by ``k mod n`` and plays the group's ``k div n``-th deal
    (duplicate style: seats swap with identical cards), a deal number no other group uses
    (numbered in plan order, so a resumed run plans the same deals).

    Why no shared deals: were deal ``d`` the same for every pairing, the errors of all pairings
    would be correlated and no bootstrap over games could see it (the rating intervals
    under-covered the truth); with independent deals per pairing the deal is the independent
    unit, and the bootstrap resamples deals (:func:`arena.evaluation.ratings.outcomes.outcome_units`)."""

    def __init__(self, run: str, seed: int) -> None:
        self.run, self.seed = run, seed
        self.counters: dict[tuple[str, ...], int] = {}
        self.last_deal: dict[tuple[str, ...], tuple[int, int]] = {}
        """Per group, its newest ``(k div n, deal)``: game numbers only grow, so only the newest
        deal of a group can still have seat rotations to play (memory per group, not per game)."""
        self.num_deals = 0
        self.seq = 0

    def plan(self, rnd: int, pairings: Sequence[Any]) -> list[list[PlannedGame]]:
        out = []
        for p in pairings:
            n = len(p.group)
            key = "|".join(p.group)
            start = self.counters.get(p.group, 0)
            rotations = [tuple(p.group[(s + r) % n] for s in range(n)) for r in range(n)]
            ids = match_ids(self.run, key, self.seed, range(start, start + p.games))
            q, deal = self.last_deal.get(p.group, (-1, 0))
            games = []
            seq = self.seq
            new = tuple.__new__  # PlannedGame(...) without its Python-level __new__ (all 7 fields given)
            for mid, k in zip(ids, range(start, start + p.games)):
                if q != k // n:
                    q, deal, self.num_deals = k // n, self.num_deals, self.num_deals + 1
                games.append(new(PlannedGame, (mid, seq, rnd, key, rotations[k % n], deal, None)))
                seq += 1
            if p.games:
                self.last_deal[p.group] = (q, deal)
            self.seq = seq
            self.counters[p.group] = start + p.games
            out.append(games)
        return out


def rotated_games(
    run: str, pairing: str, seed: int, base: Sequence[str], count: int, rnd: int, seq: int = 0, deal0: int = 0
) -> list[PlannedGame]:
    """``count`` games of one seating, rotated every game, each with its own deal (training:
    as many distinct deals as games); deals are numbered from ``deal0``."""
    n = len(base)
    return [
        PlannedGame(
            match_id(run, pairing, seed, k),
            seq + k,
            rnd,
            pairing,
            tuple(base[(s + deal0 + k) % n] for s in range(n)),
            deal0 + k,
            tuple(base),
        )
        for k in range(count)
    ]


def tasks_for(
    games: Sequence[PlannedGame],
    agents: Mapping[str, Any],
    game: str,
    seed: int,
    chunk: int,
    timeout: float | None = None,
    transcripts: bool = False,
    trajectories: bool = False,
) -> list[GameTask]:
    """Group games by seating and cut them into tasks of at most ``chunk`` games; ``agents`` maps
    each label to its spec (or :class:`~arena.playing.executor.Checkpoint`)."""
    by_seats: dict[tuple[tuple[str, ...], bool], list[PlannedGame]] = {}
    for g in games:
        by_seats.setdefault((g.rotate_from or g.seats, g.rotate_from is not None), []).append(g)
    tasks = []
    step = max(1, chunk)
    for (seats, rotate), gs in by_seats.items():
        for i in range(0, len(gs), step):
            part = gs[i : i + step]
            tasks.append(
                GameTask(
                    game,
                    tuple(agents[a] for a in seats),
                    seats,
                    seed,
                    tuple(g.deal for g in part),
                    timeout,
                    transcripts,
                    {g.deal: g for g in part},
                    trajectories,
                    rotate,
                )
            )
    return tasks


class Submitted:
    """Planned games handed to an executor (:func:`submit_planned`); ``collect`` waits for them,
    records each in the store (once, in batched commits) and returns them in plan order."""

    def __init__(
        self,
        executor: Executor,
        tasks: list[GameTask],
        start: bool,
        store: RunStore,
        game: str,
        transcripts: bool,
        context: RunContext,
        amend: Callable[[PlannedGame, MatchRecord], None] | None,
        on_game: Callable[[PlannedGame, Any], None] | None,
        commit_every: int = 512,
        on_stored: Callable[[list[MatchRecord]], None] | None = None,
    ) -> None:
        self.executor, self.tasks, self.store, self.game = executor, tasks, store, game
        self.pending = executor.submit(tasks) if start else None
        """None: played when collected, each game handed over as it finishes (``Executor.run``)."""
        self.transcripts, self.amend, self.on_game = transcripts, amend, on_game
        self.commit_every, self.on_stored = commit_every, on_stored
        self.ctx = context.with_(run_dir=str(store.path))
        self.played = 0
        """Games played by :meth:`collect`."""

    def collect(self, keep: bool = True) -> list[tuple[PlannedGame, Any]]:
        """Play (or wait for) the games, record them, and return ``(game, result)`` for each in
        plan order — or, with ``keep=False``, nothing (a caller that reads the store needs no
        per-game list); :attr:`played` counts them either way."""
        hook = get_registry().hook
        finished = event_caller(hook.arena_match_finished)  # None: no per-game event to build
        batch_finished = event_caller(hook.arena_matches_finished)
        played: list[tuple[PlannedGame, Any]] = []
        waiting: list[tuple[PlannedGame, Any]] = []  # staged, not yet committed: observers wait
        ctx, on_stored = self.ctx, self.on_stored

        def announce(records: list[MatchRecord]) -> None:
            if on_stored is not None:
                on_stored(records)
            if len(records) == len(waiting):  # every staged game was new
                done = waiting[:]
            else:  # some were in the store already (another process, a resume): not announced
                ids = {r.id for r in records}
                done = [x for x in waiting if x[0].id in ids]
            waiting.clear()
            if finished is not None:
                by_id = {g.id: (g, res) for g, res in done}
                for rec in records:  # commit order, as the store gives them
                    g, res = by_id[rec.id]
                    finished(result=res, context=ctx.with_(match_id=g.id, pairing=g.pairing, round=g.round))
            if batch_finished is not None:
                batch_finished(results=[res for _, res in done], context=ctx)

        record, from_result, game, amend, on_game = (
            self.store.record_match,
            MatchRecord.from_result,
            self.game,
            self.amend,
            self.on_game,
        )
        transcripts = self.transcripts

        def on_result(task: GameTask, res: Any) -> None:
            g = task.key[res.index]
            rec = from_result(res, id=g.id, pairing=g.pairing, game=game, plan_seq=g.plan_seq, round=g.round)
            if amend is not None:
                amend(g, rec)
            waiting.append((g, res))  # before staging: staging may commit (and announce) at once
            lines = res.transcript if transcripts else None
            rows = decision_rows(res.trajectory)  # an LLM's decisions, kept beside the game
            if not (record(rec, lines, rows) if rows else record(rec, lines)):
                waiting.pop()  # staged already: refused, nothing committed
            if on_game is not None:
                on_game(g, res)
            if keep:
                played.append((g, res))
            else:
                self.played += 1

        with self.store.batch(self.commit_every, on_commit=announce):
            if self.pending is None:
                self.executor.run(self.tasks, on_result)
            else:
                self.executor.collect(self.pending, on_result)
        if keep:
            self.played = len(played)
            played.sort(key=lambda x: x[0].plan_seq)
        return played


def submit_planned(
    executor: Executor,
    store: RunStore,
    games: Sequence[PlannedGame],
    agents: Mapping[str, Any],
    *,
    context: RunContext,
    game: str,
    seed: int,
    chunk: int = 64,
    timeout: float | None = None,
    transcripts: bool = False,
    trajectories: bool = False,
    skip_stored: bool = True,
    amend: Callable[[PlannedGame, MatchRecord], None] | None = None,
    on_game: Callable[[PlannedGame, Any], None] | None = None,
    start: bool = True,
    commit_every: int = 512,
    on_stored: Callable[[list[MatchRecord]], None] | None = None,
) -> Submitted:
    """Hand ``games`` to ``executor``; ``.collect()`` records them in ``store`` and returns
    ``(game, result)`` for the games played now, in plan order (so what follows never depends on
    which worker finished first). With ``start`` the games start at once and play while the
    caller works (asynchronous rollouts; the agents are the ones ``agents`` names now); without
    it they are played by ``collect``, each handed over as it finishes.

    ``skip_stored=False`` replays stored games too (training needs their trajectories after a
    resume); the store still keeps each game once and observers hear of it once. ``amend``
    edits a record before it is stored (e.g. training's seat labels). Games are committed
    ``commit_every`` at a time (and when play ends, also by an exception); observers hear of a
    game after its commit, and ``on_stored(records)`` receives what each commit stored."""
    have = store.existing_ids([g.id for g in games]) if skip_stored else set()
    todo = [g for g in games if g.id not in have]
    tasks = tasks_for(todo, agents, game, seed, chunk, timeout, transcripts, trajectories)
    return Submitted(executor, tasks, start, store, game, transcripts, context, amend, on_game, commit_every, on_stored)


def stored(store: RunStore, planned: Sequence[Sequence[PlannedGame]], where: str) -> list[list[Any]]:
    """The stored records of planned games, per pairing; a missing one is an error (never silently dropped)."""
    by_id = store.records_by_id([g.id for games in planned for g in games])
    missing = [g.id for games in planned for g in games if g.id not in by_id]
    if missing:
        raise ArenaError(f"{len(missing)} planned games are missing from the store after {where}")
    return [[by_id[g.id] for g in games] for games in planned]
