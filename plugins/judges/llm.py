"""``llm`` judge: an ``llm`` backend (transformers, vLLM, OpenAI-compatible) asked which of two
responses to the same task is better, under a rubric.

Position bias cancels by asking in both orders (as ArenaRL, arXiv 2601.06487, does: one
comparison costs two LLM calls): with ``P_first(x, y)`` the judge's probability that the
response shown first wins, ``P(a ≻ b) = (P_first(a, b) + 1 − P_first(b, a)) / 2`` and the
margin is ``2·P − 1``. ``P_first`` comes from the log-probabilities of the two verdict labels
when the backend can score continuations (exact, one batched ``score`` call for every prompt
of the round); otherwise from a short greedy generation parsed for a label (an unparsable
verdict counts as a tie and as an invalid attempt). The backend, its sharing between agents
and the usage accounting (calls, tokens, latency, invalid attempts) are the ``llm`` agent's.
"""

from __future__ import annotations

import math
import time
from typing import Any, Sequence

from arena.errors import ArenaError
from arena.game import Game
from arena.judge import Judge, Pair

TEMPLATE = (
    "You are a strict judge. {rubric}\nTask:\n{task}\n\nResponse A:\n{first}\n\nResponse B:\n{second}\n\n"
    "Which response is better? Answer A or B.\nAnswer:"
)
RUBRIC = "Prefer the response that completes the task better: relevant, feasible, detailed and clear."
LLM_JUDGE_PARAMS: dict[str, Any] = {
    "template": TEMPLATE,
    "rubric": RUBRIC,
    "labels": ["A", "B"],
    "both_orders": True,
    "max_chars": 2000,
}


class LLMJudge(Judge):
    pointwise = False

    def __init__(
        self,
        game: Game,
        template: str = TEMPLATE,
        rubric: str = RUBRIC,
        labels: Any = ("A", "B"),
        both_orders: bool = True,
        max_chars: int = 2000,
        **agent_params: Any,
    ) -> None:
        from arena.plugins.agents.llm import PARAMS, make_llm_agent

        unknown = sorted(set(agent_params) - set(PARAMS))
        if unknown:
            raise ArenaError(
                f"no parameter {', '.join(map(repr, unknown))}; parameters: "
                f"{', '.join(sorted(set(LLM_JUDGE_PARAMS) | set(PARAMS)))}"
            )
        for key in ("{task}", "{first}", "{second}"):
            if key not in template:
                raise ArenaError(f"template must contain {key}")
        labels = list(labels)
        if len(labels) != 2 or labels[0] == labels[1]:
            raise ArenaError(f"labels must be two different verdicts, got {labels}")
        self.agent = make_llm_agent(game, **{"mode": "generated", "temperature": 0.0, **agent_params})
        self.template, self.rubric, self.labels = template, rubric, [str(x) for x in labels]
        self.both_orders, self.max_chars = bool(both_orders), int(max_chars)

    @property
    def usage(self) -> Any:
        return self.agent.usage

    def _prompt(self, task: str, first: str, second: str) -> str:
        cut = self.max_chars
        return self.template.format(rubric=self.rubric, task=task[:cut], first=first[:cut], second=second[:cut])

    def _p_first(self, prompts: list[str]) -> list[float]:
        """P(the response shown first wins) per prompt, one backend call for all of them."""
        backend, usage = self.agent.backend, self.agent.usage
        t0 = time.perf_counter()
        out = []
        if backend.supports_scoring:
            rows = backend.score(prompts, [[" " + lbl for lbl in self.labels]] * len(prompts))
            for row in rows:
                la, lb = row[0].logprob, row[1].logprob
                m = max(la, lb)
                out.append(math.exp(la - m) / (math.exp(la - m) + math.exp(lb - m)))
                usage.tokens_in += sum(s.tokens_in for s in row)
        else:
            gens = backend.generate(prompts, max_tokens=4, temperature=0.0, seeds=[0] * len(prompts), stop=["\n"])
            for g in gens:
                usage.tokens_in += g.tokens_in
                usage.tokens_out += g.tokens_out
                verdict = g.text.strip()[:1]
                if verdict == self.labels[0][:1]:
                    out.append(1.0)
                elif verdict == self.labels[1][:1]:
                    out.append(0.0)
                else:
                    usage.invalid_attempts += 1
                    out.append(0.5)
        usage.backend_calls += 1
        usage.latency_s += time.perf_counter() - t0
        usage.decisions += len(prompts)
        return out

    def compare(self, pairs: Sequence[Pair]) -> list[float]:
        prompts = [self._prompt(a.task, a.response, b.response) for a, b in pairs]
        if self.both_orders:
            prompts += [self._prompt(a.task, b.response, a.response) for a, b in pairs]
        p = self._p_first(prompts)
        n = len(pairs)
        if not self.both_orders:
            return [2.0 * x - 1.0 for x in p]
        return [(p[i] + 1.0 - p[n + i]) - 1.0 for i in range(n)]  # 2 * mean - 1

    def stats(self) -> dict[str, float]:
        u = self.agent.usage
        return {
            **super().stats(),
            "calls": float(u.backend_calls),
            "tokens_in": float(u.tokens_in),
            "tokens_out": float(u.tokens_out),
            "latency_s": u.latency_s,
            "invalid_verdicts": float(u.invalid_attempts),
        }

    def close(self) -> None:
        self.agent.close()
