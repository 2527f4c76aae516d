"""League training from one YAML config: a population plays, learners improve, snapshots join the
pool, evaluation tournaments rate everyone, and a crash loses nothing.

Population members have one of three roles:

- ``fixed`` — any agent spec (scripted, random, a saved policy, a CFR solution);
- ``solver`` — an agent that improves with budget between steps (``psro``: more PSRO
  iterations; ``cfr``: more CFR iterations), snapshotted for evaluation;
- ``learner`` — an agent updated by a trainer plugin through the trainer contract
  (``TrainerEntry.factory(game, [learner], **params)``, then ``update(trajectories)``).

Each league step: solvers improve; every learner plays ``games_per_step`` games against
opponents drawn by its matchmaking (``self_play``, ``uniform``, ``pfsp`` with the AlphaStar
weightings, or the AlphaStar roles ``main`` / ``main_exploiter`` / ``league_exploiter``) from
a payoff table of decayed win rates (``shared/papers/ranking_league.md`` §5); the trainer
updates it on the recorded trajectories; every ``snapshot_every`` steps a frozen copy joins
the opponent pool. Every ``evaluation.every`` steps the newest snapshots play a gauntlet
(:mod:`arena.tournament`) against every earlier evaluation member; ratings come from
:mod:`arena.rating` and the leaderboard and plots from :mod:`arena.leaderboard`.

Crash safety: every game is committed to a run store under an id derived from the step, the
pairing and the seed (training games in ``RUN/train/``, evaluation games in ``RUN/``). After each
step the learners' weights, their trainers' optimizer state and the league state are written to
``checkpoints/step-N/`` and only then is step N committed in the store's meta table. A rerun of
the same command loads the last committed step and replays from there; the replay is
deterministic (same weights, same seeds, same matchmaking state), so re-recorded games are the
same games and the store ignores them — none lost, none counted twice. TensorBoard gets a
``SessionLog.START`` at the resume step, so events written after the last commit are discarded.
"""
from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from arena.errors import ArenaError, ConfigError
from arena.league_checkpoint import _atomic_dir, load_trainer_state, save_trainer_state
from arena.league_config import LOAD_PARAM, LeagueConfig, MemberConfig, _plain, fingerprint_of, validate
from arena.matchmaking import PayoffTable, newcomer_round, opponent_labels, pfsp_weights


# -- the league --------------------------------------------------------------------------------------------
@dataclass
class Member:
    cfg: MemberConfig
    spec: Any
    agent: Any
    base: str
    """The agent plugin name (``neural``, ``psro``, ...)."""
    trainer: Any = None
    improver: Callable[[int], dict[str, float]] | None = None
    initial_dir: Path | None = None


@dataclass
class Snapshot:
    label: str
    member: str
    step: int
    path: str
    spec: Any


@dataclass
class LeagueState:
    step: int = 0
    snapshots: list[dict] = field(default_factory=list)
    eval_members: list[str] = field(default_factory=list)
    payoff: dict[str, list[float]] = field(default_factory=dict)
    solver_budget: dict[str, int] = field(default_factory=dict)
    evaluated_at: list[int] = field(default_factory=list)


@dataclass
class LeagueResult:
    run_dir: str
    steps_run: int
    board: dict[str, Any] | None
    train_games: int
    eval_games: int


class League:
    """Builds the population from a validated config and runs (or resumes) it in ``cfg.out``."""

    def __init__(self, cfg: LeagueConfig, config_text: str | None = None, quiet: bool = False,
                 log: Callable[[str], None] | None = None) -> None:
        from arena.loading import load_game
        from arena.store import RunStore

        validate(cfg)
        self.cfg = cfg
        self.quiet = quiet
        self.log = log or (lambda s: None)
        self.game = load_game(cfg.game)
        if self.game.spec.text_decisions:
            raise ArenaError(f"game '{self.game.spec.full_name}' has free-text decisions; leagues need choice games")
        self.fp = fingerprint_of(cfg)
        fresh = not (Path(cfg.out) / "arena.sqlite").exists()
        self.store = RunStore.open(cfg.out, self.fp, config_text, kind="league")
        self.train_store = RunStore.open(self.store.path / "train", self.fp, None, kind="league-train")
        self.run_dir = self.store.path
        self.members: dict[str, Member] = {}
        self.state = LeagueState()
        self.payoff = PayoffTable(cfg.payoff_decay)
        self.snapshot_agents: dict[str, Any] = {}
        self.train_games = 0
        self.eval_games = 0
        from arena.logging import TensorBoard

        self.tb = TensorBoard(self.run_dir / "tb", enabled=cfg.tensorboard)
        try:
            self._build()
        except BaseException:
            self.close()
            if fresh:  # an agent or trainer refused to build: leave no half-made run behind
                shutil.rmtree(self.run_dir, ignore_errors=True)
            raise

    # -- building ------------------------------------------------------------------------------------
    def _build(self) -> None:
        from arena.loading import load_agent, parse_agent_spec

        committed = int(self.store.meta().get("league_step", "0"))
        ckpt = self.run_dir / "checkpoints" / f"step-{committed:06d}" if committed else None
        if ckpt is not None:
            self.state = LeagueState(**json.loads((ckpt / "state.json").read_text()))
            self.payoff.table = {k: list(v) for k, v in self.state.payoff.items()}
        for m in self.cfg.population:
            spec = _plain(m.agent)
            base, params = parse_agent_spec(spec)
            if m.role == "learner" and ckpt is not None:
                params = dict(params, **{LOAD_PARAM[base]: str(ckpt / "learners" / m.label)})
                spec = dict(params, name=base)
            agent = load_agent(spec, self.game)
            agent.name = m.label
            mem = Member(m, _plain(m.agent), agent, base)
            if m.role == "learner":
                from arena.registry import get_registry

                entry = get_registry().get("trainer", m.trainer.name)
                mem.trainer = entry.factory(self.game, [agent], **dict(m.trainer.params))
                init = self.run_dir / "checkpoints" / "initial" / m.label
                if not init.exists():
                    _atomic_dir(init, agent.save)
                mem.initial_dir = init
                if ckpt is not None:
                    load_trainer_state(mem.trainer, ckpt / "trainers" / f"{m.label}.pt")
            elif m.role == "solver":
                mem.improver = make_improver(agent, base, self.game, params)
                done = self.state.solver_budget.get(m.label, 0)
                if done:
                    mem.improver(done)  # deterministic replay up to the committed budget
            self.members[m.label] = mem
        for s in self.state.snapshots:
            self.snapshot_agents[s["label"]] = self._load_snapshot(Snapshot(**s))
        if committed:
            self.tb.session_start(committed + 1)
            self.log(f"resuming from step {committed} (checkpoint {ckpt})")

    def _load_snapshot(self, snap: Snapshot) -> Any:
        from arena.loading import load_agent

        agent = load_agent(snap.spec, self.game)
        agent.name = snap.label
        return agent

    # -- one step ------------------------------------------------------------------------------------
    def run(self) -> LeagueResult:
        from arena.logging import progress

        start_step = self.state.step
        with progress("league", self.cfg.steps, self.cfg.progress and not self.quiet) as bar:
            bar.advance(start_step)
            for step in range(start_step + 1, self.cfg.steps + 1):
                t0 = time.perf_counter()
                metrics = self.step(step)
                metrics["league/step_seconds"] = time.perf_counter() - t0
                self.tb.scalars(metrics, step)
                self._hook_step(step, metrics)
                if step % self.cfg.checkpoint_every == 0 or step == self.cfg.steps:
                    self.commit(step)
                bar.advance(1)
        board = self.finish()
        return LeagueResult(str(self.run_dir), self.cfg.steps - start_step, board, self.train_store.count(),
                            self.store.count())

    def step(self, step: int) -> dict[str, float]:
        metrics: dict[str, float] = {}
        for label, mem in self.members.items():
            if mem.improver is not None:
                out = mem.improver(mem.cfg.budget)
                self.state.solver_budget[label] = self.state.solver_budget.get(label, 0) + mem.cfg.budget
                metrics.update({f"solver/{label}/{k}": v for k, v in out.items()})
        for label, mem in self.members.items():
            if mem.trainer is not None:
                metrics.update(self.train(step, mem))
        for label, mem in self.members.items():
            if mem.cfg.role == "learner" and step % mem.cfg.snapshot_every == 0:
                self.snapshot(step, mem)
                self.maybe_reset(step, mem)
        if step % self.cfg.evaluation.every == 0 or step == self.cfg.steps:
            metrics.update(self.evaluate(step))
        self.state.step = step
        return metrics

    def pool(self, mem: MemberConfig) -> list[tuple[str, Any]]:
        """(label, agent) of every opponent this learner may face now (current self excluded)."""
        out = []
        for lbl in opponent_labels(self.cfg, mem):
            other = self.members[lbl]
            if other.cfg.role == "learner":
                out += [(s["label"], self.snapshot_agents[s["label"]]) for s in self.state.snapshots
                        if s["member"] == lbl]
            else:
                out.append((lbl, other.agent))
        return out

    def choose(self, step: int, mem: Member, rng: np.random.Generator) -> list[tuple[str, Any]]:
        """One opponent per game of this step (AlphaStar's rules for its roles)."""
        c = mem.cfg
        me = c.label
        pool = self.pool(c)
        snaps = lambda who: [(s["label"], self.snapshot_agents[s["label"]]) for s in self.state.snapshots  # noqa: E731
                             if s["member"] == who]
        main = c.main or next((m.label for m in self.cfg.population if m.matchmaking == "main"), None)

        def pfsp(cands: list[tuple[str, Any]], weighting: str) -> tuple[str, Any]:
            w = pfsp_weights([self.payoff.win_rate(me, lbl) for lbl, _ in cands], weighting)
            return cands[int(rng.choice(len(cands), p=w))]

        selfish = (me, mem.agent)
        picks = []
        for _ in range(c.games_per_step):
            if c.matchmaking == "self_play" or (c.self_play and rng.random() < c.self_play) or not pool:
                picks.append(selfish)
                continue
            if c.matchmaking == "uniform":
                picks.append(pool[int(rng.integers(len(pool)))])
            elif c.matchmaking == "pfsp":
                picks.append(pfsp(pool, c.weighting))
            elif c.matchmaking == "league_exploiter":
                picks.append(pfsp(pool, "linear_capped"))
            elif c.matchmaking == "main_exploiter":
                target = self.members[main]
                if self.payoff.win_rate(me, main) > 0.1 or not snaps(main):
                    picks.append((main, target.agent))
                else:
                    picks.append(pfsp(snaps(main), "var"))
            else:  # main
                coin = rng.random()
                exploiters = [s for m in self.cfg.population if m.matchmaking == "main_exploiter" for s in snaps(m.label)]
                if coin < 0.5:
                    picks.append(pfsp(pool, "squared"))
                elif coin < 0.65 and exploiters and min(self.payoff.win_rate(me, lbl) for lbl, _ in exploiters) < 0.3:
                    picks.append(pfsp(exploiters, "squared"))
                elif self.payoff.win_rate(me, me) > 0.3 or not snaps(me):
                    picks.append(selfish)
                else:
                    picks.append(pfsp(snaps(me), "var"))
        return picks

    def train(self, step: int, mem: Member) -> dict[str, float]:
        from arena.match import play_games
        from arena.store import MatchRecord, match_id

        c = mem.cfg
        rng = np.random.default_rng([self.cfg.seed & 0xFFFFFFFF, step, list(self.members).index(c.label)])
        picks = self.choose(step, mem, rng)
        groups: dict[str, list[Any]] = {}
        for lbl, agent in picks:
            groups.setdefault(lbl, [agent, 0])[1] += 1
        n = self.game.spec.num_players
        trajectories = []
        for opp, (agent, count) in sorted(groups.items()):
            seats = [mem.agent] + [agent] * (n - 1)
            pairing = f"train|{step}|{c.label}|{opp}"
            seed = int(match_id(self.fp, pairing, self.cfg.seed, 0)[:8], 16)
            results = play_games(self.game, seats, num_games=count, seed=seed, rotate_seats=True, record=True)
            for r in results:
                trajectories.append(r.trajectory)
                mine = r.seats.index(c.label)
                other = next((i for i, s in enumerate(r.seats) if i != mine), mine)
                if opp != c.label:
                    self.payoff.update(c.label, opp, r.returns[mine], r.returns[other])
                else:
                    self.payoff.update(c.label, c.label, r.returns[0], r.returns[1])
                rec = MatchRecord.from_result(r, id=match_id(self.fp, pairing, self.cfg.seed, r.index), pairing=pairing,
                                              game=self.game.spec.full_name, plan_seq=step, round=step)
                rec.seats = [s if s != c.label else f"{c.label}@train" for s in rec.seats]
                rec.info = dict(rec.info, learner=c.label, opponent=opp)
                if self.train_store.record_match(rec):
                    self.train_games += 1
        out = mem.trainer.update(trajectories)
        metrics = {f"train/{c.label}/{k.split('/', 1)[-1]}": float(v) for k, v in out.items()}
        for lbl, (_, count) in groups.items():
            metrics[f"matchmaking/{c.label}/{lbl}"] = count / c.games_per_step
            metrics[f"winrate/{c.label}/{lbl}"] = self.payoff.win_rate(c.label, lbl)
        return metrics

    # -- snapshots -------------------------------------------------------------------------------------
    def snapshot(self, step: int, mem: Member) -> Snapshot:
        label = f"{mem.cfg.label}@{step}"
        path = self.run_dir / "snapshots" / label
        if not path.exists():
            _atomic_dir(path, mem.agent.save)
        params = {LOAD_PARAM[mem.base]: str(path)}
        base_params = {} if mem.cfg.role == "solver" else {
            k: v for k, v in _spec_params(mem.spec).items() if k not in ("checkpoint", "path", "seed")}
        spec = dict(base_params, name=mem.base, **params)
        snap = Snapshot(label, mem.cfg.label, step, str(path), spec)
        if not any(s["label"] == label for s in self.state.snapshots):
            self.state.snapshots.append(asdict(snap))
        self.snapshot_agents[label] = self._load_snapshot(snap)
        return snap

    def maybe_reset(self, step: int, mem: Member) -> None:
        """AlphaStar: a main exploiter restarts from its initial weights at every snapshot, a league
        exploiter with probability 0.25."""
        c = mem.cfg
        if c.matchmaking not in ("main_exploiter", "league_exploiter"):
            return
        rng = np.random.default_rng([self.cfg.seed & 0xFFFFFFFF, step, 99])
        if c.matchmaking == "league_exploiter" and rng.random() >= 0.25:
            return
        from arena.loading import load_agent
        from arena.registry import get_registry

        spec = dict(_spec_params(mem.spec), name=mem.base, **{LOAD_PARAM[mem.base]: str(mem.initial_dir)})
        mem.agent = load_agent(spec, self.game)
        mem.agent.name = c.label
        mem.trainer = get_registry().get("trainer", c.trainer.name).factory(self.game, [mem.agent], **dict(c.trainer.params))

    # -- evaluation -----------------------------------------------------------------------------------
    def evaluate(self, step: int) -> dict[str, float]:
        """Snapshot learners and solvers, then a gauntlet: newcomers against every earlier member."""
        from arena.executor import GameTask, make_executor, remember_agent
        from arena.rating import bradley_terry, pairwise_outcomes
        from arena.store import MatchRecord
        from arena.tournament import Planner, drive, margin_scale

        if step in self.state.evaluated_at:
            return {}
        new: list[str] = []
        specs: dict[str, Any] = {}
        for label, mem in self.members.items():
            if mem.cfg.role == "fixed":
                if label not in self.state.eval_members:
                    new.append(label)
                specs[label] = mem.spec
                continue
            snap_label = f"{label}@{step}"
            if snap_label not in self.snapshot_agents:
                self.snapshot(step, mem)
            new.append(snap_label)
        for s in self.state.snapshots:
            specs[s["label"]] = s["spec"]
        old = list(self.state.eval_members)
        names = old + new
        game_name = self.game.spec.full_name
        for lbl in names:
            agent = self.members[lbl].agent if lbl in self.members else self.snapshot_agents[lbl]
            remember_agent(self.game, game_name, specs[lbl], lbl, agent)
        scale = margin_scale(self.game, self.cfg.evaluation.ratings.outcome)
        if len(names) >= self.game.spec.num_players:
            fmt = newcomer_round(names, new, self.cfg.evaluation.games, self.game.spec.num_players)
            planner = Planner(f"{self.fp}|eval{step}", self.cfg.seed)
            planner.seq = step * 1_000_000  # plan order independent of what a crash left behind

            def play(rnd: int, pairings: Any) -> Any:
                planned = planner.plan(rnd, pairings)
                have = self.store.match_ids()
                tasks = []
                for games in planned:
                    todo = [g for g in games if g.id not in have]
                    by_seats: dict[tuple, list] = {}
                    for g in todo:
                        by_seats.setdefault(g.seats, []).append(g)
                    for seats, gs in by_seats.items():
                        tasks.append(GameTask(game_name, tuple(specs[a] for a in seats), seats, self.cfg.seed,
                                              tuple(g.deal for g in gs), None, False, {g.deal: g for g in gs}))

                def on_result(task: Any, res: Any) -> None:
                    g = task.key[res.index]
                    rec = MatchRecord.from_result(res, id=g.id, pairing=g.pairing, game=game_name,
                                                  plan_seq=g.plan_seq, round=step)
                    if self.store.record_match(rec):
                        self.eval_games += 1

                with make_executor(self.cfg.executor) as ex:
                    ex.run(tasks, on_result)
                by_id = {r.id: r for r in self.store.matches()}
                return [[by_id[g.id] for g in games] for games in planned]

            drive(fmt, play)
        self.state.eval_members = names
        self.state.evaluated_at.append(step)
        records = self.store.matches()
        out: dict[str, float] = {}
        if records:
            fit = bradley_terry(pairwise_outcomes(records, scale), names, bootstrap=0)
            games = {a: sum(1 for r in records for x in r.seats if x == a) for a in names}
            self.store.record_snapshot(len(records), "bt", {a: (fit.rating[i], None, None, games[a])
                                                           for i, a in enumerate(names)})
            for i, a in enumerate(names):  # fixed members, and every other member's newest snapshot
                if "@" not in a or a.endswith(f"@{step}"):
                    out[f"rating/bt/{a.split('@')[0]}"] = float(fit.rating[i])
        self.store.set_meta("margin_scale", "" if scale is None else repr(scale))
        return out

    # -- checkpoints ---------------------------------------------------------------------------------
    def commit(self, step: int) -> None:
        """Weights and trainer state of every learner plus the league state, then the commit mark."""
        self.state.payoff = self.payoff.table
        base = self.run_dir / "checkpoints"
        final = base / f"step-{step:06d}"

        def write(d: Path) -> None:
            for label, mem in self.members.items():
                if mem.trainer is not None:
                    mem.agent.save(d / "learners" / label)
                    save_trainer_state(mem.trainer, d / "trainers" / f"{label}.pt")
            (d / "state.json").write_text(json.dumps(asdict(self.state), default=str))

        if final.exists():
            shutil.rmtree(final)
        _atomic_dir(final, write)
        self.tb.flush()
        self.store.set_meta("league_step", str(step))
        kept = sorted(p for p in base.glob("step-*") if p.is_dir())
        for old in kept[:-max(1, self.cfg.keep_checkpoints)]:
            shutil.rmtree(old, ignore_errors=True)
        from arena.registry import get_registry

        get_registry().hook.arena_checkpoint_written(path=str(final), agent="league", context={"step": step})

    def _hook_step(self, step: int, metrics: dict[str, float]) -> None:
        from arena.registry import get_registry

        get_registry().hook.arena_league_step(step=step, metrics=metrics, context={"run_dir": str(self.run_dir)})

    def finish(self) -> dict[str, Any] | None:
        """Leaderboard files and plots from the evaluation games in the store."""
        from arena.leaderboard import compute, plot_payoff, plot_ratings, to_markdown, write_files
        from arena.tournament import margin_scale

        records = self.store.matches()
        if not records:
            self.tb.close()
            return None
        rc = self.cfg.evaluation.ratings
        board = compute(records, self.state.eval_members, scale=margin_scale(self.game, rc.outcome), elo_k=rc.elo_k,
                        bootstrap=rc.bootstrap, openskill_model=rc.openskill_model, alpha=rc.alpha,
                        seed=self.cfg.seed, rank_by=rc.rank_by)
        title = f"{self.game.spec.full_name} — league"
        write_files(board, self.run_dir, title, {"steps": self.state.step, "seed": self.cfg.seed})
        if self.cfg.plots:
            plot_payoff(board, self.run_dir / "payoff.png")
            plot_ratings(self.store.snapshots("bt"), self.run_dir / "ratings.png")
            self.plot_training()
        self.tb.text("leaderboard", to_markdown(board, title), self.state.step)
        self.tb.close()
        return board

    def plot_training(self) -> None:
        """``training.png``: every learner's and solver's scalar curves from TensorBoard."""
        from arena.leaderboard import _pyplot
        from arena.logging import read_scalars

        self.tb.flush()
        scalars = read_scalars(self.run_dir / "tb")
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
        self.tb.close()
        self.store.close()
        self.train_store.close()


# -- helpers -----------------------------------------------------------------------------------------------
def _spec_params(spec: Any) -> dict[str, Any]:
    from arena.loading import parse_agent_spec

    return parse_agent_spec(spec)[1]


def make_improver(agent: Any, base: str, game: Any, params: dict[str, Any]) -> Callable[[int], dict[str, float]]:
    """``improve(budget)`` for a solver member: the agent's own method, or an adapter for ``cfr``
    (more iterations of the same CFR run; the agent then plays the new average policy)."""
    if hasattr(agent, "improve"):
        return agent.improve
    if base == "cfr":
        from arena.plugins.agents.cfr import make_solve

        solve = make_solve(game, params.get("algo", "cfr+"), device=params.get("device", "numpy"),
                           updates=params.get("updates", "alternating"), seed=params.get("seed", 0))
        solve.step(int(params.get("iterations", 1000)))  # where the loaded agent already is

        def improve(budget: int) -> dict[str, float]:
            solve.step(int(budget))
            agent.table = solve.policy()
            nc = solve.nash_conv()
            return {"iterations": float(solve.iteration)} | ({} if nc is None else
                                                             {"exploitability": nc / game.spec.num_players})
        return improve
    raise ConfigError(f"agent '{base}' cannot be a solver member (it has no improve(budget)); use role: fixed")


def run_league(cfg: LeagueConfig, config_text: str | None = None, quiet: bool = False,
               log: Callable[[str], None] | None = None) -> LeagueResult:
    league = League(cfg, config_text, quiet, log)
    try:
        return league.run()
    finally:
        league.close()


__all__ = ["LeagueConfig", "MemberConfig", "League", "run_league", "validate"]
