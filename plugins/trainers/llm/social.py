"""Listening and speaking rewards for hidden-role talk games (Werewolf).

After Sarkar, Xia, Liu, Sadigh, *Training Language Models for Social Deduction with Multi-Agent
Reinforcement Learning* (arXiv 2502.06060). One place for the concept; an LLM trainer uses it
through :class:`SocialRewards` (``lspo_playout`` does: ``listening``, ``speaking``).

**Belief.** A player's belief about the hidden roles is read from the policy model itself: the
player's view followed by the question "who is a werewolf?" (the game's ``belief_question``),
scored over the names of the players it may name (each name as the agent would say a target,
``p3``); the softmax of the names' log-probabilities is the belief ``P_l(j)``.

**Pooled belief** at a moment of the discussion: ``B = sum over the living villagers l other than
the speaker of sum over the true werewolves w of P_l(w)`` (the listeners', never the speaker's own).

**Speaking reward** of an utterance ``u`` said by ``k``: ``r = B_after - B_before``, the change
the message causes in the other players' pooled belief in the true werewolves; negated when
``k`` is a werewolf (a wolf gains when the village believes it less).

**Listening.** The log-likelihood of the true roles under a listener's belief,
``log sum_w P_l(w)``, surveyed when the day's discussion is over; trained *supervised*: its
negative is a cross-entropy loss on the policy model (the paper's listening loss; a reward the
policy-gradient would spread over the talk tokens does not teach the survey itself). The
supervised steps carry a KL-style anchor on the talk tokens, ``anchor * mean((log pi - log
pi_ref)^2)`` per talk response (per-token mean log-ratio), so reading the table better does not
move what the model says (the paper's anchor on discussion tokens).

A game takes part by giving its states ``believers(exclude)``, ``hidden_targets()``,
``belief_question(listener) -> (text, seats, labels)`` and ``discussion_over()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import Game, State

SOCIAL_DEFAULTS = {"listening": 0.0, "speaking": 0.0, "surveys": 64, "listening_steps": 4, "anchor": 0.05}
"""``listening``: weight of the supervised listening loss (0: off); ``speaking``: weight of the
speaking reward added to a talk option's value (0: off); ``surveys``: listener surveys trained per
iteration (sampled); ``listening_steps``: full-batch supervised steps per iteration; ``anchor``:
coefficient of the talk-token anchor in those steps."""


@dataclass
class Survey:
    """One listener asked who the hidden players are."""

    listener: int
    question: str
    seats: list[int]
    labels: list[str]
    targets: list[int]  # the true hidden players among ``seats``


def supports(game: Game) -> bool:
    """Whether ``game``'s states can be surveyed (``belief_question`` and friends)."""
    st = game.new_initial_state()
    return all(hasattr(st, m) for m in ("believers", "hidden_targets", "belief_question", "discussion_over"))


def check_params(trainer: str, params: dict[str, Any], game: Game) -> None:
    """One clear :class:`ArenaError` per bad social parameter."""
    for key in ("listening", "speaking", "anchor"):
        try:
            val = float(params[key])
        except (TypeError, ValueError):
            raise ArenaError(f"trainer '{trainer}': {key} must be a number >= 0, not {params[key]!r}") from None
        if not val >= 0 or not np.isfinite(val):
            raise ArenaError(f"trainer '{trainer}': {key} must be a number >= 0, not {params[key]!r}")
    for key in ("surveys", "listening_steps"):
        if isinstance(params[key], bool) or not isinstance(params[key], int) or params[key] < 1:
            raise ArenaError(f"trainer '{trainer}': {key} must be an integer >= 1, not {params[key]!r}")
    on = [k for k in ("listening", "speaking") if float(params[k]) > 0]
    if on and not supports(game):
        raise ArenaError(
            f"trainer '{trainer}': {' and '.join(on)} need a hidden-role talk game whose states can be asked "
            f"who the hidden players are (e.g. werewolf(talk=text)); '{game.spec.full_name}' is not one"
        )


def surveys(state: State, exclude: int | None = None) -> list[Survey]:
    """Every believer of ``state`` (but ``exclude``) asked who the hidden players are."""
    hidden = set(state.hidden_targets())  # type: ignore[attr-defined]
    out = []
    for p in state.believers(exclude):  # type: ignore[attr-defined]
        text, seats, labels = state.belief_question(p)  # type: ignore[attr-defined]
        out.append(Survey(p, text, list(seats), list(labels), [q for q in seats if q in hidden]))
    return out


def pooled(beliefs: Sequence[np.ndarray], asked: Sequence[Survey]) -> float:
    """``B``: the sum over the surveyed listeners of their probability on the true hidden players."""
    return float(sum(b[[s.seats.index(t) for t in s.targets]].sum() for b, s in zip(beliefs, asked)))


def speaking_reward(before: float, after: float, speaker_hidden: bool) -> float:
    """``B_after - B_before`` for a villager's message, negated for a werewolf's."""
    change = float(after) - float(before)
    return -change if speaker_hidden else change


def listening_loglik(belief: np.ndarray, survey: Survey) -> float:
    """``log sum_w P(w)`` over the true hidden players ``w`` (the listening reward)."""
    return float(np.log(max(float(belief[[survey.seats.index(t) for t in survey.targets]].sum()), 1e-300)))


class BeliefReader:
    """Reads beliefs from an LLM agent's model (its prompt template and backend)."""

    def __init__(self, agent: Any, game_name: str) -> None:
        self.agent, self.game_name = agent, game_name

    def prompt(self, s: Survey) -> tuple[str, list[str]]:
        """The survey's prompt (the agent's choice template around the question) and the
        continuations scored (each name as the agent says a target)."""
        obs = SimpleNamespace(
            game_name=self.game_name,
            text=s.question,
            struct=None,
            decision="choice",
            action_labels=s.labels,
            max_text_length=0,
        )
        prompt = self.agent.prompts.build(obs)
        return prompt, [self.agent.prompts.continuation(lbl) for lbl in s.labels]

    def beliefs(self, asked: Sequence[Survey]) -> list[np.ndarray]:
        """Each survey's belief over its seats (one batched scoring call)."""
        if not asked:
            return []
        built = [self.prompt(s) for s in asked]
        rows = self.agent.backend.score([p for p, _ in built], [c for _, c in built])
        out = []
        for row in rows:
            lp = np.asarray([r.logprob for r in row], dtype=np.float64)
            e = np.exp(lp - lp.max())
            out.append(e / e.sum())
        return out

    def token_ids(self, s: Survey) -> tuple[list[int], list[list[int]]]:
        """Prompt ids and each name's continuation ids (for the supervised listening loss)."""
        prompt, conts = self.prompt(s)
        backend = self.agent.backend
        return backend.prompt_ids(prompt), [backend.encode(c) for c in conts]


def talk_turn(state: State, decision: str) -> bool:
    """Whether a decision of kind ``decision`` at ``state`` is speech: free text (``talk=text``), or
    a structured utterance (Werewolf's ``talk=structured``, whose state asks ``speak``)."""
    return decision == "text" or getattr(state, "decision", lambda: "")() == "speak"


def speaking_rewards(reader: BeliefReader, talks: Sequence[tuple[State, int, Sequence[Any]]]) -> list[list[float]]:
    """For each ``(state, speaker, utterances)`` (a talk turn before the speaker speaks; an
    utterance is a text or a structured speech action): each utterance's speaking reward, from the
    other believers' pooled belief before and after it is said (one batched scoring call for all
    of them)."""
    asked: list[Survey] = []
    spans: list[list[tuple[int, int]]] = []
    for state, speaker, utterances in talks:
        row = []
        for st in [state] + [_said(state, u) for u in utterances]:
            got = surveys(st, exclude=speaker)
            row.append((len(asked), len(asked) + len(got)))
            asked += got
        spans.append(row)
    beliefs = reader.beliefs(asked)
    out = []
    for (state, speaker, _), row in zip(talks, spans):
        b = [pooled(beliefs[a:z], asked[a:z]) for a, z in row]
        hidden = speaker in state.hidden_targets()  # type: ignore[attr-defined]
        out.append([speaking_reward(b[0], after, hidden) for after in b[1:]])
    return out


def _said(state: State, utterance: Any) -> State:
    st = state.clone()
    st.apply_action(utterance)
    return st


def listening_loss(trainable: Any, items: Sequence[tuple[list[int], list[list[int]], list[int]]]) -> Any:
    """Mean cross-entropy of the listeners' beliefs against the true hidden players: per item
    ``(prompt_ids, name continuation ids, indices of the true names)``, ``-log sum_w P(w)`` with
    ``P`` the softmax of the names' summed log-probabilities (differentiable)."""
    import torch

    pairs = [(p, c) for p, conts, _ in items for c in conts]
    lp = trainable.logprobs(pairs, grad=True)
    losses, k = [], 0
    for _, conts, idx in items:
        row = lp[k : k + len(conts)]
        k += len(conts)
        losses.append(torch.logsumexp(row, 0) - torch.logsumexp(row[list(idx)], 0))
    return torch.stack(losses).mean()


def anchor_loss(trainable: Any, reference: Any, talk: Sequence[tuple[list[int], list[int]]]) -> Any:
    """``mean((log pi - log pi_ref)^2)`` over ``talk`` responses ``(prompt_ids, response_ids)``,
    each response's log-ratio taken per token (its summed log-ratio over its length)."""
    import torch

    lp = trainable.logprobs(list(talk), grad=True)
    with torch.no_grad():
        ref = trainable.logprobs(list(talk), grad=False, model=reference)
    size = torch.as_tensor([max(1, len(r)) for _, r in talk], dtype=lp.dtype, device=lp.device)
    return (((lp - ref.to(lp.device)) / size) ** 2).mean()


class SocialRewards:
    """The listening / speaking machinery with a trainer's weights (:data:`SOCIAL_DEFAULTS`)."""

    def __init__(self, trainer: str, params: dict[str, Any], game: Game, agent: Any) -> None:
        check_params(trainer, params, game)
        self.listening = float(params["listening"])
        self.speaking = float(params["speaking"])
        self.surveys = int(params["surveys"])
        self.steps = int(params["listening_steps"])
        self.anchor = float(params["anchor"])
        self.reader = BeliefReader(agent, game.spec.full_name)

    @property
    def on(self) -> bool:
        return self.listening > 0 or self.speaking > 0

    def speak(self, talks: Sequence[tuple[State, int, Sequence[Any]]]) -> list[list[float]]:
        """The weighted speaking reward of each talk option (:func:`speaking_rewards` x ``speaking``)."""
        if self.speaking <= 0 or not talks:
            return [[0.0] * len(u) for _, _, u in talks]
        return [[self.speaking * r for r in row] for row in speaking_rewards(self.reader, talks)]

    def survey_set(self, states: Sequence[State], rng: np.random.Generator) -> list[Survey]:
        """Every believer surveyed at ``states`` (discussion over), at most ``surveys`` of them (sampled)."""
        asked = [s for st in states for s in surveys(st) if s.targets]
        if len(asked) > self.surveys:
            asked = [asked[int(i)] for i in sorted(rng.choice(len(asked), size=self.surveys, replace=False))]
        return asked

    def loglik(self, asked: Sequence[Survey]) -> float:
        """Mean listening log-likelihood of the true roles over ``asked``."""
        beliefs = self.reader.beliefs(asked)
        return float(np.mean([listening_loglik(b, s) for b, s in zip(beliefs, asked)])) if asked else float("nan")

    def listen(
        self,
        trainable: Any,
        asked: Sequence[Survey],
        reference: Any = None,
        talk: Sequence[tuple[list[int], list[int]]] = (),
    ) -> dict[str, float]:
        """``listening_steps`` supervised steps on ``asked`` (weight ``listening``), with the talk
        anchor against ``reference`` on ``talk`` responses; the mean true-role log-likelihood
        before and after."""
        if self.listening <= 0 or not asked:
            return {}
        items = []
        for s in asked:
            ids, conts = self.reader.token_ids(s)
            items.append((ids, conts, [s.seats.index(t) for t in s.targets]))
        before = self.loglik(asked)
        losses = []
        for _ in range(self.steps):
            loss = self.listening * listening_loss(trainable, items)
            if self.anchor > 0 and reference is not None and talk:
                loss = loss + self.anchor * anchor_loss(trainable, reference, talk)
            trainable.step(loss)
            losses.append(float(loss.detach()))
        trainable.sync()
        return {
            "social/surveys": float(len(asked)),
            "social/listening_loglik_before": before,
            "social/listening_loglik": self.loglik(asked),
            "social/listening_loss_first": losses[0],
            "social/listening_loss_last": losses[-1],
        }
