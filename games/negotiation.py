"""Deal or No Deal (Lewis et al., *Deal or No Deal? End-to-End Learning for Negotiation
Dialogues*, arXiv 1706.05125) as alternating offers: ``deal_or_no_deal``.

Rules (OpenSpiel's ``bargaining`` form): three item types (book, hat, ball); a pool of 5-7
items with at least one of each; private integer values with each agent's whole pool worth 10,
every type worth something to someone and some type worth something to both. Players alternate;
each turn is an offer (how many of each type the proposer keeps) or ``accept`` of the standing
offer. ``max_turns`` actions without acceptance is no deal: both score 0. With ``talk=text`` the
mover first sends a free-text message (cheap talk) on every turn.

``text=brief`` renders a decision in one short line and an offer as ``take 1 0 2`` (counts of
book, hat, ball) instead of the prose rendering (~600 characters and ~30-character labels). Why:
a scored LLM agent reads the prompt once and every legal label (~30-50) after it, and a trainer
recomputes each (prompt, label) pair, so a small model trained on the prose pays ~25x the tokens
for the same information (docs/negotiation.md, "LLM negotiator"). ``brief`` keeps what a
player may know: its own values, the turn, and the standing offer (what it would get and its
worth to it); the other player's values and the history before the standing offer are left out.

Chance is explicit (pool, then each agent's values, uniform over the valid ones), so the game is
a finite tree, but a huge one: tree solvers should use ``openspiel:bargaining`` (the same game
without language, through the OpenSpiel adapter). Metrics from the literature (agreement rate,
joint utility, Pareto optimality, shares) are :func:`negotiation_metrics`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import CHANCE, TERMINAL, Action, Game, GameEntry, GameSpec, IllegalActionError, State, decision_struct
from arena.hookspecs import hookimpl

ITEMS = ("book", "hat", "ball")
TOTAL_VALUE = 10
MAX_ITEMS = 7
OFFERS: list[tuple[int, int, int]] = [
    t for t in itertools.product(range(MAX_ITEMS + 1), repeat=3) if sum(t) <= MAX_ITEMS
]
OFFER_ID = {t: i for i, t in enumerate(OFFERS)}
ACCEPT = len(OFFERS)
POOLS: list[tuple[int, int, int]] = [t for t in itertools.product(range(1, 6), repeat=3) if 5 <= sum(t) <= MAX_ITEMS]
OBS_SIZE = 17
DEFAULTS: dict[str, Any] = {"max_turns": 10, "talk": "none", "max_message_chars": 280, "text": "full"}


def _dot(a: Sequence[int], b: Sequence[int]) -> int:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@lru_cache(maxsize=None)
def _worth_ten(pool: tuple[int, int, int]) -> tuple[tuple[int, int, int], ...]:
    """Integer value vectors under which ``pool`` is worth exactly 10."""
    return tuple(v for v in itertools.product(range(TOTAL_VALUE + 1), repeat=3) if _dot(v, pool) == TOTAL_VALUE)


def _compatible(v0: Sequence[int], v1: Sequence[int]) -> bool:
    every_type_wanted = all(a > 0 or b > 0 for a, b in zip(v0, v1))
    some_type_shared = any(a > 0 and b > 0 for a, b in zip(v0, v1))
    return every_type_wanted and some_type_shared


@lru_cache(maxsize=None)
def first_values(pool: tuple[int, int, int]) -> tuple[tuple[int, int, int], ...]:
    """Player 0's possible values for ``pool``: those with at least one compatible partner."""
    return tuple(v for v in _worth_ten(pool) if second_values(pool, v))


@lru_cache(maxsize=None)
def second_values(pool: tuple[int, int, int], v0: tuple[int, int, int]) -> tuple[tuple[int, int, int], ...]:
    return tuple(v for v in _worth_ten(pool) if _compatible(v0, v))


def allocations(pool: Sequence[int]) -> list[tuple[int, int, int]]:
    """Every split of the pool, as what one side keeps."""
    return [t for t in itertools.product(*(range(c + 1) for c in pool))]


def pareto_optimal(pool: Sequence[int], values: Sequence[Sequence[int]], keep0: Sequence[int]) -> bool:
    """No other split is at least as good for both players and better for one."""
    rest = [c - k for c, k in zip(pool, keep0)]
    u0, u1 = _dot(values[0], keep0), _dot(values[1], rest)
    for x in allocations(pool):
        a, b = _dot(values[0], x), _dot(values[1], [c - k for c, k in zip(pool, x)])
        if a >= u0 and b >= u1 and (a > u0 or b > u1):
            return False
    return True


def max_joint(pool: Sequence[int], values: Sequence[Sequence[int]]) -> int:
    """Joint utility when each item goes to whoever values it more."""
    return sum(c * max(values[0][i], values[1][i]) for i, c in enumerate(pool))


def describe(items: Sequence[int]) -> str:
    return ", ".join(f"{k} {name}{'s' if k != 1 else ''}" for k, name in zip(items, ITEMS))


@dataclass(frozen=True)
class NegotiationView:
    """What a player knows, decoded from its observation tensor (for scripted negotiators)."""

    seat: int
    pool: tuple[int, int, int]
    values: tuple[int, int, int]
    turn: int
    max_turns: int
    offer: tuple[int, int, int] | None
    """What *this* player would get if it accepted the standing offer."""

    @property
    def last_turn(self) -> bool:
        return self.turn >= self.max_turns - 1

    def value(self, items: Sequence[int]) -> int:
        return _dot(self.values, items)


def read_view(tensor: np.ndarray) -> NegotiationView:
    x = [int(round(float(v))) for v in np.asarray(tensor).reshape(-1)]
    has = x[8] > 0
    return NegotiationView(
        seat=0 if x[15] else 1,
        pool=tuple(x[0:3]),
        values=tuple(x[3:6]),
        turn=x[6],
        max_turns=x[7],
        offer=tuple(x[9:12]) if has else None,
    )


class NegotiationState(State):
    def __init__(self, game: "DealOrNoDeal") -> None:
        self.game = game
        self.max_turns, self.talk = game.max_turns, game.talk
        self.pool: tuple[int, int, int] | None = None
        self.values: list[tuple[int, int, int]] = []
        self.offers: list[tuple[int, tuple[int, int, int]]] = []
        self.turn = 0
        self.agreed = False
        self.spoke = False
        self.events: list[str] = []  # public record: offers, acceptances, messages

    # -- contract ---------------------------------------------------------------------------
    def num_players(self) -> int:
        return 2

    def current_player(self) -> int:
        if len(self.values) < 2:
            return CHANCE
        if self.agreed or self.turn >= self.max_turns:
            return TERMINAL
        return self.turn % 2

    def decision_kind(self, player: int) -> str:
        if self.talk == "text" and not self.spoke and self.current_player() == player:
            return "text"
        return "choice"

    def max_text_length(self, player: int) -> int:
        return self.game.max_message_chars

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.pool is None:
            return [(i, 1 / len(POOLS)) for i in range(len(POOLS))]
        options = first_values(self.pool) if not self.values else second_values(self.pool, self.values[0])
        if len(self.values) < 2:
            return [(i, 1 / len(options)) for i in range(len(options))]
        return []

    def legal_actions(self, player: int | None = None) -> list[int]:
        cur = self.current_player()
        if player is None:
            player = cur
        if cur == CHANCE:
            return [a for a, _ in self.chance_outcomes()] if player == CHANCE else []
        if player != cur or cur < 0 or self.decision_kind(player) == "text":
            return []
        pool = self.pool
        legal = [i for i, t in enumerate(OFFERS) if t[0] <= pool[0] and t[1] <= pool[1] and t[2] <= pool[2]]
        return legal + [ACCEPT] if self.offers else legal

    def apply_action(self, action: Action) -> None:
        cur = self.current_player()
        if cur == TERMINAL:
            raise IllegalActionError("deal_or_no_deal: the game is over")
        if isinstance(action, str):
            if self.decision_kind(cur) != "text":
                raise IllegalActionError(f"deal_or_no_deal: player_{cur} must choose an action id here, not text")
            if len(action) > self.game.max_message_chars:
                raise IllegalActionError(
                    f"deal_or_no_deal: message longer than {self.game.max_message_chars} characters"
                )
            self.spoke = True
            self.events.append(f'player_{cur} says: "{" ".join(action.split())}"')
            return
        action = int(action)
        if action not in self.legal_actions(cur):
            raise IllegalActionError(f"deal_or_no_deal: {action} is not a legal action for player {cur}")
        if cur == CHANCE:
            if self.pool is None:
                self.pool = POOLS[action]
            else:
                opts = first_values(self.pool) if not self.values else second_values(self.pool, self.values[0])
                self.values.append(opts[action])
            return
        if action == ACCEPT:
            self.agreed = True
            self.events.append(f"player_{cur} accepts.")
        else:
            keep = OFFERS[action]
            self.offers.append((cur, keep))
            give = tuple(c - k for c, k in zip(self.pool, keep))
            self.events.append(f"player_{cur} offers to take {describe(keep)} and give {describe(give)}.")
        self.turn += 1
        self.spoke = False

    def allocation(self) -> list[tuple[int, int, int]] | None:
        """Items each player ends with, or ``None`` without a deal."""
        if not self.agreed:
            return None
        proposer, keep = self.offers[-1]
        rest = tuple(c - k for c, k in zip(self.pool, keep))
        return [keep, rest] if proposer == 0 else [rest, keep]

    def returns(self) -> list[float]:
        alloc = self.allocation()
        if alloc is None:
            return [0.0, 0.0]
        return [float(_dot(self.values[p], alloc[p])) for p in range(2)]

    def clone(self) -> "NegotiationState":
        c = NegotiationState.__new__(NegotiationState)
        c.__dict__.update(self.__dict__)
        c.values, c.offers, c.events = list(self.values), list(self.offers), list(self.events)
        return c

    # -- renderings ------------------------------------------------------------------------
    def action_label(self, player: int, action: int) -> str:
        if player == CHANCE:
            return f"chance {action}"
        if action == ACCEPT:
            return "accept"
        if self.game.text == "brief":
            return "take " + " ".join(map(str, OFFERS[action]))
        return "take " + describe(OFFERS[action])

    def _offer_to(self, player: int) -> tuple[int, int, int] | None:
        if not self.offers:
            return None
        proposer, keep = self.offers[-1]
        return keep if proposer == player else tuple(c - k for c, k in zip(self.pool, keep))

    def information_state_key(self, player: int) -> str:
        if len(self.values) < 2:
            return f"player_{player} dealing"
        return f"player_{player} pool {self.pool} values {self.values[player]} turn {self.turn}" + "".join(
            f"\n{e}" for e in self.events
        )

    def observation_text(self, player: int) -> str:
        if self.game.text == "brief":
            return self.brief_text(player)
        if len(self.values) < 2:
            return f"You are player_{player}. The items and values are being dealt."
        v = self.values[player]
        lines = [
            f"Deal or No Deal: you are player_{player}. Items: {describe(self.pool)}.",
            "Your private values: "
            + ", ".join(f"{name} {x}" for name, x in zip(ITEMS, v))
            + f" (the whole pool is worth {TOTAL_VALUE} to you; the other player has its own private values).",
            f"Players alternate: offer what you take, or accept the standing offer. After {self.max_turns} "
            "turns without acceptance there is no deal and both score 0.",
        ]
        lines += self.events
        if self.current_player() == TERMINAL:
            alloc = self.allocation()
            if alloc is None:
                lines.append("No deal: both score 0.")
            else:
                lines.append(
                    f"Deal: you get {describe(alloc[player])}, worth {self.returns()[player]:g} to you. "
                    f"Values were: player_0 {self.values[0]}, player_1 {self.values[1]}."
                )
            return "\n".join(lines)
        mine = self._offer_to(player)
        if mine is not None and self.offers[-1][0] != player:
            lines.append(f"Standing offer: you would get {describe(mine)}, worth {_dot(v, mine)} to you.")
        lines.append(f"Turn {self.turn + 1} of {self.max_turns}.")
        if self.current_player() == player:
            if self.turn == self.max_turns - 1:
                lines.append("This is the last turn: only accepting makes a deal.")
            lines.append("Send a message first." if self.decision_kind(player) == "text" else "Your move.")
        return "\n".join(lines)

    def observation_struct(self, player: int) -> dict[str, Any]:
        """Items and own values, the public offers and speech, the standing offer; each offer
        move acts on the items it keeps (``item:book`` ...), accepting on the standing offer."""

        def on(a: int) -> list[str]:
            return ["offer:standing"] if a == ACCEPT else [f"item:{n}" for n, k in zip(ITEMS, OFFERS[a]) if k]

        out = decision_struct(self, player, on)
        out.update(game="deal_or_no_deal", players=2, turn=self.turn + 1, max_turns=self.max_turns)
        if len(self.values) < 2:
            return out
        v = self.values[player]
        out.update(
            items=[{"item": n, "count": c, "your_value": x} for n, c, x in zip(ITEMS, self.pool, v)],
            pool_value=TOTAL_VALUE,
            offers=[{"by": q, "takes": dict(zip(ITEMS, keep))} for q, keep in self.offers],
            log=list(self.events),
        )
        mine = self._offer_to(player)
        if mine is not None and self.offers[-1][0] != player and not self.is_terminal():
            out["standing_offer"] = {"you_get": dict(zip(ITEMS, mine)), "worth": _dot(v, mine)}
        alloc = self.allocation()
        if alloc is not None:
            out["deal"] = {"you_get": dict(zip(ITEMS, alloc[player])), "values": [list(x) for x in self.values]}
        return out

    def brief_text(self, player: int) -> str:
        """One line: ``p0 pool 2 1 3 values 1 4 1 turn 3/4 offer 1 0 2 worth 3 last`` (module docstring)."""
        if len(self.values) < 2:
            return f"p{player} dealing"
        counts = " ".join(map(str, self.pool))
        text = f"p{player} pool {counts} values {' '.join(map(str, self.values[player]))}"
        if self.current_player() == TERMINAL:
            alloc = self.allocation()
            got = "no deal" if alloc is None else f"deal {' '.join(map(str, alloc[player]))}"
            return f"{text} {got} score {self.returns()[player]:g}"
        text += f" turn {self.turn + 1}/{self.max_turns}"
        mine = self._offer_to(player)
        if mine is not None and self.offers[-1][0] != player:
            text += f" offer {' '.join(map(str, mine))} worth {_dot(self.values[player], mine)}"
        said = [e for e in self.events if e.startswith(f"player_{1 - player} says: ")]
        if said:  # talk=text: the other player's latest message
            text += " said " + said[-1].split(" says: ", 1)[1]
        return text + (" last" if self.turn == self.max_turns - 1 else "")

    def observation_tensor(self, player: int) -> np.ndarray:
        x = np.zeros(OBS_SIZE, dtype=np.float32)
        if len(self.values) < 2:
            x[15 + player] = 1
            return x
        x[0:3], x[3:6] = self.pool, self.values[player]
        x[6], x[7] = self.turn, self.max_turns
        mine = self._offer_to(player)
        if mine is not None and self.offers[-1][0] != player:
            x[8], x[9:12] = 1, mine
        own = [k for p, k in self.offers if p == player]
        if own:
            x[12:15] = own[-1]
        x[15 + player] = 1
        return x

    def outcome_info(self) -> dict[str, Any]:
        alloc = self.allocation()
        u = self.returns()
        info: dict[str, Any] = {
            "agreed": self.agreed,
            "pool": list(self.pool),
            "values": [list(v) for v in self.values],
            "allocation": [list(a) for a in alloc] if alloc else None,
            "utilities": u,
            "joint_utility": sum(u),
            "max_joint_utility": max_joint(self.pool, self.values),
            "turns": self.turn,
            "transcript": list(self.events),
        }
        info["pareto_optimal"] = bool(alloc and pareto_optimal(self.pool, self.values, alloc[0]))
        # the same facts as numbers, so learner metrics (arena/league/metrics.py seat_stats) average them
        info["agreement"] = float(bool(self.agreed))
        info["pareto"] = float(info["pareto_optimal"])
        info["joint_fraction"] = sum(u) / info["max_joint_utility"] if info["max_joint_utility"] else 0.0
        return info

    def summary(self) -> str:
        alloc = self.allocation()
        return f"deal {alloc}, utilities {self.returns()}" if alloc else "no deal"


class DealOrNoDeal(Game):
    """``deal_or_no_deal(max_turns=10, talk=none, max_message_chars=280, text=full)``."""

    def __init__(
        self, max_turns: int = 10, talk: str = "none", max_message_chars: int = 280, text: str = "full"
    ) -> None:
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or not 1 <= max_turns <= 100:
            raise ArenaError(f"deal_or_no_deal: parameter 'max_turns' must be an integer 1..100, got {max_turns!r}")
        if talk not in ("none", "text"):
            raise ArenaError(f"deal_or_no_deal: parameter 'talk' must be none or text, got {talk!r}")
        if isinstance(max_message_chars, bool) or not isinstance(max_message_chars, int) or max_message_chars < 1:
            raise ArenaError("deal_or_no_deal: parameter 'max_message_chars' must be a positive integer")
        if text not in ("full", "brief"):
            raise ArenaError(f"deal_or_no_deal: parameter 'text' must be full or brief, got {text!r}")
        self.max_turns, self.talk, self.max_message_chars, self.text = max_turns, talk, max_message_chars, text
        given = {"max_turns": max_turns, "talk": talk, "max_message_chars": max_message_chars, "text": text}
        params = {k: v for k, v in given.items() if v != DEFAULTS[k]}
        self.spec = GameSpec(
            name="deal_or_no_deal",
            num_players=2,
            num_distinct_actions=ACCEPT + 1,
            observation_shape=(OBS_SIZE,),
            min_utility=0.0,
            max_utility=float(TOTAL_VALUE),
            zero_sum=False,
            max_game_length=3 + max_turns * (2 if talk == "text" else 1),
            tree=False,
            text_decisions=talk == "text",
            params=params,
            description="Deal or No Deal: split books, hats and balls with private values; "
            "alternating offers, accept, no deal scores 0",
        )

    def new_initial_state(self, seed: int | None = None) -> NegotiationState:
        return NegotiationState(self)


def negotiation_metrics(results: Sequence[Any]) -> dict[str, Any]:
    """Agreement rate, joint utility (also as a share of the maximum), Pareto-optimal share of
    deals, fairness gap, and per agent its mean score and share of the joint utility."""
    rows = [r for r in results if r.info and "agreed" in r.info]
    if not rows:
        raise ArenaError("negotiation_metrics: no finished deal_or_no_deal results with outcome info")
    deals = [r for r in rows if r.info["agreed"]]
    agents: dict[str, dict[str, float]] = {}
    for r in rows:
        u = r.info["utilities"]
        for seat, name in enumerate(r.seats):
            a = agents.setdefault(name, {"games": 0, "score": 0.0, "share": 0.0})
            a["games"] += 1
            a["score"] += u[seat]
            a["share"] += u[seat] / sum(u) if sum(u) > 0 else 0.5
    return {
        "games": len(rows),
        "agreement_rate": len(deals) / len(rows),
        "joint_utility": float(np.mean([r.info["joint_utility"] for r in rows])),
        "joint_fraction_of_max": float(np.mean([r.info["joint_utility"] / r.info["max_joint_utility"] for r in rows])),
        "pareto_rate": float(np.mean([r.info["pareto_optimal"] for r in deals])) if deals else 0.0,
        "fairness_gap": float(np.mean([abs(r.info["utilities"][0] - r.info["utilities"][1]) for r in deals]))
        if deals
        else 0.0,
        "agents": {
            n: {"games": int(a["games"]), "mean_score": a["score"] / a["games"], "mean_share": a["share"] / a["games"]}
            for n, a in agents.items()
        },
    }


@hookimpl
def arena_games() -> list[GameEntry]:
    return [
        GameEntry(
            "deal_or_no_deal",
            DealOrNoDeal,
            "Deal or No Deal negotiation (Lewis et al. 2017): alternating offers over private values",
            dict(DEFAULTS),
        )
    ]
