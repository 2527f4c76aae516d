"""The scripted Werewolf policy: rule-based players (the baseline learners are measured against),
part of the game package because the game itself plays it when one side is the environment
(``werewolf(scripted=wolves|village)``); the ``werewolf_scripted`` agent
(plugins/agents/werewolf_scripted.py) seats it.

- Seer: inspects unchecked suspects, reveals a werewolf it found (else vouches for a cleared,
  accused player), votes for found wolves.
- Doctor: protects the Seer once someone claims it, otherwise itself (or anyone allowed).
- Villagers: accuse and vote for the top suspect on public evidence (Seer reports, weighted
  down when several claim Seer; accusations; defences), defend themselves when accused.
- Werewolves: coordinate kills (follow a teammate's pick, else hit a revealed Seer or Doctor)
  and deflect (counter-claim Seer against whoever exposed a teammate, bandwagon on the most
  suspected villager, vote together).

The policy reads only the seat's observation tensor (what its seat may know). With ``talk=text``
it says its choice as a sentence that the game's parser understands ("I accuse player_3.").
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .rules import CLAIMABLE, DOCTOR, SEER, WOLF, ActionLayout
from .view import View


def suspicion(v: View, n: int) -> np.ndarray:
    """Public suspicion of every seat. The first Seer claimant is trusted; later claimants count
    for little, and one who calls the first claimant a werewolf is itself suspected."""
    reports = v.reports()
    claimants = v.seer_claimants()
    score = np.zeros(n)
    for k, s in enumerate(claimants):
        if k == 0:
            score += 3.0 * reports[s]
        else:
            score += 0.5 * reports[s]
            score[s] += 2.0 * (reports[s][claimants[0]] > 0)
    score += 0.5 * v.block("accused_today") + 0.25 * v.block("accused_total") - 0.25 * v.block("defended_today")
    for q, role in v.revealed().items():
        score[q] += 100 if role == WOLF else -100
    return score


def _pick(options: Sequence[int], score: np.ndarray, rng: np.random.Generator) -> int:
    """The option with the highest score, ties broken with the game's generator."""
    best = max(score[o] for o in options)
    top = [o for o in options if score[o] >= best - 1e-9]
    return top[int(rng.integers(len(top)))]


class _Draws:
    """Stands in for a generator: ``integers(k)`` returns the preset draws in order, then 0, and
    records every ``k`` it was asked for (so the caller can branch on the first unset draw)."""

    def __init__(self, preset: tuple[int, ...]) -> None:
        self.preset, self.sizes = preset, []  # type: tuple[int, ...], list[int]

    def integers(self, k: int) -> int:
        i = len(self.sizes)
        self.sizes.append(int(k))
        return self.preset[i] if i < len(self.preset) else 0


def enumerate_draws(run: Callable[[Any], int]) -> list[tuple[int, float]]:
    """The exact distribution of ``run(rng)`` over the uniform draws ``rng.integers(k)`` it makes
    (depth-first over every draw; the scripted policy makes at most two per decision)."""
    out: dict[int, float] = {}
    stack: list[tuple[tuple[int, ...], float]] = [((), 1.0)]
    while stack:
        preset, p = stack.pop()
        rng = _Draws(preset)
        action = int(run(rng))
        if len(rng.sizes) > len(preset):
            k = rng.sizes[len(preset)]
            stack += [(preset + (j,), p / k) for j in range(k)]
        else:
            out[action] = out.get(action, 0.0) + p
    return sorted(out.items())


class ScriptedPolicy:
    """The scripted choices of any seat of an ``n``-player table, from its own view."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.layout = ActionLayout(n)

    def decide(self, v: View, legal: list[int], rng: Any) -> int:
        """The scripted choice at a discrete decision (``legal`` empty: a text turn's utterance id)."""
        if not legal:
            return self.speak(v, None, rng)
        handler = {
            "kill": self.kill,
            "protect": self.protect,
            "inspect": self.inspect,
            "speak": self.speak,
            "vote": self.vote,
        }[v.decision]
        action = handler(v, legal, rng)
        return action if action in legal else legal[int(rng.integers(len(legal)))]

    def choices(self, tensor: np.ndarray, legal: list[int]) -> list[tuple[int, float]]:
        """The scripted policy as a distribution: every random tie-break it would draw is
        enumerated (:func:`enumerate_draws`), so the environment can play this side as chance
        nodes (``werewolf(scripted=wolves)``) that read only the seat's own tensor."""
        v = View(tensor, self.n)
        return enumerate_draws(lambda rng: self.decide(v, legal, rng))

    # -- decisions -------------------------------------------------------------------------
    def kill(self, v: View, legal: list[int], rng: np.random.Generator) -> int:
        picks = v.block("wolf_picks")
        if picks.any():
            return _pick(legal, picks, rng)
        reports, claims = v.reports(), v.claims()
        score = np.zeros(self.n)
        for q in legal:
            score[q] += 5 * reports[q].any() + 4 * (claims.get(q) == SEER) + 3 * (claims.get(q) == DOCTOR)
            score[q] -= 0.1 * suspicion(v, self.n)[q]  # leave suspected villagers for the vote
        return _pick(legal, score, rng)

    def protect(self, v: View, legal: list[int], rng: np.random.Generator) -> int:
        claims, reports = v.claims(), v.reports()
        score = np.zeros(self.n)
        for q in legal:
            score[q] = 2 * (claims.get(q) == SEER or reports[q].any()) + (q == v.me)
        return _pick(legal, score, rng)

    def inspect(self, v: View, legal: list[int], rng: np.random.Generator) -> int:
        seen = v.set_of("seen_wolf") | v.set_of("seen_clear")
        fresh = [q for q in legal if q not in seen] or legal
        return _pick(fresh, suspicion(v, self.n), rng)

    def _village_suspects(self, v: View) -> np.ndarray:
        score = suspicion(v, self.n)
        if v.role == SEER:
            for q in v.set_of("seen_wolf"):
                score[q] += 100
            for q in v.set_of("seen_clear"):
                score[q] -= 100
        return score

    def speak(self, v: View, legal: list[int] | None, rng: np.random.Generator) -> int:
        L, me, alive = self.layout, v.me, v.alive()
        others = [q for q in alive if q != me]
        if v.role == WOLF:
            return self._wolf_speech(v, others, rng)
        if v.role == SEER:
            wolves = [q for q in v.set_of("seen_wolf") if q in alive]
            if wolves:
                return L.report_wolf + wolves[0]
            cleared = [q for q in v.set_of("seen_clear") if q in alive]
            if cleared:
                return L.report_clear + _pick(cleared, v.block("accused_total"), rng)
        score = self._village_suspects(v)
        if others and max(score[q] for q in others) >= 1:
            return L.accuse + _pick(others, score, rng)
        if v.block("accused_today")[me] > 0:
            return L.defend + me
        return L.silent

    def _wolf_speech(self, v: View, others: list[int], rng: np.random.Generator) -> int:
        L = self.layout
        mates = v.set_of("teammates")
        reports = v.reports()
        exposers = [q for q in others if q not in mates and any(reports[q][w] > 0 for w in mates)]
        if exposers:
            return L.report_wolf + exposers[0]  # counter-claim: call the real Seer a werewolf
        villagers = [q for q in others if q not in mates]
        if not villagers:
            return L.silent
        return L.accuse + self._wolf_vote_target(v, villagers)

    def _wolf_vote_target(self, v: View, villagers: list[int]) -> int:
        """Deterministic in public information, so all wolves pick the same victim."""
        score = suspicion(v, self.n)
        reports = v.reports()
        mates = v.set_of("teammates")
        for q in villagers:
            score[q] += 10 * any(reports[q][w] > 0 for w in mates)
        best = max(score[q] for q in villagers)
        return min(q for q in villagers if score[q] >= best - 1e-9)

    def vote(self, v: View, legal: list[int], rng: np.random.Generator) -> int:
        targets = [q for q in legal if q < self.n]
        if not targets:
            return legal[0]
        if v.role == WOLF:
            mates = v.set_of("teammates")
            villagers = [q for q in targets if q not in mates]
            return self._wolf_vote_target(v, villagers) if villagers else targets[0]
        return _pick(targets, self._village_suspects(v), rng)

    def babble(self, v: View, rng: Any) -> int:
        """A uniformly random speech act: a kind (silent, claim, accuse, call a werewolf, clear,
        defend), then its argument (a claimable role, or a living seat; not oneself but for
        defend). What a player says who knows the game's language and has no strategy."""
        L = self.layout
        others = [q for q in v.alive() if q != v.me]
        kind = ["silent", "claim", "accuse", "wolf", "clear", "defend"][int(rng.integers(6))]
        if kind == "silent" or not others:
            return L.silent
        if kind == "claim":
            return L.claim + int(rng.integers(len(CLAIMABLE)))
        if kind == "defend":
            targets = others + [v.me]
            return L.defend + targets[int(rng.integers(len(targets)))]
        base = {"accuse": L.accuse, "wolf": L.report_wolf, "clear": L.report_clear}[kind]
        return base + others[int(rng.integers(len(others)))]

    def sentence(self, action: int) -> str:
        kind, arg = self.layout.speech(action)
        return {
            "silent": lambda: "I have nothing to add.",
            "claim": lambda: f"I claim to be the {['villager', 'werewolf', 'seer', 'doctor'][arg]}.",
            "accuse": lambda: f"I accuse player_{arg}.",
            "wolf": lambda: f"I am the Seer: player_{arg} is a werewolf.",
            "clear": lambda: f"I am the Seer: player_{arg} is not a werewolf.",
            "defend": lambda: f"I defend player_{arg}.",
        }[kind]()
