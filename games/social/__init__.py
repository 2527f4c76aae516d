"""Social dilemmas: iterated matrix games (prisoner's dilemma, stag hunt, chicken), the Coin
Game, the n-player public goods game and Trust-and-Split (with a text mode for talk)."""

from __future__ import annotations

from arena.game import GameEntry
from arena.hookspecs import hookimpl

from .coin import CoinGame
from .matrix import IteratedMatrixGame, chicken, ipd, stag_hunt
from .public_goods import PublicGoodsGame
from .trust_split import TrustSplitGame

__all__ = ["CoinGame", "IteratedMatrixGame", "PublicGoodsGame", "TrustSplitGame"]


@hookimpl
def arena_games() -> list[GameEntry]:
    window = {"horizon": 16, "discount": 1.0, "memory": 1, "text": "full"}
    return [
        GameEntry(
            "ipd",
            ipd,
            "iterated prisoner's dilemma, payoff matrix [R,S,T,P] as a parameter",
            {"payoffs": "[-1,-3,0,-2]", "preset": "prisoners_dilemma", **window},
        ),
        GameEntry(
            "stag_hunt", stag_hunt, "iterated stag hunt (matrix-game preset)", {"payoffs": "[4,0,3,2]", **window}
        ),
        GameEntry("chicken", chicken, "iterated chicken (matrix-game preset)", {"payoffs": "[3,1,4,0]", **window}),
        GameEntry(
            "coin_game",
            CoinGame,
            "Coin Game (LOLA rules) on a torus; memory=k: the last k steps' pickups",
            {"size": 3, "horizon": 16, "discount": 1.0, "memory": 0},
        ),
        GameEntry(
            "public_goods",
            PublicGoodsGame,
            "repeated n-player linear public goods game",
            {"players": 4, "endowment": 4, "multiplier": 1.6, "horizon": 10, "discount": 1.0},
        ),
        GameEntry(
            "trust_split",
            TrustSplitGame,
            "Trust-and-Split: RPS-valued coins, optional talk, simultaneous claims",
            {"horizon": 10, "coins": 10, "talk": False, "public_hands": "not talk"},
        ),
    ]
