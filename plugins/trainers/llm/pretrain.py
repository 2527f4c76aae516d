"""Warm-up for a model trained from scratch: language-model the game's own text under uniformly
random play, so that its hidden states tell the game's situations apart before RL starts.

Why: a randomly initialised model maps every prompt of a game to almost the same last hidden
state (its attention is near uniform, so a prompt is close to a bag of characters). A policy
gradient then moves every situation alike, and a per-situation signal such as Advantage
Alignment's reciprocity term (cooperate after the other cooperated, defect after it defected)
is drowned by the shared "defect everywhere" direction: measured in docs/llm_training.md. A
pretrained LLM already reads the situation; this warm-up gives the tiny local model the same
starting point *without teaching it a strategy*: every action in the corpus is drawn uniformly
at random, so the warmed-up policy is close to uniform.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.game import Game


def random_play_corpus(game: Game, agent: Any, games: int, seed: int, players: Any = "random") -> list[str]:
    """Each decision of ``games`` uniformly random games as the text ``agent`` reads and answers:
    its prompt for the observation followed by the scored continuation of the action taken.
    ``players`` (an agent spec, ``random`` by default) plays every seat; a scripted talker
    (``table_talker``) gives talk games a corpus of utterances to learn."""
    from arena.loading import load_agent
    from arena.match import play_games

    players = [load_agent(players, game) for _ in range(game.spec.num_players)]
    for i, p in enumerate(players):
        p.name = f"random{i}"
    texts = []
    for result in play_games(game, players, num_games=games, seed=seed, record=True):
        for step in result.trajectory.steps:
            obs = step.observation
            label = obs.label_of(step.action) if obs.decision == "choice" else str(step.action)
            texts.append(agent.prompts.build(obs) + agent.prompts.continuation(label))
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
) -> tuple[Any, list[float]]:
    """Next-token training of ``agent``'s model on :func:`random_play_corpus`; returns the
    :class:`~.model.TrainableLLM` (``save`` writes the warmed-up model) and the loss per step."""
    import torch

    from .model import attach

    torch.manual_seed(seed)
    texts = random_play_corpus(game, agent, games, seed, players)
    trainable = attach(agent, lr=lr)
    encode = agent.backend.encode
    corpus = [encode(t) for t in texts]
    rng = np.random.default_rng(seed)
    losses = []
    for _ in range(steps):
        rows = [corpus[i] for i in rng.integers(len(corpus), size=batch)]
        logp = trainable.logprobs([(ids[:1], ids[1:]) for ids in rows])
        loss = -(logp.sum() / sum(len(ids) - 1 for ids in rows))  # mean negative log-likelihood per token
        trainable.step(loss)
        losses.append(float(loss.detach()))
    return trainable, losses
