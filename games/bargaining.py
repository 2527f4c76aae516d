"""Ultimatum and dictator games over an integer pie: ``ultimatum`` and ``dictator``.

Ultimatum: the proposer (player 0) offers the responder (player 1) ``x`` of a pie of ``pie``
points (``x`` in 0..pie); the responder accepts (payoffs ``(pie - x, x)``) or rejects (both 0).
Dictator: the dictator (player 0) gives ``x``; the recipient (player 1) has no move, the payoffs
are ``(pie - x, x)``. ``rounds`` repeats the stage game with the same partner and the same roles;
the returns add up over rounds and both players see every past round.

Rational baselines (subgame-perfect equilibria, by backward induction): in the one-shot
ultimatum game with a pie in whole units there are two — the proposer offers 0 and the
responder accepts everything, or the proposer offers 1 and the responder rejects 0 and accepts
every offer of at least 1. Any split is a Nash equilibrium, held up by the threat of rejecting
less, but the threat is not credible, so only those two are subgame perfect. With the same
partner over ``rounds`` rounds the SPE plays the stage SPE every round (the last round is the
one-shot game, and nothing earlier can change it). The dictator's rational gift is 0. The
``subgame_perfect`` agent plays these (``plugins/agents/bargainers.py``); people do not: modal
ultimatum offers are 40-50% of the pie and dictators give about 28% on average (Engel 2011,
*Dictator games: a meta study*, Experimental Economics 14).

Both games are finite trees with perfect information and no chance (``GameSpec.tree``), so the
exact solvers can evaluate policies on them. Observation tensor, shape (8,): I am the proposer,
an offer awaits my answer, that offer / pie, round / rounds, last round's offer / pie, last
round accepted, my total and the other's total / (pie * rounds).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.errors import ArenaError
from arena.game import TERMINAL, Action, Game, GameEntry, GameSpec, IllegalActionError, State, decision_struct
from arena.hookspecs import hookimpl

MAX_PIE = 1000
MAX_ROUNDS = 100
ROLES = {"ultimatum": ("proposer", "responder"), "dictator": ("dictator", "recipient")}


class SplitState(State):
    """One ultimatum or dictator game: the rounds played, the offer awaiting an answer."""

    def __init__(self, game: "SplitGame") -> None:
        self.game = game
        self.history: list[tuple[int, bool]] = []  # (offer, accepted) per finished round
        self.offer: int | None = None
        self.totals = [0.0, 0.0]

    # -- contract ---------------------------------------------------------------------------
    def num_players(self) -> int:
        return 2

    def current_player(self) -> int:
        if len(self.history) >= self.game.rounds:
            return TERMINAL
        return 0 if self.offer is None else 1

    def legal_actions(self, player: int | None = None) -> list[int]:
        cur = self.current_player()
        if player is None:
            player = cur
        if cur < 0 or player != cur:
            return []
        if cur == 0:
            return list(range(self.game.pie + 1))
        return [self.game.accept, self.game.reject]

    def apply_action(self, action: Action) -> None:
        cur = self.current_player()
        if isinstance(action, str) or int(action) not in self.legal_actions(cur):
            raise IllegalActionError(f"{self.game.spec.name}: {action!r} is not a legal move for player {cur}")
        a = int(action)
        if cur == 0 and self.game.kind == "dictator":
            self._settle(a, True)
        elif cur == 0:
            self.offer = a
        else:
            assert self.offer is not None
            self._settle(self.offer, a == self.game.accept)

    def _settle(self, offer: int, accepted: bool) -> None:
        self.history.append((offer, accepted))
        self.offer = None
        if accepted:
            self.totals[0] += self.game.pie - offer
            self.totals[1] += offer

    def returns(self) -> list[float]:
        return list(self.totals)

    def clone(self) -> "SplitState":
        c = SplitState.__new__(SplitState)
        c.game, c.offer = self.game, self.offer
        c.history, c.totals = list(self.history), list(self.totals)
        return c

    # -- renderings ---------------------------------------------------------------------------
    def action_label(self, player: int, action: int) -> str:
        g = self.game
        if action == g.accept and g.kind == "ultimatum":
            return "accept"
        if action == g.reject and g.kind == "ultimatum":
            return "reject"
        return f"{'give' if g.kind == 'dictator' else 'offer'} {action}"

    def information_state_key(self, player: int) -> str:
        past = ";".join(f"{x}{'a' if ok else 'r'}" for x, ok in self.history)
        return f"p{player} [{past}] offer={self.offer}"

    def _round_line(self, k: int, offer: int, accepted: bool, player: int) -> str:
        pie = self.game.pie
        if not accepted:
            return f"Round {k}: offer {offer}, rejected (both got 0)."
        mine = pie - offer if player == 0 else offer
        verb = "gave" if self.game.kind == "dictator" else "offer"
        tail = "" if self.game.kind == "dictator" else ", accepted"
        return f"Round {k}: {verb} {offer}{tail} (you got {mine})."

    def observation_text(self, player: int) -> str:
        g, pie = self.game, self.game.pie
        role = ROLES[g.kind][player]
        if g.kind == "ultimatum":
            rules = (
                f"Ultimatum game: the proposer offers the responder a share of {pie} points; if the responder "
                f"accepts an offer of x, the proposer gets {pie} - x and the responder x; if it rejects, both get 0."
            )
        else:
            rules = f"Dictator game: the dictator gives the recipient x of {pie} points and keeps {pie} - x."
        lines = [rules, f"You are the {role}."]
        if g.rounds > 1:
            lines.append(f"Round {min(len(self.history) + 1, g.rounds)} of {g.rounds}, same partner each round.")
        lines += [self._round_line(k + 1, x, ok, player) for k, (x, ok) in enumerate(self.history)]
        lines.append(f"Totals: you {self.totals[player]:g}, other {self.totals[1 - player]:g}.")
        cur = self.current_player()
        if cur == TERMINAL:
            lines.append("Game over.")
        elif cur == player == 0:
            lines.append(
                f"Your move: how many of the {pie} points do you give? Legal: {self.action_label(0, 0)} to {pie}."
            )
        elif cur == player == 1 and self.offer is not None:
            lines.append(
                f"The proposer offers you {self.offer} (it keeps {pie - self.offer}). "
                f"Legal: accept (you get {self.offer}) or reject (both get 0)."
            )
        else:
            lines.append(f"Waiting for the {ROLES[g.kind][cur]}.")
        return "\n".join(lines)

    def observation_struct(self, player: int) -> dict[str, Any]:
        g = self.game
        out = decision_struct(self, player)
        out.update(
            game=g.kind,
            role=ROLES[g.kind][player],
            pie=g.pie,
            round=min(len(self.history) + 1, g.rounds),
            rounds=g.rounds,
            totals=list(self.totals),
            history=[{"offer": x, "accepted": ok} for x, ok in self.history],
        )
        if self.offer is not None:
            out["offer"] = self.offer
        return out

    def observation_tensor(self, player: int) -> np.ndarray:
        g, x = self.game, np.zeros(8, dtype=np.float32)
        x[0] = player == 0
        if self.offer is not None and player == 1:
            x[1], x[2] = 1.0, self.offer / g.pie
        x[3] = len(self.history) / g.rounds
        if self.history:
            x[4], x[5] = self.history[-1][0] / g.pie, float(self.history[-1][1])
        scale = g.pie * g.rounds
        x[6], x[7] = self.totals[player] / scale, self.totals[1 - player] / scale
        return x

    def outcome_info(self) -> dict[str, Any]:
        n = max(1, len(self.history))
        info: dict[str, Any] = {
            "rounds": len(self.history),
            "offer_share": sum(x for x, _ in self.history) / (n * self.game.pie),
        }
        if self.game.kind == "ultimatum":
            info["acceptance"] = sum(ok for _, ok in self.history) / n
        return info

    def summary(self) -> str:
        offers = ", ".join(f"{x}{'' if ok else ' rejected'}" for x, ok in self.history)
        return f"{self.game.kind} offers [{offers}], returns {self.returns()}"


class SplitGame(Game):
    """``ultimatum(pie=10, rounds=1)`` or ``dictator(pie=10, rounds=1)``."""

    def __init__(self, kind: str, pie: int = 10, rounds: int = 1) -> None:
        for key, value, top in (("pie", pie, MAX_PIE), ("rounds", rounds, MAX_ROUNDS)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
                raise ArenaError(f"game '{kind}': parameter '{key}' must be an integer 1..{top}, got {value!r}")
        self.kind, self.pie, self.rounds = kind, pie, rounds
        self.accept, self.reject = pie + 1, pie + 2
        ultimatum = kind == "ultimatum"
        params = {k: v for k, v in {"pie": pie, "rounds": rounds}.items() if v != {"pie": 10, "rounds": 1}[k]}
        self.spec = GameSpec(
            name=kind,
            num_players=2,
            num_distinct_actions=pie + 3 if ultimatum else pie + 1,
            observation_shape=(8,),
            min_utility=0.0,
            max_utility=float(pie * rounds),
            zero_sum=False,
            max_game_length=(2 if ultimatum else 1) * rounds,
            tree=True,
            params=params,
            description=(
                f"ultimatum game: offer x of {pie}, accept ({pie}-x, x) or reject (0, 0)"
                if ultimatum
                else f"dictator game: give x of {pie}, the recipient has no move"
            )
            + (f", {rounds} rounds with the same partner" if rounds > 1 else ""),
        )

    def new_initial_state(self, seed: int | None = None) -> SplitState:
        return SplitState(self)


def ultimatum(pie: int = 10, rounds: int = 1) -> SplitGame:
    return SplitGame("ultimatum", pie, rounds)


def dictator(pie: int = 10, rounds: int = 1) -> SplitGame:
    return SplitGame("dictator", pie, rounds)


@hookimpl
def arena_games() -> list[GameEntry]:
    return [
        GameEntry("ultimatum", ultimatum, "ultimatum game: offer x of an integer pie, accept or both get 0", {"pie": 10, "rounds": 1}),
        GameEntry("dictator", dictator, "dictator game: give x of an integer pie, the recipient has no move", {"pie": 10, "rounds": 1}),
    ]  # fmt: skip
