"""Every ``evaluation.every`` steps: the newest snapshots of learners and solvers play a gauntlet
against every earlier evaluation member (ratings, leaderboard), and the learners are measured
the same way at every evaluation (:mod:`arena.league.metrics`, one row of ``metrics.csv``)."""

from __future__ import annotations

from typing import Any

from arena.evaluation.formats import drive
from arena.evaluation.ratings.outcomes import margin_scale
from arena.evaluation.ratings.state import RatingState
from arena.evaluation.schedule import Planner, stored
from arena.league.matchmaking import newcomer_round
from arena.league.metrics import LearnerMetrics
from arena.league.population import Population
from arena.league.workspace import LeagueState, Workspace


class Evaluation:
    """The rating gauntlet and the learner metrics of one league run."""

    def __init__(self, work: Workspace, population: Population, state: LeagueState) -> None:
        self.work, self.cfg, self.game, self.population, self.state = work, work.cfg, work.game, population, state
        self.learner_metrics = LearnerMetrics(
            self.cfg.evaluation.metrics,
            self.game,
            work.fp,
            work.seed("metrics"),
            {u.label: u.members for u in population.units.values()},
        )
        self._ratings: RatingState | None = None
        """The evaluation store's rating state, fed as games are stored."""
        self._rated_upto = 0
        self.games = 0

    def evaluate(self, step: int) -> dict[str, float]:
        """Snapshot learners and solvers, then a gauntlet: newcomers against every earlier member."""
        if step in self.state.evaluated_at:
            return {}
        new = self._newcomers(step)
        names = list(self.state.eval_members) + new
        self._gauntlet(step, names, new, self.population.refs())
        self.state.eval_members = names
        self.state.evaluated_at.append(step)
        out = self._rate(step, names)
        scale = margin_scale(self.game, self.cfg.evaluation.ratings.outcome)
        self.work.store.set_meta("margin_scale", "" if scale is None else repr(scale))
        return out

    def _newcomers(self, step: int) -> list[str]:
        """Fixed members not yet rated, and a snapshot of every learner and solver now."""
        new = []
        for label, mem in self.population.members.items():
            if mem.cfg.role != "fixed":
                new.append(self.population.snapshot(step, mem))
            elif label not in self.state.eval_members:
                new.append(label)
        return new

    def _gauntlet(self, step: int, names: list[str], new: list[str], refs: dict[str, Any]) -> None:
        n, games = self.game.spec.num_players, self.cfg.evaluation.games
        if games <= 0 or len(names) < n:
            return
        seed = self.work.seed("evaluation", step)
        planner = Planner(f"{self.work.fp}|eval{step}", seed)
        planner.seq = step * 1_000_000  # plan order independent of what a crash left behind

        def play(rnd: int, pairings: Any) -> Any:
            planned = planner.plan(rnd, pairings)
            now = self.work.submit(
                "evaluation", [g for gs in planned for g in gs], refs, seed, step, start=False
            ).collect()
            self.games += len(now)
            records = stored(self.work.store, planned, f"the evaluation at step {step}")
            for rec in (r for recs in records for r in recs):
                if n == 2 and rec.seats[0] != rec.seats[1]:  # the meta-solvers' meta-game between members
                    self.population.payoff.record(rec.seats[0], rec.seats[1], rec.returns[0], rec.returns[1])
            return records

        drive(newcomer_round(names, new, games, n), play)

    def _rate(self, step: int, names: list[str]) -> dict[str, float]:
        """Bradley-Terry ratings of everyone so far, stored as this step's snapshot; the scalars of
        fixed members and of every other member's newest snapshot."""
        ratings = self.ratings(names)
        out: dict[str, float] = {}
        if ratings.records:
            fit = ratings.bradley_terry(names)
            games = ratings.games()
            self.work.store.record_snapshot(
                ratings.records, "bt", {a: (fit.rating[i], None, None, games[a]) for i, a in enumerate(names)}
            )
            for i, a in enumerate(names):
                if "@" not in a or a.endswith(f"@{step}"):
                    out[f"rating/bt/{a.split('@')[0]}"] = float(fit.rating[i])
        return out

    def ratings(self, names: list[str]) -> RatingState:
        """The evaluation games' rating state, brought up to date: only games stored since the
        last call are read (a resumed run streams the store once), so evaluating stays linear
        in the games however many steps the league runs."""
        if self._ratings is None:
            rc = self.cfg.evaluation.ratings
            self._ratings = RatingState(
                scale=margin_scale(self.game, rc.outcome), elo_k=rc.elo_k, openskill_model=rc.openskill_model
            )
        self._ratings.ensure(names)
        for rec in self.work.store.iter_matches(self._rated_upto):
            self._ratings.add(rec)
            self._rated_upto = rec.plan_seq + 1
        return self._ratings

    def measure(self, step: int, train_metrics: dict[str, float]) -> dict[str, float]:
        """Learner metrics at this step (step 0: before any training); one row of ``metrics.csv``."""
        lm = self.learner_metrics
        if not self.population.units or any(r["step"] == step for r in self.state.metrics):
            return {}
        plans = lm.plan(step)
        refs = {**self.population.refs(), **lm.opponents}
        flat = [g for _, _, games in plans for g in games]
        played = (
            self.work.submit("metrics", flat, refs, lm.seed, step, skip_stored=False, start=False).collect()
            if flat
            else []
        )
        row = lm.summarise(plans, played, {k: m.agent for k, m in self.population.members.items()})
        train = {k: v for k, v in train_metrics.items() if k.startswith("train/")}
        self.state.metrics.append({"step": step, "seconds": round(self.work.seconds(), 2), **row, **train})
        if not self.work.quiet and row:
            shown = ", ".join(f"{k} {v:.3f}" for k, v in row.items() if not k.startswith("probe/"))
            self.work.log(f"step {step:4d}  {shown}")
        return {f"metrics/{k}": v for k, v in row.items()}
