"""Training games: each step every training unit plays ``games_per_step`` games against the
opponents its matchmaking drew, through the run's executor (in-process, process pool or Ray: the
same seeds give the same trajectories on each); its trainer then updates on them.

With ``max_staleness`` k the games of the next k steps are started before this step's update,
with the weights of now, so they play while the learners update; a started rollout is saved
with each checkpoint (:meth:`RolloutJob.persist`) and played again as planned after a crash.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Any

from arena.evaluation.schedule import PlannedGame, rotated_games
from arena.league.population import Population, Unit
from arena.league.workspace import LeagueState, Workspace
from arena.playing.executor import Checkpoint


@dataclass
class RolloutJob:
    """One unit's training games of one step, planned (and possibly started) ahead of its update."""

    step: int
    unit: str
    planned: list[Any]
    counts: dict[str, int]
    seed: int
    refs: dict[str, Any]
    versions: dict[str, int]
    """Each of the unit's learners' version when the games were started (the behaviour policy)."""
    submitted: Any = None

    def persist(self) -> dict[str, Any]:
        refs = {
            k: ({"checkpoint": v.path, "version": v.version, "slot": v.slot} if isinstance(v, Checkpoint) else v)
            for k, v in self.refs.items()
        }
        return {
            "step": self.step,
            "unit": self.unit,
            "planned": [g._asdict() for g in self.planned],
            "counts": self.counts,
            "seed": self.seed,
            "refs": refs,
            "versions": self.versions,
        }

    @classmethod
    def restore(cls, d: dict[str, Any]) -> "RolloutJob":
        planned = [
            PlannedGame(
                **{
                    **g,
                    "seats": tuple(g["seats"]),
                    "rotate_from": tuple(g["rotate_from"]) if g.get("rotate_from") else None,
                }
            )
            for g in d["planned"]
        ]
        refs = {
            k: (
                Checkpoint(v["checkpoint"], int(v["version"]), v.get("slot"))
                if isinstance(v, dict) and "checkpoint" in v
                else v
            )
            for k, v in d["refs"].items()
        }
        return cls(int(d["step"]), d["unit"], planned, dict(d["counts"]), int(d["seed"]), refs, dict(d["versions"]))


class Rollouts:
    """Plans, starts and collects every unit's training games and runs its trainer's update."""

    def __init__(self, work: Workspace, population: Population, state: LeagueState) -> None:
        self.work, self.cfg, self.population, self.state = work, work.cfg, population, state
        self.inflight: dict[tuple[int, str], RolloutJob] = {}
        """Asynchronous training: started rollouts by (step, unit); those of the last commit are
        played again as planned."""
        for d in state.pending:
            job = RolloutJob.restore(d)
            self.inflight[(job.step, job.unit)] = job
        self.games = 0

    def pending(self) -> list[dict[str, Any]]:
        """The started rollouts as a checkpoint saves them."""
        return [j.persist() for _, j in sorted(self.inflight.items())]

    def plan(self, step: int, unit: Unit, refs: dict[str, Any]) -> RolloutJob:
        """This step's training games for one unit: opponents by matchmaking, ids, seats, deals."""
        n = self.work.game.spec.num_players
        members = self.population.members
        lead = members[unit.members[0]]
        if len(unit.members) > 1:  # a team: self-play among its members
            groups = {"team": [unit.members[i % len(unit.members)] for i in range(n)]}
            counts = {"team": lead.cfg.games_per_step}
        else:
            counts = self.population.opponents(step, lead)
            groups = {opp: [lead.cfg.label] + [opp] * (n - 1) for opp in sorted(counts)}
        seed = self.work.seed("train", step, unit.label)
        planned, seq = [], 0
        for opp, base in groups.items():
            pairing = f"train|{step}|{unit.label}|{opp}"
            planned += rotated_games(self.work.fp, pairing, seed, base, counts[opp], step, seq, seq)
            seq += counts[opp]
        labels = {x for g in planned for x in g.seats}
        versions = {x: self.population.versions.get(x, 0) for x in unit.members}
        return RolloutJob(
            step, unit.label, planned, counts, seed, {k: v for k, v in refs.items() if k in labels}, versions
        )

    def start(self, job: RolloutJob) -> None:
        """Hand a job's games to the executor (they play with the weights its refs name)."""
        mine = set(self.population.units[job.unit].members)

        def amend(g: Any, rec: Any) -> None:
            opp = g.pairing.rsplit("|", 1)[-1]
            rec.seats = [s + "@train" if s in mine else s for s in rec.seats]
            rec.info = dict(rec.info, learner=job.unit, opponent=opp)

        job.submitted = self.work.submit(
            "train",
            job.planned,
            job.refs,
            job.seed,
            job.step,
            trajectories=True,
            skip_stored=False,
            amend=amend,
            start=self.cfg.max_staleness > 0,
        )

    def train(self, step: int, unit: Unit, refs: dict[str, Any]) -> dict[str, float]:
        """This step's games for one unit, through the executor, then one trainer update. With
        ``max_staleness`` k the games of the next k steps are started first (with the current
        weights), so they play while this update runs."""
        for t in range(step, min(step + self.cfg.max_staleness, self.cfg.steps) + 1):
            job = self.inflight.get((t, unit.label))
            if job is None:
                job = self.inflight[(t, unit.label)] = self.plan(t, unit, refs)
            if job.submitted is None:
                self.start(job)
        job = self.inflight.pop((step, unit.label))
        played = job.submitted.collect()
        self.prune_live()
        self.games += len(played)
        self._score(unit, played)
        return self._update(step, unit, job, [r.trajectory for _, r in played])

    def _score(self, unit: Unit, played: list[tuple[Any, Any]]) -> None:
        """A lone learner's games into the payoff table (what PFSP weighs)."""
        n = self.work.game.spec.num_players
        payoff, me = self.population.payoff, unit.members[0]
        for g, r in played:
            opp = g.pairing.rsplit("|", 1)[-1]
            if opp == "team":
                continue
            mine_seat = r.seats.index(me)
            if opp != me:
                other = next(i for i, s in enumerate(r.seats) if s != me)
                payoff.update(me, opp, r.returns[mine_seat], r.returns[other])
            else:
                payoff.update(me, me, r.returns[0], r.returns[1 % n])

    def _update(self, step: int, unit: Unit, job: RolloutJob, trajectories: list[Any]) -> dict[str, float]:
        """The trainer's update on the unit's trajectories (skipped when they are too stale); the
        step's scalars: ``train/``, and a lone learner's ``matchmaking/`` shares and ``winrate/``."""
        versions = self.population.versions
        gap = versions.get(unit.members[0], 0) - job.versions.get(unit.members[0], 0)
        for tr in trajectories:
            tr.staleness = gap
        metrics: dict[str, float] = {}
        if gap <= self.cfg.max_staleness:
            out = unit.trainer.update(trajectories)
            for label in unit.members:
                versions[label] = versions.get(label, 0) + 1
        else:  # an exploiter reset since these games started: too old to learn from (they stay stored)
            out = {}
            self.work.log(
                f"step {step}: {unit.label}'s games are {gap} versions old (max_staleness "
                f"{self.cfg.max_staleness}); skipped"
            )
        if self.cfg.max_staleness > 0:
            metrics[f"train/{unit.label}/staleness"] = float(gap)
        for k, v in out.items():
            key = k if len(unit.members) > 1 else k.split("/", 1)[-1]
            metrics[f"train/{unit.label}/{key}"] = float(v)
        if len(unit.members) == 1:
            me = unit.members[0]
            games = self.population.members[me].cfg.games_per_step
            for opp, count in job.counts.items():
                metrics[f"matchmaking/{me}/{opp}"] = count / games
                metrics[f"winrate/{me}/{opp}"] = self.population.payoff.win_rate(me, opp)
        return metrics

    def prune_live(self) -> None:
        """Delete live checkpoints that no started rollout, no current ref and no rollout of the
        last commit needs any more (a crash resumes from that commit and replays its rollouts)."""
        root = self.work.run_dir / "live"
        if not root.exists():
            return
        for slot in root.iterdir():
            keep = (
                {self.population.versions.get(slot.name, 0)}
                | {
                    v.version
                    for j in self.inflight.values()
                    for v in j.refs.values()
                    if getattr(v, "slot", None) == str(slot)
                }
                | {
                    int(v["version"])
                    for d in self.state.pending
                    for v in d["refs"].values()
                    if isinstance(v, dict) and v.get("slot") == str(slot)
                }
            )
            for d in slot.glob("v*"):
                if d.is_dir() and d.name[1:].isdigit() and int(d.name[1:]) < min(keep):
                    shutil.rmtree(d, ignore_errors=True)
