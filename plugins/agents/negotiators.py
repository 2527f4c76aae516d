"""Negotiation heuristics for ``deal_or_no_deal``: ``fair``, ``greedy`` and ``concede``.

Each knows only its own values (read from its observation tensor) and follows one rule:

- ``fair``: asks for about half of its own valuation (5 of 10), splitting item counts evenly
  where it can, and accepts any offer worth at least half (``accept`` of the pool).
- ``greedy``: asks for everything it values, leaving the other side only items worth 0 to it
  (or its least valued item), and accepts only offers as good as its own demand.
- ``concede``: concedes over time: its aspiration falls linearly from the best it can get to
  ``floor`` at the last turn; it offers the split that keeps its aspiration while giving the
  most items away, and accepts anything that meets the current aspiration.

All three accept any positive offer on the very last turn (rejecting it scores 0). With
``talk=text`` they announce their move in a sentence before making it.
"""

from __future__ import annotations

from arena.agent import Agent, AgentEntry, Observation
from arena.errors import ArenaError
from arena.game import Action, Game
from arena.games.negotiation import ACCEPT, OFFER_ID, TOTAL_VALUE, NegotiationView, allocations, describe, read_view
from arena.hookspecs import hookimpl


class Negotiator(Agent):
    """Shared plumbing: decode the view, choose, speak; subclasses define demand and threshold."""

    def __init__(self, game: Game) -> None:
        if game.spec.name != "deal_or_no_deal":
            raise ArenaError(f"agent '{self.name}' plays only deal_or_no_deal, not '{game.spec.full_name}'")

    def act(self, obs: Observation) -> Action:
        v = read_view(obs.tensor)
        keep = self.choose(v)
        if obs.decision == "text":
            if keep is None:
                return "I accept your offer."
            return f"I propose that I take {describe(keep)}."
        action = ACCEPT if keep is None else OFFER_ID[keep]
        return action if action in obs.legal_actions else obs.legal_actions[0]

    def choose(self, v: NegotiationView) -> tuple[int, int, int] | None:
        """What to keep in a new offer, or ``None`` to accept the standing offer."""
        if v.offer is not None:
            worth = v.value(v.offer)
            if worth >= self.threshold(v) or (v.last_turn and worth > 0):
                return None
        return self.demand(v)

    def threshold(self, v: NegotiationView) -> float:
        raise NotImplementedError

    def demand(self, v: NegotiationView) -> tuple[int, int, int]:
        raise NotImplementedError


class Fair(Negotiator):
    name = "fair"

    def __init__(self, game: Game, accept: float = 0.5) -> None:
        super().__init__(game)
        if not 0 <= accept <= 1:
            raise ArenaError(f"agent 'fair': parameter 'accept' must be in [0, 1], got {accept!r}")
        self.accept = accept

    def threshold(self, v: NegotiationView) -> float:
        return self.accept * TOTAL_VALUE

    def demand(self, v: NegotiationView) -> tuple[int, int, int]:
        half = TOTAL_VALUE / 2
        return min(
            allocations(v.pool),
            key=lambda x: (
                v.value(x) < half,
                abs(v.value(x) - half),
                sum(abs(2 * k - c) for k, c in zip(x, v.pool)),
                x,
            ),
        )


class Greedy(Negotiator):
    name = "greedy"

    def threshold(self, v: NegotiationView) -> float:
        return v.value(self.demand(v))

    def demand(self, v: NegotiationView) -> tuple[int, int, int]:
        # keep every item worth something; concede only what is worth nothing to us
        keep = tuple(c if val > 0 else 0 for c, val in zip(v.pool, v.values))
        if keep == v.pool:  # values everything: give up one unit of the least valued type
            i = min(range(3), key=lambda k: (v.values[k], k))
            keep = tuple(c - (k == i) for k, c in enumerate(keep))
        return keep


class Concede(Negotiator):
    name = "concede"

    def __init__(self, game: Game, floor: float = 3.0) -> None:
        super().__init__(game)
        if not 0 <= floor <= TOTAL_VALUE:
            raise ArenaError(f"agent 'concede': parameter 'floor' must be in [0, {TOTAL_VALUE}], got {floor!r}")
        self.floor = floor

    def threshold(self, v: NegotiationView) -> float:
        best = TOTAL_VALUE
        frac = v.turn / max(1, v.max_turns - 1)
        return best - (best - min(self.floor, best)) * min(1.0, frac)

    def demand(self, v: NegotiationView) -> tuple[int, int, int]:
        aim = self.threshold(v)
        ok = [x for x in allocations(v.pool) if v.value(x) >= aim] or [v.pool]
        return min(ok, key=lambda x: (sum(x), v.value(x), x))


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry("fair", Fair, "deal_or_no_deal: asks for half its valuation, accepts half", {"accept": 0.5}),
        AgentEntry("greedy", Greedy, "deal_or_no_deal: keeps everything it values, accepts only as much", None),
        AgentEntry(
            "concede", Concede, "deal_or_no_deal: aspiration falls linearly to 'floor' by the last turn", {"floor": 3.0}
        ),
    ]
