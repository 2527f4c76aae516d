"""Built-in judges (:mod:`arena.judge`): ``outcome`` (the game's returns), ``scorer`` (a callable
or the game's hidden metric, with controllable noise), ``preference`` (the game's own P(a ≻ b))
and ``llm`` (any ``llm`` backend with a
prompt template and rubric, both orders). See docs/arenarl.md."""

from __future__ import annotations

from arena.hookspecs import hookimpl
from arena.judge import JudgeEntry


# the judge classes are their own factories: factory(game, **params)
@hookimpl
def arena_judges() -> list[JudgeEntry]:
    from arena.plugins.agents.llm import PARAMS as LLM_AGENT_PARAMS

    from .basic import OUTCOME_PARAMS, PREFERENCE_PARAMS, SCORER_PARAMS, OutcomeJudge, PreferenceJudge, ScorerJudge
    from .llm import LLM_JUDGE_PARAMS, LLMJudge

    return [
        JudgeEntry(
            "outcome", OutcomeJudge, "the game's own returns: margin (R_a - R_b) / utility range", OUTCOME_PARAMS
        ),
        JudgeEntry(
            "scorer",
            ScorerJudge,
            "a callable or the game's judge_score metric, with seeded noise and per-call drift",
            SCORER_PARAMS,
        ),
        JudgeEntry(
            "preference",
            PreferenceJudge,
            "the game's own preference probability P(a ≻ b) (intransitive tasks): expected margin or sampled labels",
            PREFERENCE_PARAMS,
        ),
        JudgeEntry(
            "llm",
            LLMJudge,
            "an llm backend with a prompt template and rubric, run in both orders (position bias cancels)",
            {**LLM_AGENT_PARAMS, **LLM_JUDGE_PARAMS},
        ),
    ]
