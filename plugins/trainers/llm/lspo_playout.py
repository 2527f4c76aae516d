"""``lspo_playout``: LSPO for talk games too large for an abstract-game solver (Werewolf).

:mod:`.lspo` solves the whole abstracted game with CFR. That needs the abstract game as a tree:
fine for Kuhn with table talk, impossible for 7-player Werewolf (days of free-text discussion,
votes and night actions; the abstract tree is still astronomically large, and with a learner
side of several seats against a fixed opponent it is a team game, for which CFR's guarantees do
not hold). This trainer keeps LSPO's loop — cluster the utterances into latent strategies, find
the favoured latent strategy at each decision, DPO toward it, re-cluster — and replaces the
solver by a **per-decision value of each abstract action, estimated from playouts**:

1. **Latent space** (as :mod:`.lspo`): every utterance the learner said plus ``candidates``
   extra samples per talk turn join a corpus, re-clustered each iteration (k by silhouette in
   ``[k_min, k_max]``: it grows as the policy says new kinds of things).
2. **Abstract actions at a decision**: at a talk turn, one utterance per latent strategy among
   that turn's candidates (the played one stands for its own cluster); at a move (vote, kill,
   protect, inspect) every legal move.
3. **Values** (``credit: turn``): from the state the decision was taken in (rebuilt by
   :func:`.rollout.replay`), each abstract action is played and the game finished ``playouts``
   times with the current LLM on the learner's side and the environment's side (e.g. the
   scripted werewolves of ``werewolf(scripted=wolves)``, chance nodes) — ``Q(s, z)`` is the mean
   return of the deciding seat. Why this is sound: with the other side fixed, the learner's
   problem is a single-agent POMDP for each seat (teammates are part of the environment too),
   and the replayed state is a sample from the on-policy belief at the decision's information
   set, so the mean over decisions of ``Q(s, z)`` is an unbiased estimate of ``Q(I, z)``;
   moving the policy toward ``argmax_z Q`` is one step of policy iteration on the abstracted
   decision (the playout policy is the current one, as in SPPO's playouts). The pair is the
   best over the worst abstract action when ``Q`` differs by at least ``margin``: the advantage
   is taken against a **per-turn group baseline** (the other abstract actions of the same
   turn), so every pair carries that turn's own credit.
   ``pool: turn`` averages a talk decision's values over every valued decision at the same talk
   turn of the game (the seat's k-th talk turn), per latent strategy: ``Q(I, z)`` at the
   abstract information set "k-th talk turn" instead of one state's few playouts — a coarser
   abstraction, and many more playouts behind each value (moves keep their own values: a seat
   number names a different player in every game).
   ``crn: true`` plays playout j of every abstract action of a decision on the same random
   stream (common random numbers: the scripted side's chance draws and the LLM's samples), so
   the values' difference carries less playout luck than two independent means.
   ``credit: trajectory`` is the ablation: no playouts; the played response is preferred over
   another abstract action at the same turn when the game's return beat the batch's mean
   return (and the other way round when below) — one trajectory-level advantage for every turn.
   Its pairs carry the advantage's sign only, so a side that loses most games gets mostly pairs
   that push away from what it said; ``balance: true`` keeps as many pairs toward the played
   response as away from it (a random subsample of the larger side). With win/loss returns and
   the mean as baseline the wins' advantages and the losses' sum to zero, so equal push each way
   is what weighting each pair by its advantage would give.
   **Listening and speaking** (:mod:`.social`, Sarkar et al., arXiv 2502.06060): with
   ``speaking`` > 0 each talk option's value gains ``speaking`` x the change the utterance causes
   in the other living villagers' pooled belief in the true werewolves (negated for a wolf); with
   ``listening`` > 0 each iteration also takes ``listening_steps`` supervised steps on the
   villagers' beliefs (read from the model) against the true roles, surveyed when each day's
   discussion is over, with a talk-token anchor. Nothing new to resume: both are functions of
   the weights and the games of the iteration.
4. **DPO** (:class:`.dpo.DPO`, ``reference: iteration``) on the pairs. Move pairs use the
   agent's per-token mean when it scores by the mean (as :mod:`.lspo`).

Per iteration: ``lspo/latent_strategies``, ``silhouette``, ``corpus``, ``win_rate`` and
``return`` (the learner side's, in the games just played: at iteration 1 that is the untrained
model), ``pairs_talk``, ``pairs_move``, ``q_gap`` (mean best − worst value), ``playout_games``
and ``games_total`` (training plus playout games so far: what a sample-efficiency comparison
of the two credits counts). docs/werewolf.md, "LSPO".
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import Game, State
from arena.trainer import Trajectory

from .dpo import DPO, PreferencePair
from .lspo import LSPO
from .rollout import own_decisions, playout_values
from .social import SOCIAL_DEFAULTS, SocialRewards, talk_turn

CREDITS = ("turn", "trajectory")
SCOPES = ("all", "talk", "moves")
POOLS = ("decision", "turn")


class PlayoutLSPO(LSPO):
    name = "lspo_playout"
    defaults = {
        **DPO.defaults,
        "beta": 0.5,
        "reference": "iteration",
        "epochs": 12,
        "candidates": 3,
        "k_min": 2,
        "k_max": 6,
        "embedding": "tfidf",
        "corpus": 4000,
        "decisions": "all",
        "credit": "turn",
        "max_decisions": 32,
        "playouts": 4,
        "margin": 0.5,
        "pool": "decision",
        "crn": False,
        "balance": False,
        **SOCIAL_DEFAULTS,
    }

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        DPO.__init__(self, game, learners, **params)  # LSPO's own checks ask for a tree abstraction
        if self.p["credit"] not in CREDITS:
            raise ArenaError(
                f"trainer 'lspo_playout': credit must be one of {', '.join(CREDITS)}, not {self.p['credit']!r}"
            )
        if self.p["decisions"] not in SCOPES:
            raise ArenaError(
                f"trainer 'lspo_playout': decisions must be one of {', '.join(SCOPES)}, not {self.p['decisions']!r}"
            )
        if self.p["pool"] not in POOLS:
            raise ArenaError(f"trainer 'lspo_playout': pool must be one of {', '.join(POOLS)}, not {self.p['pool']!r}")
        if self.p["balance"] and self.p["credit"] != "trajectory":
            raise ArenaError(
                "trainer 'lspo_playout': balance balances trajectory-credit pairs; it needs credit: trajectory"
            )
        if int(self.p["playouts"]) < 1:
            raise ArenaError(f"trainer 'lspo_playout': playouts must be >= 1, not {self.p['playouts']}")
        self.social = SocialRewards(self.name, self.p, game, self.agent)
        if self.social.speaking > 0 and self.p["credit"] != "turn":
            raise ArenaError("trainer 'lspo_playout': speaking adds to the per-turn values; it needs credit: turn")
        self.survey_states: list[State] = []
        self.speaking_stats: dict[str, float] = {}  # this iteration's "discussion over" states (listening)
        self.latent = self.latent_space()
        self.corpus: list[str] = []
        self.fixed, self.fixed_corpus = None, []  # LSPO's fixed-abstraction state (unused here; saved by extra_state)
        self.initial = None
        self.games_total = 0

    # -- what the learner did ---------------------------------------------------------------------
    def _decisions(self, trajectories: Sequence[Trajectory]) -> tuple[list[tuple[State, Any, float, int]], int, list]:
        """(state, step, the game's return for that seat, the seat's how-many-th decision of that
        kind it is) of every learner decision with token ids; games that could not be replayed;
        per game the learner side's return."""
        out: list[tuple[State, Any, float, int]] = []
        skipped = 0
        side: list[float] = []
        for traj in trajectories:
            mine, bad = own_decisions(self.game, [traj], self.agent.name)
            skipped += bad
            mine = [(st, step) for st, step in mine if step.extra.get("prompt_ids")]
            seen: dict[tuple[int, str], int] = {}
            days = set()
            for st, step in mine:
                if self.social.listening > 0 and st.discussion_over() and st.day not in days:  # type: ignore[attr-defined]
                    days.add(st.day)  # type: ignore[attr-defined]
                    self.survey_states.append(st)
                kind = (step.player, step.observation.decision)
                seen[kind] = k = seen.get(kind, -1) + 1
                out.append((st, step, float(traj.returns[step.player]), k))
            if mine:
                side.append(float(np.mean([traj.returns[step.player] for _, step in mine])))
        return out, skipped, side

    def _options(self, step: Any, cands: list[str] | None, ids: dict[str, int]) -> list[Any]:
        """The abstract actions at a decision: one utterance per latent strategy, or the legal moves."""
        if step.observation.decision == "text":
            assert cands is not None
            first: dict[int, str] = {}
            for t in cands:  # the played utterance comes first and stands for its own cluster
                first.setdefault(ids[t], t)
            return list(first.values())
        return list(step.observation.legal_actions)

    # -- one iteration ------------------------------------------------------------------------------
    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        seed = int(self.p["seed"]) * 100_003 + self.updates
        rng = np.random.default_rng(seed)
        self.survey_states, self.speaking_stats = [], {}
        decisions, skipped, side = self._decisions(trajectories)
        self.games_total += len(trajectories)
        out: dict[str, float] = {
            "lspo/win_rate": float(np.mean([r > 0 for r in side])) if side else float("nan"),
            "lspo/return": float(np.mean(side)) if side else float("nan"),
            "lspo/skipped_games": float(skipped),
            "lspo/decisions": float(len(decisions)),
        }
        talk = [i for i, (_, step, _, _) in enumerate(decisions) if step.observation.decision == "text"]
        extra = self._generate([decisions[i][1].observation for i in talk], int(self.p["candidates"]), seed)
        cands = {i: [str(decisions[i][1].action)] + row for i, row in zip(talk, extra)}
        self.corpus = (self.corpus + [t for row in cands.values() for t in row])[-int(self.p["corpus"]) :]
        ids: dict[str, int] = {}
        if self.corpus:
            self.latent.fit(self.corpus)
            ids = self._assign([t for row in cands.values() for t in row])
            out.update({"lspo/latent_strategies": float(self.latent.k), "lspo/silhouette": self.latent.silhouette})
        out["lspo/corpus"] = float(len(self.corpus))
        scope = self.p["decisions"]
        valued = [
            i
            for i, (_, step, _, _) in enumerate(decisions)
            if (step.observation.decision == "text") == (scope == "talk") or scope == "all"
        ]
        valued = [i for i in valued if len(self._options(decisions[i][1], cands.get(i), ids)) > 1]
        cap = int(self.p["max_decisions"])
        if cap and len(valued) > cap:
            valued = sorted(int(i) for i in rng.choice(valued, size=cap, replace=False))
        if self.p["credit"] == "turn":
            pairs, gaps, playouts = self._turn_pairs(decisions, valued, cands, ids, seed)
        else:
            pairs, gaps, playouts = self._trajectory_pairs(decisions, valued, cands, ids, side, rng)
        self.games_total += playouts
        out.update(
            {
                "lspo/pairs_talk": float(sum(1 for p, is_talk in pairs if is_talk)),
                "lspo/pairs_move": float(sum(1 for p, is_talk in pairs if not is_talk)),
                "lspo/q_gap": float(np.mean(gaps)) if gaps else 0.0,
                "lspo/playout_games": float(playouts),
                "lspo/games_total": float(self.games_total),
            }
        )
        out.update(self.speaking_stats)
        out.update(self.fit([p for p, _ in pairs]))
        out.update(self._listen(decisions, rng))
        return out

    def _listen(self, decisions: list, rng: np.random.Generator) -> dict[str, float]:
        """The supervised listening steps (``listening`` > 0) on this iteration's surveys, with
        the anchor on the talk the learner said (:meth:`.social.SocialRewards.listen`)."""
        if self.social.listening <= 0:
            return {}
        asked = self.social.survey_set(self.survey_states, rng)
        talk = [
            (list(step.extra["prompt_ids"]), list(self._response(step.observation, str(step.action))[0]))
            for _, step, _, _ in decisions
            if step.observation.decision == "text"
        ]
        return self.social.listen(self.model, asked, self.reference, talk)

    def _pair(self, step: Any, hi: Any, lo: Any) -> tuple[PreferencePair, bool]:
        """:meth:`preference`, and whether it is a talk pair."""
        return self.preference(step, hi, lo), step.observation.decision == "text"

    def _turn_pairs(
        self, decisions: list, valued: list[int], cands: dict[int, list[str]], ids: dict[str, int], seed: int
    ) -> tuple[list[tuple[PreferencePair, bool]], list[float], int]:
        """Per decision: every abstract action's playout value; best over worst (module docstring)."""
        n = int(self.p["playouts"])
        starts, where, streams = [], [], []
        for i in valued:
            st, step, _, _ = decisions[i]
            for option in self._options(step, cands.get(i), ids):
                starts += [(st, option, step.player)] * n
                where.append((i, option))
                streams += [i * n + j for j in range(n)]  # crn: playout j of every option, one stream
        if not starts:
            return [], [], 0
        common = streams if self.p["crn"] else None
        values = playout_values(self.game, starts, self.agent, seed + 7, cache=False, streams=common)
        values = values.reshape(-1, n).mean(axis=1)
        q: dict[int, dict[Any, float]] = {}
        for (i, option), v in zip(where, values):
            q.setdefault(i, {})[option] = float(v)
        self._add_speaking(decisions, q)
        if self.p["pool"] == "turn":
            talk = {i: decisions[i][3] for i in q if decisions[i][1].observation.decision == "text"}
            q.update(pooled(q, talk, ids))
        pairs, gaps = [], []
        for i, vals in q.items():
            ranked = sorted(vals, key=lambda o: (vals[o], str(o)))
            lo, hi = ranked[0], ranked[-1]
            gap = vals[hi] - vals[lo]
            gaps.append(gap)
            if gap >= float(self.p["margin"]):
                pairs.append(self._pair(decisions[i][1], hi, lo))
        return pairs, gaps, len(starts)

    def _add_speaking(self, decisions: list, q: dict[int, dict[Any, float]]) -> None:
        """``speaking`` > 0: each talk option's value plus its weighted speaking reward (the change
        it causes in the other players' pooled belief in the true hidden players, :mod:`.social`)."""
        if self.social.speaking <= 0:
            return
        talk = [i for i in q if talk_turn(decisions[i][0], decisions[i][1].observation.decision)]
        rewards = self.social.speak([(decisions[i][0], decisions[i][1].player, list(q[i])) for i in talk])
        played = []
        for i, row in zip(talk, rewards):
            step = decisions[i][1]
            said = str(step.action) if step.observation.decision == "text" else step.action
            for option, r in zip(list(q[i]), row):
                q[i][option] += r
                if option == said:
                    played.append(r)
        self.speaking_stats = {
            "social/speaking_played": float(np.mean(played)) if played else 0.0,
            "social/speaking_spread": float(np.mean([max(r) - min(r) for r in rewards])) if rewards else 0.0,
        }

    def _trajectory_pairs(
        self,
        decisions: list,
        valued: list[int],
        cands: dict[int, list[str]],
        ids: dict[str, int],
        side: list[float],
        rng: np.random.Generator,
    ) -> tuple[list[tuple[PreferencePair, bool]], list[float], int]:
        """The played response over (or under) another abstract action of the same turn, by the
        sign of the game's return minus the batch's mean return (the ablation)."""
        base = float(np.mean(side)) if side else 0.0
        pairs, gaps, toward = [], [], []
        for i in valued:
            _, step, ret, _ = decisions[i]
            adv = ret - base
            options = self._options(step, cands.get(i), ids)
            played = str(step.action) if step.observation.decision == "text" else step.action
            others = [o for o in options if o != played]
            if abs(adv) < 1e-9 or not others or played not in options:
                continue
            other = others[int(rng.integers(len(others)))]
            gaps.append(abs(adv))
            toward.append(adv > 0)
            pairs.append(self._pair(step, played, other) if adv > 0 else self._pair(step, other, played))
        if self.p["balance"]:
            sides = [[k for k, t in enumerate(toward) if t is want] for want in (True, False)]
            n = min(len(x) for x in sides)
            keep = sorted(int(k) for x in sides for k in rng.choice(x, size=n, replace=False)) if n else []
            pairs, gaps = [pairs[k] for k in keep], [gaps[k] for k in keep]
        return pairs, gaps, 0

    def extra_state(self) -> dict[str, Any]:
        return {**super().extra_state(), "games_total": self.games_total}

    def load_extra_state(self, state: dict[str, Any]) -> None:
        super().load_extra_state(state)
        self.games_total = int(state.get("games_total", 0))


def pooled(
    q: dict[int, dict[Any, float]], turn: dict[int, int], cluster: dict[str, int]
) -> dict[int, dict[Any, float]]:
    """For the talk decisions ``turn`` names (decision -> the seat's k-th talk turn): each
    utterance's value replaced by the mean value of its latent strategy ``cluster[utterance]``
    over every such decision at the same turn (``pool: turn``)."""
    acc: dict[tuple[int, int], list[float]] = {}
    for i, k in turn.items():
        for option, v in q[i].items():
            acc.setdefault((k, cluster[option]), []).append(v)
    return {i: {o: float(np.mean(acc[(k, cluster[o])])) for o in q[i]} for i, k in turn.items()}


def make_lspo_playout(game: Game, learners: Sequence[Any], **params: Any) -> PlayoutLSPO:
    return PlayoutLSPO(game, learners, **params)
