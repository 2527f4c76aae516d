"""Baseline agents: ``random`` (uniform over legal moves) and ``fixed`` (a tabular policy file)."""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from arena.agent import AgentEntry, Observation, PolicyAgent
from arena.arrays import pick_uniform, pick_weighted
from arena.errors import ArenaError
from arena.game import Game, parse_game_name
from arena.hookspecs import hookimpl
from arena.policy import TabularPolicy


class RandomAgent(PolicyAgent):
    """Uniform over legal actions; at text decisions, says nothing of note."""

    name = "random"

    def policy(self, obs: Observation) -> Mapping[int, float]:
        p = 1.0 / len(obs.legal_actions)
        return {a: p for a in obs.legal_actions}

    def act(self, obs: Observation):
        if obs.decision == "text":
            return "..."
        legal = obs.legal_actions
        return legal[min(int(obs.uniform() * len(legal)), len(legal) - 1)]

    def act_batch(self, observations):
        out = []
        for o in observations:  # act() inlined: a random agent is mostly used where speed matters
            legal = o.legal_actions
            if legal:
                k = len(legal)
                out.append(legal[min(int(o.uniform() * k), k - 1)])
            else:
                out.append(self.act(o))
        return out

    def act_arrays(self, games: Any, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        """``act_batch`` on the array face: one uniform per decision from each game's stream."""
        return pick_uniform(games.legal_mask(rows, player), games.rng.uniform(rows))


class FixedPolicyAgent(PolicyAgent):
    """Plays a saved tabular policy; unseen info states fall back to uniform (``strict`` raises)."""

    name = "fixed"

    def __init__(self, policy: TabularPolicy, strict: bool = False) -> None:
        self.table = policy
        self.strict = strict
        self.array_native = not strict
        """A strict policy stays on the ``State`` path, where a missing entry forfeits as it always has."""
        self._rows: weakref.WeakKeyDictionary[Any, dict[int, np.ndarray]] = weakref.WeakKeyDictionary()
        """Weights per array face and info-state index, for :meth:`act_arrays`."""
        self._rows_of = policy

    def policy(self, obs: Observation) -> Mapping[int, float]:
        probs = self.table.get(obs.info_state)
        if probs is None:
            if self.strict:
                raise ArenaError(f"policy has no entry for info state {obs.info_state!r}")
            return {a: 1.0 / len(obs.legal_actions) for a in obs.legal_actions}
        return {a: probs.get(a, 0.0) for a in obs.legal_actions}

    def act_arrays(self, games: Any, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        """``act_batch`` on the array face: each row's info state looked up once per distinct
        state (its weights kept per face), then ``sample_from``'s draw on arrays."""
        mask = games.legal_mask(rows, player)
        if not games.face.tabled:
            return pick_weighted(self._weights_by_key(games, rows, player, mask), mask, games.rng.uniform(rows))
        states = games.info_states(rows, player)
        uniq, first, inverse = np.unique(states, return_index=True, return_inverse=True)
        if self._rows_of is not self.table:  # a new table (a solver's improve): new weights
            self._rows, self._rows_of = weakref.WeakKeyDictionary(), self.table
        cache = self._rows.setdefault(games.face, {})
        weights = np.empty((len(uniq), mask.shape[1]))
        for j, s in enumerate(uniq.tolist()):
            w = cache.get(s)
            if w is None:
                w = cache[s] = self._weights(games.face.info_state_key(s), mask[first[j]])
            weights[j] = w
        return pick_weighted(weights[inverse], mask, games.rng.uniform(rows))

    def _weights_by_key(self, games: Any, rows: np.ndarray, player: int | None, mask: np.ndarray) -> np.ndarray:
        """Weights per row on a face without info-state tables: looked up by key, once per
        distinct key of the call."""
        seen: dict[str, np.ndarray] = {}
        weights = np.empty(mask.shape)
        for j, key in enumerate(games.info_state_keys(rows, player)):
            w = seen.get(key)
            if w is None:
                w = seen[key] = self._weights(key, mask[j])
            weights[j] = w
        return weights

    def _weights(self, key: str, legal: np.ndarray) -> np.ndarray:
        probs = self.table.get(key)
        if probs is None:
            if self.strict:
                raise ArenaError(f"policy has no entry for info state {key!r}")
            return legal * (1.0 / int(legal.sum()))
        return np.array([probs.get(a, 0.0) if ok else 0.0 for a, ok in enumerate(legal.tolist())])

    def save(self, directory: str | Path) -> None:
        self.table.save(Path(directory) / "policy.json")


def make_fixed(game: Game, path: str, strict: bool = False) -> FixedPolicyAgent:
    """``path``: a policy JSON file, or a directory holding ``policy.json`` (what ``save`` writes)."""
    if Path(path).is_dir():
        path = str(Path(path) / "policy.json")
    policy = TabularPolicy.load(path)
    if policy.game and parse_game_name(policy.game) != parse_game_name(game.spec.full_name):
        raise ArenaError(f"policy file {path} is for game '{policy.game}', not '{game.spec.full_name}'")
    return FixedPolicyAgent(policy, strict)


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry("random", lambda game: RandomAgent(), "uniformly random legal moves"),
        AgentEntry(
            "fixed",
            make_fixed,
            "a tabular policy from a JSON file",
            {"path": None, "strict": False},
            checkpoint_param="path",
        ),
    ]
