"""Trust-and-Split (the rock-paper-scissors split game of the AdAlign LLM work).

Each of ``horizon`` rounds: chance deals the two players different rock-paper-scissors hands;
the winning hand values each coin at 10, the losing hand at 1. With ``talk`` on, each player
sends one message (speaker order alternates by round; at most 500 characters) — a text
decision for LLMs and people. Then both claim 0..``coins`` coins at once: if the claims fit,
each gets its claim, otherwise the coins are split in proportion to the claims. After a round
each player learns whether the other had the upper hand and what it claimed.

Cooperation means the lower hand concedes (total welfare 100 per round instead of 55 when both
grab), which only pays if it is reciprocated. ``public_hands`` shows both hands; it defaults to
on without talk, because with hidden hands and no way to talk no claim can depend on who holds
the upper hand and the dilemma disappears (every policy then has the same expected welfare).

Observation tensor, shape (13,): own hand (3), other's hand (3, zeros when hidden), I hold the
upper hand (1, when known), last round: I was upper / lower (2), my claim / coins, the other's
claim / coins (2), first-round flag (1), rounds played / horizon (1; lets a critic see how much
of the game is left), then the reputations: the other's claim / coins the last time *it* held
the lower hand, a flag that this has happened, and my own claim the last time I held it (3) —
with roles dealt at random, the last round alone often says nothing about whether the other
concedes.

``text=brief`` renders a short view for small language models (about 120 characters instead of
600-900): the last round (my hand, what the other said, who held the upper hand, both claims),
the other's claim the last time it held the lower hand, my hand and this round's messages. The
last round's line puts a stated hand next to the outcome it implies, so next-token training on
the game's own text (the warm-up of a tiny model) learns which hand beats which. ``text=hinted``
is the brief view plus, after a message this round that names a hand, what it would mean if true
(``Other said 'rock' (if true, you upper).``): the player could work that out from its own hand,
and with the hint a small model's claims can depend on the talk without first learning
rock-paper-scissors.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import CHANCE, SIMULTANEOUS, TERMINAL, Action, IllegalActionError

from .base import RoundGame, RoundState, check_horizon, make_spec

HANDS = ("rock", "paper", "scissors")
DEALS = [(a, b) for a in range(3) for b in range(3) if a != b]
HIGH, LOW = 10.0, 1.0
MAX_MESSAGE = 500


def beats(a: int, b: int) -> bool:
    return (a - b) % 3 == 1


def named_hand(text: str) -> int | None:
    """The hand a message names, when the message is just a hand's name (``'Rock.'``), else None."""
    named = text.strip().strip(".!'\"").lower()
    return HANDS.index(named) if named in HANDS else None


class TrustSplitState(RoundState):
    game: "TrustSplitGame"

    def __init__(self, game: "TrustSplitGame") -> None:
        super().__init__(game)
        self.hands: tuple[int, int] | None = None
        self.messages: list[tuple[int, int, str]] = []  # (round, player, text)
        self.rounds: list[dict[str, Any]] = []

    # -- flow --------------------------------------------------------------------------------------
    def _speakers(self) -> list[int]:
        first = self.round % 2
        return [first, 1 - first]

    def _said(self) -> int:
        return sum(1 for r, _, _ in self.messages if r == self.round)

    def current_player(self) -> int:
        if self.round >= self.game.horizon:
            return TERMINAL
        if self.hands is None:
            return CHANCE
        if self.game.talk and self._said() < 2:
            return self._speakers()[self._said()]
        return SIMULTANEOUS

    def decision_kind(self, player: int) -> str:
        p = self.current_player()
        return "text" if self.game.talk and p >= 0 and p == player else "choice"

    def max_text_length(self, player: int) -> int:
        return MAX_MESSAGE

    def legal_actions(self, player: int | None = None) -> list[int]:
        p = self.current_player()
        if p == SIMULTANEOUS and player is not None and player >= 0:
            return list(range(self.game.coins + 1))
        return []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.current_player() != CHANCE:
            return []
        return [(3 * a + b, 1.0 / len(DEALS)) for a, b in DEALS]

    def apply_action(self, action: Action) -> None:
        p = self.current_player()
        if p == CHANCE:
            a, b = divmod(int(action), 3)
            if (a, b) not in DEALS:
                raise IllegalActionError(f"trust_split: {action!r} is not a deal of two different hands")
            self.hands = (a, b)
        elif p >= 0:
            if not isinstance(action, str):
                raise IllegalActionError(f"trust_split: player {p} must send a text message now, got {action!r}")
            if len(action) > MAX_MESSAGE:
                raise IllegalActionError(f"trust_split: message of {len(action)} characters exceeds {MAX_MESSAGE}")
            self.messages.append((self.round, p, action))
        else:
            raise IllegalActionError("trust_split: claims are simultaneous; use apply_actions")

    def apply_actions(self, actions: Sequence[Action]) -> None:
        if self.current_player() != SIMULTANEOUS:
            raise IllegalActionError("trust_split: no joint claim expected now")
        claims = tuple(int(a) for a in actions)
        if any(c not in range(self.game.coins + 1) for c in claims):
            raise IllegalActionError(f"trust_split: claims must be 0..{self.game.coins}, got {claims}")
        rewards = self._play(claims)
        self.totals += np.asarray(rewards)
        self.history.append(claims)
        self.round += 1
        self.hands = None

    def _play(self, claims: Sequence[int]) -> list[float]:
        n = self.game.coins
        total = sum(claims)
        coins = [float(c) for c in claims] if total <= n else [n * c / total for c in claims]
        upper = 0 if beats(self.hands[0], self.hands[1]) else 1
        values = [HIGH if p == upper else LOW for p in range(2)]
        rewards = [coins[p] * values[p] for p in range(2)]
        self.rounds.append({"hands": self.hands, "upper": upper, "claims": tuple(claims), "rewards": rewards})
        return rewards

    # -- views -------------------------------------------------------------------------------------
    def _hands_visible(self) -> bool:
        return self.game.public_hands

    def observation_tensor(self, player: int) -> np.ndarray:
        out = np.zeros(16, dtype=np.float32)
        out[12] = self.round / self.game.horizon
        if self.hands is not None:
            out[self.hands[player]] = 1
            if self._hands_visible():
                out[3 + self.hands[1 - player]] = 1
                out[6] = float(beats(self.hands[player], self.hands[1 - player]))
        if self.rounds:
            last = self.rounds[-1]
            out[7 if last["upper"] == player else 8] = 1
            out[9] = last["claims"][player] / self.game.coins
            out[10] = last["claims"][1 - player] / self.game.coins
        else:
            out[11] = 1
        for r in reversed(self.rounds):
            if r["upper"] == player:
                out[13], out[14] = r["claims"][1 - player] / self.game.coins, 1.0
                break
        for r in reversed(self.rounds):
            if r["upper"] != player:
                out[15] = r["claims"][player] / self.game.coins
                break
        return out

    def action_label(self, player: int, action: int) -> str:
        return f"claim {action}"

    def observation_text(self, player: int) -> str:
        g = self.game
        if g.text in ("brief", "hinted"):
            return self.brief_text(player)
        lines = [
            f"Trust-and-Split, round {min(self.round + 1, g.horizon)} of {g.horizon}. {g.coins} coins are split "
            "each round. The player whose rock-paper-scissors hand wins values each coin at 10, the other at 1. "
            "Both claim coins at once; if the claims exceed the coins, they are scaled down in proportion."
        ]
        for k, r in enumerate(self.rounds[-3:]):
            idx = len(self.rounds) - min(3, len(self.rounds)) + k + 1
            up = "you" if r["upper"] == player else "the other player"
            lines.append(
                f"Round {idx}: {up} had the upper hand; you claimed {r['claims'][player]}, "
                f"the other claimed {r['claims'][1 - player]}; you got {r['rewards'][player]:g} points."
            )
        if self.hands is not None:
            mine = HANDS[self.hands[player]]
            if self._hands_visible():
                other = HANDS[self.hands[1 - player]]
                side = "upper" if beats(self.hands[player], self.hands[1 - player]) else "lower"
                lines.append(f"Your hand: {mine}; the other's hand: {other} (you have the {side} hand).")
            else:
                lines.append(f"Your hand: {mine} (the other's hand is hidden).")
        for r, p, text in self.messages:
            if r == self.round:
                lines.append(f"{'You' if p == player else 'The other player'} said: {text!r}")
        lines.append(f"Totals: you {self.totals[player]:g}, other {self.totals[1 - player]:g}.")
        if self.is_terminal():
            lines.append("Game over.")
        elif self.decision_kind(player) == "text":
            lines.append(f"Write one message to the other player (at most {MAX_MESSAGE} characters).")
        elif self.current_player() == SIMULTANEOUS:
            lines.append(f"Legal: claim 0..{g.coins}.")
        return " ".join(lines)

    def _said_in(self, round_: int, player: int) -> str | None:
        return next((t for r, p, t in self.messages if r == round_ and p == player), None)

    def brief_text(self, player: int) -> str:
        """The short view of ``text=brief`` (see the module docstring)."""
        if self.is_terminal():
            return "Game over."
        lines = []
        if self.rounds:
            last, k = self.rounds[-1], len(self.rounds) - 1
            said = self._said_in(k, 1 - player)
            lines.append(
                f"Last: you {HANDS[last['hands'][player]]}"
                + (f", other said {said!r}" if said is not None else "")
                + f", you {'upper' if last['upper'] == player else 'lower'}"
                + f", claims {last['claims'][player]}/{last['claims'][1 - player]}."
            )
        for r in reversed(self.rounds):
            if r["upper"] == player:
                lines.append(f"Other lower claimed {r['claims'][1 - player]}.")
                break
        if self.hands is not None:
            lines.append(f"Now: you {HANDS[self.hands[player]]}")
            if self._hands_visible():
                lines[-1] += f", other {HANDS[self.hands[1 - player]]}"
            lines[-1] += "."
        for r, p, text in self.messages:
            if r == self.round:
                lines.append(f"{'You' if p == player else 'Other'} said {text!r}{self._hint(player, p, text)}.")
        return " ".join(lines)

    def _hint(self, player: int, speaker: int, text: str) -> str:
        """``text=hinted``: what the other's message would mean if it names its hand truly."""
        theirs = named_hand(text)
        if self.game.text != "hinted" or speaker == player or self.hands is None or theirs is None:
            return ""
        mine = self.hands[player]
        side = "you upper" if beats(mine, theirs) else "you lower" if beats(theirs, mine) else "a lie"
        return f" (if true, {side})"

    def observation_struct(self, player: int) -> dict[str, Any]:
        out = self.round_struct(player)
        out.update(
            coins=self.game.coins,
            coin_values={"upper": HIGH, "lower": LOW},
            rounds=[
                {
                    "upper": "you" if r["upper"] == player else "other",
                    "claims": {"you": r["claims"][player], "other": r["claims"][1 - player]},
                    "points": r["rewards"][player],
                }
                for r in self.rounds
            ],
            talk=[
                {"by": "you" if p == player else "other", "text": text}
                for r, p, text in self.messages
                if r == self.round
            ],
        )
        if self.hands is not None:
            out["hand"] = HANDS[self.hands[player]]
            if self._hands_visible():
                out["other_hand"] = HANDS[self.hands[1 - player]]
                out["upper_hand"] = beats(self.hands[player], self.hands[1 - player])
        return out

    def information_state_key(self, player: int) -> str:
        seen = [(r["upper"] == player, r["claims"]) for r in self.rounds]
        hand = (
            None
            if self.hands is None
            else (self.hands[player], self.hands[1 - player] if self._hands_visible() else None)
        )
        talk = [(r, p, t) for r, p, t in self.messages]
        return f"p{player} {seen} hand={hand} talk={talk}"

    def outcome_info(self) -> dict[str, Any]:
        concede, lower = [0, 0], [0, 0]
        for r in self.rounds:
            low = 1 - r["upper"]
            lower[low] += 1
            concede[low] += int(sum(r["claims"]) <= self.game.coins)
        rate = [concede[p] / lower[p] if lower[p] else float("nan") for p in range(2)]
        return {"cooperation": rate, "joint_return": float(self.totals.sum()), "rounds": len(self.rounds)}


class TrustSplitGame(RoundGame):
    state_class = TrustSplitState

    def __init__(
        self, horizon: int = 10, coins: int = 10, talk: bool = False, public_hands: Any = None, text: str = "full"
    ) -> None:
        self.horizon, self.discount = check_horizon("trust_split", horizon, 1.0)
        if not isinstance(coins, int) or coins < 1:
            raise ArenaError(f"game 'trust_split': coins must be a positive integer, got {coins!r}")
        if not isinstance(talk, bool):
            raise ArenaError(f"game 'trust_split': talk must be true or false, got {talk!r}")
        if text not in ("full", "brief", "hinted"):
            raise ArenaError(f"game 'trust_split': text must be 'full', 'brief' or 'hinted', got {text!r}")
        self.coins, self.talk, self.text = coins, talk, text
        self.public_hands = (not talk) if public_hands is None else bool(public_hands)
        params = {
            k: v
            for k, v in {
                "horizon": horizon,
                "coins": coins,
                "talk": talk,
                "public_hands": public_hands,
                "text": text,
            }.items()
            if v != {"horizon": 10, "coins": 10, "talk": False, "public_hands": None, "text": "full"}[k]
        }
        spec = make_spec(
            "trust_split",
            2,
            coins + 1,
            (16,),
            0.0,
            HIGH * coins * self.horizon,
            self.horizon,
            params,
            f"Trust-and-Split: {self.horizon} rounds of {coins} coins, "
            f"{'one message each then ' if talk else ''}simultaneous claims; hands "
            f"{'public' if self.public_hands else 'private'}",
            text=talk,
        )
        self.spec = dataclasses.replace(spec, max_game_length=4 * self.horizon) if talk else spec

    def scripted_kinds(self) -> tuple[str, ...]:
        return ("always_cooperate", "always_defect", "tit_for_tat", "greedy_splitter", "hand_teller")

    def scripted_message(self, kind: str, obs: Any) -> str | None:
        """``hand_teller`` names its own hand; the other kinds say the agent's fixed message (None)."""
        if kind != "hand_teller":
            return None
        return HANDS[int(np.argmax(np.asarray(obs.tensor)[:3]))]

    def scripted_action(self, kind: str, obs: Any) -> int:
        if obs.decision == "text":
            return 0  # handled by the agent (a fixed message)
        x, n = np.asarray(obs.tensor), self.coins
        if kind == "hand_teller":  # claims uniformly at random: a warm-up corpus with no strategy in it
            return min(int(obs.uniform() * (n + 1)), n)
        fair = (n if x[6] > 0 else 0) if self.public_hands else n // 2  # hidden hands: ask for half
        if kind in ("greedy_splitter", "always_defect"):
            return n
        if kind == "always_cooperate":
            return fair
        if kind == "tit_for_tat":  # concede unless the other grabbed (over half) last time it held the lower hand
            return n if (x[14] > 0 and x[13] > 0.5) else fair
        return super().scripted_action(kind, obs)
