"""Iterated 2x2 matrix games: the prisoner's dilemma, with stag hunt and chicken as presets.

The payoff matrix is a parameter ``payoffs=[R, S, T, P]`` (row player's payoff for
cooperate/cooperate, cooperate/defect, defect/cooperate, defect/defect; the game is symmetric).
The default is the LOLA-lineage IPD (R, S, T, P) = (-1, -3, 0, -2).

Observation tensor: the last ``memory`` joint moves from the observer's side, each a one-hot
over (start, CC, CD, DC, DD) with the observer's own move first — shape ``(memory, 5)``; a
memory-1 policy therefore has exactly the five LOLA states.

Text observation (``text``): ``full`` states the round, the payoff matrix, the last joint move
and the running totals; ``brief`` states only the co-player's last ``memory`` moves, as in the
text IPD of the LLM Advantage Alignment paper. ``brief`` is for small language models trained
from scratch: in the full text the history is a few dozen characters among ~480, and in a
"you X, other Y" rendering the histories CD and DC are the same bag of characters; a randomly
initialised model's policy gradient then moves every history alike (docs/results/llm_training.md).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError

from .base import RoundGame, RoundState, check_horizon, make_spec

COOPERATE, DEFECT = 0, 1
PRESETS: dict[str, dict[str, Any]] = {
    "prisoners_dilemma": {
        "payoffs": (-1.0, -3.0, 0.0, -2.0),
        "labels": ("cooperate", "defect"),
        "title": "iterated prisoner's dilemma",
    },
    "axelrod": {
        "payoffs": (3.0, 0.0, 5.0, 1.0),
        "labels": ("cooperate", "defect"),
        "title": "iterated prisoner's dilemma (Axelrod payoffs)",
    },
    "stag_hunt": {"payoffs": (4.0, 0.0, 3.0, 2.0), "labels": ("stag", "hare"), "title": "iterated stag hunt"},
    "chicken": {"payoffs": (3.0, 1.0, 4.0, 0.0), "labels": ("swerve", "straight"), "title": "iterated chicken"},
}
STATE_NAMES = ("start", "CC", "CD", "DC", "DD")


def _parse_payoffs(name: str, payoffs: Any) -> tuple[float, float, float, float]:
    if isinstance(payoffs, str):  # "[3;0;5;1]" as written in a game's full name
        payoffs = [p for p in payoffs.strip("[]() ").replace(";", ",").split(",") if p.strip()]
    try:
        values = tuple(float(x) for x in payoffs)
    except (TypeError, ValueError):
        raise ArenaError(f"game '{name}': payoffs must be four numbers [R, S, T, P], got {payoffs!r}") from None
    if len(values) != 4:
        raise ArenaError(f"game '{name}': payoffs must be four numbers [R, S, T, P], got {len(values)}")
    return values  # type: ignore[return-value]


class MatrixState(RoundState):
    game: "IteratedMatrixGame"

    def _play(self, joint: Sequence[int]) -> list[float]:
        m = self.game.matrix
        a, b = joint
        return [m[a][b], m[b][a]]

    def joint_index(self, player: int, back: int = 1) -> int:
        """0 = start, else 1 + 2*own + opponent for the joint move ``back`` rounds ago."""
        if back > len(self.history):
            return 0
        j = self.history[-back]
        return 1 + 2 * j[player] + j[1 - player]

    def observation_tensor(self, player: int) -> np.ndarray:
        mem = self.game.memory
        out = np.zeros((mem, 5), dtype=np.float32)
        for k in range(mem):
            out[k, self.joint_index(player, mem - k)] = 1.0
        return out

    def action_label(self, player: int, action: int) -> str:
        return self.game.labels[action]

    def observation_text(self, player: int) -> str:
        if self.game.text == "brief":
            return self.brief_text(player)
        g, lab = self.game, self.game.labels
        R, S, T, P = g.payoffs
        lines = [
            f"{g.title.capitalize()}, round {min(self.round + 1, g.horizon)} of at most {g.horizon}. "
            f"Payoffs (you, other): both {lab[0]} {R:g}/{R:g}; you {lab[0]}, other {lab[1]} {S:g}/{T:g}; "
            f"you {lab[1]}, other {lab[0]} {T:g}/{S:g}; both {lab[1]} {P:g}/{P:g}."
        ]
        if self.history:
            j = self.history[-1]
            lines.append(f"Last round you played {lab[j[player]]} and the other player played {lab[j[1 - player]]}.")
        ret = self.returns()
        lines.append(f"Totals: you {ret[player]:g}, other {ret[1 - player]:g}.")
        if self.is_terminal():
            lines.append("Game over.")
        else:
            lines.append(f"Legal: {lab[0]}, {lab[1]}.")
        return " ".join(lines)

    def observation_struct(self, player: int) -> dict[str, Any]:
        g, lab = self.game, self.game.labels
        m = g.matrix
        out = self.round_struct(player)
        out.update(
            moves=list(lab),
            payoffs=[{"you": lab[a], "other": lab[b], "payoffs": [m[a][b], m[b][a]]} for a in (0, 1) for b in (0, 1)],
            history=[{"you": lab[j[player]], "other": lab[j[1 - player]]} for j in self.history],
        )
        return out

    def brief_text(self, player: int) -> str:
        lab = self.game.labels
        if self.is_terminal():
            return "Game over."
        if not self.history:
            return "First round."
        moves = [lab[j[1 - player]] for j in self.history[-self.game.memory :]]
        if len(moves) == 1:
            return f"The other player's last move: {moves[0]}."
        return f"The other player's last {len(moves)} moves, oldest first: {', '.join(moves)}."

    def outcome_info(self) -> dict[str, Any]:
        h = np.asarray(self.history, dtype=float).reshape(-1, 2)
        coop = (1.0 - h.mean(axis=0)).tolist() if len(h) else [0.0, 0.0]
        return {"cooperation": coop, "rounds": len(self.history)}


class IteratedMatrixGame(RoundGame):
    state_class = MatrixState

    def __init__(
        self,
        preset: str = "prisoners_dilemma",
        payoffs: Any = None,
        horizon: int = 16,
        discount: float = 1.0,
        memory: int = 1,
        arena_name: str = "ipd",
        text: str = "full",
    ) -> None:
        if preset not in PRESETS:
            raise ArenaError(f"game '{arena_name}': unknown preset {preset!r}; presets: {', '.join(PRESETS)}")
        base = PRESETS[preset]
        self.payoffs = _parse_payoffs(arena_name, payoffs) if payoffs is not None else base["payoffs"]
        R, S, T, P = self.payoffs
        self.matrix = ((R, S), (T, P))
        self.labels, self.title = base["labels"], base["title"]
        self.horizon, self.discount = check_horizon(arena_name, horizon, discount)
        if not isinstance(memory, int) or memory < 1:
            raise ArenaError(f"game '{arena_name}': memory must be a positive integer, got {memory!r}")
        self.memory = memory
        if text not in ("full", "brief"):
            raise ArenaError(f"game '{arena_name}': text must be 'full' or 'brief', got {text!r}")
        self.text = text
        defaults = {"horizon": 16, "discount": 1.0, "memory": 1, "text": "full"}
        params = {
            k: v
            for k, v in {"horizon": horizon, "discount": discount, "memory": memory, "text": text}.items()
            if v != defaults[k]
        }
        if arena_name == "ipd" and preset != "prisoners_dilemma":
            params["preset"] = preset
        if payoffs is not None:
            params["payoffs"] = list(self.payoffs)
        lo, hi = min(self.payoffs) * self.horizon, max(self.payoffs) * self.horizon
        self.spec = make_spec(
            arena_name,
            2,
            2,
            (memory, 5),
            lo,
            hi,
            self.horizon,
            params,
            f"{self.title}: payoffs (R,S,T,P)={self.payoffs}, {self.horizon} rounds, "
            f"continue probability {self.discount:g}",
        )

    def array_face(self) -> Any:
        """B games as numpy arrays (:mod:`arena.games.social.matrix_arrays`), for the runner's
        array path; none past 28 rounds (a whole history is the info state, coded in an int64)."""
        if self.horizon > 28:
            return None
        if getattr(self, "_face", None) is None:
            from .matrix_arrays import MatrixFace

            self._face = MatrixFace(self)
        return self._face

    def scripted_kinds(self) -> tuple[str, ...]:
        return ("always_cooperate", "always_defect", "tit_for_tat")

    def agent_metrics(self, agent: Any) -> dict[str, float]:
        """The memory-1 policy probe: P(first action | previous joint move) at the five LOLA
        states (start, CC, CD, DC, DD) — tit-for-tat reads 1, 1, 0, 1, 0."""
        from arena.agent import Observation
        from arena.game import CHANCE

        from .base import CONTINUE

        if not agent.has_policy:
            return {}
        out = {}
        for k, label in enumerate(STATE_NAMES):
            state = self.new_initial_state()
            if k:
                joint = divmod(k - 1, 2)
                for _ in range(min(self.memory, self.horizon - 1)):  # a full-history window stops short of the end
                    state.apply_actions(list(joint))
                    if state.current_player() == CHANCE:  # discount < 1: the game goes on
                        state.apply_action(CONTINUE)
            obs = Observation(state, 0, np.random.default_rng(0), self.spec.full_name)
            out[f"probe/P(C|{label})"] = float(agent.policy(obs)[COOPERATE])
        return out

    def scripted_action(self, kind: str, obs: Any) -> int:
        last = int(np.argmax(np.asarray(obs.tensor).reshape(-1, 5)[-1]))
        if kind == "always_cooperate":
            return COOPERATE
        if kind == "always_defect":
            return DEFECT
        if kind == "tit_for_tat":  # copy the other player's last move; cooperate first
            return COOPERATE if last in (0, 1, 3) else DEFECT
        return super().scripted_action(kind, obs)


def ipd(
    payoffs: Any = None,
    horizon: int = 16,
    discount: float = 1.0,
    memory: int = 1,
    preset: str = "prisoners_dilemma",
    text: str = "full",
) -> IteratedMatrixGame:
    return IteratedMatrixGame(preset, payoffs, horizon, discount, memory, "ipd", text)


def stag_hunt(
    horizon: int = 16, discount: float = 1.0, memory: int = 1, payoffs: Any = None, text: str = "full"
) -> IteratedMatrixGame:
    return IteratedMatrixGame("stag_hunt", payoffs, horizon, discount, memory, "stag_hunt", text)


def chicken(
    horizon: int = 16, discount: float = 1.0, memory: int = 1, payoffs: Any = None, text: str = "full"
) -> IteratedMatrixGame:
    return IteratedMatrixGame("chicken", payoffs, horizon, discount, memory, "chicken", text)
