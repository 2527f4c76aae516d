"""Werewolf rule parameters, role table and the discrete action layout.

The canonical rule set (the 7-player game of Xu et al., *Language Agents with Reinforcement
Learning for Strategic Play in the Werewolf Game*, arXiv 2310.18940) is the default; every
variant knob (several from Werewolf Arena, arXiv 2407.13943) is a field of
:class:`WerewolfConfig`, checked once so that a bad value is one clear line naming the parameter.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from arena.errors import ArenaError

VILLAGER, WOLF, SEER, DOCTOR = 0, 1, 2, 3
ROLE_NAMES = ["Villager", "Werewolf", "Seer", "Doctor"]
CLAIMABLE = [VILLAGER, SEER, DOCTOR]
"""Roles a speaker may claim in structured talk (anyone may lie)."""

DEFAULT_WOLVES = {5: 1, 6: 1, 7: 2, 8: 2, 9: 3}
TALK_MODES = ("structured", "none", "text")
VOTE_RULES = ("plurality", "random_tiebreak", "majority", "runoff")
WOLF_DECISIONS = ("last", "plurality")
WOLF_WINS = ("parity", "majority")
SEER_LEARNS = ("team", "role")
SCRIPTED_SIDES = ("none", "wolves", "village")
TEXT_MODES = ("full", "brief")


@dataclass(frozen=True)
class WerewolfConfig:
    """Game parameters; defaults are the canonical rules."""

    players: int = 7
    wolves: int = 0
    """Number of werewolves; 0 means the canonical count for ``players`` (1,1,2,2,3 for 5..9)."""
    seer: bool = True
    doctor: bool = True
    talk: str = "structured"
    """``structured`` (discrete claims/accusations), ``none`` (no discussion) or ``text`` (free speech)."""
    discussion_rounds: int = 1
    vote_rule: str = "plurality"
    """``plurality`` (a tie exiles nobody), ``random_tiebreak``, ``majority`` (more than half of
    the living) or ``runoff`` (one re-vote among the tied)."""
    allow_abstain: bool = True
    max_days: int = 10
    first_night_kill: bool = True
    doctor_self_protect: bool = True
    doctor_repeat_target: bool = True
    seer_learns: str = "team"
    """``team`` (werewolf or not) or ``role`` (the exact role)."""
    reveal_role_on_death: bool = False
    wolf_decision: str = "last"
    """``last`` (the last living wolf's pick is the target) or ``plurality`` of the wolves' picks."""
    wolf_win: str = "parity"
    """``parity``: wolves win when living wolves >= living others; ``majority``: when >."""
    max_message_chars: int = 280
    scripted: str = "none"
    """``wolves`` or ``village``: that side is played by the built-in ``werewolf_scripted`` policy
    as part of the environment (its decisions are chance nodes whose outcomes are the scripted
    policy's exact distribution, read from the acting seat's own tensor), so an agent that holds
    every seat plays only the other side: what a learner trained against that side needs."""
    text: str = "full"
    """``full`` (the whole log in sentences) or ``brief``: the current day only, in short phrases,
    seats as ``p3`` (:func:`arena.games.werewolf.view.render_brief`; for a small LLM, whose cost
    grows with every character it reads)."""

    def __post_init__(self) -> None:
        def bad(key: str, why: str) -> ArenaError:
            return ArenaError(f"werewolf: parameter '{key}' {why}")

        for f in fields(self):
            v = getattr(self, f.name)
            want = {"int": int, "bool": bool, "str": str}[str(f.type)]
            if not isinstance(v, want) or (want is int and isinstance(v, bool)):
                raise bad(f.name, f"must be {str(f.type)}, got {v!r}")
        if not 5 <= self.players <= 9:
            raise bad("players", f"must be between 5 and 9, got {self.players}")
        checks = [
            ("talk", TALK_MODES),
            ("vote_rule", VOTE_RULES),
            ("wolf_decision", WOLF_DECISIONS),
            ("wolf_win", WOLF_WINS),
            ("seer_learns", SEER_LEARNS),
            ("scripted", SCRIPTED_SIDES),
            ("text", TEXT_MODES),
        ]
        for key, allowed in checks:
            if getattr(self, key) not in allowed:
                raise bad(key, f"must be one of {', '.join(allowed)}; got {getattr(self, key)!r}")
        w = self.num_wolves
        others = self.players - w
        if w < 1 or w >= others:
            raise bad("wolves", f"must leave fewer wolves than others (1..{(self.players - 1) // 2}), got {w}")
        if self.discussion_rounds < 0 or self.discussion_rounds > 5:
            raise bad("discussion_rounds", f"must be between 0 and 5, got {self.discussion_rounds}")
        if self.max_days < 1 or self.max_days > 50:
            raise bad("max_days", f"must be between 1 and 50, got {self.max_days}")
        if self.max_message_chars < 1:
            raise bad("max_message_chars", "must be positive")

    @property
    def num_wolves(self) -> int:
        return self.wolves or DEFAULT_WOLVES[self.players]

    def role_counts(self) -> list[int]:
        """How many of each role (indexed by role id) are dealt."""
        counts = [0, self.num_wolves, int(self.seer), int(self.doctor)]
        counts[VILLAGER] = self.players - sum(counts)
        return counts

    def changed(self) -> dict[str, Any]:
        """Parameters that differ from the defaults (for the game's full name)."""
        base = asdict(WerewolfConfig())
        return {k: v for k, v in asdict(self).items() if v != base[k]}


class ActionLayout:
    """Ids of the discrete actions for ``n`` players (one space for every phase, masked).

    ``0..n-1`` name a player (kill, protect, inspect or vote target), ``n`` is abstain, then the
    structured utterances: silent, claim a role, accuse j, report j is / is not a werewolf,
    defend j.
    """

    def __init__(self, n: int) -> None:
        self.n = n
        self.abstain = n
        self.silent = n + 1
        self.claim = n + 2
        self.accuse = self.claim + len(CLAIMABLE)
        self.report_wolf = self.accuse + n
        self.report_clear = self.report_wolf + n
        self.defend = self.report_clear + n
        self.size = self.defend + n

    def speech(self, action: int) -> tuple[str, int]:
        """Decode an utterance id into ``(kind, argument)``."""
        n = self.n
        if action == self.silent:
            return "silent", -1
        if self.claim <= action < self.accuse:
            return "claim", CLAIMABLE[action - self.claim]
        for kind, base in (
            ("accuse", self.accuse),
            ("wolf", self.report_wolf),
            ("clear", self.report_clear),
            ("defend", self.defend),
        ):
            if base <= action < base + n:
                return kind, action - base
        raise ValueError(f"{action} is not an utterance")
