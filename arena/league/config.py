"""League configuration: the dataclasses ``arena league CONFIG`` is parsed into, the checks that need
no game played (:func:`validate`), and the fingerprint that decides whether a run may be resumed.

The config can be read, validated and fingerprinted without the runner; it imports nothing from
:mod:`arena.league.runner`. Nothing here names an agent or trainer plugin: whether an agent can
be a learner or solver is asked of its plugin entry (``checkpoint_param``, ``improve``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from omegaconf import MISSING, DictConfig, ListConfig, OmegaConf

from arena.errors import ConfigError, PluginError
from arena.evaluation.leaderboard import RatingConfig
from arena.evaluation.store import fingerprint
from arena.league.matchmaking import CRITERIA, META_SOLVERS
from arena.loading import parse_agent_spec
from arena.playing.executor import ExecutorConfig
from arena.registry import get_registry

ROLES = ("fixed", "solver", "learner")
MATCHMAKING = ("self_play", "uniform", "pfsp", "main", "main_exploiter", "league_exploiter") + META_SOLVERS
WEIGHTINGS = ("hard", "squared", "var", "linear", "linear_capped")


@dataclass
class TrainerSpec:
    name: str = MISSING
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class MetaSolverConfig:
    """How the meta-solver matchmakings (``nash``, ``ce``, ``cce``, ``rae``) solve the meta-game."""

    criterion: str = "max_entropy"
    """CE/CCE selection: ``max_entropy`` (unique) or ``max_welfare`` (an LP vertex)."""
    risk: float = 0.1
    """RAE: the weight of the variance against the mean."""
    iterations: int = 300
    """RAE: fictitious-play iterations."""


@dataclass
class MemberConfig:
    """One population member."""

    label: str = MISSING
    agent: Any = MISSING
    """Agent spec: ``name:key=value,...`` or a mapping with ``name``."""
    role: str = "fixed"
    trainer: TrainerSpec | None = None
    matchmaking: str = "pfsp"
    """self_play, uniform, pfsp, AlphaStar's main / main_exploiter / league_exploiter, or a
    meta-solver over the meta-game of the mean returns: nash, ce, cce, rae."""
    weighting: str = "hard"
    meta: MetaSolverConfig = field(default_factory=MetaSolverConfig)
    """The meta-solver's settings (matchmaking nash, ce, cce, rae)."""
    opponents: list[str] | None = None
    """Labels whose agents (fixed, solver) or snapshots (learners) this learner may face;
    default: every other member, and its own snapshots."""
    self_play: float = 0.0
    """Share of games against its current self (on top of ``matchmaking``'s draws)."""
    games_per_step: int = 100
    snapshot_every: int = 5
    snapshot_window: int = 0
    """Learners' snapshots in this member's pool: only the latest ``snapshot_window`` of each
    learner (a buffer of recent past policies); 0: all of them."""
    budget: int = 1
    """Solvers: improvement per step (PSRO/CFR iterations)."""
    main: str | None = None
    """Exploiter roles: the label of the main agent they target (default: the first ``main``)."""
    team: str | None = None
    """Learners with the same team share one trainer (its update sees every teammate's games, as
    Advantage Alignment's pair needs) and train by self-play among themselves, seats filled in turn."""


@dataclass
class MetricsConfig:
    """Learner metrics at every evaluation: self-play and games against fixed opponents, with
    every per-seat statistic the game reports (cooperation, own-coin rate, ...), the game's own
    probes (``Game.agent_metrics``) and, for tree games, exact exploitability and return against
    uniform random. Written to ``metrics.csv``, ``results.json``, ``curves.png`` and TensorBoard."""

    games: int = 0
    """Games per opponent (and of self-play); 0 turns game-played metrics off."""
    opponents: list[Any] = field(default_factory=list)
    exact: bool = True
    """Tree games: exact exploitability and return/win rate against uniform random."""


@dataclass
class EvaluationConfig:
    every: int = 5
    games: int = 20
    """Games per ordered pairing (seats swapped with identical deals); 0: no rating gauntlet."""
    ratings: RatingConfig = field(default_factory=RatingConfig)
    metrics: MetricsConfig = field(default_factory=MetricsConfig)


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
    torch_threads: int = 0
    """torch intra-op threads in this process when torch is used (0: leave torch's default)."""
    max_staleness: int = 0
    """Asynchronous training: the games of step ``s + k`` (k <= max_staleness) are played while the
    learners update on step ``s``'s, so a trajectory is at most this many learner versions old when
    it is trained on (the trainer corrects with a truncated importance weight). 0: synchronous."""


def _plain(x: Any) -> Any:
    return OmegaConf.to_container(x, resolve=True) if isinstance(x, (DictConfig, ListConfig)) else x


def opponent_labels(cfg: LeagueConfig, m: MemberConfig) -> list[str]:
    """Labels a learner may be matched against (default: every other member, and itself)."""
    if m.opponents is not None:
        return list(m.opponents)
    return [x.label for x in cfg.population if x.label != m.label] + [m.label]


def teams(cfg: LeagueConfig) -> dict[str, list[MemberConfig]]:
    """Training units: each team (in population order), and each learner without a team alone."""
    out: dict[str, list[MemberConfig]] = {}
    for m in cfg.population:
        if m.role == "learner":
            out.setdefault(m.team or m.label, []).append(m)
    return out


WHERE = "league config"


def validate(cfg: LeagueConfig) -> None:
    """Every check that needs no game played: names, roles, trainers, opponent pools."""
    _check_run(cfg)
    mains = [m.label for m in cfg.population if m.role == "learner" and m.matchmaking == "main"]
    for i, m in enumerate(cfg.population):
        _check_member(cfg, m, f"{WHERE}: population[{i}] '{m.label}'", mains)
    _check_evaluation(cfg)


def _check_run(cfg: LeagueConfig) -> None:
    if cfg.steps < 1:
        raise ConfigError(f"{WHERE}: steps must be at least 1, got {cfg.steps}")
    if not cfg.population:
        raise ConfigError(f"{WHERE}: population is empty")
    labels = [m.label for m in cfg.population]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ConfigError(f"{WHERE}: population labels must be unique; repeated: {', '.join(dup)}")
    bad = [x for x in labels if "@" in x or "|" in x]
    if bad:
        raise ConfigError(f"{WHERE}: labels may not contain '@' or '|': {', '.join(bad)}")


def _check_member(cfg: LeagueConfig, m: MemberConfig, at: str, mains: list[str]) -> None:
    name, _ = parse_agent_spec(_plain(m.agent))
    reg = get_registry()
    try:
        entry = reg.get("agent", name)
        if m.trainer is not None:
            reg.get("trainer", m.trainer.name)
    except PluginError as exc:  # unknown agent/trainer: one line naming the known ones
        raise ConfigError(f"{at}: {exc}") from None
    if m.role not in ROLES:
        raise ConfigError(f"{at}: role must be one of {', '.join(ROLES)}, got '{m.role}'")
    if m.role != "learner":
        if m.trainer is not None:
            raise ConfigError(
                f"{at}: a trainer is attached but the role is '{m.role}'; only role 'learner' "
                "is trained (set role: learner or remove trainer)"
            )
        if m.role == "solver" and m.budget < 1:
            raise ConfigError(f"{at}: budget must be at least 1")
        return
    if m.trainer is None:
        raise ConfigError(f"{at}: role 'learner' needs a trainer (e.g. trainer: {{name: ppo}})")
    if entry.checkpoint_param is None:
        raise ConfigError(
            f"{at}: learner agent '{name}' cannot be snapshotted (its plugin declares no "
            "checkpoint_param); learners must save and load"
        )
    _check_learner(m, at, mains)
    if m.team is not None:
        _check_team(cfg, m, at)
    if m.matchmaking != "self_play":
        _check_pool(cfg, m, at)


def _check_learner(m: MemberConfig, at: str, mains: list[str]) -> None:
    if m.matchmaking not in MATCHMAKING:
        raise ConfigError(f"{at}: matchmaking must be one of {', '.join(MATCHMAKING)}, got '{m.matchmaking}'")
    if m.weighting not in WEIGHTINGS:
        raise ConfigError(f"{at}: weighting must be one of {', '.join(WEIGHTINGS)}, got '{m.weighting}'")
    if m.games_per_step < 1 or m.snapshot_every < 1:
        raise ConfigError(f"{at}: games_per_step and snapshot_every must be at least 1")
    if not 0.0 <= m.self_play <= 1.0:
        raise ConfigError(f"{at}: self_play is a share of games in [0, 1], got {m.self_play}")
    if m.snapshot_window < 0:
        raise ConfigError(f"{at}: snapshot_window must be at least 0 (0: every snapshot), got {m.snapshot_window}")
    if m.matchmaking in META_SOLVERS:
        _check_meta(m, at)
    if m.matchmaking in ("main", "main_exploiter", "league_exploiter"):
        if not mains:
            raise ConfigError(f"{at}: AlphaStar role '{m.matchmaking}' needs a learner with matchmaking 'main'")
        if m.main is not None and m.main not in mains:
            raise ConfigError(f"{at}: main '{m.main}' is not a learner with matchmaking 'main' ({', '.join(mains)})")


def _check_meta(m: MemberConfig, at: str) -> None:
    if m.meta.criterion not in CRITERIA:
        raise ConfigError(f"{at}: meta.criterion must be one of {', '.join(CRITERIA)}, got '{m.meta.criterion}'")
    if m.meta.risk < 0 or m.meta.iterations < 1:
        raise ConfigError(
            f"{at}: meta.risk must be at least 0 and meta.iterations at least 1, got {m.meta.risk} and "
            f"{m.meta.iterations}"
        )


def _check_team(cfg: LeagueConfig, m: MemberConfig, at: str) -> None:
    mates = [x for x in cfg.population if x.team == m.team]
    if any(x.role != "learner" for x in mates):
        raise ConfigError(f"{at}: team '{m.team}' has members that are not learners")
    if any(_plain(x.trainer) != _plain(m.trainer) for x in mates if x.trainer is not None):
        raise ConfigError(f"{at}: team '{m.team}' members must share one trainer spec")
    if m.matchmaking != "self_play":
        raise ConfigError(f"{at}: team members train by self-play among themselves; set matchmaking: self_play")
    if any(x.games_per_step != m.games_per_step for x in mates):
        raise ConfigError(f"{at}: team '{m.team}' members must share games_per_step")


def _check_pool(cfg: LeagueConfig, m: MemberConfig, at: str) -> None:
    labels = [x.label for x in cfg.population]
    pool = opponent_labels(cfg, m)
    unknown = [x for x in pool if x not in labels]
    if unknown:
        raise ConfigError(f"{at}: opponents {unknown} are not population labels ({', '.join(labels)})")
    if not pool and m.self_play < 1.0 and m.matchmaking in ("uniform", "pfsp"):
        raise ConfigError(
            f"{at}: missing opponent pool — matchmaking '{m.matchmaking}' has no opponents "
            "(list some under opponents:, or use matchmaking: self_play)"
        )


def _check_evaluation(cfg: LeagueConfig) -> None:
    if cfg.max_staleness < 0:
        raise ConfigError(f"{WHERE}: max_staleness must be at least 0 (0 is synchronous), got {cfg.max_staleness}")
    if cfg.evaluation.every < 1 or cfg.evaluation.games < 0 or cfg.evaluation.metrics.games < 0:
        raise ConfigError(
            f"{WHERE}: evaluation.every must be at least 1, evaluation.games and evaluation.metrics.games at least 0"
        )
    for i, spec in enumerate(cfg.evaluation.metrics.opponents):
        try:
            get_registry().get("agent", parse_agent_spec(_plain(spec))[0])
        except PluginError as exc:
            raise ConfigError(f"{WHERE}: evaluation.metrics.opponents[{i}]: {exc}") from None


SEED_STREAMS = "derive_seed"
"""How a run derives its seeds (:func:`arena.rng.derive_seed` of named keys), part of the fingerprint."""


def fingerprint_of(cfg: LeagueConfig) -> str:
    """What decides the results (not ``steps``, so a finished league may be extended)."""
    d = asdict(cfg)
    for k in ("steps", "out", "executor", "tensorboard", "plots", "progress", "keep_checkpoints", "torch_threads"):
        d.pop(k, None)
    if not d.get("max_staleness"):
        d.pop("max_staleness", None)  # synchronous runs keep the fingerprint they had before the key existed
    for m in d["population"]:
        if m.get("matchmaking") not in META_SOLVERS:
            m.pop("meta", None)  # runs without a meta-solver keep the fingerprint they had before the key existed
        if not m.get("snapshot_window"):
            m.pop("snapshot_window", None)  # likewise for runs whose pools hold every snapshot
    d["seeds"] = SEED_STREAMS  # a run begun under the earlier seed arithmetic plays other games: not resumed
    return fingerprint(d)
