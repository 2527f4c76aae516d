"""The LLM agent: prompt template + backend + action-selection rule.

``act_batch_info`` sends every pending decision of the concurrent games to the backend in one
call (one ``score`` call for scored choices, one ``generate`` call per retry round), so a
backend like vLLM sees the whole batch. Per-decision info carries what trainers need:
prompt/completion token ids and log-probs, the policy's log-prob of the chosen action, and
the accounting numbers.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any, Mapping, Sequence

from arena.agent import Agent, Observation, sample_from
from arena.errors import ArenaError
from arena.plugins.agents.llm.accounting import Usage
from arena.plugins.agents.llm.backend import Backend
from arena.plugins.agents.llm.prompts import PromptBuilder
from arena.plugins.agents.llm.selection import FALLBACKS, clip_text, parse_choice, softmax_policy

MODES = ("scored", "generated")
SCORES = ("sum", "mean")
"""An action's score: the continuation's total log-prob (its exact likelihood) or the mean
per token (removes the bias against long labels, at the cost of not being a likelihood)."""


def check_settings(
    mode: str, fallback: str, score: str, retries: int, max_new_tokens: int, max_text_tokens: int, temperature: float
) -> None:
    """Reject bad settings with one clear line (before any model is loaded)."""
    if mode not in MODES:
        raise ArenaError(f"llm agent: mode must be one of {', '.join(MODES)}, not {mode!r}")
    if fallback not in FALLBACKS:
        raise ArenaError(f"llm agent: fallback must be one of {', '.join(FALLBACKS)}, not {fallback!r}")
    if score not in SCORES:
        raise ArenaError(f"llm agent: score must be one of {', '.join(SCORES)}, not {score!r}")
    if retries < 0 or max_new_tokens < 1 or max_text_tokens < 1:
        raise ArenaError("llm agent: retries must be >= 0 and max_new_tokens, max_text_tokens >= 1")
    if temperature < 0:
        raise ArenaError(f"llm agent: temperature must be >= 0, not {temperature}")


class LLMAgent(Agent):
    name = "llm"

    def __init__(
        self,
        backend: Backend,
        mode: str = "scored",
        temperature: float = 1.0,
        prompts: PromptBuilder | None = None,
        retries: int = 2,
        fallback: str = "forfeit",
        retry_temperature: float = 1.0,
        max_new_tokens: int = 16,
        max_text_tokens: int = 64,
        cache: bool = False,
        score: str = "sum",
    ) -> None:
        check_settings(mode, fallback, score, retries, max_new_tokens, max_text_tokens, temperature)
        if (mode == "scored" or fallback == "scored") and not backend.supports_scoring:
            raise ArenaError(
                f"llm agent: backend '{backend.name}' cannot score actions in this configuration; "
                "use mode=generated with fallback=forfeit, random or first"
            )
        self.backend, self.mode, self.temperature = backend, mode, float(temperature)
        self.prompts = prompts or PromptBuilder(chat=backend.render_chat)
        self.retries, self.fallback, self.retry_temperature = retries, fallback, retry_temperature
        self.max_new_tokens, self.max_text_tokens = max_new_tokens, max_text_tokens
        self.score = score
        self.cache: dict[tuple, dict[str, Any]] | None = {} if cache else None
        self.usage = Usage()

    @property
    def model(self) -> Any:
        """The backend's model object (transformers), for trainers that update it in place."""
        return getattr(self.backend, "model", None)

    def save(self, directory: Any) -> None:
        """The backend's model (a trainer that attaches to the agent saves the trained weights)."""
        save = getattr(self.backend, "save", None)
        if save is None:
            raise ArenaError(
                f"llm agent: backend '{self.backend.name}' cannot save its model; "
                "snapshot an agent on the transformers backend"
            )
        save(directory)

    # -- the agent contract -------------------------------------------------------------------
    def act_batch(self, observations: Sequence[Observation]) -> list:
        return self.act_batch_info(observations)[0]

    def act_batch_info(self, observations: Sequence[Observation]) -> tuple[list, list[dict[str, Any]]]:
        n = len(observations)
        actions: list[Any] = [None] * n
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        prompts = [self.prompts.build(o) for o in observations]
        for i, o in enumerate(observations):
            infos[i]["prompt"] = prompts[i]
        text = [i for i, o in enumerate(observations) if o.decision == "text"]
        choice = [i for i, o in enumerate(observations) if o.decision == "choice"]
        if self.mode == "scored":
            scored = self._policies([observations[i] for i in choice], [prompts[i] for i in choice])
            for i, (probs, detail) in zip(choice, scored):
                a = sample_from(probs, observations[i].rng)
                actions[i] = a
                k = observations[i].legal_actions.index(a)
                infos[i].update(
                    detail,
                    log_prob=math.log(max(probs[a], 1e-300)),
                    policy=probs,
                    prompt_ids=detail["prompt_ids"],
                    completion_ids=detail["completion_ids"][k],
                    completion_logprobs=detail["token_logprobs"][k],
                )
        else:
            text = sorted(text + choice)
        if text:
            self._generate(observations, prompts, text, actions, infos)
        for i in range(n):
            infos[i].pop("token_logprobs", None)
        self.usage.decisions += n
        return actions, infos

    def policy(self, obs: Observation) -> Mapping[int, float]:
        """The scored policy at this decision (exact: it is what scored mode samples from)."""
        if obs.decision != "choice":
            raise ArenaError("llm agent: a text decision has no action distribution")
        return self._policies([obs], [self.prompts.build(obs)])[0][0]

    # -- scored ------------------------------------------------------------------------------
    def _policies(self, obs: Sequence[Observation], prompts: Sequence[str]) -> list[tuple[dict[int, float], dict]]:
        out: list[Any] = [None] * len(obs)
        todo = []
        for i, (o, p) in enumerate(zip(obs, prompts)):
            key = (p, tuple(o.action_labels))
            if self.cache is not None and key in self.cache:
                probs, detail = self.cache[key]
                out[i] = (probs, {**detail, "tokens_in": 0, "latency_s": 0.0, "cached": True})
                self.usage.cache_hits += 1
            else:
                todo.append(i)
        if todo:
            conts = [[self.prompts.continuation(lbl) for lbl in obs[i].action_labels] for i in todo]
            t0 = time.perf_counter()
            res = self.backend.score([prompts[i] for i in todo], conts, **self._adapters([obs[i] for i in todo]))
            dt = time.perf_counter() - t0
            self.usage.backend_calls += 1
            self.usage.latency_s += dt
            for i, row in zip(todo, res):
                scores = [s.logprob if self.score == "sum" else s.logprob / max(1, len(s.token_logprobs)) for s in row]
                probs = softmax_policy(obs[i].legal_actions, scores, self.temperature)
                tokens_in = sum(s.tokens_in for s in row)
                self.usage.tokens_in += tokens_in
                detail = {
                    "scores": scores,
                    "prompt_ids": row[0].prompt_ids if row else None,
                    "completion_ids": [s.completion_ids for s in row],
                    "token_logprobs": [s.token_logprobs for s in row],
                    "tokens_in": tokens_in,
                    "tokens_out": 0,
                    "latency_s": dt,
                    "invalid_attempts": 0,
                }
                out[i] = (probs, detail)
                if self.cache is not None:
                    self.cache[(prompts[i], tuple(obs[i].action_labels))] = out[i]
        return out

    # -- generated ---------------------------------------------------------------------------
    def _generate(
        self,
        observations: Sequence[Observation],
        prompts: Sequence[str],
        idx: list[int],
        actions: list,
        infos: list[dict],
    ) -> None:
        """Batched generation with the retry rule of :mod:`selection`; one backend call per round."""
        pending = list(idx)
        for i in pending:
            infos[i].update(
                attempts=[], invalid_attempts=0, retries=0, tokens_in=0, tokens_out=0, latency_s=0.0, fallback=False
            )
        for round_ in range(self.retries + 1):
            if not pending:
                break
            temp = self.temperature if round_ == 0 or self.temperature > 0 else self.retry_temperature
            seeds = [int(observations[i].rng.integers(2**31)) for i in pending]
            t0 = time.perf_counter()
            talk = any(observations[i].decision == "text" for i in pending)
            gens = self.backend.generate(
                [prompts[i] for i in pending],
                temperature=temp,
                seeds=seeds,
                stop=["\n"],
                max_tokens=self.max_text_tokens if talk else self.max_new_tokens,
                **self._adapters([observations[i] for i in pending]),
            )
            dt = time.perf_counter() - t0
            self.usage.backend_calls += 1
            self.usage.latency_s += dt
            if round_:
                self.usage.retries += len(pending)
            still = []
            for i, g in zip(pending, gens):
                o, info = observations[i], infos[i]
                self.usage.tokens_in += g.tokens_in
                self.usage.tokens_out += g.tokens_out
                info["tokens_in"] += g.tokens_in
                info["tokens_out"] += g.tokens_out
                info["latency_s"] += dt
                info["attempts"].append(g.text)
                info["retries"] += 1 if round_ else 0
                info.update(
                    prompt_ids=g.prompt_ids, completion_ids=g.completion_ids, completion_logprobs=g.token_logprobs
                )
                if g.token_logprobs is not None:
                    info["log_prob"] = float(sum(g.token_logprobs))
                if o.decision == "text":
                    actions[i] = clip_text(g.text, o.max_text_length)
                    continue
                a = parse_choice(g.text, o)
                if a is None:
                    info["invalid_attempts"] += 1
                    self.usage.invalid_attempts += 1
                    still.append(i)
                else:
                    actions[i] = a
            pending = still
        for i in pending:
            self._fall_back(observations[i], prompts[i], i, actions, infos)

    def _fall_back(self, o: Observation, prompt: str, i: int, actions: list, infos: list[dict]) -> None:
        infos[i].pop("log_prob", None)  # the action did not come from the sampled text
        if self.fallback == "forfeit":  # no move is made up: the match runner forfeits the game
            self.usage.forfeits += 1
            tried = infos[i]["attempts"]
            infos[i]["forfeit"] = f"{len(tried)} answer(s) named no legal action (last: {tried[-1][:80]!r})"
            return
        self.usage.fallbacks += 1
        infos[i]["fallback"] = infos[i]["substituted"] = True
        if self.fallback == "first":
            actions[i] = o.legal_actions[0]
        elif self.fallback == "random":
            actions[i] = o.legal_actions[int(o.rng.integers(len(o.legal_actions)))]
        else:
            probs, _ = self._policies([o], [prompt])[0]
            actions[i] = sample_from(probs, o.rng)
            infos[i]["log_prob"] = math.log(max(probs[actions[i]], 1e-300))

    # -- deciding together: LoRA adapters of one base model --------------------------------------
    _route_of: dict[int, str] | None = None
    """During :meth:`act_together`: each observation's adapter (by ``id``)."""

    def _adapters(self, observations: Sequence[Observation]) -> dict[str, Any]:
        if self._route_of is None:
            return {}
        return {"adapters": [self._route_of[id(o)] for o in observations]}

    def cobatch_key(self) -> Any:
        """Agents that are adapters of one shared base model with the same settings decide
        together: their decisions go to the backend as one mixed-adapter batch (one forward pass).
        Not with ``cache`` (its entries would cross adapters)."""
        b = self.backend
        if getattr(b, "base", None) is None or getattr(b, "adapter", None) is None or self.cache is not None:
            return None
        p = self.prompts
        prompt = (repr(sorted(p.overrides.items())), p.instruction, p.chat is None, p.legal_moves, p.observation)
        knobs = (self.mode, self.temperature, self.retries, self.fallback, self.retry_temperature)
        return ("llm-adapters", id(b.base), *knobs, self.max_new_tokens, self.max_text_tokens, self.score, prompt)

    @staticmethod
    def act_together(parts: Sequence[tuple[Any, Sequence[Observation]]]) -> list[tuple[list, list[dict[str, Any]]]]:
        """One batched decision for several adapter agents (same :meth:`cobatch_key`): the first
        one's prompts and rules, each row through its own agent's adapter. Each agent is credited
        its own decisions, tokens, invalid answers and fallbacks; shared calls' latency in proportion."""
        lead = parts[0][0]
        observations = [o for _, obs in parts for o in obs]
        lead._route_of = {id(o): a.backend.adapter for a, obs in parts for o in obs}
        own, lead.usage = lead.usage, Usage()
        try:
            actions, infos = lead.act_batch_info(observations)
        finally:
            used, lead.usage, lead._route_of = lead.usage, own, None
        out, k = [], 0
        for agent, obs in parts:
            part = slice(k, k + len(obs))
            k += len(obs)
            agent.usage.add_share(used, infos[part], len(obs) / max(1, len(observations)))
            out.append((actions[part], infos[part]))
        return out

    # -- accounting / lifecycle ----------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        return self.usage.as_dict()

    def write_tensorboard(self, writer: Any, step: int) -> None:
        self.usage.write_tensorboard(writer, self.name, step)

    def write_store(self, store: Any) -> None:
        """Keep the totals in a run store (:class:`arena.evaluation.store.RunStore`) as meta
        ``llm_usage/<agent>`` (JSON), next to the run's matches."""
        store.set_meta(f"llm_usage/{self.name}", json.dumps(self.stats()))

    release: Any = None
    """Set by the plugin factory when the backend is shared between agents (refcounted)."""

    def close(self) -> None:
        (self.release or (lambda b: b.close()))(self.backend)
