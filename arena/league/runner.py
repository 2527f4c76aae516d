"""The one training loop: a population plays, learners improve, snapshots join the pool,
evaluation rates everyone, and a crash loses nothing. ``arena league``, ``arena train`` and
``arena llm-train`` all run here.

Population members have one of three roles:

- ``fixed`` — any agent spec (scripted, random, a saved policy, an LLM);
- ``solver`` — an agent with ``improve(budget)`` (PSRO, CFR, a third-party solver), called
  between steps and snapshotted for evaluation;
- ``learner`` — an agent updated by a trainer plugin (``TrainerEntry.factory(game, learners,
  **params)``, then ``update(trajectories)``). Learners sharing a ``team`` share one trainer and
  train by self-play among themselves (Advantage Alignment's pair); any agent whose plugin
  declares a ``checkpoint_param`` can be a learner.

Each step: solvers improve; every training unit (team or lone learner) plays ``games_per_step``
games against opponents drawn by its matchmaking (``self_play``, ``uniform``, ``pfsp``, or the
AlphaStar roles) through the configured executor (:mod:`arena.evaluation.schedule`: in-process, process
pool or Ray — the same seeds give the same trajectories on each); its trainer updates on them;
every ``snapshot_every`` steps a frozen copy joins the opponent pool. Every ``evaluation.every``
steps the newest snapshots play a gauntlet against every earlier evaluation member (ratings,
leaderboard) and learner metrics are measured (:mod:`arena.league.metrics`).

Crash safety: every game is committed to a run store under an id derived from the step, the
pairing and the seed (training games in ``RUN/train/``, evaluation in ``RUN/``, metrics games in
``RUN/metrics/``). After each step the learners (through :func:`arena.loading.save_checkpoint`),
their trainers' ``state_dict`` and the league state are written to ``checkpoints/step-N/`` and
only then is step N committed. A rerun of the same command loads the last committed step and
replays from there; the replay is deterministic, so re-recorded games are the same games and the
store keeps each once. Observers (TensorBoard, progress, third-party plugins) hear every event
through the hooks in :mod:`arena.hookspecs`.
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable

import numpy as np

from arena.errors import ConfigError
from arena.league.config import LeagueConfig, MemberConfig, _plain, fingerprint_of, teams, validate
from arena.league.matchmaking import PayoffTable, newcomer_round, pfsp_weights
from arena.playing.executor import task_games


@dataclass
class Member:
    cfg: MemberConfig
    spec: Any
    agent: Any
    unit: str | None = None
    """The training unit (team or own label) of a learner."""
    initial_dir: Path | None = None


@dataclass
class Unit:
    """Learners trained together by one trainer."""

    label: str
    members: list[str]
    trainer: Any


@dataclass
class LeagueState:
    step: int = 0
    snapshots: list[dict] = field(default_factory=list)
    eval_members: list[str] = field(default_factory=list)
    payoff: dict[str, list[float]] = field(default_factory=dict)
    solver_budget: dict[str, int] = field(default_factory=dict)
    evaluated_at: list[int] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    """One row per learner-metrics evaluation (``metrics.csv``)."""
    versions: dict[str, int] = field(default_factory=dict)
    """Live learners' and solvers' versions (how many times each changed)."""
    pending: list[dict[str, Any]] = field(default_factory=list)
    """Asynchronous training: rollouts planned and started for later steps (replayed on resume)."""


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
        from arena.playing.executor import Checkpoint

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
        from arena.evaluation.schedule import PlannedGame
        from arena.playing.executor import Checkpoint

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


@dataclass
class LeagueResult:
    run_dir: str
    steps_run: int
    board: dict[str, Any] | None
    train_games: int
    eval_games: int
    metrics: list[dict[str, Any]] = field(default_factory=list)
    results: dict[str, Any] | None = None
    """What ``results.json`` holds (None when no learner was measured)."""


def _existing_ancestor(path: Path) -> Path:
    """The nearest of ``path`` and its parents that exists now."""
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _remove_empty_parents(run_dir: Path, existed: Path) -> None:
    """Remove the parents of ``run_dir`` a refused start created, up to ``existed``, while they are
    empty: never a directory that existed before or that another run (a sweep's other seeds) has
    written into since."""
    path = run_dir.absolute().parent
    while path != existed and existed in path.parents:
        try:
            path.rmdir()
        except OSError:  # not empty (another run's) or already gone: stop here
            return
        path = path.parent


class League:
    """Builds the population from a validated config and runs (or resumes) it in ``cfg.out``."""

    def __init__(
        self,
        cfg: LeagueConfig,
        config_text: str | None = None,
        quiet: bool = False,
        log: Callable[[str], None] | None = None,
        kind: str = "league",
    ) -> None:
        from arena.evaluation.store import RunStore
        from arena.loading import load_game

        validate(cfg)
        self.cfg = cfg
        self.kind = kind
        self.quiet = quiet
        self.log = log or (lambda s: None)
        _torch_threads(cfg.torch_threads)
        self.game = load_game(cfg.game)  # free-text games too: agents that cannot talk forfeit those games
        self.fp = fingerprint_of(cfg)
        existed = _existing_ancestor(Path(cfg.out))
        self.store = RunStore.open(cfg.out, self.fp, config_text, kind="league", lock=True)  # one writer a run
        self.run_dir = self.store.path
        self.train_store = RunStore.open(self.run_dir / "train", self.fp, None, kind="league-train")
        self.metrics_store = RunStore.open(self.run_dir / "metrics", self.fp, None, kind="league-metrics")
        self.members: dict[str, Member] = {}
        self.units: dict[str, Unit] = {}
        self.state = LeagueState()
        self.payoff = PayoffTable(cfg.payoff_decay)
        self.snapshot_agents: dict[str, Any] = {}
        self.versions: dict[str, int] = {}
        """Live learners and solvers: how many times each changed (its rollout checkpoint version)."""
        self.saved_version: dict[str, int] = {}
        self.inflight: dict[tuple[int, str], RolloutJob] = {}
        """Asynchronous training: started rollouts by (step, unit)."""
        self.train_games = 0
        self.eval_games = 0
        self.started = time.perf_counter()
        self.run_id = uuid.uuid4().hex
        self._executor: Any = None
        self._started = self._finished = False
        self.results: dict[str, Any] | None = None
        self._ratings: Any = None
        """The evaluation store's :class:`arena.evaluation.rating.RatingState`, fed as games are stored."""
        self._rated_upto = 0
        try:
            self._build()
            self.executor()  # an unreachable cluster or impossible request fails here, before any step
        except BaseException:
            self.close()
            if self.store.created:  # an agent or trainer refused to build: leave no half-made run behind
                shutil.rmtree(self.run_dir, ignore_errors=True)
                _remove_empty_parents(self.run_dir, existed)
            raise

    # -- building ------------------------------------------------------------------------------------
    def _build(self) -> None:
        from arena.atomic import atomic_dir
        from arena.league.metrics import LearnerMetrics
        from arena.loading import load_agent, load_checkpoint
        from arena.registry import get_registry
        from arena.trainer import load_trainer_state

        committed = int(self.store.meta().get("league_step", "0"))
        ckpt = self.run_dir / "checkpoints" / f"step-{committed:06d}" if committed else None
        if ckpt is not None:
            self.state = LeagueState(**json.loads((ckpt / "state.json").read_text()))
            self.payoff.table = {k: list(v) for k, v in self.state.payoff.items()}
            self.versions = dict(self.state.versions)
            for d in self.state.pending:  # rollouts started before the crash: played again as planned
                job = RolloutJob.restore(d)
                self.inflight[(job.step, job.unit)] = job
        for m in self.cfg.population:
            spec = _plain(m.agent)
            if m.role == "learner" and ckpt is not None:
                agent = load_checkpoint(ckpt / "learners" / m.label, self.game)
            else:
                agent = load_agent(spec, self.game)
            agent.name = m.label
            mem = Member(m, spec, agent)
            if m.role == "solver":
                if not callable(getattr(agent, "improve", None)):
                    raise ConfigError(
                        f"league config: population member '{m.label}': agent "
                        f"'{_agent_name(spec)}' cannot be a solver (it has no improve(budget)); "
                        "use role: fixed"
                    )
                done = self.state.solver_budget.get(m.label, 0)
                if done:
                    getattr(agent, "improve")(done)  # deterministic replay up to the committed budget
            self.members[m.label] = mem
        reg = get_registry()
        for unit, mates in teams(self.cfg).items():
            agents = [self.members[x.label].agent for x in mates]
            spec = mates[0].trainer
            assert spec is not None  # validate() requires a trainer for every learner
            trainer = reg.get("trainer", spec.name).factory(self.game, agents, **dict(spec.params))
            if ckpt is not None:
                load_trainer_state(trainer, ckpt / "trainers" / f"{unit}.pt")
            self.units[unit] = Unit(unit, [x.label for x in mates], trainer)
            for x in mates:  # initial weights (exploiter resets), saved once the trainer is attached
                mem = self.members[x.label]
                mem.unit = unit
                mem.initial_dir = self.run_dir / "checkpoints" / "initial" / x.label
                if not mem.initial_dir.exists():
                    atomic_dir(mem.initial_dir, partial(_save, mem))
        for s in self.state.snapshots:
            self.snapshot_agents[s["label"]] = load_checkpoint(s["path"], self.game)
            self.snapshot_agents[s["label"]].name = s["label"]
        self.learner_metrics = LearnerMetrics(
            self.cfg.evaluation.metrics,
            self.game,
            self.fp,
            self.cfg.seed,
            {u.label: u.members for u in self.units.values()},
        )
        if committed:
            self.log(f"resuming from step {committed} (checkpoint {ckpt})")
        self._started = True
        self._hook().arena_run_started(run=self.context(resume_step=committed + 1 if committed else 0, done=committed))

    def context(self, **extra: Any) -> dict[str, Any]:
        """What observers are told about this run (every event carries it)."""
        return {
            "kind": self.kind,
            "run_id": self.run_id,
            "run_dir": str(self.run_dir),
            "total": self.cfg.steps,
            "unit": "steps",
            "tensorboard": self.cfg.tensorboard,
            "progress": self.cfg.progress and not self.quiet,
            **extra,
        }

    @staticmethod
    def _hook() -> Any:
        from arena.registry import get_registry

        return get_registry().hook

    # -- agents as executors see them -------------------------------------------------------------------
    def refs(self) -> dict[str, Any]:
        """Every label → what a worker plays it from: fixed members by spec, snapshots by their
        checkpoint, live learners and solvers by a checkpoint at their current version (written
        only for executors outside this process; in-process the live agent itself is used)."""
        from arena.atomic import atomic_dir
        from arena.playing.executor import Checkpoint, remember_agent

        name = self.game.spec.full_name
        out: dict[str, Any] = {}
        for label, mem in self.members.items():
            if mem.cfg.role == "fixed":
                out[label] = mem.spec
                remember_agent(self.game, name, mem.spec, label, mem.agent)
                continue
            version = self.versions.get(label, 0)
            slot = self.run_dir / "live" / label
            ref = Checkpoint(str(slot / f"v{version:06d}"), version, str(slot))
            out[label] = ref
            if self.cfg.executor.kind == "inprocess":
                remember_agent(self.game, name, ref, label, mem.agent)
            # other processes load it; an asynchronous run replays started rollouts from it after a crash
            if (self.cfg.executor.kind != "inprocess" or self.cfg.max_staleness > 0) and self.saved_version.get(
                label
            ) != version:
                if not Path(ref.path).exists():
                    atomic_dir(Path(ref.path), partial(_save, mem))
                self.saved_version[label] = version
        for s in self.state.snapshots:
            out[s["label"]] = Checkpoint(s["path"])
            remember_agent(self.game, name, out[s["label"]], s["label"], self.snapshot_agents[s["label"]])
        return out

    def executor(self) -> Any:
        if self._executor is None:
            from arena.playing.executors import make_executor

            self._executor = make_executor(self.cfg.executor)
        return self._executor

    # -- the loop ------------------------------------------------------------------------------------
    def run(self) -> LeagueResult:
        start_step = self.state.step
        if start_step == 0 and not self.state.metrics:
            self.measure(0, {})
        for step in range(start_step + 1, self.cfg.steps + 1):
            t0 = time.perf_counter()
            metrics = self.step(step)
            metrics["league/step_seconds"] = time.perf_counter() - t0
            self._hook().arena_league_step(step=step, metrics=metrics, context=self.context())
            if step % self.cfg.checkpoint_every == 0 or step == self.cfg.steps:
                self.commit(step)
        board = self.finish()
        return LeagueResult(
            str(self.run_dir),
            self.cfg.steps - start_step,
            board,
            self.train_store.count(),
            self.store.count(),
            list(self.state.metrics),
            self.results,
        )

    def step(self, step: int) -> dict[str, float]:
        metrics: dict[str, float] = {}
        for label, mem in self.members.items():
            if mem.cfg.role == "solver":
                out = mem.agent.improve(mem.cfg.budget)
                self.versions[label] = self.versions.get(label, 0) + 1
                self.state.solver_budget[label] = self.state.solver_budget.get(label, 0) + mem.cfg.budget
                metrics.update({f"solver/{label}/{k}": float(v) for k, v in (out or {}).items()})
        refs = self.refs()
        updates = {u: self.train(step, unit, refs) for u, unit in self.units.items()}
        for out in updates.values():
            metrics.update(out)
        for label, mem in self.members.items():
            if mem.cfg.role == "learner" and step % mem.cfg.snapshot_every == 0:
                self.snapshot(step, mem)
                self.maybe_reset(step, mem)
        if step % self.cfg.evaluation.every == 0 or step == self.cfg.steps:
            metrics.update(self.evaluate(step))
            metrics.update(self.measure(step, metrics))
        self.state.step = step
        return metrics

    # -- training ------------------------------------------------------------------------------------
    def pool(self, mem: MemberConfig) -> list[str]:
        """Labels of every opponent this learner may face now (current self excluded)."""
        from arena.league.config import opponent_labels

        out = []
        for lbl in opponent_labels(self.cfg, mem):
            other = self.members[lbl]
            if other.cfg.role == "learner":
                out += [s["label"] for s in self.state.snapshots if s["member"] == lbl]
            else:
                out.append(lbl)
        return out

    def choose(self, step: int, mem: Member, rng: np.random.Generator) -> list[str]:
        """One opponent label per game of this step (AlphaStar's rules for its roles)."""
        c = mem.cfg
        me = c.label
        pool = self.pool(c)
        snaps = lambda who: [s["label"] for s in self.state.snapshots if s["member"] == who]  # noqa: E731
        main = c.main or next((m.label for m in self.cfg.population if m.matchmaking == "main"), None)

        def pfsp(cands: list[str], weighting: str) -> str:
            w = pfsp_weights([self.payoff.win_rate(me, lbl) for lbl in cands], weighting)
            return cands[int(rng.choice(len(cands), p=w))]

        picks = []
        for _ in range(c.games_per_step):
            if c.matchmaking == "self_play" or (c.self_play and rng.random() < c.self_play) or not pool:
                picks.append(me)
                continue
            if c.matchmaking == "uniform":
                picks.append(pool[int(rng.integers(len(pool)))])
            elif c.matchmaking == "pfsp":
                picks.append(pfsp(pool, c.weighting))
            elif c.matchmaking == "league_exploiter":
                picks.append(pfsp(pool, "linear_capped"))
            elif c.matchmaking == "main_exploiter":
                assert main is not None
                if self.payoff.win_rate(me, main) > 0.1 or not snaps(main):
                    picks.append(main)
                else:
                    picks.append(pfsp(snaps(main), "var"))
            else:  # main
                coin = rng.random()
                exploiters = [
                    s for m in self.cfg.population if m.matchmaking == "main_exploiter" for s in snaps(m.label)
                ]
                if coin < 0.5:
                    picks.append(pfsp(pool, "squared"))
                elif coin < 0.65 and exploiters and min(self.payoff.win_rate(me, lbl) for lbl in exploiters) < 0.3:
                    picks.append(pfsp(exploiters, "squared"))
                elif self.payoff.win_rate(me, me) > 0.3 or not snaps(me):
                    picks.append(me)
                else:
                    picks.append(pfsp(snaps(me), "var"))
        return picks

    def plan(self, step: int, unit: Unit, refs: dict[str, Any]) -> RolloutJob:
        """This step's training games for one unit: opponents by matchmaking, ids, seats, deals."""
        from arena.evaluation.schedule import rotated_games

        n = self.game.spec.num_players
        lead = self.members[unit.members[0]]
        if len(unit.members) > 1:  # a team: self-play among its members
            groups = {"team": [unit.members[i % len(unit.members)] for i in range(n)]}
            counts = {"team": lead.cfg.games_per_step}
        else:
            me = lead.cfg.label
            rng = np.random.default_rng([self.cfg.seed & 0xFFFFFFFF, step, list(self.members).index(me)])
            counts = {}
            for opp in self.choose(step, lead, rng):
                counts[opp] = counts.get(opp, 0) + 1
            groups = {opp: [me] + [opp] * (n - 1) for opp in sorted(counts)}
        seed = self.cfg.seed * 1_000_003 + step + 7_919 * list(self.units).index(unit.label)
        planned, seq = [], 0
        for opp, base in groups.items():
            planned += rotated_games(
                self.fp, f"train|{step}|{unit.label}|{opp}", seed, base, counts[opp], step, seq, seq
            )
            seq += counts[opp]
        labels = {x for g in planned for x in g.seats}
        return RolloutJob(
            step,
            unit.label,
            planned,
            counts,
            seed,
            {k: v for k, v in refs.items() if k in labels},
            {x: self.versions.get(x, 0) for x in unit.members},
        )

    def start(self, job: RolloutJob) -> None:
        """Hand a job's games to the executor (they play with the weights its refs name)."""
        from arena.evaluation.schedule import submit_planned

        mine = set(self.units[job.unit].members)

        def amend(g: Any, rec: Any) -> None:
            opp = g.pairing.rsplit("|", 1)[-1]
            rec.seats = [s + "@train" if s in mine else s for s in rec.seats]
            rec.info = dict(rec.info, learner=job.unit, opponent=opp)

        job.submitted = submit_planned(
            self.executor(),
            self.train_store,
            job.planned,
            job.refs,
            game=self.game.spec.full_name,
            seed=job.seed,
            chunk=task_games(self.cfg.executor),
            trajectories=True,
            skip_stored=False,
            context=self.context(store="train", step=job.step),
            amend=amend,
            start=self.cfg.max_staleness > 0,
        )

    def train(self, step: int, unit: Unit, refs: dict[str, Any]) -> dict[str, float]:
        """This step's games for one unit, through the executor, then one trainer update. With
        ``max_staleness`` k the games of the next k steps are started first (with the current
        weights), so they play while this update runs."""
        n = self.game.spec.num_players
        lead = self.members[unit.members[0]]
        for t in range(step, min(step + self.cfg.max_staleness, self.cfg.steps) + 1):
            job = self.inflight.get((t, unit.label))
            if job is None:
                job = self.inflight[(t, unit.label)] = self.plan(t, unit, refs)
            if job.submitted is None:
                self.start(job)
        job = self.inflight.pop((step, unit.label))
        counts = job.counts
        played = job.submitted.collect()
        self._prune_live()
        self.train_games += len(played)
        for g, r in played:
            opp = g.pairing.rsplit("|", 1)[-1]
            if opp == "team":
                continue
            me = unit.members[0]
            mine_seat = r.seats.index(me)
            if opp != me:
                other = next(i for i, s in enumerate(r.seats) if s != me)
                self.payoff.update(me, opp, r.returns[mine_seat], r.returns[other])
            else:
                self.payoff.update(me, me, r.returns[0], r.returns[1 % n])
        gap = self.versions.get(unit.members[0], 0) - job.versions.get(unit.members[0], 0)
        trajectories = [r.trajectory for _, r in played]
        for tr in trajectories:
            tr.staleness = gap
        metrics: dict[str, float] = {}
        if gap <= self.cfg.max_staleness:
            out = unit.trainer.update(trajectories)
            for label in unit.members:
                self.versions[label] = self.versions.get(label, 0) + 1
        else:  # an exploiter reset since these games started: too old to learn from (they stay stored)
            out = {}
            self.log(
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
            for opp, count in counts.items():
                metrics[f"matchmaking/{me}/{opp}"] = count / lead.cfg.games_per_step
                metrics[f"winrate/{me}/{opp}"] = self.payoff.win_rate(me, opp)
        return metrics

    def _prune_live(self) -> None:
        """Delete live checkpoints that no started rollout, no current ref and no rollout of the
        last commit needs any more (a crash resumes from that commit and replays its rollouts)."""
        root = self.run_dir / "live"
        if not root.exists():
            return
        for slot in root.iterdir():
            keep = (
                {self.versions.get(slot.name, 0)}
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

    # -- snapshots -------------------------------------------------------------------------------------
    def snapshot(self, step: int, mem: Member) -> str:
        from arena.atomic import atomic_dir
        from arena.loading import load_checkpoint

        label = f"{mem.cfg.label}@{step}"
        path = self.run_dir / "snapshots" / label
        if not path.exists():
            atomic_dir(path, partial(_save, mem))
        if not any(s["label"] == label for s in self.state.snapshots):
            self.state.snapshots.append({"label": label, "member": mem.cfg.label, "step": step, "path": str(path)})
        if label not in self.snapshot_agents:
            agent = load_checkpoint(path, self.game)
            agent.name = label
            self.snapshot_agents[label] = agent
        return label

    def maybe_reset(self, step: int, mem: Member) -> None:
        """AlphaStar: a main exploiter restarts from its initial weights at every snapshot, a league
        exploiter with probability 0.25."""
        from arena.loading import load_checkpoint
        from arena.registry import get_registry

        c = mem.cfg
        if c.matchmaking not in ("main_exploiter", "league_exploiter"):
            return
        rng = np.random.default_rng([self.cfg.seed & 0xFFFFFFFF, step, 99])
        if c.matchmaking == "league_exploiter" and rng.random() >= 0.25:
            return
        assert mem.initial_dir is not None and mem.unit is not None
        mem.agent = load_checkpoint(mem.initial_dir, self.game)
        mem.agent.name = c.label
        unit = self.units[mem.unit]
        assert c.trainer is not None
        unit.trainer = (
            get_registry().get("trainer", c.trainer.name).factory(self.game, [mem.agent], **dict(c.trainer.params))
        )
        self.versions[c.label] = self.versions.get(c.label, 0) + 1

    # -- evaluation -----------------------------------------------------------------------------------
    def evaluate(self, step: int) -> dict[str, float]:
        """Snapshot learners and solvers, then a gauntlet: newcomers against every earlier member."""
        from arena.evaluation.formats import drive
        from arena.evaluation.rating import margin_scale
        from arena.evaluation.schedule import Planner, stored, submit_planned

        if step in self.state.evaluated_at:
            return {}
        new: list[str] = []
        for label, mem in self.members.items():
            if mem.cfg.role == "fixed":
                if label not in self.state.eval_members:
                    new.append(label)
                continue
            new.append(self.snapshot(step, mem))
        old = list(self.state.eval_members)
        names = old + new
        refs = self.refs()
        scale = margin_scale(self.game, self.cfg.evaluation.ratings.outcome)
        if self.cfg.evaluation.games > 0 and len(names) >= self.game.spec.num_players:
            fmt = newcomer_round(names, new, self.cfg.evaluation.games, self.game.spec.num_players)
            planner = Planner(f"{self.fp}|eval{step}", self.cfg.seed)
            planner.seq = step * 1_000_000  # plan order independent of what a crash left behind

            def play(rnd: int, pairings: Any) -> Any:
                planned = planner.plan(rnd, pairings)
                now = submit_planned(
                    self.executor(),
                    self.store,
                    [g for gs in planned for g in gs],
                    refs,
                    game=self.game.spec.full_name,
                    seed=self.cfg.seed,
                    chunk=task_games(self.cfg.executor),
                    context=self.context(store="evaluation", step=step),
                    start=False,
                ).collect()
                self.eval_games += len(now)
                return stored(self.store, planned, f"the evaluation at step {step}")

            drive(fmt, play)
        self.state.eval_members = names
        self.state.evaluated_at.append(step)
        ratings = self.ratings(names)
        out: dict[str, float] = {}
        if ratings.records:
            fit = ratings.bradley_terry(names)
            games = ratings.games()
            self.store.record_snapshot(
                ratings.records, "bt", {a: (fit.rating[i], None, None, games[a]) for i, a in enumerate(names)}
            )
            for i, a in enumerate(names):  # fixed members, and every other member's newest snapshot
                if "@" not in a or a.endswith(f"@{step}"):
                    out[f"rating/bt/{a.split('@')[0]}"] = float(fit.rating[i])
        self.store.set_meta("margin_scale", "" if scale is None else repr(scale))
        return out

    def ratings(self, names: list[str]) -> Any:
        """The evaluation games' rating state, brought up to date: only games stored since the
        last call are read (a resumed run streams the store once), so evaluating stays linear
        in the games however many steps the league runs."""
        from arena.evaluation.rating import RatingState, margin_scale

        if self._ratings is None:
            rc = self.cfg.evaluation.ratings
            self._ratings = RatingState(
                scale=margin_scale(self.game, rc.outcome), elo_k=rc.elo_k, openskill_model=rc.openskill_model
            )
        self._ratings.ensure(names)
        for rec in self.store.iter_matches(self._rated_upto):
            self._ratings.add(rec)
            self._rated_upto = rec.plan_seq + 1
        return self._ratings

    def measure(self, step: int, train_metrics: dict[str, float]) -> dict[str, float]:
        """Learner metrics at this step (step 0: before any training); one row of ``metrics.csv``."""
        from arena.evaluation.schedule import submit_planned

        lm = self.learner_metrics
        if not self.units or any(r["step"] == step for r in self.state.metrics):
            return {}
        plans = lm.plan(step)
        refs = self.refs()
        for label, spec in lm.opponents.items():
            refs[label] = spec
        flat = [g for _, _, games in plans for g in games]
        played = (
            submit_planned(
                self.executor(),
                self.metrics_store,
                flat,
                refs,
                game=self.game.spec.full_name,
                seed=lm.seed,
                chunk=task_games(self.cfg.executor),
                skip_stored=False,
                context=self.context(store="metrics", step=step),
                start=False,
            ).collect()
            if flat
            else []
        )
        row = lm.summarise(plans, played, {k: m.agent for k, m in self.members.items()})
        self.state.metrics.append(
            {
                "step": step,
                "seconds": round(time.perf_counter() - self.started, 2),
                **row,
                **{k: v for k, v in train_metrics.items() if k.startswith("train/")},
            }
        )
        if not self.quiet and row:
            shown = ", ".join(f"{k} {v:.3f}" for k, v in row.items() if not k.startswith("probe/"))
            self.log(f"step {step:4d}  {shown}")
        return {f"metrics/{k}": v for k, v in row.items()}

    # -- checkpoints ---------------------------------------------------------------------------------
    def commit(self, step: int) -> None:
        """Learners, trainer states and the league state, then the commit mark."""
        from arena.atomic import atomic_dir
        from arena.loading import save_checkpoint
        from arena.trainer import save_trainer_state

        self.state.payoff = self.payoff.table
        self.state.versions = dict(self.versions)
        self.state.pending = [j.persist() for _, j in sorted(self.inflight.items())]
        base = self.run_dir / "checkpoints"
        final = base / f"step-{step:06d}"

        def write(d: Path) -> None:
            for label, mem in self.members.items():
                if mem.cfg.role == "learner":
                    save_checkpoint(mem.agent, d / "learners" / label, mem.spec)
            for u, unit in self.units.items():
                save_trainer_state(unit.trainer, d / "trainers" / f"{u}.pt")
            (d / "state.json").write_text(json.dumps(asdict(self.state), default=float))

        atomic_dir(final, write)
        self.store.set_meta("league_step", str(step))
        kept = sorted(p for p in base.glob("step-*") if p.is_dir())
        for old in kept[: -max(1, self.cfg.keep_checkpoints)]:
            shutil.rmtree(old, ignore_errors=True)
        self._hook().arena_checkpoint_written(path=str(final), agent="league", context=self.context(step=step))

    def finish(self) -> dict[str, Any] | None:
        """Leaderboard, metrics files and plots from what the stores hold."""
        from arena.atomic import write_json_atomic
        from arena.evaluation.leaderboard import board as leaderboard
        from arena.evaluation.leaderboard import plot_payoff, plot_ratings, to_markdown, write_files
        from arena.experiments.provenance import provenance
        from arena.league.metrics import plot_curves, write_csv

        title = f"{self.game.spec.full_name} — {self.kind}"
        rows = self.state.metrics
        if rows:
            write_csv(self.run_dir / "metrics.csv", rows)
            self.results = {
                "game": self.game.spec.full_name,
                "seed": self.cfg.seed,
                "steps": self.state.step,
                "seconds": round(time.perf_counter() - self.started, 1),
                "first": rows[0],
                "final": rows[-1],
                "environment": provenance(),
            }
            write_json_atomic(self.run_dir / "results.json", self.results, indent=2, default=float)
            if self.cfg.plots:
                plot_curves(self.run_dir / "curves.png", rows, title)
        ratings = self.ratings(list(self.state.eval_members))
        board = None
        if ratings.records:
            rc = self.cfg.evaluation.ratings
            board = leaderboard(ratings, bootstrap=rc.bootstrap, alpha=rc.alpha, seed=self.cfg.seed, rank_by=rc.rank_by)
            write_files(board, self.run_dir, title, {"steps": self.state.step, "seed": self.cfg.seed})
            if self.cfg.plots:
                plot_payoff(board, self.run_dir / "payoff.png")
                plot_ratings(self.store.snapshots("bt"), self.run_dir / "ratings.png")
        summary = {
            "leaderboard_markdown": to_markdown(board, title) if board else None,
            "step": self.state.step,
            "final_metrics": rows[-1] if rows else None,
        }
        self._finished = True
        self._hook().arena_run_finished(run=self.context(), summary=dict(summary, status="finished"))
        if self.cfg.plots:
            self.plot_training()
        return board

    def plot_training(self) -> None:
        """``training.png``: solver exploitability and learner return curves, from TensorBoard."""
        from arena.evaluation.leaderboard import _pyplot
        from arena.reporting import read_scalars

        tb = self.run_dir / "tb"
        if not tb.exists():
            return
        scalars = read_scalars(tb)
        keys = [k for k in scalars if k.startswith("solver/") and k.endswith("exploitability")]
        keys += [k for k in scalars if k.startswith("train/") and k.endswith("/return")]
        if not keys:
            return
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(7, 4))
        for k in keys:
            pts = sorted(scalars[k])
            ax.plot([s for s, _ in pts], [v for _, v in pts], marker="o", markersize=3, label=k)
        ax.set_xlabel("league step")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(self.run_dir / "training.png", dpi=100)
        plt.close(fig)

    def close(self) -> None:
        if self._started and not self._finished:
            self._finished = True  # observers close what they opened for this run (it stopped early)
            self._hook().arena_run_finished(run=self.context(), summary={"status": "stopped", "step": self.state.step})
        if self._executor is not None:
            self._executor.close()
            self._executor = None
        self.store.close()
        self.train_store.close()
        self.metrics_store.close()


def _save(mem: Member, directory: Path) -> None:
    from arena.loading import save_checkpoint

    save_checkpoint(mem.agent, directory, mem.spec)


def _agent_name(spec: Any) -> str:
    from arena.loading import parse_agent_spec

    return parse_agent_spec(spec)[0]


def _torch_threads(n: int) -> None:
    if n > 0:
        try:
            import torch
        except ImportError:
            return
        torch.set_num_threads(n)


def run_league(
    cfg: LeagueConfig,
    config_text: str | None = None,
    quiet: bool = False,
    log: Callable[[str], None] | None = None,
    kind: str = "league",
) -> LeagueResult:
    league = League(cfg, config_text, quiet, log, kind)
    try:
        return league.run()
    finally:
        league.close()
