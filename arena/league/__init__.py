"""League training: the one training loop behind ``arena league``, ``arena train`` and ``arena llm-train``.

- :mod:`arena.league.config` — the config schema, its validation and fingerprint;
- :mod:`arena.league.matchmaking` — PFSP weightings, the payoff table, the evaluation format;
- :mod:`arena.league.metrics` — learner metrics (self-play, fixed opponents, game probes, exact values);
- :mod:`arena.league.runner` — the runner itself.
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
