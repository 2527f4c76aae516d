"""What one Werewolf player sees: the observation tensor and the text view.

Both are built only from the player's own knowledge: its seat and role, the public record
(deaths, speech, vote tables), its own private events (a wolf's team and the wolves' picks, the
Seer's results, the Doctor's protections). Decoding helpers let scripted agents read the
tensor without reaching into the state.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from arena.game import decision_struct
from arena.games.werewolf.rules import CLAIMABLE, DOCTOR, ROLE_NAMES, SEER, WOLF

if TYPE_CHECKING:
    from arena.games.werewolf.state import WerewolfState

PHASES = ("night", "discussion", "vote", "runoff", "over")
DECISIONS = ("kill", "protect", "inspect", "speak", "vote")


class Layout:
    """Offsets of the blocks in the observation tensor for ``n`` players."""

    def __init__(self, n: int) -> None:
        blocks = [
            ("seat", n),
            ("role", 4),
            ("phase", len(PHASES)),
            ("decision", len(DECISIONS)),
            ("day", 1),
            ("alive", n),
            ("teammates", n),
            ("seen_wolf", n),
            ("seen_clear", n),
            ("wolf_picks", n),
            ("protected", n),
            ("revealed", 4 * n),
            ("claims", len(CLAIMABLE) * n),
            ("seer_rank", n),
            ("reports", n * n),
            ("accused_today", n),
            ("accused_total", n),
            ("defended_today", n),
            ("votes", n * (n + 1)),
        ]
        self.n = n
        self.slices: dict[str, slice] = {}
        at = 0
        for name, size in blocks:
            self.slices[name] = slice(at, at + size)
            at += size
        self.size = at


_LAYOUTS: dict[int, Layout] = {}


def layout(n: int) -> Layout:
    if n not in _LAYOUTS:
        _LAYOUTS[n] = Layout(n)
    return _LAYOUTS[n]


def encode(s: "WerewolfState", p: int) -> np.ndarray:
    """The tensor of player ``p`` (flat float32)."""
    n = s.n
    L = layout(n)
    sl = L.slices
    x = np.zeros(L.size, dtype=np.float32)
    x[sl["seat"].start + p] = 1
    if len(s.roles) < n:
        return x
    role = s.roles[p]
    x[sl["role"].start + role] = 1
    phase = "over" if s.winner is not None else (s.phase if s.phase in PHASES else "night")  # dawn is transient
    x[sl["phase"].start + PHASES.index(phase)] = 1
    if s.queue and not s.tied and s.winner is None and s.queue[0][0] == p:
        x[sl["decision"].start + DECISIONS.index(s.decision())] = 1
    x[sl["day"].start] = s.day / s.cfg.max_days
    x[sl["alive"]] = s.alive
    if role == WOLF:
        for q in range(n):
            if s.roles[q] == WOLF:
                x[sl["teammates"].start + q] = 1
        for _, t in s.picks:
            x[sl["wolf_picks"].start + t] += 1
    if role == SEER:
        for q, r in s.checks.items():
            x[(sl["seen_wolf"] if r == WOLF else sl["seen_clear"]).start + q] = 1
    if role == DOCTOR and s.last_protect >= 0:
        x[sl["protected"].start + s.last_protect] = 1
    for q in range(n):
        if s.revealed[q] >= 0:
            x[sl["revealed"].start + 4 * q + s.revealed[q]] = 1
        if s.claims[q] >= 0:
            x[sl["claims"].start + len(CLAIMABLE) * q + CLAIMABLE.index(s.claims[q])] = 1
    x[sl["seer_rank"]] = s.seer_rank
    x[sl["reports"]] = np.asarray(s.reports, dtype=np.float32).reshape(-1)
    x[sl["accused_today"]] = s.accused_today
    x[sl["accused_total"]] = s.accused_total
    x[sl["defended_today"]] = s.defended_today
    v0 = sl["votes"].start
    for q, t in enumerate(s.last_votes):
        if t >= -1:
            x[v0 + q * (n + 1) + (t if t >= 0 else n)] = 1
    return x


class View:
    """Named access to a decoded tensor (for scripted agents)."""

    def __init__(self, x: np.ndarray, n: int) -> None:
        self.n, self.x, self.L = n, np.asarray(x), layout(n)

    def block(self, name: str) -> np.ndarray:
        return self.x[self.L.slices[name]]

    @property
    def me(self) -> int:
        return int(np.argmax(self.block("seat")))

    @property
    def role(self) -> int:
        return int(np.argmax(self.block("role")))

    @property
    def decision(self) -> str:
        d = self.block("decision")
        return DECISIONS[int(np.argmax(d))] if d.any() else ""

    def alive(self) -> list[int]:
        return [q for q in range(self.n) if self.block("alive")[q] > 0]

    def set_of(self, name: str) -> set[int]:
        return {q for q in range(self.n) if self.block(name)[q] > 0}

    def claims(self) -> dict[int, int]:
        c = self.block("claims").reshape(self.n, len(CLAIMABLE))
        return {q: CLAIMABLE[int(np.argmax(c[q]))] for q in range(self.n) if c[q].any()}

    def seer_claimants(self) -> list[int]:
        """Seats that claimed Seer (or reported a check), in the order they first did."""
        r = self.block("seer_rank")
        return sorted((q for q in range(self.n) if r[q] > 0), key=lambda q: r[q])

    def reports(self) -> np.ndarray:
        return self.block("reports").reshape(self.n, self.n)

    def revealed(self) -> dict[int, int]:
        r = self.block("revealed").reshape(self.n, 4)
        return {q: int(np.argmax(r[q])) for q in range(self.n) if r[q].any()}

    def votes(self) -> dict[int, int]:
        v = self.block("votes").reshape(self.n, self.n + 1)
        return {q: (int(np.argmax(v[q])) if np.argmax(v[q]) < self.n else -1) for q in range(self.n) if v[q].any()}


def render_text(s: "WerewolfState", p: int) -> str:
    """The player's view in words: who it is, what it knows, the log it has heard, what to do."""
    n = s.n
    if len(s.roles) < n:
        return f"You are player_{p}. Roles are being dealt."
    wolves = f"{s.cfg.num_wolves} werewol{'f' if s.cfg.num_wolves == 1 else 'ves'}"
    lines = [
        f"Werewolf, {n} players, {wolves}. The village wins when every werewolf is "
        f"dead; the werewolves win when they {'equal or ' if s.cfg.wolf_win == 'parity' else ''}outnumber "
        f"the rest. Day limit: {s.cfg.max_days}."
    ]
    if s.winner is not None:
        lines += s.logs[p]
        lines.append(
            "Game over. Roles: " + ", ".join(f"player_{q}={ROLE_NAMES[r]}" for q, r in enumerate(s.roles)) + "."
        )
        lines.append(f"Your return: {s.returns()[p]:+g}.")
        return "\n".join(lines)
    if not s.alive[p]:
        lines.append("You are dead; you no longer hear what happens.")
    lines += s.logs[p]
    lines.append(f"Alive: {', '.join(f'player_{q}' for q in range(n) if s.alive[q])}.")
    if s.current_player() == p:
        ask = {
            "kill": "Night: choose the werewolves' target.",
            "protect": "Night: choose a player to protect.",
            "inspect": "Night: choose a player to inspect.",
            "speak": "Your turn to speak.",
            "vote": "Vote to exile a player" + (" (or abstain)." if s.cfg.allow_abstain else "."),
        }
        lines.append(ask.get(s.decision(), ""))
    return "\n".join(lines)


def _acts_on(s: "WerewolfState", action: int) -> list[str]:
    """What a move acts on, for clients: a seat (``seat:3``, ``seat:abstain``) or a role claim."""
    if action < s.n:
        return [f"seat:{action}"]
    if action == s.layout.abstain:
        return ["seat:abstain"]
    kind, arg = s.layout.speech(action)
    if kind == "claim":
        return [f"claim:{ROLE_NAMES[arg].lower()}"]
    return ["silent"] if kind == "silent" else [f"seat:{arg}"]


def render_struct(s: "WerewolfState", p: int) -> dict[str, Any]:
    """The structured view: the seats (alive, and what ``p``'s role knows of them), the day and
    phase, the last public vote table, the decision asked and ``p``'s own log. Built from the
    same facts as :func:`render_text`; a dead player, who no longer hears, gets no day, phase,
    reveals or votes past its death (only the alive list, as in the text)."""
    n = s.n
    out = decision_struct(s, p, lambda a: _acts_on(s, a))
    out.update(game="werewolf", players=n, wolves=s.cfg.num_wolves, max_days=s.cfg.max_days, log=list(s.logs[p]))
    if len(s.roles) < n:
        return out
    role, hears = s.roles[p], s.alive[p] or s.winner is not None
    out.update(role=ROLE_NAMES[role].lower(), alive=s.alive[p])
    seats: list[dict[str, Any]] = []
    for q in range(n):
        seat: dict[str, Any] = {"seat": q, "alive": s.alive[q], "you": q == p}
        if role == WOLF and s.roles[q] == WOLF:
            seat["werewolf"] = True
        if role == SEER and q in s.checks:
            r = s.checks[q]
            seat["checked"] = (
                ROLE_NAMES[r].lower()
                if s.cfg.seer_learns == "role"
                else ("werewolf" if r == WOLF else "not a werewolf")
            )
        if hears and s.revealed[q] >= 0:
            seat["revealed"] = ROLE_NAMES[s.revealed[q]].lower()
        if s.winner is not None:
            seat["role"] = ROLE_NAMES[s.roles[q]].lower()
        seats.append(seat)
    out["seats"] = seats
    if role == DOCTOR and s.last_protect >= 0:
        out["last_protected"] = s.last_protect
    if hears:
        out["day"] = s.day
        out["phase"] = "over" if s.winner is not None else ("night" if s.phase in ("night", "dawn") else "day")
        out["votes"] = [{"voter": q, "for": t if t >= 0 else "abstain"} for q, t in enumerate(s.last_votes) if t >= -1]
        if s.candidates is not None:
            out["runoff"] = list(s.candidates)
        if p in s.votes and s.phase in ("vote", "runoff"):
            out["your_vote"] = s.votes[p] if s.votes[p] >= 0 else "abstain"
    if s.winner is not None:
        out["winner"] = s.winner
    if out["your_turn"]:
        out["ask"] = s.decision()
    return out


# Brief rendering: each line of a player's own log in a few words (``None``: the line is left out).
_BRIEF_DROP = re.compile(
    r"^(Night \d+ falls\.|Night \d+: you inspect|Day \d+: (discussion begins|voting begins|the tie is broken))"
)  # a Seer's results are in its header line ("checked p2 ok p5 wolf")
_BRIEF_RULES = [
    (re.compile(r"^Night \d+: (p\d+) picks (p\d+) as the werewolves' target\.$"), r"\1 picks \2"),
    (re.compile(r"^Night \d+: you protect (p\d+)\.$"), r"you protect \1"),
    (re.compile(r"^Dawn of day \d+: (p\d+) was killed in the night\.(?: p\d+ was an? (\w+)\.)?$"), r"\1 killed \2"),
    (re.compile(r"^Dawn of day \d+: nobody died in the night\.$"), "nobody killed"),
    (re.compile(r'^Day \d+: (p\d+) says: "(.*)"$'), r"\1: \2"),
    (re.compile(r"^Day \d+: you vote for (p\d+)\.$"), r"you vote \1"),
    (re.compile(r"^Day \d+ (runoff )?votes: (.*)\.$"), r"\1votes \2"),
    (re.compile(r"^Day \d+: (p\d+) is exiled by the vote\.(?: p\d+ was an? (\w+)\.)?$"), r"\1 exiled \2"),
    (re.compile(r"^(?:Day|Night) \d+: (.*?)\.?$"), r"\1"),
]
_SEAT = re.compile(r"\bplayer_(\d+)\b")


def brief_line(line: str) -> str | None:
    """One log line in a few words (``player_3`` → ``p3``), or ``None`` for a line the brief
    text leaves out (night falls, the speaking order, the start of the vote)."""
    if _BRIEF_DROP.match(line):
        return None
    line = _SEAT.sub(r"p\1", line).replace("→", ">")
    for pattern, repl in _BRIEF_RULES:
        if pattern.match(line):
            return pattern.sub(repl, line).strip()
    return line


def render_brief(s: "WerewolfState", p: int) -> str:
    """``text=brief``: the player's view in a few short lines — seat, role, day, what its role
    knows (a wolf's team, the Seer's results, the Doctor's last protection), who is alive, its own
    log of the current day only (from nightfall), and the decision asked.

    Built only from what ``render_text`` shows the same player (its own log and role knowledge,
    the public alive list), so it can leak nothing the full text does not; the earlier days are
    left out (their outcome is in who is alive) because a small model pays for every character.
    """
    n = s.n
    if len(s.roles) < n:
        return f"p{p} dealing"
    role = s.roles[p]
    head = f"p{p} {ROLE_NAMES[role].lower()} day {s.day}/{s.cfg.max_days}"
    if s.winner is not None:
        return f"{head} over: {s.winner} win, you {s.returns()[p]:+g}"
    if not s.alive[p]:
        return f"{head} dead"
    lines = [head]
    if role == WOLF and s.cfg.num_wolves > 1:
        lines.append("wolves " + " ".join(f"p{q}" for q in range(n) if s.roles[q] == WOLF))
    if role == SEER and s.checks:
        lines.append(
            "checked " + " ".join(f"p{q} {'wolf' if r == WOLF else 'ok'}" for q, r in sorted(s.checks.items()))
        )
    if role == DOCTOR and s.last_protect >= 0:
        lines.append(f"last protected p{s.last_protect}")
    lines.append("alive " + " ".join(f"p{q}" for q in range(n) if s.alive[q]))
    log = s.logs[p]
    start = max((i for i, line in enumerate(log) if line == f"Night {s.day} falls."), default=0)
    lines += [b for b in (brief_line(line) for line in log[start:]) if b]
    if s.current_player() == p:
        lines.append({"speak": "say", "vote": "vote"}.get(s.decision(), s.decision()))
    return "\n".join(lines)
