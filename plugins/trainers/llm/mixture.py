"""SPPO's averaged iterate kept exactly: a uniform mixture of snapshots of its iterates.

SPPO's guarantee (Wu et al., *Self-Play Preference Optimization for Language Model Alignment*,
arXiv 2405.00675) is the no-regret one: the *average* of the iterates pi_1..pi_T — the policy
that draws t uniformly and plays pi_t — approaches the von Neumann winner as the average regret
vanishes, while the last iterate of Hedge may cycle. That average is a mixture of policies, not
of weights, so :class:`SnapshotMixture` keeps it as it is: every ``mixture_every`` iterations a
copy of the trainable weights (an adapter learner's adapter only), all of them, or a uniform
sample of at most ``mixture_size`` by reservoir sampling (seeded; every iteration snapshotted so
far is kept with the same probability, so the sample's mixture is an unbiased estimate of the
full one). The kept policy is the uniform mixture of its members:

- a decision by it (:class:`KeptAgent`) plays one member for a whole game, drawn from the game's
  own random stream at its first decision (saved, ``llm:model=DIR/mixture`` plays it the same way);
- its exact probabilities are the mean of its members' (one decision), and on a game tree the
  behaviour policy that weights each member's action probabilities by the player's own reach
  under it (:func:`behaviour_mixture`; Kuhn's theorem: the same play as drawing a member per game).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.agent import Observation
from arena.errors import ArenaError
from arena.mixture import PerGameMixture


class SnapshotMixture:
    """Snapshots of the iterates, all or a seeded uniform sample of at most ``size`` (0: all)."""

    def __init__(self, every: Any, size: Any, seed: int) -> None:
        self.every = _count("mixture_every", every, 1)
        self.size = _count("mixture_size", size, 0)
        self.snapshots: list[dict[str, Any]] = []
        self.iterations: list[int] = []
        self.seen = 0
        self.rng = np.random.default_rng(seed)

    def due(self, iteration: int) -> bool:
        return iteration % self.every == 0

    def add(self, params: dict[str, Any], iteration: int) -> None:
        """A copy of ``params`` (name -> tensor) as the snapshot of ``iteration``."""
        self.seen += 1
        if self.size and len(self.snapshots) >= self.size:
            k = int(self.rng.integers(self.seen))  # reservoir sampling: kept with probability size/seen
            if k >= self.size:
                return
            self.snapshots[k], self.iterations[k] = copy_weights(params), iteration
            return
        self.snapshots.append(copy_weights(params))
        self.iterations.append(iteration)

    def state(self) -> dict[str, Any]:
        return {
            "snapshots": list(self.snapshots),
            "iterations": list(self.iterations),
            "seen": self.seen,
            "rng": self.rng.bit_generator.state,
        }

    def load(self, state: dict[str, Any]) -> None:
        self.snapshots = [{n: t.clone() for n, t in s.items()} for s in state["snapshots"]]
        self.iterations = [int(i) for i in state["iterations"]]
        self.seen = int(state["seen"])
        self.rng.bit_generator.state = state["rng"]


def _count(name: str, value: Any, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ArenaError(f"trainer 'sppo': {name} must be an integer >= {least}, got {value!r}")
    return int(value)


def copy_weights(params: dict[str, Any]) -> dict[str, Any]:
    """Detached copies of name -> tensor weights (a snapshot, a kept or a live set)."""
    return {n: p.detach().clone() for n, p in params.items()}


def behaviour_mixture(tree: Any, sigmas: Sequence[np.ndarray]) -> np.ndarray:
    """The behaviour policy (a slot vector) of playing ``sigmas[k]`` for a whole game with equal
    probability: sigma(I, a) = sum_k r_k(I) sigma_k(I, a) / sum_k r_k(I), r_k(I) the acting
    player's own reach of I under member k (the plain mean where no member reaches I)."""
    own = tree.derived()["own_paths"]
    num, den = np.zeros(tree.num_slots), np.zeros(tree.num_slots)
    for sigma in sigmas:
        probs = tree.probs_with(np.asarray(sigma, dtype=float))
        for p in range(tree.num_players):
            (s0, s1), (i0, _) = tree.player_slots[p], tree.player_infos[p]
            r = probs[own[p]].prod(axis=1)[tree.slot_info[s0:s1] - i0]
            num[s0:s1] += r * sigma[s0:s1]
            den[s0:s1] += r
    mean = np.mean(np.asarray(sigmas, dtype=float), axis=0)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), mean)


class KeptAgent(PerGameMixture):
    """The trainer's kept policy as an agent: member k of it (``trainer.kept_member(k)``) plays a
    whole game, k drawn uniformly from the game's own stream at its first decision; the learner
    keeps its own weights between decisions. Saved, the same mixture loads as
    ``llm:model=DIR/mixture`` (:mod:`arena.plugins.agents.llm.mixture`)."""

    member_info = "mixture_member"

    def __init__(self, trainer: Any) -> None:
        super().__init__(name=f"{trainer.agent.name}-kept")
        self.trainer = trainer

    def size(self) -> int:
        return int(self.trainer.kept_size())

    def draw(self, u: float) -> int:
        n = self.size()
        return min(int(u * n), n - 1)

    def act_member(self, k: int, observations: Sequence[Observation]) -> tuple[list, list[dict[str, Any]]]:
        with self.trainer.kept_member(k):
            return self.trainer.agent.act_batch_info(observations)
