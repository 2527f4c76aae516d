"""Warm-up for a model trained from scratch: language-model the game's own text under uniformly
random play, so that its hidden states tell the game's situations apart before RL starts.

Why: a randomly initialised model maps every prompt of a game to almost the same last hidden
state (its attention is near uniform, so a prompt is close to a bag of characters). A policy
gradient then moves every situation alike, and a per-situation signal such as Advantage
Alignment's reciprocity term (cooperate after the other cooperated, defect after it defected)
is drowned by the shared "defect everywhere" direction: measured in docs/results/llm_training.md. A
pretrained LLM already reads the situation; this warm-up gives the tiny local model the same
starting point *without teaching it a strategy*: every action in the corpus is drawn uniformly
at random, so the warmed-up policy is close to uniform.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.errors import ArenaError
from arena.game import Game

LOSSES = ("all", "response")


def random_play_corpus(game: Game, agent: Any, games: int, seed: int, players: Any = "random") -> list[str]:
    """Each decision of ``games`` uniformly random games as the text ``agent`` reads and answers:
    its prompt for the observation followed by the scored continuation of the action taken.
    ``players`` (an agent spec, ``random`` by default) plays every seat; a scripted talker
    (``table_talker``) gives talk games a corpus of utterances to learn."""
    return ["".join(pc) for pc in play_corpus(game, agent, games, seed, players)]


def play_corpus(game: Game, agent: Any, games: int, seed: int, players: Any = "random") -> list[tuple[str, str]]:
    """:func:`random_play_corpus` as (prompt, continuation) pairs."""
    from arena.loading import load_agent
    from arena.playing.match import play_games

    players = [load_agent(players, game) for _ in range(game.spec.num_players)]
    for i, p in enumerate(players):
        p.name = f"random{i}"
    texts = []
    for result in play_games(game, players, num_games=games, seed=seed, record=True):
        for step in result.trajectory.steps:
            obs = step.observation
            label = obs.label_of(step.action) if obs.decision == "choice" else str(step.action)
            texts.append((agent.prompts.build(obs), agent.prompts.continuation(label)))
    return texts


def pretrain(
    agent: Any,
    game: Game,
    games: int = 200,
    steps: int = 200,
    lr: float = 1e-3,
    batch: int = 32,
    seed: int = 0,
    players: Any = "random",
    loss: str = "all",
) -> tuple[Any, list[float]]:
    """Next-token training of ``agent``'s model on :func:`random_play_corpus`; returns the
    :class:`~.model.TrainableLLM` (``save`` writes the warmed-up model) and the loss per step.

    ``loss``: ``all`` — every token of prompt and answer (the model learns the game's text);
    ``response`` — only the answer's tokens after the prompt (supervised fine-tuning). With a
    talker whose words depend on its hidden card, ``response`` spends every gradient on
    predicting the answer *from the situation*, which is what makes a tiny model read the card
    at all (docs/results/lspo.md, "Before the card-reading warm-up"); the full-text loss is mostly the fixed
    template."""
    import torch

    from .model import attach

    if loss not in LOSSES:
        raise ArenaError(f"warm-up: loss must be one of {', '.join(LOSSES)}, not {loss!r}")
    torch.manual_seed(seed)
    pairs = play_corpus(game, agent, games, seed, players)
    trainable = attach(agent, lr=lr)
    encode = agent.backend.encode
    if loss == "all":
        corpus = [(ids[:1], ids[1:]) for ids in (encode(p + c) for p, c in pairs)]
    else:
        corpus = [(encode(p), encode(c)) for p, c in pairs]
    rng = np.random.default_rng(seed)
    losses = []
    for _ in range(steps):
        rows = [corpus[i] for i in rng.integers(len(corpus), size=batch)]
        logp = trainable.logprobs(rows)
        nll = -(logp.sum() / sum(len(c) for _, c in rows))  # mean negative log-likelihood per target token
        trainable.step(nll)
        losses.append(float(nll.detach()))
    return trainable, losses
