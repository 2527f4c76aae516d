"""``lspo``: Latent Space Policy Optimization (Xu et al. 2025, arXiv 2502.04686) for talk games.

One ``update`` is one LSPO iteration on the self-play games the league runner just played
(``arena llm-train`` / ``arena league`` host it; nothing here plays whole games):

1. **Latent space.** Every utterance the learner said, plus ``candidates`` extra samples at
   each of its talk turns (the paper's N candidate utterances), joins a corpus (the last
   ``corpus`` utterances are kept); the corpus is re-clustered (:mod:`.latent`). The number of
   clusters is chosen by silhouette in ``[k_min, k_max]``, so it grows when the policy starts
   saying new kinds of things.
2. **Abstract game.** The game's ``abstract(k)`` (``table_talk(messages=k)``) replaces each
   utterance by its cluster id; ``solver`` (any ``cfr`` algorithm: ``cfr+``, ``mccfr-es``, ...)
   runs ``solver_iterations`` on it; its average policy is sigma*.
3. **Preference pairs.** At each recorded learner decision, mapped into the abstract game, a
   response is favoured by how much more sigma* plays its latent strategy than the LLM does
   now: ``sigma*(z | I) - pi(z | I)``, with pi at a talk turn the frequency of each cluster among
   all candidates said at that abstract infoset, and at a move the agent's recorded policy. The
   most favoured response is chosen over the least favoured one (a talk turn's candidates, a
   move's legal moves) when the two differ by at least ``margin``. (The paper leaves the rule
   open. Ranking by sigma* alone cannot work for cheap talk: CFR started uniform keeps the
   message ids symmetric, so sigma* talks uniformly and ranks nothing; the excess over the
   LLM's own frequency then pushes an LLM that leaks its hand toward talk that does not.)
4. **DPO** (:class:`.dpo.DPO`, LoRA or full weights, ``reference: iteration`` by default: the
   anchor is the model at the start of the iteration). With ``guard`` the fit is kept only if it
   does not raise the LLM's exploitability in this iteration's abstract game, else retried with
   half the steps (:meth:`LSPO.guarded_fit`); with ``guard_split`` a refused fit is then tried on
   the move pairs alone and on the talk pairs alone (block-wise steps).

Measured every iteration, all exact in the abstract game of that iteration (``lspo/*``):
``latent_strategies`` (k), ``cfr_exploitability`` (sigma*'s), ``llm_exploitability_before`` /
``llm_exploitability`` (the LLM's policy before / after the DPO step), ``initial_llm_exploitability``
(the untrained model in the same abstraction, with ``compare_initial``),
``fixed_llm_exploitability`` (the LLM in the *first* iteration's abstract game, with
``fixed_abstraction``: one game to compare iterations in), and the LLM's exact return and win
probability against sigma* and against uniform play.

**The LLM's policy in the abstract game.** At an abstract history each latent message is
rendered as its cluster's representative utterance; at a talk infoset the LLM samples
``eval_samples`` utterances and the latent policy is the frequency of their clusters; at a move
it is the agent's scored policy. That is an estimate (an abstract infoset stands for many texts),
stated as such in docs/lspo.md.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Callable, Sequence

import numpy as np

from arena.agent import Observation
from arena.errors import ArenaError
from arena.game import Game
from arena.policy import TabularPolicy
from arena.trainer import Trajectory

from .dpo import DPO, PreferencePair
from .latent import LatentSpace, hidden_state_encoder
from .rollout import own_decisions


class LSPO(DPO):
    name = "lspo"
    defaults = {
        **DPO.defaults,
        "beta": 0.5,
        "reference": "iteration",
        "candidates": 4,
        "k_min": 2,
        "k_max": 4,
        "embedding": "tfidf",
        "corpus": 4000,
        "solver": "cfr+",
        "solver_iterations": 500,
        "margin": 0.1,
        "decisions": "all",
        "eval_samples": 16,
        "compare_initial": True,
        "measure_before": True,
        "balance_moves": False,
        "guard": False,
        "guard_halvings": 3,
        "guard_tol": 0.0,
        "fixed_abstraction": False,
        "guard_first": False,
        "guard_split": False,
    }

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        super().__init__(game, learners, **params)
        if not hasattr(game, "abstract") or not game.spec.text_decisions:
            raise ArenaError(
                f"trainer 'lspo' needs a free-text talk game with a latent abstraction "
                f"(e.g. table_talk(game=kuhn_poker)); '{game.spec.full_name}' is not one"
            )
        if not game.abstract(1).spec.tree:  # type: ignore[attr-defined]
            raise ArenaError(
                f"trainer 'lspo': the abstract game of '{game.spec.full_name}' is not a tree game "
                "(the CFR solvers need one)"
            )
        if self.p["decisions"] not in ("all", "talk"):
            raise ArenaError(f"trainer 'lspo': decisions must be 'all' or 'talk', not {self.p['decisions']!r}")
        if int(self.p["guard_halvings"]) < 0 or float(self.p["guard_tol"]) < 0:
            raise ArenaError(
                f"trainer 'lspo': guard_halvings and guard_tol must be >= 0, not "
                f"{self.p['guard_halvings']} and {self.p['guard_tol']}"
            )
        if self.p["guard_first"] and not (self.p["guard"] and self.p["fixed_abstraction"]):
            raise ArenaError("trainer 'lspo': guard_first needs guard: true and fixed_abstraction: true")
        if self.p["guard_split"] and not self.p["guard"]:
            raise ArenaError("trainer 'lspo': guard_split needs guard: true")
        if self.p["fixed_abstraction"] and self.p["embedding"] == "hidden":
            raise ArenaError(
                "trainer 'lspo': fixed_abstraction needs a fixed encoder (embedding: tfidf or hashing); "
                "'hidden' embeds with the model being trained, so its abstraction would move"
            )
        self.latent = self.latent_space()
        self.corpus: list[str] = []
        self.fixed: LatentSpace | None = None  # the first iteration's latent space (``fixed_abstraction``)
        self.fixed_corpus: list[str] = []
        self.initial = self.model.frozen_copy() if self.p["compare_initial"] else None

    def latent_space(self) -> LatentSpace:
        """The latent space this trainer's params ask for (its encoder reads the learner's model
        when ``embedding: hidden``)."""
        encoder = (
            hidden_state_encoder(self.model, self.agent.backend.encode) if self.p["embedding"] == "hidden" else None
        )
        return LatentSpace(
            int(self.p["k_min"]),
            int(self.p["k_max"]),
            str(self.p["embedding"]),
            seed=int(self.p["seed"]),
            encoder=encoder,
        )

    # -- 1. candidates and the latent space -------------------------------------------------------
    def _response(self, obs: Observation, option: Any) -> tuple[tuple[int, ...], bool]:
        """Token ids of ``option`` (an utterance, or a move) as the model says it — with the line
        end that stops generation, and the labels shaped as the chat template shapes them — and
        whether the pair compares it per token (a move of a ``score: mean`` agent)."""
        cont = self.agent.prompts.continuation
        self.agent.prompts.build(obs)  # sets whether the chat template shapes the continuation
        if obs.decision == "text":
            return tuple(self.agent.backend.encode(cont(option))), False
        return tuple(self.agent.backend.encode(cont(obs.label_of(option)))), self.agent.score == "mean"

    def preference(self, step: Any, hi: Any, lo: Any) -> PreferencePair:
        """The pair "``hi`` over ``lo``" at the learner's recorded decision ``step``."""
        chosen, per_token = self._response(step.observation, hi)
        rejected, _ = self._response(step.observation, lo)
        return PreferencePair(tuple(step.extra["prompt_ids"]), chosen, rejected, per_token=per_token, origin=step)

    def _generate(self, observations: Sequence[Observation], n: int, seed: int) -> list[list[str]]:
        """``n`` sampled utterances per observation, one batched backend call."""
        from arena.plugins.agents.llm.selection import clip_text

        agent = self.agent
        if not observations or n < 1:
            return [[] for _ in observations]
        prompts = [agent.prompts.build(o) for o in observations for _ in range(n)]
        rng = np.random.default_rng(seed)
        gens = agent.backend.generate(
            prompts,
            max_tokens=agent.max_text_tokens,
            temperature=max(agent.temperature, 1e-3),
            seeds=[int(s) for s in rng.integers(2**31, size=len(prompts))],
            stop=["\n"],
        )
        texts = [clip_text(g.text, observations[i // n].max_text_length) for i, g in enumerate(gens)]
        return [texts[i * n : (i + 1) * n] for i in range(len(observations))]

    def _assign(self, texts: Sequence[str], latent: LatentSpace | None = None) -> dict[str, int]:
        uniq = sorted(set(texts))
        return dict(zip(uniq, (int(x) for x in (latent or self.latent).assign(uniq))))

    # -- the LLM's policy in an abstract game -------------------------------------------------------
    def abstract_policy(self, abstract: Game, agent: Any, seed: int, latent: LatentSpace | None = None) -> np.ndarray:
        """The slot vector of ``agent``'s policy in ``abstract`` (module docstring), read through
        ``latent`` (this iteration's latent space by default)."""
        from arena.exact.tree import get_tree

        latent = latent or self.latent
        tree = get_tree(abstract)
        reps = latent.representatives
        sigma = np.zeros(tree.num_slots)
        talk, talk_slots, moves, move_slots = [], [], [], []
        rng = np.random.default_rng(0)
        saved = self.agent
        self.agent = agent
        try:
            for i in range(tree.num_infosets):
                st = tree.state_of(i, abstract)
                player = int(tree.info_player[i])
                concrete = st.abstracted(self.game, lambda p, m: m)  # type: ignore[attr-defined]
                concrete.said = [(p, reps[m]) for p, m in st.said]  # type: ignore[attr-defined]
                obs = Observation(concrete, player, rng, self.game.spec.full_name)
                s0, k = int(tree.info_start[i]), int(tree.info_size[i])
                (talk if obs.decision == "text" else moves).append(obs)
                (talk_slots if obs.decision == "text" else move_slots).append((s0, k))
            # one batched scoring call for every move infoset (the agent's exact scored policy)
            policies = (
                [p for p, _ in agent._policies(moves, [agent.prompts.build(o) for o in moves])]
                if hasattr(agent, "_policies")
                else [agent.policy(o) for o in moves]
            )
            for (s0, k), pol in zip(move_slots, policies):
                sigma[s0 : s0 + k] = [pol.get(int(a), 0.0) for a in tree.slot_action[s0 : s0 + k]]
            m = int(self.p["eval_samples"])
            samples = self._generate(talk, m, seed)
            ids = self._assign([t for row in samples for t in row], latent)
            for (s0, k), row in zip(talk_slots, samples):
                counts = np.bincount([ids[t] for t in row], minlength=k)[:k].astype(float)
                sigma[s0 : s0 + k] = counts / max(counts.sum(), 1.0)
        finally:
            self.agent = saved
        return sigma

    def _measure(self, abstract: Game, sigma: np.ndarray, star: np.ndarray) -> dict[str, float]:
        """Exploitability of ``sigma`` and its exact return / win probability against sigma* and
        uniform play, averaged over seats."""
        from arena.exact.exploitability import exploitability, policy_value
        from arena.exact.tree import get_tree

        tree = get_tree(abstract)
        win_tree = dataclasses.replace(tree, utility=(tree.utility > 0).astype(float), _derived={})
        uniform = np.zeros(tree.num_slots)
        for i in range(tree.num_infosets):
            s0, k = int(tree.info_start[i]), int(tree.info_size[i])
            uniform[s0 : s0 + k] = 1.0 / k
        out = {"exploitability": exploitability(abstract, sigma, tree)}
        n = tree.num_players
        for name, other in (("cfr", star), ("uniform", uniform)):
            rets, winp = [], []
            for p in range(n):
                mixed = other.copy()
                a, b = tree.player_slots[p]
                mixed[a:b] = sigma[a:b]
                rets.append(policy_value(abstract, mixed, tree)[p])
                winp.append(policy_value(abstract, mixed, win_tree)[p])
            out[f"return_vs_{name}"] = float(np.mean(rets))
            out[f"win_vs_{name}"] = float(np.mean(winp))
        return out

    # -- one iteration ------------------------------------------------------------------------------
    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        from arena.exact.exploitability import exploitability, policy_array
        from arena.exact.tree import get_tree
        from arena.plugins.agents.cfr.run import make_solve, run_solve

        seed = int(self.p["seed"]) * 100_003 + self.updates
        mine, skipped = own_decisions(self.game, trajectories, self.agent.name)
        decisions = [(st, step) for st, step in mine if step.extra.get("prompt_ids")]  # the learner's, replayed
        talk = [(st, step) for st, step in decisions if step.observation.decision == "text"]
        extra = self._generate([step.observation for _, step in talk], int(self.p["candidates"]), seed)
        cands = [[str(step.action)] + row for (_, step), row in zip(talk, extra)]
        self.corpus = (self.corpus + [t for row in cands for t in row])[-int(self.p["corpus"]) :]
        if not self.corpus:
            self.updates += 1
            return {"lspo/skipped_games": float(skipped), "dpo/pairs": 0.0}
        self.latent.fit(self.corpus)
        k = self.latent.k
        abstract = self.game.abstract(k)  # type: ignore[attr-defined]
        solve = make_solve(abstract, str(self.p["solver"]), seed=seed)
        run_solve(solve, int(self.p["solver_iterations"]))
        tree = get_tree(abstract)
        star = policy_array(abstract, solve.policy(), tree)
        table = solve.policy()
        latent_of = self._assign(
            [m for st, _ in decisions for _, m in st.said if isinstance(m, str)] + [t for row in cands for t in row]
        )

        talk_cands = {id(step): row for (_, step), row in zip(talk, cands)}
        pairs, is_move = self._pairs(abstract, table, k, latent_of, decisions, talk_cands, seed)
        self.keep_pairs(pairs, trajectories)  # for `arena export --format trl-preference`
        n_move = sum(is_move)
        n_talk = len(pairs) - n_move
        out = {
            "lspo/latent_strategies": float(k),
            "lspo/silhouette": float(self.latent.silhouette),
            "lspo/corpus": float(len(self.corpus)),
            "lspo/cfr_exploitability": exploitability(abstract, star, tree),
            "lspo/pairs_talk": float(n_talk),
            "lspo/pairs_move": float(n_move),
            "lspo/skipped_games": float(skipped),
        }
        fixed = self._fixed_game()
        if fixed is not None and self.updates == 0:  # the warmed-up model in the fixed game
            out["lspo/fixed_llm_exploitability_before"] = self._fixed_exploitability(fixed)

        def measure() -> dict[str, float]:
            return self._measure(abstract, self.abstract_policy(abstract, self.agent, seed + 1), star)

        before = measure() if self.p["measure_before"] or self.p["guard"] else None
        if before is not None:
            out["lspo/llm_exploitability_before"] = before["exploitability"]
        if self.p["guard"]:
            assert before is not None
            also = []
            if self.p["guard_first"] and fixed is not None and self.updates > 0:  # iteration 1's game is fixed's

                def first_game() -> float:
                    assert fixed is not None
                    return self._fixed_exploitability(fixed, seed + 2)

                also.append(first_game)
            blocks: list[list[PreferencePair]] = []
            if self.p["guard_split"]:  # moves first: the part of a fit that descended (docs/results/lspo.md)
                blocks = [[p for p, m in zip(pairs, is_move) if m], [p for p, m in zip(pairs, is_move) if not m]]
            stats, after = self.guarded_fit(pairs, measure, before, also, blocks)
            out.update(stats)
        else:
            out.update(self.fit(pairs))
            after = measure()
        out.update({f"lspo/llm_{k2}" if k2 == "exploitability" else f"lspo/{k2}": v for k2, v in after.items()})
        if fixed is not None:
            out["lspo/fixed_llm_exploitability"] = self._fixed_exploitability(fixed)
        if self.initial is not None:
            frozen = copy.copy(self.agent)
            frozen.backend = self.model.backend_for(self.initial)
            first = self._measure(abstract, self.abstract_policy(abstract, frozen, seed + 1), star)
            out["lspo/initial_llm_exploitability"] = first["exploitability"]
            out["lspo/initial_return_vs_cfr"] = first["return_vs_cfr"]
        return out

    def _pairs(
        self,
        abstract: Game,
        table: TabularPolicy,
        k: int,
        latent_of: dict[str, int],
        decisions: Sequence[tuple[Any, Any]],
        talk_cands: dict[int, list[str]],
        seed: int,
    ) -> tuple[list[PreferencePair], list[bool]]:
        """Step 3: preference pairs at the recorded ``decisions`` mapped into ``abstract`` (``k``
        latent strategies, utterances mapped by ``latent_of``), toward sigma* (``table``: its
        average policy by abstract infoset key). Returns the pairs and, per pair, whether it is a
        move pair (else talk)."""
        from arena.plugins.agents.llm.selection import softmax_policy

        def latent(_p: int, text: str) -> int:
            return latent_of[text]

        pairs: list[PreferencePair] = []
        move_idx: set[int] = set()
        margin = float(self.p["margin"])
        keyed = [
            (st.abstracted(abstract, latent).information_state_key(step.player), st, step) for st, step in decisions
        ]
        said: dict[str, list[int]] = {}  # how often the LLM says each latent strategy, per abstract infoset
        for key, _, step in keyed:
            if step.observation.decision == "text":
                said.setdefault(key, []).extend(latent_of[t] for t in talk_cands[id(step)])
        for key, st, step in keyed:
            probs = table.get(key) or {}
            obs = step.observation
            if obs.decision == "text":
                freq = np.bincount(said[key], minlength=k) / len(said[key])
                excess = {t: probs.get(latent_of[t], 0.0) - freq[latent_of[t]] for t in set(talk_cands[id(step)])}
                ranked = sorted(excess, key=lambda t: (excess[t], t))
                lo, hi = ranked[0], ranked[-1]
                if excess[hi] - excess[lo] >= margin:
                    pairs.append(self.preference(step, hi, lo))
            elif self.p["decisions"] == "all" and "scores" in step.extra:
                pol = softmax_policy(obs.legal_actions, step.extra["scores"], self.agent.temperature)
                gap = {a: probs.get(a, 0.0) - pol[a] for a in obs.legal_actions}
                acts = sorted(gap, key=lambda a: (gap[a], a))
                lo_a, hi_a = acts[0], acts[-1]
                if gap[hi_a] - gap[lo_a] >= margin:
                    pairs.append(self.preference(step, hi_a, lo_a))
                    move_idx.add(len(pairs) - 1)
        moves = {id(pairs[i]) for i in move_idx}
        if self.p["balance_moves"]:
            pairs, _ = balance_directions(pairs, move_idx, seed)
        return pairs, [id(p) in moves for p in pairs]

    # -- the guard: a DPO step that does not raise the exploitability it is meant to lower ------------
    def guarded_fit(
        self,
        pairs: Sequence[PreferencePair],
        measure: Any,
        before: dict[str, float],
        also: Sequence[Callable[[], float]] = (),
        blocks: Sequence[Sequence[PreferencePair]] = (),
    ) -> tuple[dict[str, float], dict[str, float]]:
        """DPO on ``pairs``, kept only if ``measure()`` (the LLM's exact measures in this
        iteration's abstract game) shows an exploitability at most ``guard_tol`` above ``before``'s,
        and each of ``also`` (the LLM's exploitability in another abstract game: ``guard_first``)
        at most ``guard_tol`` above its value before the fit.
        Otherwise the weights and optimizer go back to where the fit started and the fit is tried
        again with half the steps, up to ``guard_halvings`` times. A backtracking line search on
        the objective itself (as TRPO's on its surrogate): a fit's size does not shrink with the gap
        between the LLM and sigma*, so near sigma* a full fit overshoots (docs/results/lspo.md).
        When every try is refused, the same search runs on each of ``blocks`` in turn (subsets of
        the pairs, ``guard_split``: the move pairs, then the talk pairs), as block-coordinate
        descent does when the joint direction does not descend; when those are refused too, the
        iteration keeps its starting weights (a null step).

        Returns DPO's stats of the kept fit plus ``lspo/guard_tries`` (every try),
        ``lspo/guard_epochs`` (the kept fit's steps; 0 for a null step) and ``lspo/guard_set``
        (the kept fit's pairs: 1 all, 2, 3, ... the blocks in order; 0 for a null step), and the
        measures of the kept weights."""
        start = copy.deepcopy(self.model.state_dict())
        replayed = list(self.replayed)  # an undone try must not leave its pairs in DPO's replay buffer
        updates, configured = self.updates, self.p["epochs"]
        tol = float(self.p["guard_tol"])
        limit = float(before["exploitability"]) + tol
        limits = [check() + tol for check in also]
        sets = [list(pairs)] + [list(b) for b in blocks]
        tries = 0
        try:
            for which, chosen in enumerate(sets, 1):
                if which > 1 and not 0 < len(chosen) < len(pairs):  # an empty block, or all the pairs again
                    continue
                epochs = max(1, int(configured))
                for _ in range(int(self.p["guard_halvings"]) + 1):
                    tries += 1
                    self.p["epochs"] = epochs
                    stats = self.fit(chosen)
                    after = measure()
                    if after["exploitability"] <= limit and all(c() <= x for c, x in zip(also, limits)):
                        kept = {"lspo/guard_epochs": float(epochs), "lspo/guard_set": float(which)}
                        return {**stats, "lspo/guard_tries": float(tries), **kept}, after
                    self.model.load_state_dict(copy.deepcopy(start))
                    self.replayed = list(replayed)
                    if epochs == 1:
                        break
                    epochs = max(1, epochs // 2)
            null = {"lspo/guard_tries": float(tries), "lspo/guard_epochs": 0.0, "lspo/guard_set": 0.0}
            return {"dpo/pairs": float(len(pairs)), **null}, before
        finally:
            self.p["epochs"] = configured
            self.updates = updates + 1  # one iteration, however many tries (the next iteration's seeds)

    # -- one fixed abstract game, to compare iterations in ------------------------------------------
    def _fixed_game(self) -> Game | None:
        """With ``fixed_abstraction``: the abstract game of the *first* iteration's latent space
        (fitted once, on that iteration's corpus, and kept), where every iteration's policy is
        measured too. Why: each iteration re-clusters, and a new clustering is a new abstract game
        with new representative utterances, so ``llm_exploitability`` of two iterations are two
        measurements in two games; in one fixed game their difference is what DPO changed."""
        if not self.p["fixed_abstraction"]:
            return None
        if self.fixed is None:
            if not self.fixed_corpus:
                self.fixed_corpus = list(self.corpus)
            self.fixed = self.latent_space().fit(self.fixed_corpus)
        return self.game.abstract(self.fixed.k)  # type: ignore[attr-defined]

    def _fixed_exploitability(self, fixed: Game, seed: int | None = None) -> float:
        """The LLM's exploitability in the fixed abstract game, its talk read with one seed for
        every iteration by default (common random numbers: equal weights measure equal; the
        guard passes its own seed, so the reported value is not the one it selected on)."""
        from arena.exact.exploitability import exploitability
        from arena.exact.tree import get_tree

        assert self.fixed is not None
        seed = int(self.p["seed"]) * 100_003 + 77_777 if seed is None else seed
        sigma = self.abstract_policy(fixed, self.agent, seed, self.fixed)
        return exploitability(fixed, sigma, get_tree(fixed))

    def extra_state(self) -> dict[str, Any]:
        out = {**super().extra_state(), "corpus": list(self.corpus), "fixed_corpus": list(self.fixed_corpus)}
        if self.initial is not None:  # the untrained baseline must survive a resume, not become the resumed weights
            out["initial"] = {k: v.detach().clone() for k, v in self.initial.state_dict().items()}
        return out

    def load_extra_state(self, state: dict[str, Any]) -> None:
        super().load_extra_state(state)
        self.corpus = list(state.get("corpus", []))
        self.fixed_corpus, self.fixed = list(state.get("fixed_corpus", [])), None  # refitted (same seed) on use
        if self.initial is not None and "initial" in state:
            self.initial.load_state_dict(state["initial"])

    def describe_latent(self) -> list[dict[str, Any]]:
        return self.latent.describe()


def balance_directions(pairs: Sequence[PreferencePair], moves: set[int], seed: int) -> tuple[list[PreferencePair], int]:
    """Move pairs with as many "a over b" as "b over a" for every two labels (a random subset of
    the larger side is dropped); pairs not in ``moves`` (talk) are kept. Why: a model that cannot yet tell two
    situations apart applies a pair's push to both, so 7 "fold over call" pairs (Jack) against 2
    "call over fold" (King) move *every* card toward folding before the model learns which card
    asks for which (docs/results/lspo.md). Balanced, the common push cancels and only the
    situation-specific part remains. Returns the pairs and how many were dropped."""
    rng = np.random.default_rng(seed)
    groups: dict[tuple, list[int]] = {}
    for i, p in enumerate(pairs):
        if i in moves:
            groups.setdefault((p.chosen_ids, p.rejected_ids), []).append(i)
    drop: set[int] = set()
    for (c, r), idx in groups.items():
        n = min(len(idx), len(groups.get((r, c), [])))
        if len(idx) > n:
            drop.update(int(i) for i in rng.choice(idx, size=len(idx) - n, replace=False))
    return [p for i, p in enumerate(pairs) if i not in drop], len(drop)


def make_lspo(game: Game, learners: Sequence[Any], **params: Any) -> LSPO:
    return LSPO(game, learners, **params)
