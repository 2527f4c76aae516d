"""Policies across the OpenSpiel border: arena info-state keys of OpenSpiel-backed games are
OpenSpiel's ``information_state_string``, so a TabularPolicy maps row by row."""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.errors import ArenaError
from arena.policy import TabularPolicy


def to_openspiel_policy(pyspiel_game: Any, policy: TabularPolicy, strict: bool = True) -> Any:
    """An ``open_spiel.python.policy.TabularPolicy`` with ``policy``'s rows (renormalized over
    legal actions). ``strict``: every OpenSpiel info state must be in the table."""
    from open_spiel.python import policy as os_policy

    out = os_policy.TabularPolicy(pyspiel_game)
    missing = []
    for key, row in out.state_lookup.items():
        probs = policy.get(key)
        if probs is None:
            missing.append(key)
            continue
        legal = out.legal_actions_mask[row]
        vec = np.zeros_like(out.action_probability_array[row])
        for a, p in probs.items():
            if legal[a]:
                vec[a] = p
        if vec.sum() > 0:
            out.action_probability_array[row] = vec / vec.sum()
    if strict and missing:
        raise ArenaError(
            f"policy for '{policy.game}' lacks {len(missing)} of OpenSpiel's info states (e.g. {missing[0]!r})"
        )
    return out


def from_openspiel_policy(game_name: str, os_policy: Any) -> TabularPolicy:
    """An OpenSpiel TabularPolicy as an arena TabularPolicy."""
    table = {}
    for key, row in os_policy.state_lookup.items():
        mask = os_policy.legal_actions_mask[row]
        probs = os_policy.action_probability_array[row]
        table[key] = {int(a): float(probs[a]) for a in np.flatnonzero(mask)}
    return TabularPolicy(game_name, table)
