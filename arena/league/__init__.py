"""League training: the one training loop behind ``arena league``, ``arena train`` and ``arena llm-train``.

- :mod:`arena.league.config` — the config schema, its validation and fingerprint;
- :mod:`arena.league.matchmaking` — PFSP weightings, the payoff table, the evaluation format;
- :mod:`arena.league.workspace` — what every phase shares: stores, executor, seeds, observers' context;
- :mod:`arena.league.population` — members, units, snapshots, resets, who plays whom;
- :mod:`arena.league.rollouts` — training games planned, started, collected, trained on;
- :mod:`arena.league.evaluation` — the rating gauntlet and learner metrics at every evaluation;
- :mod:`arena.league.metrics` — learner metrics (self-play, fixed opponents, game probes, exact values);
- :mod:`arena.league.checkpoints` — commit, resume, and the run's files when it ends;
- :mod:`arena.league.runner` — the loop that sequences a step.
"""

from arena.league.config import LeagueConfig, MemberConfig, MetricsConfig, TrainerSpec, validate
from arena.league.runner import League, LeagueResult, run_league

__all__ = [
    "LeagueConfig",
    "MemberConfig",
    "MetricsConfig",
    "TrainerSpec",
    "League",
    "LeagueResult",
    "run_league",
    "validate",
]
