"""``cyclic_preference``: a one-prompt text task whose three responses beat each other in a cycle.

Why: preference trainers (SPPO, INPO) claim to find the *von Neumann winner* of a preference
game — the mixture over responses that no response beats more often than not — where preferences
are intransitive and no reward (Bradley–Terry score) explains them. This game is the smallest
such case with a known answer. The prompt asks for one of three responses, ``A``, ``B``, ``C``;
a judge (``preference``, which reads :meth:`CyclicPreference.preference_of`) prefers
``A ≻ B`` with probability ``p_ab`` (0.9), ``B ≻ C`` with ``p_bc`` (0.6) and ``C ≻ A`` with
``p_ca`` (0.7). Any other text loses to each of them and ties with itself.

The von Neumann winner: with ``M = P − ½`` (skew-symmetric, ``M_AB = 0.4``, ``M_BC = 0.1``,
``M_CA = 0.2``) the game's value is 0 and a fully mixed optimum makes every column's payoff 0:
column A gives ``−0.4·p_B + 0.2·p_C = 0``, column B ``0.4·p_A − 0.1·p_C = 0``, so
``p ∝ (M_BC, M_CA, M_AB) = (0.1, 0.2, 0.4)``, i.e. **(1/7, 2/7, 4/7)**; against it every response
wins exactly half the time. It is unique because no response is unbeaten. A Bradley–Terry fit
of the same preferences ranks A first (scores 0.275, −0.413, 0.138), so a reward-model learner
(DPO) collapses on A. :meth:`CyclicPreference.von_neumann_winner` solves the LP for any
parameters (tests check it against the closed form).

``text=false`` offers the three responses as a choice (a scored LLM's softmax over them is then
its exact policy); the default is free text (at most ``length`` characters), the task form the
preference trainers train on. Returns are 0: only a judge says which answer is better.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena.errors import ArenaError
from arena.game import TERMINAL, Action, Game, GameEntry, GameSpec, IllegalActionError, State, decision_struct
from arena.hookspecs import hookimpl

RESPONSES = ("A", "B", "C")
PROMPT = "Answer with one letter: A, B or C."


def response_index(text: str) -> int:
    """0, 1, 2 for an answer whose first non-blank character is A, B or C (any case); 3 otherwise."""
    s = text.strip().upper()
    return RESPONSES.index(s[0]) if s and s[0] in RESPONSES else len(RESPONSES)


class CyclicPreferenceState(State):
    def __init__(self, game: "CyclicPreference") -> None:
        self.game = game
        self.answer: str | None = None

    def current_player(self) -> int:
        return TERMINAL if self.answer is not None else 0

    def legal_actions(self, player: int | None = None) -> list[int]:
        return [] if self.game.text or self.answer is not None else [0, 1, 2]

    def decision_kind(self, player: int) -> Any:
        return "text" if self.game.text else "choice"

    def max_text_length(self, player: int) -> int:
        return self.game.length

    def apply_action(self, action: Action) -> None:
        if self.answer is not None:
            raise IllegalActionError("the task is over")
        if self.game.text:
            if not isinstance(action, str):
                raise IllegalActionError("cyclic_preference(text=true) expects a text answer")
            self.answer = action[: self.game.length]
        else:
            if isinstance(action, str) or int(action) not in (0, 1, 2):
                raise IllegalActionError(f"action {action!r} is not one of 0, 1, 2")
            self.answer = RESPONSES[int(action)]

    def action_label(self, player: int, action: int) -> str:
        return RESPONSES[int(action)]

    def returns(self) -> list[float]:
        return [0.0]

    def clone(self) -> "CyclicPreferenceState":
        c = CyclicPreferenceState(self.game)
        c.answer = self.answer
        return c

    def information_state_key(self, player: int) -> str:
        return f"|{self.answer}" if self.answer is not None else ""

    def observation_text(self, player: int) -> str:
        return PROMPT if self.answer is None else f"{PROMPT}\nAnswer: {self.answer}"

    def observation_struct(self, player: int) -> dict[str, Any]:
        out = decision_struct(self, player)
        out.update(game="cyclic_preference", prompt=PROMPT, answer=self.answer)
        return out

    def observation_tensor(self, player: int) -> np.ndarray:
        return np.zeros(1, dtype=np.float32)

    def num_players(self) -> int:
        return 1

    def summary(self) -> str:
        return f"answer {self.answer!r}"


class CyclicPreference(Game):
    def __init__(
        self, p_ab: float = 0.9, p_bc: float = 0.6, p_ca: float = 0.7, text: bool = True, length: int = 8
    ) -> None:
        probs = (float(p_ab), float(p_bc), float(p_ca))
        if not all(0.0 <= p <= 1.0 for p in probs) or int(length) < 1:
            raise ArenaError("cyclic_preference: p_ab, p_bc, p_ca must be in [0, 1] and length >= 1")
        self.p_ab, self.p_bc, self.p_ca = probs
        self.text, self.length = bool(text), int(length)
        defaults = {"p_ab": 0.9, "p_bc": 0.6, "p_ca": 0.7, "text": True, "length": 8}
        given = {"p_ab": self.p_ab, "p_bc": self.p_bc, "p_ca": self.p_ca, "text": self.text, "length": self.length}
        self.spec = GameSpec(
            name="cyclic_preference",
            num_players=1,
            num_distinct_actions=3,
            observation_shape=(1,),
            min_utility=0.0,
            max_utility=0.0,
            zero_sum=False,
            max_game_length=1,
            text_decisions=self.text,
            params={k: v for k, v in given.items() if v != defaults[k]},
            description="three responses preferred in a cycle (A≻B 0.9, B≻C 0.6, C≻A 0.7): a von Neumann winner test",
        )

    def new_initial_state(self, seed: int | None = None) -> CyclicPreferenceState:
        return CyclicPreferenceState(self)

    def preference_matrix(self) -> np.ndarray:
        """``P[i, j] = P(response i ≻ response j)`` over A, B, C and "other" (index 3)."""
        P = np.full((4, 4), 0.5)
        P[0, 1], P[1, 2], P[2, 0] = self.p_ab, self.p_bc, self.p_ca
        P[1, 0], P[2, 1], P[0, 2] = 1 - self.p_ab, 1 - self.p_bc, 1 - self.p_ca
        P[:3, 3], P[3, :3] = 1.0, 0.0
        return P

    def preference_of(self, a: State, b: State) -> float:
        """P(the answer of finished state ``a`` ≻ that of ``b``): what the ``preference`` judge reads."""
        if not (isinstance(a, CyclicPreferenceState) and isinstance(b, CyclicPreferenceState)):
            raise ArenaError("cyclic_preference: preference_of compares two of its own states")
        if a.answer is None or b.answer is None:
            raise ArenaError("cyclic_preference: preference_of needs finished answers")
        return float(self.preference_matrix()[response_index(a.answer), response_index(b.answer)])

    def von_neumann_winner(self) -> np.ndarray:
        """The mixture p over A, B, C maximising min over responses y' of P(p ≻ y') (an LP)."""
        from scipy.optimize import linprog

        M = self.preference_matrix()[:3, :3] - 0.5
        # max v s.t. (p^T M)_j >= v for every column j, p in the simplex
        res = linprog(
            np.r_[np.zeros(3), -1.0],
            A_ub=np.hstack([-M.T, np.ones((3, 1))]),
            b_ub=np.zeros(3),
            A_eq=np.r_[np.ones(3), 0.0][None],
            b_eq=[1.0],
            bounds=[(0, None)] * 3 + [(None, None)],
            method="highs",
        )
        if not res.success:
            raise ArenaError(f"cyclic_preference: the von Neumann winner LP failed ({res.message})")
        p = np.clip(res.x[:3], 0.0, None)
        return p / p.sum()

    def distribution(self, answers: list[str]) -> np.ndarray:
        """The share of A, B, C and other among ``answers``."""
        counts = np.bincount([response_index(a) for a in answers], minlength=4).astype(float)
        return counts / max(1, len(answers))


@hookimpl
def arena_games() -> list[GameEntry]:
    return [
        GameEntry(
            "cyclic_preference",
            CyclicPreference,
            "three responses preferred in a cycle: the von Neumann winner (1/7, 2/7, 4/7) for preference trainers",
            {"p_ab": 0.9, "p_bc": 0.6, "p_ca": 0.7, "text": True, "length": 8},
        )
    ]
