"""LLM trainers: ``selfplay_rlvr`` (SPIRAL-style self-play RL with role-conditioned baselines),
``sppo`` (self-play preference optimization with game-outcome or judged preferences), ``inpo``
(iterative Nash policy optimization on judged pairs),
``llm_advantage_alignment`` (AA with a leave-one-out group baseline), ``dpo`` (direct preference
optimization), ``lspo`` (latent space policy optimization for talk games) and ``lspo_playout``
(LSPO with per-decision playout values, for games too large for CFR: Werewolf),
``proposer_solver`` (self-play task synthesis with a verifier), plus ``arena llm-train``.

All of them update an ``llm`` agent's weights (full or LoRA) with transformers + torch through the
trainer contract, so they run in ``arena league`` configs as well. See docs/llm_training.md.
"""

from __future__ import annotations

from arena.hookspecs import hookimpl
from arena.trainer import TrainerEntry

from .driver import arena_commands  # noqa: F401  (the llm-train command)


@hookimpl
def arena_trainers() -> list[TrainerEntry]:
    from .aa import AA_DEFAULTS, make_llm_aa
    from .arenarl import ArenaRL, make_arenarl
    from .base import COMMON
    from .dpo import DPO, make_dpo
    from .inpo import INPO, make_inpo
    from .lspo import LSPO, make_lspo
    from .lspo_playout import PlayoutLSPO, make_lspo_playout
    from .proposer_solver import ProposerSolver, make_proposer_solver
    from .selfplay_rlvr import SelfPlayRLVR, make_selfplay_rlvr
    from .sppo import SPPO, make_sppo

    return [
        TrainerEntry(
            "selfplay_rlvr",
            make_selfplay_rlvr,
            "LLM self-play RL on game outcomes with role-conditioned baselines (SPIRAL)",
            {**COMMON, **SelfPlayRLVR.defaults},
        ),
        TrainerEntry(
            "sppo",
            make_sppo,
            "LLM self-play preference optimization, preferences from game outcomes",
            {**COMMON, **SPPO.defaults},
        ),
        TrainerEntry(
            "inpo",
            make_inpo,
            "iterative Nash policy optimization: no-regret mirror descent on judged preference pairs",
            {**COMMON, **INPO.defaults},
        ),
        TrainerEntry(
            "llm_advantage_alignment",
            make_llm_aa,
            "Advantage Alignment for LLM agents (leave-one-out group baseline)",
            {**COMMON, **AA_DEFAULTS},
        ),
        TrainerEntry(
            "arenarl",
            make_arenarl,
            "ArenaRL: groups of rollouts per task ranked by a judge tournament, rank advantages into PG",
            {**COMMON, **ArenaRL.defaults},
        ),
        TrainerEntry(
            "dpo",
            make_dpo,
            "LLM direct preference optimization (pairs from outcomes, or fit(pairs))",
            {**COMMON, **DPO.defaults},
        ),
        TrainerEntry(
            "lspo",
            make_lspo,
            "latent space policy optimization: cluster talk, CFR on the abstract "
            "game, DPO toward the favoured latent strategies",
            {**COMMON, **LSPO.defaults},
        ),
        TrainerEntry(
            "lspo_playout",
            make_lspo_playout,
            "LSPO for large talk games (Werewolf): cluster talk, value each latent strategy and move "
            "by playouts, DPO toward the best",
            {**COMMON, **PlayoutLSPO.defaults},
        ),
        TrainerEntry(
            "proposer_solver",
            make_proposer_solver,
            "self-play task synthesis with a verifier: a proposer paid at the solver's frontier "
            "(4p(1-p) or the SvS band), a solver paid by the verifier, one LLM (SSP, SvS, R-Zero)",
            {**COMMON, **ProposerSolver.defaults},
        ),
    ]
