"""The population: members built from the config (or the last checkpoint), the training units
that share a trainer, live versions, frozen snapshots, AlphaStar's exploiter resets, the payoff
table, and who each training game is played against (opponent pools, PFSP, AlphaStar's roles).

Members have one of three roles: ``fixed`` (any agent spec), ``solver`` (an agent with
``improve(budget)``, called every step) and ``learner`` (updated by a trainer plugin; learners
sharing a ``team`` share one trainer and train by self-play among themselves).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from arena.atomic import atomic_dir
from arena.errors import ConfigError
from arena.league.config import MemberConfig, _plain, opponent_labels, teams
from arena.league.matchmaking import META_SOLVERS, PayoffTable, meta_distribution, meta_game, pfsp_weights
from arena.league.workspace import LeagueState, Workspace
from arena.loading import load_agent, load_checkpoint, parse_agent_spec, save_checkpoint
from arena.playing.executor import Checkpoint, remember_agent
from arena.registry import get_registry
from arena.trainer import load_trainer_state


@dataclass
class Member:
    cfg: MemberConfig
    spec: Any
    agent: Any
    unit: str | None = None
    """The training unit (team or own label) of a learner."""
    initial_dir: Path | None = None

    def save(self, directory: Path) -> None:
        save_checkpoint(self.agent, directory, self.spec)


@dataclass
class Unit:
    """Learners trained together by one trainer."""

    label: str
    members: list[str]
    trainer: Any


class Population:
    """Every member, unit and snapshot of one league run, as of ``state`` (``ckpt``: the committed
    checkpoint the learners and trainers resume from, None on a fresh run)."""

    def __init__(self, work: Workspace, state: LeagueState, ckpt: Path | None) -> None:
        self.work, self.cfg, self.game, self.state = work, work.cfg, work.game, state
        self.payoff = PayoffTable(self.cfg.payoff_decay)
        self.payoff.table = {k: list(v) for k, v in state.payoff.items()}
        self.payoff.returns = {k: list(v) for k, v in state.payoff_returns.items()}
        self._check_meta_solvers()
        self.versions: dict[str, int] = dict(state.versions)
        """Live learners and solvers: how many times each changed (its rollout checkpoint version)."""
        self.saved_version: dict[str, int] = {}
        self.members = {m.label: self._member(m, ckpt) for m in self.cfg.population}
        self.units = {label: self._unit(label, mates, ckpt) for label, mates in teams(self.cfg).items()}
        self.snapshot_agents = {s["label"]: self._frozen(s["path"], s["label"]) for s in state.snapshots}

    # -- building ------------------------------------------------------------------------------------
    def _check_meta_solvers(self) -> None:
        n = self.game.spec.num_players
        for m in self.cfg.population:
            if m.role == "learner" and m.matchmaking in META_SOLVERS and n != 2:
                raise ConfigError(
                    f"league config: population member '{m.label}': matchmaking '{m.matchmaking}' solves a "
                    f"two-player meta-game; '{self.game.spec.full_name}' has {n} players"
                )

    def _member(self, m: MemberConfig, ckpt: Path | None) -> Member:
        spec = _plain(m.agent)
        if m.role == "learner" and ckpt is not None:
            agent = load_checkpoint(ckpt / "learners" / m.label, self.game)
        else:
            agent = load_agent(spec, self.game)
        agent.name = m.label
        if m.role == "solver":
            if not callable(getattr(agent, "improve", None)):
                raise ConfigError(
                    f"league config: population member '{m.label}': agent "
                    f"'{parse_agent_spec(spec)[0]}' cannot be a solver (it has no improve(budget)); "
                    "use role: fixed"
                )
            done = self.state.solver_budget.get(m.label, 0)
            if done:
                getattr(agent, "improve")(done)  # deterministic replay up to the committed budget
        return Member(m, spec, agent)

    def _unit(self, label: str, mates: list[MemberConfig], ckpt: Path | None) -> Unit:
        trainer = self._trainer(mates[0], [self.members[x.label].agent for x in mates])
        trainer.data_dir = self.work.run_dir / "data" / label  # what it makes for `arena export`
        if ckpt is not None:
            load_trainer_state(trainer, ckpt / "trainers" / f"{label}.pt")
        for x in mates:  # initial weights (exploiter resets), saved once the trainer is attached
            mem = self.members[x.label]
            mem.unit = label
            mem.initial_dir = self.work.run_dir / "checkpoints" / "initial" / x.label
            if not mem.initial_dir.exists():
                atomic_dir(mem.initial_dir, mem.save)
        return Unit(label, [x.label for x in mates], trainer)

    def _trainer(self, m: MemberConfig, agents: list[Any]) -> Any:
        spec = m.trainer
        assert spec is not None  # validate() requires a trainer for every learner
        return get_registry().get("trainer", spec.name).factory(self.game, agents, **dict(spec.params))

    def _frozen(self, path: str | Path, label: str) -> Any:
        agent = load_checkpoint(path, self.game)
        agent.name = label
        return agent

    # -- agents as executors see them -------------------------------------------------------------------
    def refs(self) -> dict[str, Any]:
        """Every label → what a worker plays it from: fixed members by spec, snapshots by their
        checkpoint, live learners and solvers by a checkpoint at their current version (written
        only for executors outside this process; in-process the live agent itself is used)."""
        name = self.game.spec.full_name
        inprocess = self.cfg.executor.kind == "inprocess"
        # other processes load live agents; an asynchronous run replays started rollouts from them after a crash
        written = not inprocess or self.cfg.max_staleness > 0
        out: dict[str, Any] = {}
        for label, mem in self.members.items():
            if mem.cfg.role == "fixed":
                out[label] = mem.spec
                remember_agent(self.game, name, mem.spec, label, mem.agent)
                continue
            version = self.versions.get(label, 0)
            slot = self.work.run_dir / "live" / label
            ref = out[label] = Checkpoint(str(slot / f"v{version:06d}"), version, str(slot))
            if inprocess:
                remember_agent(self.game, name, ref, label, mem.agent)
            if written and self.saved_version.get(label) != version:
                if not Path(ref.path).exists():
                    atomic_dir(Path(ref.path), mem.save)
                self.saved_version[label] = version
        for s in self.state.snapshots:
            out[s["label"]] = Checkpoint(s["path"])
            remember_agent(self.game, name, out[s["label"]], s["label"], self.snapshot_agents[s["label"]])
        return out

    # -- solvers, snapshots, resets --------------------------------------------------------------------
    def improve_solvers(self) -> dict[str, float]:
        """One step of every solver (``budget`` iterations); their reported scalars."""
        metrics: dict[str, float] = {}
        for label, mem in self.members.items():
            if mem.cfg.role == "solver":
                out = mem.agent.improve(mem.cfg.budget)
                self.versions[label] = self.versions.get(label, 0) + 1
                self.state.solver_budget[label] = self.state.solver_budget.get(label, 0) + mem.cfg.budget
                metrics.update({f"solver/{label}/{k}": float(v) for k, v in (out or {}).items()})
        return metrics

    def snapshot_learners(self, step: int) -> None:
        """Learners due a snapshot freeze a copy into the pool (and exploiters may restart)."""
        for mem in self.members.values():
            if mem.cfg.role == "learner" and step % mem.cfg.snapshot_every == 0:
                self.snapshot(step, mem)
                self.maybe_reset(step, mem)

    def snapshot(self, step: int, mem: Member) -> str:
        """A frozen copy of ``mem`` as ``label@step`` (written once: a replayed step reuses it)."""
        label = f"{mem.cfg.label}@{step}"
        path = self.work.run_dir / "snapshots" / label
        if not path.exists():
            atomic_dir(path, mem.save)
        if not any(s["label"] == label for s in self.state.snapshots):
            self.state.snapshots.append({"label": label, "member": mem.cfg.label, "step": step, "path": str(path)})
        if label not in self.snapshot_agents:
            self.snapshot_agents[label] = self._frozen(path, label)
        return label

    def maybe_reset(self, step: int, mem: Member) -> None:
        """AlphaStar: a main exploiter restarts from its initial weights at every snapshot, a league
        exploiter with probability 0.25."""
        c = mem.cfg
        if c.matchmaking not in ("main_exploiter", "league_exploiter"):
            return
        rng = np.random.default_rng(self.work.seed("reset", step, c.label))
        if c.matchmaking == "league_exploiter" and rng.random() >= 0.25:
            return
        assert mem.initial_dir is not None and mem.unit is not None
        mem.agent = self._frozen(mem.initial_dir, c.label)
        self.units[mem.unit].trainer = self._trainer(c, [mem.agent])
        self.versions[c.label] = self.versions.get(c.label, 0) + 1

    # -- opponents -------------------------------------------------------------------------------------
    def snapshots_of(self, who: str) -> list[str]:
        return [s["label"] for s in self.state.snapshots if s["member"] == who]

    def pool(self, mem: MemberConfig) -> list[str]:
        """Labels of every opponent this learner may face now (current self excluded)."""
        out = []
        for lbl in opponent_labels(self.cfg, mem):
            if self.members[lbl].cfg.role != "learner":
                out.append(lbl)
                continue
            snaps = self.snapshots_of(lbl)
            out += snaps[-mem.snapshot_window :] if mem.snapshot_window else snaps
        return out

    def opponents(self, step: int, mem: Member) -> dict[str, int]:
        """How many of this step's games a lone learner plays against each opponent, in the order
        they were first drawn (its own stream of draws per step)."""
        rng = np.random.default_rng(self.work.seed("matchmaking", step, mem.cfg.label))
        counts: dict[str, int] = {}
        for opp in self.choose(mem, rng):
            counts[opp] = counts.get(opp, 0) + 1
        return counts

    def meta_opponents(self, c: MemberConfig) -> tuple[list[str], np.ndarray]:
        """The learner and its pool, and the meta-solver's opponent distribution over them."""
        labels = [c.label] + [x for x in self.pool(c) if x != c.label]
        p = meta_distribution(
            meta_game(labels, self.payoff), 0, c.matchmaking, c.meta.criterion, c.meta.risk, c.meta.iterations
        )
        return labels, p

    def choose(self, mem: Member, rng: np.random.Generator) -> list[str]:
        """One opponent label per game of this step (AlphaStar's rules for its roles)."""
        c, me, pool = mem.cfg, mem.cfg.label, self.pool(mem.cfg)
        main = c.main or next((m.label for m in self.cfg.population if m.matchmaking == "main"), None)
        win = self.payoff.win_rate

        def pfsp(cands: list[str], weighting: str) -> str:
            w = pfsp_weights([win(me, lbl) for lbl in cands], weighting)
            return cands[int(rng.choice(len(cands), p=w))]

        picks = []
        meta: tuple[list[str], np.ndarray] | None = None
        for _ in range(c.games_per_step):
            if c.matchmaking == "self_play" or (c.self_play and rng.random() < c.self_play) or not pool:
                picks.append(me)
            elif c.matchmaking in META_SOLVERS:
                meta = meta or self.meta_opponents(mem.cfg)
                picks.append(meta[0][int(rng.choice(len(meta[0]), p=meta[1]))])
            elif c.matchmaking == "uniform":
                picks.append(pool[int(rng.integers(len(pool)))])
            elif c.matchmaking == "pfsp":
                picks.append(pfsp(pool, c.weighting))
            elif c.matchmaking == "league_exploiter":
                picks.append(pfsp(pool, "linear_capped"))
            elif c.matchmaking == "main_exploiter":
                assert main is not None
                mains = self.snapshots_of(main)
                picks.append(main if win(me, main) > 0.1 or not mains else pfsp(mains, "var"))
            else:  # main
                coin = rng.random()
                exploiters = [
                    s
                    for m in self.cfg.population
                    if m.matchmaking == "main_exploiter"
                    for s in self.snapshots_of(m.label)
                ]
                if coin < 0.5:
                    picks.append(pfsp(pool, "squared"))
                elif coin < 0.65 and exploiters and min(win(me, lbl) for lbl in exploiters) < 0.3:
                    picks.append(pfsp(exploiters, "squared"))
                elif win(me, me) > 0.3 or not self.snapshots_of(me):
                    picks.append(me)
                else:
                    picks.append(pfsp(self.snapshots_of(me), "var"))
        return picks
