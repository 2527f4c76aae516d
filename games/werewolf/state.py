"""The Werewolf state machine (the canonical rules of :mod:`.rules`, with knobs; docs/werewolf.md).

Every history is: a chance deal of roles (one explicit chance node per seat), then days of
Night (wolves in seat order, Doctor, Seer) → Dawn → Discussion → Vote, until a side wins or
``max_days`` ends in a draw. Each player's knowledge lives in its own event log (the text view
and perfect-recall info-state key) plus structured arrays for the tensor; nothing is written to
a player's log that its role may not know, and the dead stop receiving events.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from arena.game import CHANCE, TERMINAL, Action, GameSpec, IllegalActionError, State
from arena.games.werewolf.rules import CLAIMABLE, DOCTOR, ROLE_NAMES, SEER, VILLAGER, WOLF, ActionLayout, WerewolfConfig
from arena.games.werewolf.scripted import ScriptedPolicy
from arena.games.werewolf.view import encode, render_brief, render_struct, render_text

_TEXT_PATTERNS = [
    ("claim", re.compile(r"\bclaim(?:s|ing)?\s+(?:to\s+be\s+)?(?:the\s+|a\s+)?(villager|seer|doctor)\b", re.I)),
    ("accuse", re.compile(r"\baccuse[sd]?\s+player_(\d+)\b", re.I)),
    ("clear", re.compile(r"\bplayer_(\d+)\s+is\s+not\s+a\s+werewolf\b", re.I)),
    ("wolf", re.compile(r"\bplayer_(\d+)\s+is\s+a\s+werewolf\b", re.I)),
    ("defend", re.compile(r"\bdefend(?:s|ed)?\s+player_(\d+)\b", re.I)),
]
_BRIEF_PATTERNS = [
    (kind, re.compile(p.pattern.replace("player_", "(?:player_|p)"), re.I)) for kind, p in _TEXT_PATTERNS
]
"""``text=brief`` shows seats as ``p3``, so a speaker who writes them that way is understood too."""
_CLAIM_NAMES = {"villager": VILLAGER, "seer": SEER, "doctor": DOCTOR}


def speech_acts(text: str, brief: bool = True) -> list[tuple[str, int]]:
    """The speech acts the game reads in free ``text``, in pattern order: ``(kind, arg)`` with kind
    ``claim`` (arg: the role) or ``accuse``/``clear``/``wolf``/``defend`` (arg: the seat, not yet
    checked against the table). One reader for the game and for the tools that study transcripts."""
    return [
        (kind, _CLAIM_NAMES[m.group(1).lower()] if kind == "claim" else int(m.group(1)))
        for kind, pattern in (_BRIEF_PATTERNS if brief else _TEXT_PATTERNS)
        for m in pattern.finditer(text)
    ]


def seat(p: int) -> str:
    return f"player_{p}"


class WerewolfState(State):
    """One Werewolf history. Player ids 0..n-1; chance deals roles and breaks random ties."""

    def __init__(self, spec: GameSpec, cfg: WerewolfConfig) -> None:
        n = cfg.players
        self.spec, self.cfg, self.n = spec, cfg, n
        self.layout = ActionLayout(n)
        self.roles: list[int] = []
        self.to_deal = cfg.role_counts()
        self.alive = [True] * n
        self.day = 0
        self.phase = "deal"
        self.queue: list[tuple[int, str]] = []
        self.tied: list[int] = []
        self.picks: list[tuple[int, int]] = []
        self.protect = -1
        self.last_protect = -1
        self.votes: dict[int, int] = {}
        self.candidates: list[int] | None = None
        self.winner: str | None = None
        self.logs: list[list[str]] = [[] for _ in range(n)]
        self.transcript: list[str] = []
        self.history: list[Action] = []
        # structured knowledge (public unless noted) for tensors and scripted agents
        self.claims = [-1] * n
        self.seer_rank = [0] * n  # order in which speakers first acted as Seer (claim or report)
        self.reports = [[0] * n for _ in range(n)]  # reports[speaker][target]: +1 wolf, -1 not wolf
        self.accused_today = [0] * n
        self.accused_total = [0] * n
        self.defended_today = [0] * n
        self.last_votes = [-2] * n  # per voter: target, -1 abstain, -2 no vote
        self.revealed = [-1] * n  # role shown at death (reveal_role_on_death)
        self.checks: dict[int, int] = {}  # Seer only: target -> role learned (private)
        self.dead_view: dict[int, np.ndarray] = {}

    # -- contract ---------------------------------------------------------------------------
    def num_players(self) -> int:
        return self.n

    def current_player(self) -> int:
        if self.winner is not None:
            return TERMINAL
        if self.phase == "deal" or self.tied or self._scripted_turn():
            return CHANCE
        return self.queue[0][0]

    def _scripted_turn(self) -> bool:
        """Whether the seat to act belongs to the side the environment plays (``scripted``)."""
        side = self.cfg.scripted
        if side == "none" or not self.queue or self.tied or self.winner is not None:
            return False
        return (self.roles[self.queue[0][0]] == WOLF) == (side == "wolves")

    def decision(self) -> str:
        """What the current player decides: kill, protect, inspect, speak or vote."""
        return self.queue[0][1] if self.queue and self.winner is None and not self.tied else ""

    def decision_kind(self, player: int) -> str:
        if self.cfg.talk == "text" and self.decision() == "speak" and self.current_player() == player:
            return "text"
        return "choice"

    def max_text_length(self, player: int) -> int:
        return self.cfg.max_message_chars

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.phase == "deal":
            left = sum(self.to_deal)
            return [(r, c / left) for r, c in enumerate(self.to_deal) if c]
        if self.tied:
            return [(p, 1.0 / len(self.tied)) for p in self.tied]
        if self._scripted_turn():
            p = self.queue[0][0]
            return _scripted_policy(self.n).choices(encode(self, p), self._legal(p))
        return []

    def legal_actions(self, player: int | None = None) -> list[int]:
        cur = self.current_player()
        if player is None:
            player = cur
        if cur == CHANCE and player == CHANCE:
            return [a for a, _ in self.chance_outcomes()]
        if player != cur or cur < 0:
            return []
        return self._legal(player)

    def _legal(self, player: int) -> list[int]:
        """The moves of ``player``, the seat to act (a scripted seat's too)."""
        kind, n, alive = self.decision(), self.n, self.alive
        if kind == "kill":
            return [q for q in range(n) if alive[q] and self.roles[q] != WOLF]
        if kind == "protect":
            mine = [q for q in range(n) if alive[q] and (self.cfg.doctor_self_protect or q != player)]
            fresh = [q for q in mine if self.cfg.doctor_repeat_target or q != self.last_protect]
            return fresh or mine  # the no-repeat rule is waived when it would leave no choice
        if kind == "inspect":
            return [q for q in range(n) if alive[q] and q != player]
        if kind == "vote":
            pool = self.candidates if self.candidates is not None else range(n)
            out = [q for q in pool if alive[q] and q != player]
            return out + [self.layout.abstain] if self.cfg.allow_abstain or not out else out
        if kind == "speak":
            if self.cfg.talk == "text":
                return []
            L = self.layout
            others = [q for q in range(n) if q != player]
            return (
                [L.silent]
                + [L.claim + i for i in range(len(CLAIMABLE))]
                + [L.accuse + q for q in others if alive[q]]
                + [L.report_wolf + q for q in others]
                + [L.report_clear + q for q in others]
                + [L.defend + q for q in range(n) if alive[q]]
            )
        return []

    def apply_action(self, action: Action) -> None:
        cur = self.current_player()
        if cur == TERMINAL:
            raise IllegalActionError("werewolf: the game is over")
        if isinstance(action, str):
            if self.decision_kind(cur) != "text":
                raise IllegalActionError(f"werewolf: {seat(cur)} must choose an action id here, not text")
            if len(action) > self.cfg.max_message_chars:
                raise IllegalActionError(f"werewolf: message longer than {self.cfg.max_message_chars} characters")
            self.history.append(action)
            self.queue.pop(0)
            self._say_text(cur, action)
            self._advance()
            return
        action = int(action)
        if action not in self.legal_actions(cur):
            what = "chance outcome" if cur == CHANCE else f"action for {seat(cur)} ({self.decision()})"
            raise IllegalActionError(f"werewolf: {action} is not a legal {what}")
        self.history.append(action)
        if cur == CHANCE:
            self._chance(action)
        else:
            kind = self.queue.pop(0)[1]
            getattr(self, "_do_" + kind)(cur, action)
        self._advance()

    def returns(self) -> list[float]:
        if self.winner not in ("village", "wolves"):
            return [0.0] * self.n
        win_wolf = self.winner == "wolves"
        return [1.0 if (r == WOLF) == win_wolf else -1.0 for r in self.roles]

    def forfeit_returns(self, player: int, spec: GameSpec) -> list[float]:
        """A forfeit loses the game for the forfeiter's side (team game)."""
        if len(self.roles) < self.n:
            return super().forfeit_returns(player, spec)
        loser_wolf = self.roles[player] == WOLF
        return [-1.0 if (r == WOLF) == loser_wolf else 1.0 for r in self.roles]

    def clone(self) -> "WerewolfState":
        c = WerewolfState.__new__(WerewolfState)
        c.__dict__.update(self.__dict__)
        for k in (
            "roles",
            "to_deal",
            "alive",
            "queue",
            "tied",
            "picks",
            "transcript",
            "history",
            "claims",
            "seer_rank",
            "accused_today",
            "accused_total",
            "defended_today",
            "last_votes",
            "revealed",
        ):
            setattr(c, k, list(getattr(self, k)))
        c.logs = [list(x) for x in self.logs]
        c.reports = [list(x) for x in self.reports]
        c.votes, c.checks, c.dead_view = dict(self.votes), dict(self.checks), dict(self.dead_view)
        c.candidates = list(self.candidates) if self.candidates is not None else None
        return c

    # -- renderings ------------------------------------------------------------------------
    def action_label(self, player: int, action: int) -> str:
        if self.cfg.text != "brief":
            return self._action_label(player, action)
        if player != CHANCE and action < self.n:  # a target: the decision asked names the verb
            return f"p{action}"
        return re.sub(r"\bplayer_(\d+)", r"p\1", self._action_label(player, action))

    def _action_label(self, player: int, action: int) -> str:
        if player == CHANCE:
            return f"deal {ROLE_NAMES[action]}" if self.phase == "deal" else f"exile {seat(action)}"
        L = self.layout
        if action == L.abstain:
            return "abstain"
        if action < self.n:
            verb = {"kill": "kill", "protect": "protect", "inspect": "inspect"}.get(self.decision(), "vote")
            return f"{verb} {seat(action)}"
        kind, arg = L.speech(action)
        return {
            "silent": lambda: "silent",
            "claim": lambda: f"claim {ROLE_NAMES[arg].lower()}",
            "accuse": lambda: f"accuse {seat(arg)}",
            "wolf": lambda: f"report {seat(arg)} is a werewolf",
            "clear": lambda: f"report {seat(arg)} is not a werewolf",
            "defend": lambda: f"defend {seat(arg)}",
        }[kind]()

    def information_state_key(self, player: int) -> str:
        role = ROLE_NAMES[self.roles[player]] if len(self.roles) == self.n else "?"
        return f"{seat(player)} {role}\n" + "\n".join(self.logs[player])

    def observation_text(self, player: int) -> str:
        return render_brief(self, player) if self.cfg.text == "brief" else render_text(self, player)

    def observation_struct(self, player: int) -> dict[str, Any]:
        return render_struct(self, player)

    def observation_tensor(self, player: int) -> np.ndarray:
        if player in self.dead_view:
            return self.dead_view[player]
        return encode(self, player)

    def outcome_info(self) -> dict[str, Any]:
        names = [ROLE_NAMES[r] for r in self.roles]
        return {
            "winner": self.winner if self.winner in ("village", "wolves") else None,
            "truncated": self.winner == "draw",
            "days": self.day,
            "roles": names,
            "teams": [
                [p for p in range(self.n) if self.roles[p] != WOLF],
                [p for p in range(self.n) if self.roles[p] == WOLF],
            ],
            "team_names": ["village", "wolves"],
            "survivors": [p for p in range(self.n) if self.alive[p]],
            "transcript": list(self.transcript),
        }

    def summary(self) -> str:
        if self.winner == "draw":
            return f"day limit ({self.cfg.max_days}) reached: draw"
        return f"{self.winner} win on day {self.day}"

    # -- beliefs: who the village thinks the werewolves are (listening / speaking rewards) ----
    def believers(self, exclude: int | None = None) -> list[int]:
        """The players whose belief about the hidden roles is surveyed: the living villagers (a
        werewolf knows the roles), but ``exclude`` (the speaker, whose own belief never counts)."""
        return [p for p in self.living() if self.roles[p] != WOLF and p != exclude]

    def hidden_targets(self) -> list[int]:
        """The seats a believer tries to find: the werewolves."""
        return [p for p in range(self.n) if self.roles[p] == WOLF]

    def belief_question(self, listener: int) -> tuple[str, list[int], list[str]]:
        """``listener``'s view asked "who is a werewolf?": its observation without the decision it
        is asked (if any), then the question; the seats it may name (every other living player)
        and their labels as the game writes a target (``p3`` in ``text=brief``, else ``player_3``)."""
        lines = self.observation_text(listener).split("\n")
        if self.current_player() == listener:
            lines = lines[:-1]
        brief = self.cfg.text == "brief"
        lines.append("wolf" if brief else "Which player is a werewolf?")
        seats = [q for q in self.living() if q != listener]
        return "\n".join(lines), seats, [f"p{q}" if brief else seat(q) for q in seats]

    def discussion_over(self) -> bool:
        """Whether the day's discussion has ended and its vote not yet been counted (the survey
        point of the listening reward)."""
        return self.phase in ("vote", "runoff") and self.winner is None

    # -- internals: events ------------------------------------------------------------------
    def living(self) -> list[int]:
        return [p for p in range(self.n) if self.alive[p]]

    def _tell(self, players: list[int], line: str, tag: str, omni: str | None = None) -> None:
        """Append ``line`` to the logs of ``players``; the transcript gets ``omni`` (third person)."""
        for p in players:
            self.logs[p].append(line)
        self.transcript.append(f"[{tag}] {omni or line}" if tag else line)

    def _public(self, line: str) -> None:
        self._tell(self.living(), line, "")

    def _chance(self, action: int) -> None:
        if self._scripted_turn():
            p, kind = self.queue.pop(0)
            if kind == "speak" and self.cfg.talk == "text":
                self._say_text(p, _scripted_policy(self.n).sentence(action))
            else:
                getattr(self, "_do_" + kind)(p, action)
            return
        if self.phase == "deal":
            self.roles.append(action)
            self.to_deal[action] -= 1
            if len(self.roles) == self.n:
                self._after_deal()
            return
        self.tied = []
        self._public(f"Day {self.day}: the tie is broken at random.")
        self._exile(action)

    def _after_deal(self) -> None:
        wolves = [p for p in range(self.n) if self.roles[p] == WOLF]
        self.transcript.append("Roles: " + ", ".join(f"{seat(p)}={ROLE_NAMES[r]}" for p, r in enumerate(self.roles)))
        for p in range(self.n):
            line = f"You are {seat(p)}, a {ROLE_NAMES[self.roles[p]]}."
            if self.roles[p] == WOLF and len(wolves) > 1:
                line += " The werewolves are " + ", ".join(seat(w) for w in wolves) + "."
            self.logs[p].append(line)
        self.day = 1
        self._start_night()

    def _start_night(self) -> None:
        self.phase = "night"
        self.picks, self.protect = [], -1
        self.queue = []
        if self.day > 1 or self.cfg.first_night_kill:
            self.queue += [(p, "kill") for p in self.living() if self.roles[p] == WOLF]
        self.queue += [(p, "protect") for p in self.living() if self.roles[p] == DOCTOR]
        self.queue += [(p, "inspect") for p in self.living() if self.roles[p] == SEER]
        self._public(f"Night {self.day} falls.")

    def _advance(self) -> None:
        """Resolve every phase that has no decision left, until someone must act."""
        while self.winner is None and not self.queue and not self.tied and self.phase != "deal":
            if self.phase == "night":
                self._resolve_night()
            elif self.phase == "discussion":
                self._start_vote(None)
            elif self.phase in ("vote", "runoff"):
                self._resolve_vote()

    # night -------------------------------------------------------------------------------
    def _do_kill(self, p: int, target: int) -> None:
        self.picks.append((p, target))
        wolves = [q for q in self.living() if self.roles[q] == WOLF]
        self._tell(wolves, f"Night {self.day}: {seat(p)} picks {seat(target)} as the werewolves' target.", "wolves")

    def _do_protect(self, p: int, target: int) -> None:
        self.protect = target
        self._tell(
            [p],
            f"Night {self.day}: you protect {seat(target)}.",
            "doctor",
            f"Night {self.day}: the Doctor {seat(p)} protects {seat(target)}.",
        )

    def _do_inspect(self, p: int, target: int) -> None:
        role = self.roles[target]
        self.checks[target] = role
        if self.cfg.seer_learns == "role":
            found = f"a {ROLE_NAMES[role]}"
        else:
            found = "a werewolf" if role == WOLF else "not a werewolf"
        self._tell(
            [p],
            f"Night {self.day}: you inspect {seat(target)}: {seat(target)} is {found}.",
            "seer",
            f"Night {self.day}: the Seer {seat(p)} inspects {seat(target)}, who is {found}.",
        )

    def _wolf_target(self) -> int:
        if not self.picks:
            return -1
        last = self.picks[-1][1]
        if self.cfg.wolf_decision == "last":
            return last
        counts: dict[int, int] = {}
        for _, t in self.picks:
            counts[t] = counts.get(t, 0) + 1
        top = max(counts.values())
        tied = sorted(t for t, c in counts.items() if c == top)
        return last if last in tied else tied[0]

    def _resolve_night(self) -> None:
        target = self._wolf_target()
        self.last_protect = self.protect
        self.phase = "dawn"
        if target >= 0 and target != self.protect:
            self._kill(target, f"Dawn of day {self.day}: {seat(target)} was killed in the night.")
        else:
            self._public(f"Dawn of day {self.day}: nobody died in the night.")
        if self._check_win():
            return
        self._start_discussion()

    def _kill(self, target: int, line: str) -> None:
        if self.cfg.reveal_role_on_death:
            line += f" {seat(target)} was a {ROLE_NAMES[self.roles[target]]}."
            self.revealed[target] = self.roles[target]
        self._public(line)  # the victim still hears its own death
        self.alive[target] = False
        self.dead_view[target] = encode(self, target)

    def _check_win(self) -> bool:
        wolves = sum(1 for p in self.living() if self.roles[p] == WOLF)
        others = len(self.living()) - wolves
        if wolves == 0:
            self.winner = "village"
        elif wolves > others or (wolves == others and self.cfg.wolf_win == "parity"):
            self.winner = "wolves"
        if self.winner:
            self.phase, self.queue = "over", []
            self._end(f"The {'village' if self.winner == 'village' else 'werewolves'} win.")
            return True
        return False

    def _end(self, line: str) -> None:
        for p in range(self.n):
            self.logs[p].append(line)
        self.transcript.append(line)

    # day ---------------------------------------------------------------------------------
    def _start_discussion(self) -> None:
        self.accused_today = [0] * self.n
        self.defended_today = [0] * self.n
        self.phase = "discussion"
        if self.cfg.talk == "none" or self.cfg.discussion_rounds == 0:
            self.queue = []
            return
        start = (self.day - 1) % self.n
        order = [(start + k) % self.n for k in range(self.n)]
        order = [p for p in order if self.alive[p]]
        self.queue = [(p, "speak") for _ in range(self.cfg.discussion_rounds) for p in order]
        self._public(f"Day {self.day}: discussion begins (speaking order: {', '.join(seat(p) for p in order)}).")

    def _do_speak(self, p: int, action: int) -> None:
        kind, arg = self.layout.speech(action)
        self._note_speech(p, kind, arg)
        if kind == "claim":
            said = f"claims to be the {ROLE_NAMES[arg]}"
        else:
            said = {
                "silent": "stays silent",
                "accuse": f"accuses {seat(arg)}",
                "wolf": f"reports: {seat(arg)} is a werewolf",
                "clear": f"reports: {seat(arg)} is not a werewolf",
                "defend": f"defends {seat(arg)}",
            }[kind]
        self._public(f"Day {self.day}: {seat(p)} {said}.")

    def _note_speech(self, p: int, kind: str, arg: int) -> None:
        if (kind in ("wolf", "clear") or kind == "claim" and arg == SEER) and not self.seer_rank[p]:
            self.seer_rank[p] = 1 + sum(1 for r in self.seer_rank if r)
        if kind == "claim":
            self.claims[p] = arg
        elif kind == "accuse":
            self.accused_today[arg] += 1
            self.accused_total[arg] += 1
        elif kind == "wolf":
            self.reports[p][arg] = 1
        elif kind == "clear":
            self.reports[p][arg] = -1
        elif kind == "defend":
            self.defended_today[arg] += 1

    def _say_text(self, p: int, text: str) -> None:
        for kind, arg in speech_acts(text, brief=self.cfg.text == "brief"):
            if kind == "claim" or 0 <= arg < self.n and arg != p or kind == "defend" and 0 <= arg < self.n:
                self._note_speech(p, kind, arg)
        clean = " ".join(text.split())
        self._public(f'Day {self.day}: {seat(p)} says: "{clean}"')

    def _start_vote(self, candidates: list[int] | None) -> None:
        self.phase = "vote" if candidates is None else "runoff"
        self.candidates = candidates
        self.votes = {}
        self.queue = [(p, "vote") for p in self.living()]
        if candidates is None:
            self._public(f"Day {self.day}: voting begins. Ballots stay secret until all are in.")
        else:
            self._public(f"Day {self.day}: runoff vote between {', '.join(seat(q) for q in candidates)}.")

    def _do_vote(self, p: int, target: int) -> None:
        self.votes[p] = -1 if target == self.layout.abstain else target
        what = "abstain" if target == self.layout.abstain else f"vote for {seat(target)}"
        self._tell(
            [p],
            f"Day {self.day}: you {what}.",
            "secret ballot",
            f"Day {self.day}: {seat(p)} {what.replace('vote', 'votes').replace('abstain', 'abstains')}.",
        )

    def _resolve_vote(self) -> None:
        living = self.living()
        self.last_votes = [-2] * self.n
        for p, t in self.votes.items():
            self.last_votes[p] = t
        table = ", ".join(f"{seat(p)}→{seat(t) if t >= 0 else 'abstain'}" for p, t in sorted(self.votes.items()))
        self._public(f"Day {self.day} {'runoff ' if self.phase == 'runoff' else ''}votes: {table}.")
        counts: dict[int, int] = {}
        for t in self.votes.values():
            if t >= 0:
                counts[t] = counts.get(t, 0) + 1
        top = max(counts.values(), default=0)
        tied = sorted(t for t, c in counts.items() if c == top) if top else []
        rule = self.cfg.vote_rule
        if rule == "majority" and top * 2 <= len(living):
            tied = []
        if len(tied) == 1:
            self._exile(tied[0])
        elif len(tied) > 1 and rule == "random_tiebreak":
            self.tied = tied
            self.queue = []
        elif len(tied) > 1 and rule == "runoff" and self.phase == "vote":
            self._start_vote(tied)
        else:
            why = "a tie" if tied else ("no majority" if top else "no votes")
            self._public(f"Day {self.day}: nobody is exiled ({why}).")
            self._end_day()

    def _exile(self, target: int) -> None:
        self._kill(target, f"Day {self.day}: {seat(target)} is exiled by the vote.")
        self.candidates = None
        if not self._check_win():
            self._end_day()

    def _end_day(self) -> None:
        self.candidates = None
        self.queue = []
        if self.day >= self.cfg.max_days:
            self.winner, self.phase = "draw", "over"
            self._end(f"Day {self.day} was the last day: the game ends in a draw.")
            return
        self.day += 1
        self._start_night()


_SCRIPTED: dict[int, ScriptedPolicy] = {}


def _scripted_policy(n: int) -> ScriptedPolicy:
    """The scripted policy for ``n`` seats (one per table size: it holds no game state)."""
    if n not in _SCRIPTED:
        _SCRIPTED[n] = ScriptedPolicy(n)
    return _SCRIPTED[n]
