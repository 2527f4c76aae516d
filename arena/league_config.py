"""League configuration: the dataclasses ``arena league CONFIG`` is parsed into, the checks that need
no game played (:func:`validate`), and the fingerprint that decides whether a run may be resumed.

Split out of :mod:`arena.league` so the config can be read, validated and fingerprinted without
the runner; it imports nothing from :mod:`arena.league`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from omegaconf import MISSING

from arena.errors import ConfigError, PluginError
from arena.executor import ExecutorConfig
from arena.matchmaking import opponent_labels
from arena.tournament import RatingConfig

ROLES = ("fixed", "solver", "learner")
MATCHMAKING = ("self_play", "uniform", "pfsp", "main", "main_exploiter", "league_exploiter")
WEIGHTINGS = ("hard", "squared", "var", "linear", "linear_capped")
LOAD_PARAM = {"neural": "checkpoint", "psro": "path", "cfr": "path", "fixed": "path", "llm": "model"}
"""How a saved snapshot directory is loaded back: agent name -> its 'load from here' parameter."""


@dataclass
class TrainerSpec:
    name: str = MISSING
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class MemberConfig:
    """One population member."""

    label: str = MISSING
    agent: Any = MISSING
    """Agent spec: ``name:key=value,...`` or a mapping with ``name``."""
    role: str = "fixed"
    trainer: TrainerSpec | None = None
    matchmaking: str = "pfsp"
    weighting: str = "hard"
    opponents: list[str] | None = None
    """Labels whose agents (fixed, solver) or snapshots (learners) this learner may face;
    default: every other member, and its own snapshots."""
    self_play: float = 0.0
    """Share of games against its current self (on top of ``matchmaking``'s draws)."""
    games_per_step: int = 100
    snapshot_every: int = 5
    budget: int = 1
    """Solvers: improvement per step (PSRO/CFR iterations)."""
    main: str | None = None
    """Exploiter roles: the label of the main agent they target (default: the first ``main``)."""


@dataclass
class EvaluationConfig:
    every: int = 5
    games: int = 20
    """Games per ordered pairing (seats swapped with identical deals)."""
    ratings: RatingConfig = field(default_factory=RatingConfig)


@dataclass
class LeagueConfig:
    """``arena league CONFIG``."""

    game: str = MISSING
    population: list[MemberConfig] = MISSING
    steps: int = 20
    seed: int = 0
    out: str = MISSING
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    executor: ExecutorConfig = field(default_factory=ExecutorConfig)
    checkpoint_every: int = 1
    keep_checkpoints: int = 2
    payoff_decay: float = 0.99
    tensorboard: bool = True
    plots: bool = True
    progress: bool = True


def _plain(x: Any) -> Any:
    from omegaconf import DictConfig, ListConfig, OmegaConf

    return OmegaConf.to_container(x, resolve=True) if isinstance(x, (DictConfig, ListConfig)) else x


def validate(cfg: LeagueConfig) -> None:
    """Every check that needs no game played: names, roles, trainers, opponent pools."""
    from arena.loading import parse_agent_spec
    from arena.registry import get_registry

    reg = get_registry()
    where = "league config"
    if cfg.steps < 1:
        raise ConfigError(f"{where}: steps must be at least 1, got {cfg.steps}")
    if not cfg.population:
        raise ConfigError(f"{where}: population is empty")
    labels = [m.label for m in cfg.population]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ConfigError(f"{where}: population labels must be unique; repeated: {', '.join(dup)}")
    bad = [x for x in labels if "@" in x or "|" in x]
    if bad:
        raise ConfigError(f"{where}: labels may not contain '@' or '|': {', '.join(bad)}")
    mains = [m.label for m in cfg.population if m.role == "learner" and m.matchmaking == "main"]
    for i, m in enumerate(cfg.population):
        at = f"{where}: population[{i}] '{m.label}'"
        name, _ = parse_agent_spec(_plain(m.agent))
        try:
            reg.get("agent", name)
            if m.trainer is not None:
                reg.get("trainer", m.trainer.name)
        except PluginError as exc:  # unknown agent/trainer: one line naming the known ones
            raise ConfigError(f"{at}: {exc}") from None
        if m.role not in ROLES:
            raise ConfigError(f"{at}: role must be one of {', '.join(ROLES)}, got '{m.role}'")
        if m.role != "learner":
            if m.trainer is not None:
                raise ConfigError(f"{at}: a trainer is attached but the role is '{m.role}'; only role 'learner' "
                                  "is trained (set role: learner or remove trainer)")
            if m.role == "solver" and m.budget < 1:
                raise ConfigError(f"{at}: budget must be at least 1")
            continue
        if m.trainer is None:
            raise ConfigError(f"{at}: role 'learner' needs a trainer (e.g. trainer: {{name: ppo}})")
        if name not in LOAD_PARAM:
            raise ConfigError(f"{at}: learner agent '{name}' cannot be snapshotted (snapshots load through "
                              f"{', '.join(sorted(LOAD_PARAM))})")
        if m.matchmaking not in MATCHMAKING:
            raise ConfigError(f"{at}: matchmaking must be one of {', '.join(MATCHMAKING)}, got '{m.matchmaking}'")
        if m.weighting not in WEIGHTINGS:
            raise ConfigError(f"{at}: weighting must be one of {', '.join(WEIGHTINGS)}, got '{m.weighting}'")
        if m.games_per_step < 1 or m.snapshot_every < 1:
            raise ConfigError(f"{at}: games_per_step and snapshot_every must be at least 1")
        if not 0.0 <= m.self_play <= 1.0:
            raise ConfigError(f"{at}: self_play is a share of games in [0, 1], got {m.self_play}")
        if m.matchmaking in ("main_exploiter", "league_exploiter") or m.matchmaking == "main":
            if not mains:
                raise ConfigError(f"{at}: AlphaStar role '{m.matchmaking}' needs a learner with matchmaking 'main'")
            if m.main is not None and m.main not in mains:
                raise ConfigError(f"{at}: main '{m.main}' is not a learner with matchmaking 'main' ({', '.join(mains)})")
        if m.matchmaking == "self_play":
            continue
        pool = opponent_labels(cfg, m)
        unknown = [x for x in pool if x not in labels]
        if unknown:
            raise ConfigError(f"{at}: opponents {unknown} are not population labels ({', '.join(labels)})")
        if not pool and m.self_play < 1.0 and m.matchmaking in ("uniform", "pfsp"):
            raise ConfigError(f"{at}: missing opponent pool — matchmaking '{m.matchmaking}' has no opponents "
                              "(list some under opponents:, or use matchmaking: self_play)")
    if cfg.evaluation.every < 1 or cfg.evaluation.games < 1:
        raise ConfigError(f"{where}: evaluation.every and evaluation.games must be at least 1")


def fingerprint_of(cfg: LeagueConfig) -> str:
    """What decides the results (not ``steps``, so a finished league may be extended)."""
    from arena.store import fingerprint

    d = asdict(cfg)
    for k in ("steps", "out", "executor", "tensorboard", "plots", "progress", "keep_checkpoints"):
        d.pop(k, None)
    return fingerprint(d)
