"""Card and dice games on OpenSpiel's implementations: Kuhn poker (2+ players), Leduc hold'em
and Liar's dice.

Rules, chance and info-state keys are OpenSpiel's (so policies keyed here evaluate in
OpenSpiel); this module adds renderings and action labels a person or an LLM can act on.
"""

from __future__ import annotations

import re
from typing import Any

from arena.adapters.openspiel import OpenSpielGame, OpenSpielState
from arena.arrays import ArrayFaceEntry
from arena.game import GameEntry, decision_struct
from arena.hookspecs import hookimpl

RANKS = ["Jack", "Queen", "King", "Ace", "Ten", "Nine"]
RENDERER = ("arena.games", "cards.js")
"""The web table for the three games: cards, chips and pot, dice and bids."""


def _chips(state: OpenSpielState, player: int) -> dict[str, Any]:
    """The decision part of a view; each betting move acts on its chip (``chip:<label>``)."""
    return decision_struct(state, player, lambda a: [f"chip:{state.action_label(player, a)}"])


def _to_move(state: OpenSpielState) -> int | None:
    """Whose turn it is (public in these games), ``None`` at chance and at the end."""
    p = state.current_player()
    return p if p >= 0 else None


def _seat(me: int, who: int, n: int) -> str:
    if who == me:
        return "you"
    return "your opponent" if n == 2 else f"player {who}"


# -- Kuhn poker ---------------------------------------------------------------------------------
class KuhnState(OpenSpielState):
    """History: one dealt card per player, then pass(0)/bet(1) moves."""

    def _moves(self) -> list[int]:
        return self._s.history()[self.num_players() :]

    def _showdown_players(self) -> list[int]:
        """Players whose cards are revealed: all if nobody bet, else those who bet or called."""
        n, moves = self.num_players(), self._moves()
        if 1 not in moves:
            return list(range(n))
        return sorted({i % n for i, a in enumerate(moves) if a == 1})

    def action_label(self, player: int, action: int) -> str:
        facing_bet = 1 in self._moves()
        if facing_bet:
            return "call" if action == 1 else "fold"
        return "bet" if action == 1 else "check"

    def observation_text(self, player: int) -> str:
        n = self.num_players()
        hist = self._s.history()
        lines = []
        if len(hist) > player:
            lines.append(f"You are player {player} of {n}. You hold the {RANKS[hist[player]]}.")
        else:
            lines.append(f"You are player {player} of {n}. The cards are being dealt.")
        said, facing = [], False
        for i, a in enumerate(self._moves()):
            who = _seat(player, i % n, n)
            word = ("calls" if a else "folds") if facing else ("bets" if a else "checks")
            said.append(
                f"{who} {word}".replace("you calls", "you call")
                .replace("you folds", "you fold")
                .replace("you bets", "you bet")
                .replace("you checks", "you check")
            )
            facing = facing or a == 1
        if said:
            lines.append("So far: " + ", ".join(said) + ".")
        pot = n + sum(self._moves())
        lines.append(f"Pot: {pot} chips (ante 1 each; a bet or call adds 1).")
        if self.is_terminal():
            shown = self._showdown_players()
            if len(shown) > 1:
                cards = ", ".join(f"{_seat(player, q, n)}: {RANKS[hist[q]]}" for q in shown)
                lines.append(f"Showdown — {cards}.")
            else:
                lines.append("The hand ended with a fold; no cards are shown.")
            lines.append(f"Your return: {self.returns()[player]:+g}.")
        elif self.current_player() == player:
            lines.append("Legal: " + ", ".join(self.action_label(player, a) for a in self.legal_actions(player)) + ".")
        return " ".join(lines)

    def observation_struct(self, player: int) -> dict[str, Any]:
        n, hist, moves = self.num_players(), self._s.history(), self._moves()
        facing, bets = False, []
        for i, a in enumerate(moves):
            word = ("call" if a else "fold") if facing else ("bet" if a else "check")
            bets.append({"player": i % n, "move": word})
            facing = facing or a == 1
        stakes = [1 + sum(a for i, a in enumerate(moves) if i % n == q) for q in range(n)]
        out = _chips(self, player)
        out.update(
            game="kuhn_poker",
            players=n,
            deck=RANKS[: n + 1],
            hand=[{"rank": RANKS[hist[player]]}] if len(hist) > player else [],
            to_move=_to_move(self),
            bets=bets,
            stakes=stakes,
            pot=sum(stakes),
            log=[f"{_seat(player, b['player'], n)}: {b['move']}" for b in bets],
        )
        if self.is_terminal():
            shown = self._showdown_players()
            out["showdown"] = [{"player": q, "rank": RANKS[hist[q]]} for q in shown] if len(shown) > 1 else []
        return out


class KuhnPoker(OpenSpielGame):
    state_class = KuhnState
    web_renderer = RENDERER

    def __init__(self, players: int = 2) -> None:
        params = {} if players == 2 else {"players": players}
        super().__init__(
            "kuhn_poker",
            params,
            arena_name="kuhn_poker",
            description=f"Kuhn poker, {players} players: one card each from {players + 1}, "
            "one betting round of check/bet, call/fold",
        )
        self._face: Any = None

    def array_face(self) -> Any:
        """B games as numpy arrays (:mod:`arena.games.card_arrays`), for the runner's array path."""
        if self._face is None:
            from arena.games.card_arrays import KuhnFace

            self._face = KuhnFace(self.pyspiel_game)
        return self._face


# -- Leduc hold'em ------------------------------------------------------------------------------
_LEDUC_LABELS = {0: "fold", 1: "call", 2: "raise"}
_BID = re.compile(r"^(\d+)-(\d+)$")
_INFO_RE = re.compile(r"\[(\w+)(?::| ) ?([^\]]*)\]")


class LeducState(OpenSpielState):
    def _fields(self, player: int) -> dict[str, str]:
        return {k: v for k, v in _INFO_RE.findall(self._s.information_state_string(player))}

    def action_label(self, player: int, action: int) -> str:
        if action == 1:
            fields = self._fields(player)
            rnd = fields.get("Round", "1")
            seq = fields.get(f"Round{rnd}", "").split()
            facing = "2" in seq
            return "call" if facing else "check"
        return _LEDUC_LABELS[action]

    def observation_text(self, player: int) -> str:
        f = self._fields(player)
        card = int(f.get("Private", "-1")) if f.get("Private", "-1").lstrip("-").isdigit() else -1
        lines = [f"You are player {player}."]
        if card >= 0:
            lines.append(f"You hold a {RANKS[card // 2]} (suit {card % 2 + 1}).")
        public = f.get("Public")
        if public is not None and public.strip().lstrip("-").isdigit() and int(public) >= 0:
            lines.append(f"Board: {RANKS[int(public) // 2]} (suit {int(public) % 2 + 1}).")
        else:
            lines.append("Board: not dealt yet.")
        names = {"0": "fold", "1": "check/call", "2": "raise"}
        for rnd in ("1", "2"):
            seq = f.get(f"Round{rnd}", "").split()
            if seq:
                lines.append(f"Round {rnd} betting: " + ", ".join(names.get(a, a) for a in seq) + ".")
        lines.append(f"Pot: {f.get('Pot', '?')}. Raise size: {'2' if f.get('Round', '1') == '1' else '4'}.")
        if self.is_terminal():
            lines.append(f"Game over. Your return: {self.returns()[player]:+g}.")
        elif self.current_player() == player:
            lines.append("Legal: " + ", ".join(self.action_label(player, a) for a in self.legal_actions(player)) + ".")
        return " ".join(lines)

    def observation_struct(self, player: int) -> dict[str, Any]:
        f = self._fields(player)
        card, public = _card_id(f.get("Private")), _card_id(f.get("Public"))
        names = {"0": "fold", "1": "check/call", "2": "raise"}
        rounds = [[names.get(a, a) for a in f.get(f"Round{r}", "").split()] for r in ("1", "2")]
        money = [int(x) for x in f.get("Money", "").split() if x.lstrip("-").isdigit()]
        out = _chips(self, player)
        out.update(
            game="leduc_poker",
            players=self.num_players(),
            hand=[_leduc_card(card)] if card >= 0 else [],
            board=[_leduc_card(public)] if public >= 0 else [],
            to_move=_to_move(self),
            round=int(f.get("Round", "1")),
            rounds=rounds,
            pot=int(f["Pot"]) if f.get("Pot", "").isdigit() else None,
            stakes=[100 - m for m in money],
            raise_size=2 if f.get("Round", "1") == "1" else 4,
            log=[f"round {r + 1}: {a}" for r, moves in enumerate(rounds) for a in moves],
        )
        if public >= 0:  # the board card is dealt between the rounds
            out["log"].insert(len(rounds[0]), f"board: {RANKS[public // 2]} (suit {public % 2 + 1})")
        return out


def _card_id(field: str | None) -> int:
    """A card number from an info-string field, -1 when absent or not dealt."""
    text = (field or "").strip()
    return int(text) if text.lstrip("-").isdigit() else -1


def _leduc_card(card: int) -> dict[str, Any]:
    return {"rank": RANKS[card // 2], "suit": card % 2 + 1}


class LeducPoker(OpenSpielGame):
    state_class = LeducState
    web_renderer = RENDERER

    def __init__(self, players: int = 2) -> None:
        params = {} if players == 2 else {"players": players}
        super().__init__(
            "leduc_poker",
            params,
            arena_name="leduc_poker",
            description="Leduc hold'em: 6-card deck, private card, one public card, two betting rounds",
        )
        self._face: Any = None

    def array_face(self) -> Any:
        """B two-player games as numpy arrays (:mod:`arena.games.card_arrays`); none for more players."""
        if self._face is None and self.spec.num_players == 2:
            from arena.games.card_arrays import LeducFace

            self._face = LeducFace(self.pyspiel_game)
        return self._face


# -- Liar's dice --------------------------------------------------------------------------------
class LiarsDiceState(OpenSpielState):
    def _sides(self) -> int:
        return int(self.game.spec.params.get("dice_sides", 6))

    def action_label(self, player: int, action: int) -> str:
        label = self._s.action_to_string(player, action)
        return "liar" if label == "Liar" else label

    def observation_text(self, player: int) -> str:
        parts = self._s.information_state_string(player).split()
        sides = self._sides()
        dice = [p for p in parts if p.isdigit()]
        bids = [p for p in parts if "-" in p]
        lines = [f"You are player {player}. Your dice: {', '.join(dice) if dice else 'not rolled yet'}."]
        lines.append(f"A bid q-f claims at least q dice in play show face f; {sides}s are wild.")
        if bids:
            lines.append("Bids so far: " + ", ".join(bids) + ".")
        if parts and parts[-1] == "Liar":
            lines.append("Someone called liar.")
        if self.is_terminal():
            lines.append(f"Game over. Your return: {self.returns()[player]:+g}.")
        elif self.current_player() == player:
            legal = [self.action_label(player, a) for a in self.legal_actions(player)]
            shown = legal if len(legal) <= 12 else legal[:11] + ["...", legal[-1]]
            lines.append("Legal: " + ", ".join(shown) + ".")
        return " ".join(lines)

    def observation_struct(self, player: int) -> dict[str, Any]:
        parts = self._s.information_state_string(player).split()
        out = decision_struct(self, player, lambda a: [f"bid:{self.action_label(player, a)}"])
        out.update(
            game="liars_dice",
            players=self.num_players(),
            sides=self._sides(),
            wild=self._sides(),
            dice=[int(p) for p in parts if p.isdigit()],
            bids=[{"quantity": int(m[1]), "face": int(m[2])} for m in map(_BID.match, parts) if m],
            liar_called=bool(parts) and parts[-1] == "Liar",
            log=[f"bid {p}" if _BID.match(p) else "liar" for p in parts if _BID.match(p) or p == "Liar"],
            to_move=_to_move(self),
        )
        return out


class LiarsDice(OpenSpielGame):
    state_class = LiarsDiceState
    web_renderer = RENDERER

    def __init__(self, numdice: int = 1, dice_sides: int = 6) -> None:
        params = {
            k: v
            for k, v in {"numdice": numdice, "dice_sides": dice_sides}.items()
            if v != {"numdice": 1, "dice_sides": 6}[k]
        }
        super().__init__(
            "liars_dice",
            params,
            arena_name="liars_dice",
            description="Liar's dice, 2 players: bid on the dice in play or call liar",
        )


def _liars_dice_face(game: Any) -> Any:
    from arena.games.dice_arrays import LiarsDiceFace

    return LiarsDiceFace.for_game(game)


@hookimpl
def arena_array_faces() -> list[ArrayFaceEntry]:
    """Liar's dice as numpy arrays (:mod:`arena.games.dice_arrays`), for ``liars_dice`` and
    ``openspiel:liars_dice`` alike (both play through the OpenSpiel adapter)."""
    return [ArrayFaceEntry("openspiel:liars_dice", _liars_dice_face, "Liar's dice, two players, as numpy arrays")]


@hookimpl
def arena_games() -> list[GameEntry]:
    return [
        GameEntry("kuhn_poker", KuhnPoker, "Kuhn poker (2 or more players), on OpenSpiel", {"players": 2}),
        GameEntry("leduc_poker", LeducPoker, "Leduc hold'em, on OpenSpiel", {"players": 2}),
        GameEntry("liars_dice", LiarsDice, "Liar's dice, on OpenSpiel", {"numdice": 1, "dice_sides": 6}),
    ]
