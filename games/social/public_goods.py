"""Repeated linear public goods game for ``players`` players.

Each round every player holds an endowment ``e`` and contributes ``c_i`` in {0..e}; the pot is
multiplied by ``multiplier`` (r) and shared equally: u_i = e - c_i + (r/N) * sum_j c_j. With
1 < r < N giving nothing dominates, while giving everything maximises welfare.

Observation tensor: last round's contributions as fractions of ``e`` — own first, then the
others in seat order after the observer — plus a start flag; shape ``(players + 1,)``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError

from .base import RoundGame, RoundState, check_horizon, make_spec


class PublicGoodsState(RoundState):
    game: "PublicGoodsGame"

    def _play(self, joint: Sequence[int]) -> list[float]:
        g = self.game
        share = g.multiplier / g.players * sum(joint)
        return [g.endowment - c + share for c in joint]

    def _order(self, player: int) -> list[int]:
        n = self.game.players
        return [(player + k) % n for k in range(n)]

    def observation_tensor(self, player: int) -> np.ndarray:
        n = self.game.players
        out = np.zeros(n + 1, dtype=np.float32)
        if not self.history:
            out[n] = 1.0
        else:
            last = self.history[-1]
            out[:n] = [last[q] / self.game.endowment for q in self._order(player)]
        return out

    def action_label(self, player: int, action: int) -> str:
        return f"give {action}"

    def observation_struct(self, player: int) -> dict[str, Any]:
        g = self.game
        out = self.round_struct(player)
        out.update(
            endowment=g.endowment,
            multiplier=g.multiplier,
            return_per_token=g.multiplier / g.players,
            last_round={f"player {q}": self.history[-1][q] for q in range(g.players)} if self.history else None,
        )
        return out

    def observation_text(self, player: int) -> str:
        g = self.game
        lines = [
            f"Public goods game, {g.players} players, round {min(self.round + 1, g.horizon)} of {g.horizon}. "
            f"You hold {g.endowment} tokens; what everyone gives is multiplied by {g.multiplier:g} and "
            f"split equally ({g.multiplier / g.players:g} back per token given)."
        ]
        if self.history:
            last = self.history[-1]
            others = ", ".join(f"player {q}: {last[q]}" for q in self._order(player)[1:])
            lines.append(f"Last round you gave {last[player]}; {others}.")
        lines.append(f"Your total: {self.totals[player]:g}.")
        if not self.is_terminal():
            lines.append(f"Legal: give 0..{g.endowment}.")
        return " ".join(lines)

    def outcome_info(self) -> dict[str, Any]:
        h = np.asarray(self.history, dtype=float).reshape(-1, self.game.players)
        rate = (h.mean(axis=0) / self.game.endowment).tolist() if len(h) else [0.0] * self.game.players
        return {"cooperation": rate, "rounds": len(self.history)}


class PublicGoodsGame(RoundGame):
    state_class = PublicGoodsState

    def __init__(
        self, players: int = 4, endowment: int = 4, multiplier: float = 1.6, horizon: int = 10, discount: float = 1.0
    ) -> None:
        if not isinstance(players, int) or players < 2:
            raise ArenaError(f"game 'public_goods': players must be an integer >= 2, got {players!r}")
        if not isinstance(endowment, int) or endowment < 1:
            raise ArenaError(f"game 'public_goods': endowment must be a positive integer, got {endowment!r}")
        if not isinstance(multiplier, (int, float)) or multiplier <= 0:
            raise ArenaError(f"game 'public_goods': multiplier must be a positive number, got {multiplier!r}")
        self.players, self.endowment, self.multiplier = players, endowment, float(multiplier)
        self.horizon, self.discount = check_horizon("public_goods", horizon, discount)
        defaults = {"players": 4, "endowment": 4, "multiplier": 1.6, "horizon": 10, "discount": 1.0}
        given = {
            "players": players,
            "endowment": endowment,
            "multiplier": multiplier,
            "horizon": horizon,
            "discount": discount,
        }
        params = {k: v for k, v in given.items() if v != defaults[k]}
        e, r, n = endowment, self.multiplier, players
        lo = (r / n) * e  # giving everything while nobody else gives
        hi = e + (r / n) * e * (n - 1)  # free riding on everyone else's full gifts
        self.spec = make_spec(
            "public_goods",
            n,
            e + 1,
            (n + 1,),
            lo * self.horizon,
            hi * self.horizon,
            self.horizon,
            params,
            f"linear public goods game: {n} players, endowment {e}, multiplier {r:g}, {self.horizon} rounds",
        )

    def scripted_kinds(self) -> tuple[str, ...]:
        return ("always_cooperate", "always_defect", "tit_for_tat")

    def scripted_action(self, kind: str, obs: Any) -> int:
        e, x = self.endowment, np.asarray(obs.tensor)
        if kind == "always_cooperate":
            return e
        if kind == "always_defect":
            return 0
        if kind == "tit_for_tat":  # give what the others gave on average last round (all at the start)
            if x[-1] > 0:
                return e
            return int(round(float(np.mean(x[1:-1])) * e))
        return super().scripted_action(kind, obs)
