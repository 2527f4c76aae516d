"""Bandit baselines for the ``bandit`` game: ``ucb1`` and ``thompson``.

- ``ucb1`` (Auer, Cesa-Bianchi, Fischer, *Finite-time Analysis of the Multiarmed Bandit
  Problem*, Machine Learning 47, 2002): pull each arm once, then the arm with the largest index
  ``mean_j + sqrt(2 ln n / n_j)`` (``n`` pulls so far, ``n_j`` of arm ``j``), rewards rescaled to
  [0, 1] by the game's reward range first (the confidence term assumes rewards in [0, 1]). Its
  expected regret is at most ``8 sum_j ln n / Delta_j + (1 + pi^2/3) sum_j Delta_j`` (Theorem 1).
  Deterministic (ties go to the lowest arm), so it exposes its ``policy``.
- ``thompson`` (Agrawal & Goyal, *Analysis of Thompson Sampling for the Multi-armed Bandit
  Problem*, COLT 2012; *Further Optimal Regret Bounds for Thompson Sampling*, AISTATS 2013):
  Bernoulli arms: a Beta(1 + S_j, 1 + n_j - S_j) posterior per arm (uniform prior; S_j the sum of
  rewards rescaled to [0, 1]), pull the arm with the largest sample. Gaussian arms: sample
  ``theta_j ~ N(S_j / (n_j + 1), 1 / (n_j + 1))`` on the [0, 1] scale, the Gaussian-prior
  algorithm of the AISTATS paper (the posterior of a N(0, 1) prior with unit-variance
  likelihood; a narrower prior scaled to the game's ``sigma`` can starve an arm whose first
  reward was low). Samples come from the game's own stream
  (``obs.rng``), so a match is reproducible from its seed however games are batched.

Both read the per-arm counts and reward sums from the bandit's structured view; they keep no
state between decisions.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from arena.agent import Action, Agent, AgentEntry, Observation, PolicyAgent
from arena.errors import ArenaError
from arena.game import Game
from arena.hookspecs import hookimpl


def _require_bandit(name: str, game: Game) -> None:
    if game.spec.name != "bandit":
        raise ArenaError(f"agent '{name}' plays the bandit game, not '{game.spec.full_name}'")


def _scaled(view: dict[str, Any]) -> tuple[list[int], list[float]]:
    """Pulls and reward sums per arm, rewards rescaled to [0, 1]."""
    lo, hi = view["reward_range"]
    counts = [int(s["pulls"]) for s in view["stats"]]
    sums = [(s["total"] - lo * n) / (hi - lo) for s, n in zip(view["stats"], counts)]
    return counts, sums


def ucb1_choice(view: dict[str, Any]) -> int:
    counts, sums = _scaled(view)
    for j, n in enumerate(counts):
        if n == 0:
            return j
    log_n = math.log(sum(counts))
    index = [s / n + math.sqrt(2.0 * log_n / n) for s, n in zip(sums, counts)]
    return max(range(len(index)), key=index.__getitem__)


class UCB1Agent(PolicyAgent):
    name = "ucb1"

    def __init__(self, game: Game) -> None:
        _require_bandit("ucb1", game)

    def policy(self, obs: Observation) -> Mapping[int, float]:
        return {ucb1_choice(obs.struct): 1.0}  # type: ignore[arg-type]

    def act(self, obs: Observation) -> Action:
        return ucb1_choice(obs.struct)  # type: ignore[arg-type]

    def act_batch(self, observations: Sequence[Observation]) -> list[Action]:
        return [ucb1_choice(o.struct) for o in observations]  # type: ignore[arg-type]


class ThompsonAgent(Agent):
    name = "thompson"

    def __init__(self, game: Game) -> None:
        _require_bandit("thompson", game)

    def act(self, obs: Observation) -> Action:
        view: dict[str, Any] = obs.struct  # type: ignore[assignment]
        counts, sums = _scaled(view)
        rng = obs.rng
        if view["kind"] == "gaussian":
            samples = [rng.normal(s / (n + 1), 1.0 / math.sqrt(n + 1)) for s, n in zip(sums, counts)]
        else:
            samples = [rng.beta(1.0 + s, 1.0 + n - s) for s, n in zip(sums, counts)]
        return max(range(len(samples)), key=samples.__getitem__)


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry("ucb1", UCB1Agent, "bandit: UCB1 (Auer et al. 2002), index mean + sqrt(2 ln n / n_j)"),
        AgentEntry("thompson", ThompsonAgent, "bandit: Thompson sampling, Beta(1,1) (Bernoulli) or Gaussian posterior"),
    ]
