"""``table_talk(game=kuhn_poker, messages=0)``: any turn-based game with a message before each move.

Before every decision of the wrapped game the player about to move says something everyone
hears, then makes the move. The talk is cheap: it never changes the payoffs, only what the
others know (a player who says "I hold the King" whenever it does is exploitable; a bluffer
is not). Two faces of one state machine:

- ``messages=0`` — **free text** (a text decision, at most ``max_chars`` characters): what LLM
  agents play, and what LSPO's latent abstraction reads;
- ``messages=k`` — the **abstract game**: the message is one of ``k`` latent strategies
  (cluster ids, action ``m`` labelled ``message m``). It is a finite tree game (explicit
  chance, perfect recall), so the CFR/MCCFR solvers and exact exploitability run on it.

:meth:`TableTalkState.abstracted` maps a free-text history to the abstract one with a
text → latent-id function (``plugins/trainers/llm/latent.py``). Kuhn poker with table talk is
the CPU-scale test bed of LSPO (*Learning Strategic Language Agents in the Werewolf Game with
Iterative Latent Space Policy Optimization*, arXiv 2502.04686); docs/lspo.md.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from arena.errors import ArenaError
from arena.game import TERMINAL, Action, Game, GameEntry, GameSpec, State, decision_struct
from arena.hookspecs import hookimpl


class TableTalkState(State):
    def __init__(self, game: "TableTalk", inner: State) -> None:
        self.game = game
        self.inner = inner
        self.said: list[tuple[int, Any]] = []
        """(speaker, message) in order: text, or a latent id in the abstract game."""
        self.talk_due = True
        """Whether the player to move still has to speak before its move."""

    # -- the state machine ----------------------------------------------------------------------
    def current_player(self) -> int:
        if self.inner.is_terminal():
            return TERMINAL
        return self.inner.current_player()

    def is_chance_node(self) -> bool:
        return self.inner.is_chance_node()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self.inner.chance_outcomes()

    def num_players(self) -> int:
        return self.game.spec.num_players

    def _talking(self) -> bool:
        return self.talk_due and self.inner.current_player() >= 0

    def decision_kind(self, player: int) -> Any:
        return "text" if self._talking() and self.game.messages == 0 else "choice"

    def legal_actions(self, player: int | None = None) -> list[int]:
        if self._talking():
            return list(range(self.game.messages))  # empty for free text
        if player is None or player == self.inner.current_player():
            return list(self.inner.legal_actions())
        return []

    def max_text_length(self, player: int) -> int:
        return self.game.max_chars

    def apply_action(self, action: Action) -> None:
        if self.inner.is_chance_node():
            self.inner.apply_action(action)
            self.talk_due = True
            return
        if self._talking():
            if self.game.messages == 0:
                if not isinstance(action, str):
                    raise ArenaError(
                        f"table_talk: player {self.inner.current_player()} must say something (text), got {action!r}"
                    )
                message: Any = action[: self.game.max_chars].replace("\n", " ")
            else:
                if isinstance(action, str) or not 0 <= int(action) < self.game.messages:
                    raise ArenaError(f"table_talk: message must be 0..{self.game.messages - 1}, got {action!r}")
                message = int(action)
            self.said.append((self.inner.current_player(), message))
            self.talk_due = False
            return
        self.inner.apply_action(int(action))
        self.talk_due = True

    def returns(self) -> list[float]:
        return list(self.inner.returns())

    def clone(self) -> "TableTalkState":
        out = TableTalkState(self.game, self.inner.clone())
        out.said = list(self.said)
        out.talk_due = self.talk_due
        return out

    # -- what players see -------------------------------------------------------------------------
    def _render(self, message: Any) -> str:
        return f'"{message}"' if isinstance(message, str) else f"message {message}"

    def information_state_key(self, player: int) -> str:
        talk = "/".join(f"{p}:{m}" for p, m in self.said)
        return f"{self.inner.information_state_key(player)}|talk={talk}|due={int(self._talking())}"

    def observation_text(self, player: int) -> str:
        text = self.inner.observation_text(player)
        if self.said:
            n = self.num_players()
            who = ["you" if p == player else ("your opponent" if n == 2 else f"player {p}") for p, _ in self.said]
            text += " Table talk: " + "; ".join(f"{w}: {self._render(m)}" for w, (_, m) in zip(who, self.said)) + "."
        if self._talking() and self.inner.current_player() == player:
            text += (
                " Before you move, say one short line to the table."
                if self.game.messages == 0
                else " Before you move, choose a message."
            )
        return text

    def observation_struct(self, player: int) -> dict[str, Any] | None:
        """The wrapped game's view (``None`` when it has none) with the table talk; the
        decision part is this game's (a message before each move)."""
        inner = self.inner.observation_struct(player)
        if inner is None:
            return None
        mine = decision_struct(self, player)
        out = {k: v for k, v in inner.items() if k not in ("decision", "legal", "max_text_length")}
        out.update(mine, game="table_talk", wrapped=inner.get("game"))
        if "legal" in inner and "legal" in mine and not self._talking():
            out["legal"] = inner["legal"]  # the wrapped game's moves, with what they act on
        out["talk"] = [{"player": p, "message": m} for p, m in self.said]
        out["talking"] = self._talking()
        return out

    def observation_tensor(self, player: int) -> np.ndarray:
        base = np.asarray(self.inner.observation_tensor(player), dtype=np.float32)
        k = max(1, self.game.messages)
        talk = np.zeros((self.game.inner.spec.max_game_length, k + 1), dtype=np.float32)
        for i, (_, m) in enumerate(self.said[: talk.shape[0]]):
            talk[i, m if isinstance(m, int) else k] = 1.0
        return np.concatenate([base, talk.ravel(), [float(self._talking())]]).astype(np.float32)

    def action_label(self, player: int, action: int) -> str:
        if self._talking():
            labels = self.game.labels
            return labels[action] if labels else f"message {action}"
        return self.inner.action_label(player, action)

    def outcome_info(self) -> dict[str, Any]:
        return self.inner.outcome_info()

    def summary(self) -> str:
        return f"{self.inner.summary()} | talk {[m for _, m in self.said]}"

    # -- the abstraction ---------------------------------------------------------------------------
    def abstracted(self, game: "TableTalk", latent: Callable[[int, str], int]) -> "TableTalkState":
        """The same history in the abstract game ``game``: each text message replaced by
        ``latent(speaker, text)``."""
        out = TableTalkState(game, self.inner.clone())
        out.said = [(p, m if isinstance(m, int) else int(latent(p, m))) for p, m in self.said]
        out.talk_due = self.talk_due
        return out


class TableTalk(Game):
    """See the module docstring."""

    def __init__(
        self, game: str = "kuhn_poker", messages: int = 0, max_chars: int = 40, labels: list[str] | None = None
    ) -> None:
        from arena.loading import load_game

        if messages < 0:
            raise ArenaError(f"table_talk: messages must be >= 0 (0 = free text), not {messages}")
        if max_chars < 1:
            raise ArenaError(f"table_talk: max_chars must be >= 1, not {max_chars}")
        if labels is not None and len(labels) != messages:
            raise ArenaError(f"table_talk: {len(labels)} labels for {messages} messages")
        inner = load_game(game) if isinstance(game, str) else game
        s = inner.spec
        if s.text_decisions or s.simultaneous:
            raise ArenaError(f"table_talk wraps turn-based games with discrete moves; '{s.full_name}' is not one")
        self.inner, self.messages, self.max_chars = inner, int(messages), int(max_chars)
        self.labels = list(labels) if labels else None
        params: dict[str, Any] = {"game": s.full_name}
        if messages:
            params["messages"] = int(messages)
        if max_chars != 40:
            params["max_chars"] = int(max_chars)
        obs = int(np.prod(s.observation_shape)) + s.max_game_length * (max(1, messages) + 1) + 1
        self.spec = GameSpec(
            name="table_talk",
            num_players=s.num_players,
            num_distinct_actions=max(s.num_distinct_actions, messages),
            observation_shape=(obs,),
            min_utility=s.min_utility,
            max_utility=s.max_utility,
            zero_sum=s.zero_sum,
            max_game_length=2 * s.max_game_length,
            tree=bool(s.tree and messages > 0),
            text_decisions=messages == 0,
            params=params,
            description=f"{s.full_name} with "
            + ("free-text table talk" if messages == 0 else f"{messages} latent messages")
            + " before each move",
        )

    def new_initial_state(self, seed: int | None = None) -> TableTalkState:
        return TableTalkState(self, self.inner.new_initial_state(seed=seed))

    def abstract(self, k: int, labels: list[str] | None = None) -> "TableTalk":
        """The abstract game with ``k`` latent messages over the same wrapped game."""
        return TableTalk(self.inner, messages=k, max_chars=self.max_chars, labels=labels)


def make_table_talk(game: str = "kuhn_poker", messages: int = 0, max_chars: int = 40) -> TableTalk:
    return TableTalk(game, messages, max_chars)


@hookimpl
def arena_games() -> list[GameEntry]:
    return [
        GameEntry(
            "table_talk",
            make_table_talk,
            "a turn-based game with a table-talk message before each move (free text, or k latent "
            "messages: the abstract game LSPO solves)",
            {"game": "kuhn_poker", "messages": 0, "max_chars": 40},
        )
    ]
