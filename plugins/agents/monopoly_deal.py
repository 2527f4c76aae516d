"""Monopoly Deal agents: ``monopoly_deal_heuristic`` (scripted) and ``monopoly_deal_mccfr``
(MCCFR on the intent abstraction of :mod:`arena.games.monopoly_deal.abstract`).

The heuristic reads only its observation tensor (:class:`PlayerView`) and the legal moves:

- plays: lay a property that completes a set, then Deal Breaker, then any property where it
  brings a set closest to complete; steal (Sly/Forced Deal) toward its best sets; charge the
  largest rent (doubled when it can); Debt Collector and It's My Birthday when the others can
  pay; build; Pass Go; bank money (never a Just Say No); then end the turn;
- answers: Just Say No against a Deal Breaker, a steal from a nearly complete set, or a debt of
  $4M or more; the initiator always answers back when it can;
- pays with the least valuable assets: bank money first (the smallest card that settles the
  rest, else the largest below it), then properties far from completing a set, buildings last
  but one, and complete sets last;
- discards the least useful cards (rent for colours it lacks, then low money).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.agent import Agent, AgentEntry, Observation, sample_from
from arena.errors import ArenaError
from arena.game import Action, Game, parse_game_name
from arena.games.monopoly_deal.abstract import IntentGame, abstract_key, intents
from arena.games.monopoly_deal.cards import COLOURS, KINDS
from arena.games.monopoly_deal.rules import layout_for
from arena.games.monopoly_deal.tactics import choose_payment, keep_value, progress, property_gain
from arena.games.monopoly_deal.view import PlayerView
from arena.hookspecs import hookimpl
from arena.policy import TabularPolicy


def _check_game(game: Game, agent: str) -> None:
    if game.spec.name != "monopoly_deal":
        raise ArenaError(f"agent '{agent}' plays only monopoly_deal, not '{game.spec.full_name}'")


class MonopolyDealHeuristic(Agent):
    name = "monopoly_deal_heuristic"

    def __init__(self, game: Game) -> None:
        _check_game(game, self.name)
        p = game.spec.params
        self.variant = p.get("variant", "retail")
        self.n = game.spec.num_players
        self.moves = layout_for(self.variant, self.n).moves

    def act(self, obs: Observation) -> Action:
        v = PlayerView(obs.tensor, self.variant, self.n, obs.player)
        legal = [self.moves[a] for a in obs.legal_actions]
        ids = {self.moves[a]: a for a in obs.legal_actions}
        return ids[self.choose(v, legal)]

    def choose(self, v: PlayerView, legal: list[tuple]) -> tuple:
        phase = v.phase
        if phase == "pay":
            return choose_payment(v, legal)
        if phase == "respond":
            return ("jsn",) if ("jsn",) in legal and self.should_refuse(v) else ("accept",)
        if phase == "take":
            return max(legal, key=lambda m: property_gain(v, v.me, m[1], m[2]) + KINDS[m[1]].value / 100)
        if phase == "give":
            return min(legal, key=lambda m: progress(v, v.me, m[2]) + KINDS[m[1]].value / 10)
        if phase == "discard":
            return min(legal, key=lambda m: keep_value(v, m[1]))
        return self.play(v, legal)

    def should_refuse(self, v: PlayerView) -> bool:
        if v.by == v.me:  # our demand was refused: answer back
            return True
        if v.effect == "dealbreaker":
            return True
        if v.effect in ("sly", "forced") and v.take is not None:
            k, c = v.take
            return progress(v, v.me, c) >= 0.5
        return v.amount >= 4 and v.assets(v.me) > 0

    def play(self, v: PlayerView, legal: list[tuple]) -> tuple:
        me = v.me
        by_op: dict[str, list[tuple]] = {}
        for m in legal:
            by_op.setdefault(m[0], []).append(m)
        # free wild moves that complete a set
        for m in by_op.get("move", []):
            k, a, b = m[1], m[2], m[3]
            if not v.complete(me, a) and property_gain(v, me, k, b) >= 10:
                return m
        places = by_op.get("place", [])
        best = max(places, key=lambda m: property_gain(v, me, m[1], m[2]), default=None)
        if best is not None and property_gain(v, me, best[1], best[2]) >= 10:
            return best
        if by_op.get("dealbreaker"):
            return by_op["dealbreaker"][0]
        if best is not None:
            return best
        for op in ("sly", "forced"):
            if by_op.get(op):
                return max(by_op[op], key=lambda m: v.assets(m[1]))
        opp_assets = {q: v.assets(q) for q in range(v.n) if q != me}
        rents = by_op.get("rent", []) + by_op.get("wildrent", [])
        if rents:
            def amount(m: tuple) -> float:
                c, d = (m[2], m[3]) if m[0] == "rent" else (m[1], m[3])
                who = opp_assets[m[2]] if m[0] == "wildrent" else sum(opp_assets.values())
                return min(v.rent(me, c) * 2 ** d, max(who, 0)) - 0.5 * d
            top = max(rents, key=amount)
            if amount(top) >= 1:
                return top
        if by_op.get("debt") and max(opp_assets.values()) > 0:
            return max(by_op["debt"], key=lambda m: opp_assets[m[1]])
        if by_op.get("birthday") and max(opp_assets.values()) > 0:
            return by_op["birthday"][0]
        for op in ("hotel", "house"):
            if by_op.get(op):
                return by_op[op][0]
        if by_op.get("passgo"):
            return by_op["passgo"][0]
        banks = [m for m in by_op.get("bank", []) if KINDS[m[1]].name != "Just Say No"
                 and (KINDS[m[1]].type == "money" or not self._useful_later(v, m[1]))]
        if banks:
            return max(banks, key=lambda m: KINDS[m[1]].value)
        return ("end",)

    def _useful_later(self, v: PlayerView, k: int) -> bool:
        """Keep action cards that may pay off next turn; bank the rest (and properties as cash only
        in the paper variant when the colour is hopeless)."""
        card = KINDS[k]
        if card.is_property:
            return True
        if card.type == "rent":
            return any(v.rent(v.me, COLOURS.index(c)) >= 2 for c in card.colours)
        return card.name in ("Deal Breaker", "Sly Deal", "Forced Deal", "House", "Hotel")


class IntentPolicyAgent(Agent):
    """Plays an MCCFR policy of the intent abstraction in the real 2-player paper variant: the
    observation gives the intents on offer and the abstract key; the policy picks an intent; the
    intent's concrete move is played. A key the policy never saw falls back to the heuristic's
    move (counted in ``stats()``)."""

    name = "monopoly_deal_mccfr"

    def __init__(self, game: Game, policy: TabularPolicy, info: dict[str, Any] | None = None) -> None:
        self.table = policy
        self.info = info or {}
        self.moves = layout_for("paper", 2).moves
        self.fallback = MonopolyDealHeuristic(game)
        self.decisions = self.misses = 0

    def act(self, obs: Observation) -> Action:
        v = PlayerView(obs.tensor, "paper", 2, obs.player)
        legal = {self.moves[a]: a for a in obs.legal_actions}
        offer = intents(v, list(legal))
        probs = self.table.get(abstract_key(v, offer))
        self.decisions += 1
        if probs is None:
            self.misses += 1
            return legal[self.fallback.choose(v, list(legal))]
        intent = sample_from({i: probs.get(i, 0.0) for i in offer}, obs)
        return legal[offer[intent]]

    def stats(self) -> dict[str, Any]:
        return {"decisions": self.decisions, "unseen_keys": self.misses, **self.info}

    def save(self, directory: str | Path) -> None:
        directory = Path(directory)
        self.table.save(directory / "policy.json")


def make_mccfr(game: Game, path: str | None = None, iterations: int = 20000, algo: str = "os-mccfr",
               seed: int = 0) -> IntentPolicyAgent:
    """``monopoly_deal_mccfr:path=policy.json`` plays a saved policy (``arena solve --game
    monopoly_deal_intents --algo os-mccfr``); without ``path`` it solves on load."""
    _check_game(game, "monopoly_deal_mccfr")
    if game.spec.params.get("variant") != "paper":
        raise ArenaError("agent 'monopoly_deal_mccfr' plays the 2-player paper variant: "
                         "load it with game 'monopoly_deal(variant=paper)'")
    if path is not None:
        p = Path(path)
        policy = TabularPolicy.load(p / "policy.json" if p.is_dir() else p)
        if parse_game_name(policy.game)[0] != "monopoly_deal_intents":
            raise ArenaError(f"policy file {p} is for game '{policy.game}', not monopoly_deal_intents")
        return IntentPolicyAgent(game, policy, {"source": str(p)})
    if algo not in ("os-mccfr", "es-mccfr"):
        raise ArenaError(f"agent 'monopoly_deal_mccfr': algo must be os-mccfr or es-mccfr, not {algo!r}")
    if not isinstance(iterations, int) or iterations < 1:
        raise ArenaError(f"agent 'monopoly_deal_mccfr': iterations must be a positive integer, not {iterations!r}")
    from arena.plugins.agents.cfr.run import make_solve, run_solve

    turns = game.spec.params.get("max_turns", 200)
    solve = run_solve(make_solve(IntentGame(max_turns=turns), algo, seed=seed), iterations)
    return IntentPolicyAgent(game, solve.policy(), {"algo": algo, "iterations": iterations, "seed": seed,
                                                    "infosets": len(solve.solver.nodes)})


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [AgentEntry("monopoly_deal_heuristic", lambda game: MonopolyDealHeuristic(game),
                       "scripted Monopoly Deal: complete sets, charge the biggest rent, bank money, pay with least value"),
            AgentEntry("monopoly_deal_mccfr", make_mccfr,
                       "MCCFR policy of the intent abstraction (2-player paper variant): a saved policy or solved on load",
                       {"path": None, "iterations": 20000, "algo": "os-mccfr", "seed": 0})]
