"""Policy gradient on action tokens: what every LLM trainer here shares.

A *decision* is one move the learner made, as the match runner recorded it: the prompt's token
ids and the token ids of the response(s). Its log-probability under the trainer's model is

- scored mode: ``log softmax_j(logp(label_j | prompt) / T)[chosen]`` (with ``score: mean``, the
  label's log-prob divided by its token count, as the agent scores it) — the exact probability
  the agent sampled from (every legal label is a response, the chosen one is the action);
- generated mode and free text: the summed log-prob of the sampled completion at T = 1.

The update is the clipped surrogate of PPO/GRPO with one ratio per decision
(``exp(logp - logp_old)``; logp_old recomputed by the trainer before the first epoch), a
truncated importance weight ``min(exp(logp_old - logp_behaviour), cap)`` when the sampler's
numbers (e.g. vLLM) differ from the trainer's, an optional KL to a frozen reference (exact
over the labels in scored mode, the k3 estimator on the completion otherwise) and an optional
entropy bonus, exact over the labels of scored decisions: it keeps a scored policy from
saturating (at T = 16 a few updates can push one label's probability to 0.999, after which it
gets no gradient back).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from arena.trainer import Trajectory


@dataclass
class Decision:
    traj: int
    step: int
    player: int
    prompt_ids: list[int]
    responses: list[list[int]]
    chosen: int
    scored: bool
    temperature: float
    behaviour_logp: float | None
    invalid: int = 0
    fallback: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    per_token: bool = False
    """A scored decision of a ``score: mean`` agent: its labels' scores are mean per-token
    log-probs, so its policy is a softmax of those (not of the sums)."""


def learner_decisions(trajectories: Sequence[Trajectory], agent: Any) -> list[Decision]:
    """Every decision of ``agent`` (by seat name) that carries token ids, in game order."""
    out: list[Decision] = []
    for t, traj in enumerate(trajectories):
        for k, step in enumerate(traj.steps):
            if traj.seats[step.player] != agent.name:
                continue
            d = decision_of(step, agent)
            if d is not None:
                d.traj, d.step = t, k
                out.append(d)
    return out


def decision_of(step: Any, agent: Any) -> Decision | None:
    ex, obs = step.extra, step.observation
    prompt = ex.get("prompt_ids")
    if not prompt:
        return None
    scored = obs.decision == "choice" and "scores" in ex and not ex.get("attempts")
    if scored:
        agent.prompts.build(obs)  # sets whether the chat template was used, which shapes the labels
        responses = [agent.backend.encode(agent.prompts.continuation(lbl)) for lbl in obs.action_labels]
        chosen = obs.legal_actions.index(step.action)
    else:
        if ex.get("completion_ids") is None:
            return None
        responses, chosen = [list(ex["completion_ids"])], 0
    return Decision(
        0,
        0,
        step.player,
        list(prompt),
        responses,
        chosen,
        scored,
        float(agent.temperature),
        step.log_prob,
        int(ex.get("invalid_attempts", 0) or 0),
        bool(ex.get("fallback", False)),
        per_token=scored and getattr(agent, "score", "sum") == "mean",
    )


def action_logprobs(
    trainable: Any, decisions: Sequence[Decision], grad: bool = True, model: Any = None
) -> tuple[Any, list]:
    """log pi(action) per decision (one tensor) and, for scored decisions, the full log-policy
    over the labels (for an exact KL); ``None`` for generated ones."""
    import torch

    pairs, spans = [], []
    for d in decisions:
        spans.append((len(pairs), len(d.responses)))
        pairs += [(d.prompt_ids, r) for r in d.responses]
    seq = trainable.logprobs(pairs, grad=grad, model=model)
    out, dists = [], []
    for d, (a, n) in zip(decisions, spans):
        if d.scored:
            scores = seq[a : a + n]
            if d.per_token:  # the agent's own score: mean log-prob per label token
                scores = scores / torch.tensor(
                    [max(1, len(r)) for r in d.responses], dtype=scores.dtype, device=scores.device
                )
            logpol = torch.log_softmax(scores / max(d.temperature, 1e-6), dim=0)
            out.append(logpol[d.chosen])
            dists.append(logpol)
        else:
            out.append(seq[a])
            dists.append(None)
    return torch.stack(out), dists


def kl_to_reference(trainable: Any, decisions: Sequence[Decision], logp: Any, dists: list, ref_model: Any) -> Any:
    """Mean KL(pi_theta || pi_ref): exact over the labels when scored, k3 on the sample otherwise."""
    import torch

    with torch.no_grad():
        ref_logp, ref_dists = action_logprobs(trainable, decisions, grad=False, model=ref_model)
    terms = []
    for i, (d, q) in enumerate(zip(dists, ref_dists)):
        if d is not None:
            terms.append((d.exp() * (d - q)).sum())
        else:
            x = ref_logp[i] - logp[i]
            terms.append(x.exp() - x - 1.0)
    return torch.stack(terms).mean()


def clipped_pg_update(
    trainable: Any,
    decisions: Sequence[Decision],
    advantages: Sequence[float],
    *,
    epochs: int = 1,
    clip: float = 0.2,
    is_cap: float = 2.0,
    kl: float = 0.0,
    ref_model: Any = None,
    minibatches: int = 1,
    seed: int = 0,
    entropy: float = 0.0,
) -> dict[str, float]:
    """The shared update (module docstring). Decisions with zero advantage are dropped
    (they carry no gradient), as SPIRAL's ``filter_zero_adv`` does."""
    import numpy as np
    import torch

    keep = [i for i, a in enumerate(advantages) if a != 0.0]
    if not keep:
        return {"loss": 0.0, "decisions": 0.0, "clip_frac": 0.0, "grad_norm": 0.0, "kl": 0.0, "entropy": 0.0}
    decs = [decisions[i] for i in keep]
    adv = torch.tensor([float(advantages[i]) for i in keep], dtype=torch.float32)
    with torch.no_grad():
        old, _ = action_logprobs(trainable, decs, grad=False)
    behaviour = torch.tensor(
        [d.behaviour_logp if d.behaviour_logp is not None else float(old[i]) for i, d in enumerate(decs)],
        dtype=torch.float32,
        device=old.device,
    )
    adv = adv.to(old.device)
    raw_w = torch.exp(old - behaviour)
    tis = torch.clamp(raw_w, max=is_cap)
    rng = np.random.default_rng(seed)
    stats = {"loss": 0.0, "clip_frac": 0.0, "grad_norm": 0.0, "kl": 0.0, "entropy": 0.0}
    n_steps = 0
    for _ in range(max(1, epochs)):
        order = rng.permutation(len(decs))
        for part in np.array_split(order, max(1, min(minibatches, len(decs)))):
            idx = torch.as_tensor(part, dtype=torch.long)
            sub = [decs[i] for i in part]
            logp, dists = action_logprobs(trainable, sub)
            ratio = torch.exp(logp - old[idx])
            a = adv[idx] * tis[idx]
            surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - clip, 1 + clip) * a)
            loss = -surrogate.mean()
            if kl > 0 and ref_model is not None:
                k = kl_to_reference(trainable, sub, logp, dists, ref_model)
                loss = loss + kl * k
                stats["kl"] += float(k.detach())
            label_dists = [q for q in dists if q is not None]
            if label_dists:
                ent = torch.stack([-(q.exp() * q).sum() for q in label_dists]).mean()
                if entropy > 0:
                    loss = loss - entropy * ent
                stats["entropy"] += float(ent.detach())
            stats["grad_norm"] += trainable.step(loss)
            stats["loss"] += float(loss.detach())
            stats["clip_frac"] += float(((ratio - 1).abs() > clip).float().mean())
            n_steps += 1
    out = {k: v / n_steps for k, v in stats.items()}
    out["decisions"] = float(len(decs))
    out["is_weight_mean"] = float(tis.mean())  # behaviour -> proximal weight (stale or engine-sampled games)
    out["is_capped_frac"] = float((raw_w > is_cap).float().mean())
    return out
