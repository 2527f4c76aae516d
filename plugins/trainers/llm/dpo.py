"""``dpo``: Direct Preference Optimization (Rafailov et al. 2023) on an ``llm`` agent.

Preference pairs in, weights out. A pair is a prompt (token ids) with a *chosen* and a
*rejected* response (token ids); the loss is

    -log sigmoid(beta * ((log pi(y_c|x) - log ref(y_c|x)) - (log pi(y_r|x) - log ref(y_r|x))))

with log pi the summed log-prob of the response tokens (:meth:`TrainableLLM.logprobs`), and
``ref`` a frozen reference: the model the trainer started from (``reference: initial``, the
usual DPO) or the weights at the start of each ``fit`` (``reference: iteration``, an
iterated DPO that moves the anchor each round). Full weights or LoRA, like every LLM trainer
here (:mod:`.base`). ``nll`` α > 0 adds α times the chosen responses' mean per-token negative
log-likelihood (the NLL term of iterative RPO, Pang et al. 2024): DPO alone only asks the chosen
response to gain *relative* to the rejected one, and an iterated DPO on free text can satisfy that
by moving both toward text the model never said (measured on Werewolf, docs/results/werewolf.md).
``replay`` N > 0 keeps the last N pairs of earlier fits and fits them again beside each new batch:
with ``reference: initial`` every pair's target is a margin over the same fixed model, so the
pairs of all rounds are one preference dataset that grows, where a loop that fits each round's
few pairs alone lets the next round's noise undo them (measured on Werewolf, docs/results/werewolf.md).

Three ways in:

- :meth:`DPO.fit` takes pairs directly — what LSPO (:mod:`.lspo`) and any other pair source
  use;
- ``pairs: FILE`` — a TRL preference file made by ``arena export --format trl-preference``
  (e.g. ``--source human``: a person's moves chosen over the agent's own, from hosted games),
  fit at every update beside (or, with ``outcome_pairs: false``, instead of) the outcome pairs
  below: offline preference data through the same ``arena llm-train`` / ``arena league`` loop;
- :meth:`DPO.update` (the trainer contract, so ``arena llm-train`` / ``arena league`` host it)
  reads pairs from game outcomes: among the learner's decisions that show the same prompt,
  a response from a seat whose return beat the prompt's mean return is chosen over a
  different response from a seat below it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from arena.atomic import write_text_atomic
from arena.errors import ArenaError
from arena.game import Game
from arena.trainer import Trajectory

from .base import LLMTrainer
from .tokens import learner_decisions

REFERENCES = ("initial", "iteration")


@dataclass(frozen=True)
class PreferencePair:
    prompt_ids: tuple[int, ...]
    chosen_ids: tuple[int, ...]
    rejected_ids: tuple[int, ...]
    per_token: bool = False
    """Compare the responses' *mean* per-token log-probs instead of their sums: the log-policy of
    a scored agent with ``score: mean`` (its move probabilities are a softmax of the mean), so
    DPO moves the probabilities that agent actually plays. With sums, a pair between labels of
    different lengths (``check`` / ``bet``) can raise the chosen response's summed margin while
    the agent's mean-score policy moves the other way."""
    origin: Any = field(default=None, compare=False, hash=False, repr=False)
    """The recorded :class:`arena.trainer.Step` the pair was made at (the chosen response's), so
    :meth:`DPO.keep_pairs` can say which game, seat and step it came from; not part of the pair."""


def dpo_loss(
    pi_chosen: Any,
    pi_rejected: Any,
    ref_chosen: Any,
    ref_rejected: Any,
    beta: float,
    label_smoothing: float = 0.0,
    nll: float = 0.0,
    chosen_tokens: Any = None,
) -> tuple[Any, Any]:
    """Mean DPO loss and the per-pair implicit reward margin
    ``beta * ((pi_c - ref_c) - (pi_r - ref_r))`` (tensors of summed log-probs, one per pair).
    ``nll`` α adds ``α * mean(-pi_c / chosen_tokens)``: the chosen responses' per-token NLL.

    ``label_smoothing`` ε > 0 is conservative DPO (cDPO): each label is taken to be flipped with
    probability ε, so the loss is ``-(1-ε) log σ(m) - ε log σ(-m)``, minimal at the finite margin
    ``log((1-ε)/ε)`` instead of at infinity. It bounds how far one fit moves the policy from its
    reference: a pair stops pulling once its margin is reached."""
    import torch

    margin = beta * ((pi_chosen - ref_chosen) - (pi_rejected - ref_rejected))
    logsig = torch.nn.functional.logsigmoid
    loss = -(1.0 - label_smoothing) * logsig(margin) - label_smoothing * logsig(-margin)
    if nll:
        loss = loss - nll * pi_chosen / chosen_tokens
    return loss.mean(), margin


class DPO(LLMTrainer):
    name = "dpo"
    defaults = {
        "beta": 0.1,
        "epochs": 4,
        "reference": "initial",
        "minibatch": 0,
        "max_pairs_per_prompt": 4,
        "label_smoothing": 0.0,
        "nll": 0.0,
        "replay": 0,
        "pairs": None,
        "outcome_pairs": True,
    }

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        super().__init__(game, learners, **params)
        if self.p["reference"] not in REFERENCES:
            raise ArenaError(
                f"trainer '{self.name}': reference must be one of {', '.join(REFERENCES)}, not {self.p['reference']!r}"
            )
        if float(self.p["beta"]) <= 0:
            raise ArenaError(f"trainer '{self.name}': beta must be > 0, not {self.p['beta']}")
        if not 0.0 <= float(self.p["label_smoothing"]) < 0.5:
            raise ArenaError(
                f"trainer '{self.name}': label_smoothing must be in [0, 0.5), not {self.p['label_smoothing']}"
            )
        if float(self.p["nll"]) < 0:
            raise ArenaError(f"trainer '{self.name}': nll must be >= 0, not {self.p['nll']}")
        if int(self.p["replay"]) < 0:
            raise ArenaError(f"trainer '{self.name}': replay must be >= 0, not {self.p['replay']}")
        self.reference = self.model.frozen_copy()
        self.replayed: list[PreferencePair] = []
        self.file_pairs = self.read_pairs(self.p["pairs"]) if self.p["pairs"] else []

    # -- pairs in ---------------------------------------------------------------------------------
    def pair_logprobs(self, pairs: Sequence[PreferencePair], grad: bool, model: Any = None) -> tuple[Any, Any]:
        """Summed log-probs of the chosen and rejected responses (two tensors)."""
        seq = self.model.logprobs(
            [(p.prompt_ids, r) for p in pairs for r in (p.chosen_ids, p.rejected_ids)], grad=grad, model=model
        )
        if any(p.per_token for p in pairs):
            import torch

            size = [len(r) if p.per_token else 1 for p in pairs for r in (p.chosen_ids, p.rejected_ids)]
            seq = seq / torch.as_tensor(size, dtype=seq.dtype, device=seq.device)
        return seq[0::2], seq[1::2]

    def fit(self, pairs: Sequence[PreferencePair], fixed: Sequence[PreferencePair] = ()) -> dict[str, float]:
        """``epochs`` passes of DPO over ``pairs``, the ``replay`` buffer and ``fixed`` (pairs fit at
        every call and never replayed: a ``pairs`` file), in ``minibatch``-sized chunks (0 = all
        at once)."""
        import torch

        new = [p for p in pairs if p.chosen_ids != p.rejected_ids]
        old = self.replayed
        keep = int(self.p["replay"])
        self.replayed = (old + new)[-keep:] if keep else []
        pairs = old + new + list(fixed)
        if not pairs:
            self.updates += 1
            return {"dpo/pairs": 0.0}
        if self.p["reference"] == "iteration":
            self.model.refresh(self.reference)
        with torch.no_grad():
            ref_c, ref_r = self.pair_logprobs(pairs, grad=False, model=self.reference)
        # a per-token mean already (per_token pairs) or a sum over the chosen response's tokens
        tokens = torch.as_tensor([1 if p.per_token else len(p.chosen_ids) for p in pairs], dtype=ref_c.dtype)
        rng = np.random.default_rng([int(self.p["seed"]), self.updates])
        size = int(self.p["minibatch"]) or len(pairs)
        losses, margins, norms = [], [], []
        for _ in range(max(1, int(self.p["epochs"]))):
            order = rng.permutation(len(pairs))
            for start in range(0, len(pairs), size):
                idx = order[start : start + size]
                sub = [pairs[i] for i in idx]
                t = torch.as_tensor(idx, dtype=torch.long)
                pc, pr = self.pair_logprobs(sub, grad=True)
                loss, margin = dpo_loss(
                    pc,
                    pr,
                    ref_c[t],
                    ref_r[t],
                    float(self.p["beta"]),
                    float(self.p["label_smoothing"]),
                    float(self.p["nll"]),
                    tokens[t].to(pc.device),
                )
                norms.append(self.model.step(loss))
                losses.append(float(loss.detach()))
                margins.append(float(margin.detach().mean()))
        self.model.sync()
        self.updates += 1
        with torch.no_grad():
            pc, pr = self.pair_logprobs(pairs, grad=False)
        return {
            "dpo/pairs": float(len(new)),
            "dpo/replayed": float(len(old)),
            "dpo/loss_first": losses[0],
            "dpo/loss_last": losses[-1],
            "dpo/reward_margin": margins[-1],
            "dpo/grad_norm": float(np.mean(norms)),
            "dpo/logp_margin": float((pc - pr).mean()),
            "dpo/accuracy": float(((pc - ref_c) > (pr - ref_r)).float().mean()),
        }

    # -- the trainer contract: pairs from game outcomes --------------------------------------------
    def outcome_pairs(self, trajectories: Sequence[Trajectory]) -> list[PreferencePair]:
        """Per prompt, responses of seats that beat the prompt's mean return over different
        responses of seats below it (at most ``max_pairs_per_prompt`` pairs per prompt)."""
        groups: dict[tuple[int, ...], list[tuple[float, tuple[int, ...]]]] = {}
        origin: dict[tuple[tuple[int, ...], tuple[int, ...]], Any] = {}  # (prompt, response) -> its first step
        for d in learner_decisions(trajectories, self.agent):
            ret = float(trajectories[d.traj].returns[d.player])
            response = tuple(d.responses[d.chosen])
            groups.setdefault(tuple(d.prompt_ids), []).append((ret, response))
            origin.setdefault((tuple(d.prompt_ids), response), trajectories[d.traj].steps[d.step])
        rng = np.random.default_rng([int(self.p["seed"]), self.updates, 1])
        out = []
        cap = int(self.p["max_pairs_per_prompt"])
        for prompt in sorted(groups):
            rows = groups[prompt]
            mean = float(np.mean([r for r, _ in rows]))
            good = [y for r, y in rows if r > mean]
            bad = [y for r, y in rows if r < mean]
            cands = [(c, r) for c in dict.fromkeys(good) for r in dict.fromkeys(bad) if c != r]
            if len(cands) > cap:
                cands = [cands[i] for i in sorted(rng.choice(len(cands), size=cap, replace=False))]
            out += [PreferencePair(prompt, c, r, origin=origin[(prompt, c)]) for c, r in cands]
        return out

    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        pairs = self.outcome_pairs(trajectories) if self.p["outcome_pairs"] else []
        self.keep_pairs(pairs, trajectories)
        return {**self.fit(pairs, self.file_pairs), "dpo/file_pairs": float(len(self.file_pairs))}

    # -- pairs from a file: `arena export --format trl-preference` (people's moves, or any run's) --
    def read_pairs(self, path: Any) -> list[PreferencePair]:
        """The pairs of a TRL preference JSONL file in the learner's tokens: rows with token ids
        (a run's own export) use them; rows whose responses are moves (``"response": "move"``:
        ``arena export --source human``) score each move as the agent scores a label (its
        continuation after the prompt, as in :func:`.tokens.decision_of`); other rows' text is
        tokenized as it is. Every row must be of the trained game."""
        from pathlib import Path

        file = Path(str(path))
        if not file.is_file():
            raise ArenaError(f"trainer '{self.name}': pairs file not found: {file} (make it with `arena export`)")
        agent, backend, game = self.agent, self.agent.backend, self.game.spec.full_name
        chat = agent.prompts.chat
        agent.prompts.chat_active = chat is not None and chat([{"role": "user", "content": "x"}]) is not None
        per_token = getattr(agent, "score", "sum") == "mean"
        out = []
        for n, line in enumerate(file.read_text().splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("game") not in (None, game):
                raise ArenaError(f"trainer '{self.name}': {file}:{n} is a pair of game {row['game']!r}, not {game!r}")
            if "chosen_ids" in row:
                out.append(
                    PreferencePair(
                        tuple(row["prompt_ids"]),
                        tuple(row["chosen_ids"]),
                        tuple(row["rejected_ids"]),
                        bool(row.get("per_token")),
                    )
                )
                continue
            move = row.get("response") == "move"
            response = (lambda t: backend.encode(agent.prompts.continuation(t))) if move else backend.encode
            out.append(
                PreferencePair(
                    tuple(backend.prompt_ids(row["prompt"])),
                    tuple(response(row["chosen"])),
                    tuple(response(row["rejected"])),
                    per_token and move,
                )
            )
        if not out:
            raise ArenaError(f"trainer '{self.name}': pairs file {file} holds no pairs")
        return out

    def keep_pairs(self, pairs: Sequence[PreferencePair], trajectories: Sequence[Trajectory]) -> None:
        """Write this update's pairs as text (the learner's tokenizer decodes them) with the game,
        seat, seed and step each came from, to ``data_dir/pairs/update-N.jsonl`` (whole or not
        at all; a replayed update rewrites its file): what ``arena export --format
        trl-preference`` reads. Nothing outside a run (``data_dir`` unset)."""
        if self.data_dir is None:
            return
        where = {id(step): (t, k) for t in trajectories for k, step in enumerate(t.steps)}
        tok = getattr(self.agent.backend, "tokenizer", None)  # chat-template tokens kept: the text is what was read
        decode = (
            self.agent.backend.decode if tok is None else (lambda ids: tok.decode(list(ids), skip_special_tokens=False))
        )
        lines = []
        for p in pairs:
            t, k = where.get(id(p.origin), (None, None))
            row = {
                "prompt": decode(p.prompt_ids),
                "chosen": decode(p.chosen_ids),
                "rejected": decode(p.rejected_ids),
                "source": self.name,
                "update": self.updates,
                "game": self.game.spec.full_name,
                "agent": self.agent.name,
                "seat": p.origin.player if p.origin is not None else None,
                "seed": t.seed if t is not None else None,
                "game_index": t.game_index if t is not None else None,
                "step": k,
                "per_token": p.per_token,
                "prompt_ids": list(p.prompt_ids),
                "chosen_ids": list(p.chosen_ids),
                "rejected_ids": list(p.rejected_ids),
            }
            lines.append(json.dumps(row) + "\n")
        write_text_atomic(self.data_dir / "pairs" / f"update-{self.updates:06d}.jsonl", "".join(lines))

    def extra_state(self) -> dict[str, Any]:
        rows = [[list(p.prompt_ids), list(p.chosen_ids), list(p.rejected_ids), p.per_token] for p in self.replayed]
        out: dict[str, Any] = {"replayed": rows}
        if self.p["reference"] != "iteration":
            out["reference"] = {k: v.detach().clone() for k, v in self.reference.state_dict().items()}
        return out

    def load_extra_state(self, state: dict[str, Any]) -> None:
        if "reference" in state:
            self.reference.load_state_dict(state["reference"])
        self.replayed = [
            PreferencePair(tuple(a), tuple(b), tuple(c), bool(d)) for a, b, c, d in state.get("replayed", [])
        ]


def make_dpo(game: Game, learners: Sequence[Any], **params: Any) -> DPO:
    return DPO(game, learners, **params)
