"""``sppo``: Self-Play Preference Optimization with preferences read from game outcomes.

One ``update`` is one SPPO iteration with a frozen pi_t (the weights at its start):

1. the prompts x are the learner's recorded decisions (their states are rebuilt by
   :func:`rollout.replay`);
2. per decision, K candidate responses (the legal actions' texts; all of them when
   ``candidates`` is 0 or at least the number of legal actions, else K sampled from pi_t);
3. P̂(y ≻ pi_t | x) = (1 + Q(x, y) / U) / 2 with Q estimated by ``rollouts`` playouts of pi_t
   against itself after playing y, U the game's largest absolute payoff (the per-decision
   form of SPPO's preference, arXiv 2405.00675), averaged over every recorded state that shows the same prompt;
4. ``epochs`` Adam steps on the SPPO regression
   ``(log pi_theta(y|x) - log pi_t(y|x) - eta (P̂ - 1/2))^2`` over all (x, y), with log pi the
   agent's action log-probability (the label softmax in scored mode; the label's sequence
   log-prob in generated mode).

With ``judge`` set (any judge plugin, :mod:`arena.judge`), the preference comes from the judge
instead of the two-player zero-sum identity, so SPPO runs on n-player, general-sum and
open-ended games: playout ``m`` after candidate y is compared with playout ``m`` after y' from
the same recorded state (same deal), ``J(y, y') = (1 + margin)/2``, and
``P̂(y ≻ pi_t | x) = Σ_y' pi_t(y'|x) J(y, y')`` (pi_t exact over the labels when every legal
action is a candidate, else the K sampled candidates equally). With the ``outcome`` judge,
``J − 1/2 = (R_y − R_y')/(2·range)``, so ``P̂ − 1/2 = (Q(y) − V(x))/(2·range)``: the playout
version's ``Q/(2U)`` centred by the state value, at half the scale for a zero-sum range 2U.
``against: opponents`` reads "y ≻ pi_t" literally instead: in playout ``m`` after y, the judge
compares the learner's seat with each co-player's seat (pi_t plays them), ``P̂ = mean (1 +
margin)/2``. With the ``outcome`` judge on a two-player zero-sum game the margin is
``(R − (−R))/(2U) = R/U``: exactly the playout version's preference, so the two runs are the same
run (tested).

On a game with free-text decisions where the learner holds every seat (``open_task``,
``cyclic_preference``) SPPO works on whole responses, as the paper does (``judge`` required): per
game the learner played, ``samples`` = K responses to the same prompt (the recorded one plus
K − 1 sampled from pi_t from the same state), the judge compares every pair,
``P̂(y_i ≻ pi_t) = (1/K) Σ_j P(y_i ≻ y_j)`` (the response itself counting ½), and the regression
runs on each response's summed log-prob (:mod:`.preference_text`).

``optimism: true`` takes the optimistic step of multiplicative weights (Rakhlin and Sridharan,
*Optimization, Learning, and Games with Predictable Sequences*, arXiv 1311.1869; Daskalakis and
Panageas, *Last-Iterate Convergence: Zero-Sum Games and Constrained Min-Max Optimization*, arXiv
1807.04252): the target is ``eta (2 P̂(y ≻ pi_t) − P̂(y ≻ pi_{t−1}) − 1/2)``, the newest preference
counted twice and the one before subtracted, so the step anticipates where the co-player moves.
Hedge's iterates circle an interior winner (and spiral out), so their average carries the
unfinished part of a cycle; in the exact dynamics the optimistic iterates close in on it, and
their average settles with them (sampled, a rare response's noisy target can still carry the last
iterate to a vertex it cannot leave: docs/results/arenarl.md). pi_{t−1}'s trainable weights are
kept (one copy, in the trainer state). On tree games P̂(y ≻ pi_{t−1}) comes from the same playout starts and seed with pi_{t−1} in the weights (common
random numbers); on free text each response is judged against ``samples`` fresh responses of
pi_{t−1} to its prompt, centred on ½ within its group (:meth:`SPPO._previous_text_rates`).

``explore: N`` (free text) adds N responses of pi_1 — the learner as training started, its
trainable weights kept in the trainer state — per prompt, each judged against the group's K
samples of pi_t and fitted beside them. The multiplicative-weights step is pointwise (each
response's own log-ratio and target), so for a model that can fit every target the responses it
is fitted on decide where the regression is measured, not its solution. Fitted on pi_t's samples
alone, a response pi_t no longer samples has no target and its mass cannot come back (a sampled
run can reach a vertex and stay).

``average`` keeps a second policy beside the last iterate: SPPO's guarantee is for the averaged
iterate, and per-state Hedge cycles. The last iterate still samples (SPPO needs pi_t); the kept
one is what snapshots save, and on tree games its exploitability is reported every iteration
(``sppo/kept_exploitability``) beside the last iterate's (``sppo/last_exploitability``).

- ``weights`` (or ``true``): the running mean of the weights after each iteration. Cheap, but a
  mean of weights is not the mean of the policies: on ``cyclic_preference`` the exact Hedge
  iterates' log-space mean stays 0.3–0.75 (L1) from the von Neumann winner while their mixture
  converges.
- ``policy``: the mixture (1/T) Σ_t pi_t itself, distilled as NFSP keeps its average policy
  (Heinrich and Silver, arXiv 1603.01121): every decision pi_t made in an iteration (the sampled
  responses of the free-text groups, the learner's recorded decisions on other games) enters a
  reservoir of ``average_buffer`` decisions, a uniform sample of all iterations so far, and the
  kept weights take ``average_steps`` maximum-likelihood steps on minibatches of
  ``average_batch`` from it (their own Adam, ``average_lr``; the kept model starts as pi_1).
- ``mixture``: the mixture (1/T) Σ_t pi_t kept exactly (:mod:`.mixture`): every ``mixture_every``
  iterations a snapshot of the trainable weights (an adapter learner's adapter), all of them or
  a seeded reservoir sample of ``mixture_size``. SPPO's guarantee (arXiv 2405.00675) is the
  no-regret one — the average iterate's distance to the winner is bounded by the average
  regret — and this is that average with no distillation noise. Its exact probabilities average
  the members' (reach-weighted on a tree), the kept agent (:meth:`SPPO.kept_agent`) plays one
  member per game, and a snapshot directory holds the last iterate with the members beside it
  in ``mixture/`` (no single set of weights is the mixture).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import Game
from arena.rng import derive_seed
from arena.trainer import Trajectory

from .base import LLMTrainer
from .mixture import copy_weights
from .rollout import own_decisions, playout_finals, playout_values


class SPPO(LLMTrainer):
    name = "sppo"
    defaults = {
        "eta": 1.0,
        "candidates": 0,
        "rollouts": 4,
        "epochs": 8,
        "judge": None,
        "against": "policy",
        "average": False,
        "samples": 4,
        "average_steps": 4,
        "average_batch": 64,
        "average_buffer": 4096,
        "average_lr": None,
        "mixture_every": 1,
        "mixture_size": 0,
        "optimism": False,
        "explore": 0,
    }

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        super().__init__(game, learners, **params)
        self.judge = None
        if self.p["judge"] is not None:
            from arena.loading import load_judge

            judge = self.p["judge"]
            self.judge = load_judge(dict(judge) if isinstance(judge, dict) else judge, game)
        elif game.spec.num_players != 2 or not game.spec.zero_sum:
            raise ArenaError(
                "trainer 'sppo' reads preferences from outcomes of a two-player zero-sum game; "
                "set judge: NAME for other games"
            )
        if self.p["against"] not in ("policy", "opponents"):
            raise ArenaError(f"trainer 'sppo': against must be 'policy' or 'opponents', got {self.p['against']!r}")
        if self.p["against"] == "opponents" and (self.judge is None or game.spec.num_players < 2):
            raise ArenaError("trainer 'sppo': against: opponents needs a judge and a game with co-players")
        if int(self.p["rollouts"]) < 1:
            raise ArenaError("trainer 'sppo': rollouts must be at least 1")
        self.scale = max(abs(game.spec.min_utility), abs(game.spec.max_utility)) or 1.0
        self.kept: dict[str, Any] | None = None
        self.kept_count = 0
        self.average = average_kind(self.p["average"])
        if self.average:
            self._save_last = self.agent.save
            self.agent.save = self.save_kept
        if self.average == "policy":
            self.keep()  # the distilled average starts as pi_1
            self.reservoir = Reservoir(int(self.p["average_buffer"]), derive_seed(int(self.p["seed"]), "sppo-avg"))
            self.average_optimizer: Any = None
        if not isinstance(self.p["optimism"], bool):
            raise ArenaError(f"trainer 'sppo': optimism must be true or false, got {self.p['optimism']!r}")
        self.optimism = self.p["optimism"]
        self.previous: dict[str, Any] | None = None  # pi_{t-1}'s weights, for the optimistic step
        explore = self.p["explore"]
        if isinstance(explore, bool) or not isinstance(explore, int) or explore < 0:
            raise ArenaError(f"trainer 'sppo': explore must be a whole number >= 0, got {explore!r}")
        if explore and not game.spec.text_decisions:
            raise ArenaError("trainer 'sppo': explore samples free-text responses; this game has no text decisions")
        self.explore = explore
        self.reference = copy_weights(self._params()) if explore else None  # pi_1: the learner as it starts
        if self.average == "mixture":
            from .mixture import SnapshotMixture

            seed = derive_seed(int(self.p["seed"]), "sppo-mixture")
            self.mixture = SnapshotMixture(self.p["mixture_every"], self.p["mixture_size"], seed)

    def _candidates(self, obs: Any, rng: np.random.Generator) -> list[int]:
        k = int(self.p["candidates"])
        acts = list(obs.legal_actions)
        if k <= 0 or k >= len(acts):
            return acts
        pol = self.agent.policy(obs) if self.agent.mode == "scored" else {a: 1 / len(acts) for a in acts}
        w = np.array([pol[a] for a in acts]) + 1e-9
        return [acts[i] for i in rng.choice(len(acts), size=k, replace=False, p=w / w.sum())]

    def preferences(self, trajectories: Sequence[Trajectory]) -> tuple[dict, int]:
        """{(prompt text, label tuple): (observation, {action: P̂})} and the number of games skipped."""
        starts, skipped = self._starts(trajectories)
        return self._preferences(*starts), skipped

    def _starts(self, trajectories: Sequence[Trajectory]) -> tuple[tuple[list, list, dict, int], int]:
        """The playouts' starts (recorded state, candidate, seat), their keys, one observation per
        key and the playouts' seed; and the number of games skipped."""
        rng = np.random.default_rng([int(self.p["seed"]), self.updates])
        starts, keys, seen = [], [], {}
        m = int(self.p["rollouts"])
        decisions, skipped = own_decisions(self.game, trajectories, self.agent.name)
        for st, step in decisions:
            obs = step.observation
            if obs.decision != "choice":
                continue
            key = (obs.text, tuple(obs.action_labels))
            seen.setdefault(key, obs)
            for a in self._candidates(obs, rng):
                for _ in range(m):
                    starts.append((st, a, step.player))
                    keys.append((key, a))
        return (starts, keys, seen, int(rng.integers(2**31))), skipped

    def _preferences(self, starts: list, keys: list, seen: dict, seed: int) -> dict:
        """P̂(y ≻ pi | x) per key and candidate, pi the policy in the live weights."""
        if self.judge is not None:  # the same playouts as the outcome version (same seed)
            return self._judged(starts, keys, seen, seed)
        values = playout_values(self.game, starts, self.agent, seed=seed) if starts else []
        sums: dict[tuple, list[float]] = {}
        for (key, a), v in zip(keys, values):
            sums.setdefault((key, a), []).append(v)
        prefs: dict[tuple, tuple[Any, dict[int, float]]] = {}
        for (key, a), vs in sums.items():
            q = float(np.mean(vs)) / self.scale
            prefs.setdefault(key, (seen[key], {}))[1][a] = (1.0 + q) / 2.0
        return prefs

    def _judged(self, starts: list, keys: list, seen: dict, seed: int) -> dict:
        """P̂ from the judge (module docstring): playout m of y against playout m of y', same state."""
        from arena.judge import Candidate, checked_compare
        from arena.trainer import Trajectory

        m = int(self.p["rollouts"])
        finals = playout_finals(self.game, starts, self.agent, seed=seed) if starts else []
        if self.p["against"] == "opponents":
            return self._judged_vs_opponents(starts, keys, seen, finals)
        # starts come in blocks: one recorded state, its candidates in order, m playouts each
        cands: dict[tuple[int, int], dict[int, list[Any]]] = {}
        owner: dict[tuple[int, int], tuple] = {}
        block = 0
        for idx, ((st, a, player), (key, _)) in enumerate(zip(starts, keys)):
            if idx and (starts[idx - 1][0] is not st):
                block += 1
            c = Candidate(Trajectory(0, 0, [], [], list(finals[idx].returns())), player, finals[idx])
            cands.setdefault((block, player), {}).setdefault(a, []).append(c)
            owner[(block, player)] = key
        pairs, where = [], []
        for b, by_action in cands.items():
            acts = list(by_action)
            for x in acts:
                for y in acts:
                    if x != y:
                        for k in range(m):
                            pairs.append((by_action[x][k], by_action[y][k]))
                            where.append((b, x, y))
        margins = checked_compare(self.judge, pairs) if pairs else []
        j: dict[tuple, list[float]] = {}
        for w, mg in zip(where, margins):
            j.setdefault(w, []).append((1.0 + mg) / 2.0)
        per_key: dict[tuple, dict[int, list[float]]] = {}
        for b, by_action in cands.items():
            key = owner[b]
            obs = seen[key]
            acts = list(by_action)
            if len(acts) == len(obs.legal_actions) and self.agent.mode == "scored":
                pol = self.agent.policy(obs)
                w = {y: pol[y] for y in acts}
            else:
                w = {y: 1.0 / len(acts) for y in acts}
            for x in acts:
                p_hat = sum(w[y] * (0.5 if y == x else float(np.mean(j[(b, x, y)]))) for y in acts)
                per_key.setdefault(key, {}).setdefault(x, []).append(p_hat)
        return {key: (seen[key], {a: float(np.mean(v)) for a, v in d.items()}) for key, d in per_key.items()}

    def _judged_vs_opponents(self, starts: list, keys: list, seen: dict, finals: list) -> dict:
        """P̂(y ≻ pi_t | x): the learner's seat against each co-player's seat of the playouts after y."""
        from arena.judge import Candidate, checked_compare
        from arena.trainer import Trajectory

        pairs, where = [], []
        for (_, _, player), key_action, final in zip(starts, keys, finals):
            traj = Trajectory(0, 0, [], [], list(final.returns()))
            me = Candidate(traj, player, final)
            for other in range(self.game.spec.num_players):
                if other != player:
                    pairs.append((me, Candidate(traj, other, final)))
                    where.append(key_action)
        margins = checked_compare(self.judge, pairs) if pairs else []
        sums: dict[tuple, list[float]] = {}
        for w, mg in zip(where, margins):
            sums.setdefault(w, []).append(mg)
        prefs: dict[tuple, tuple[Any, dict[int, float]]] = {}
        for (key, a), ms in sums.items():
            prefs.setdefault(key, (seen[key], {}))[1][a] = (1.0 + float(np.mean(ms))) / 2.0
        return prefs

    # -- the optimistic step's previous iterate ------------------------------------------------
    def _copy_params(self) -> dict[str, Any] | None:
        """pi_t's weights, kept after the update as the next one's pi_{t-1} (only with optimism)."""
        return copy_weights(self._params()) if self.optimism else None

    def previous_iterate(self) -> contextlib.AbstractContextManager[None]:
        """pi_{t-1} in the live weights (and the engine, which samples) for the block."""
        assert self.previous is not None
        return self._weights(self.previous, sync=True)

    @contextlib.contextmanager
    def _weights(self, weights: dict[str, Any], sync: bool = False) -> Iterator[None]:
        """``weights`` in the trainable parameters for the block (pushed to a vLLM engine too
        with ``sync``); the live ones come back after."""
        live = copy_weights(self._params())
        self._load(weights)
        if sync:
            self.model.sync()
        try:
            yield
        finally:
            self._load(live)
            if sync:
                self.model.sync()

    def _previous_text_rates(self, groups: list, explored: list, seed: int) -> tuple[list[float], list[float]]:
        """P̂(y ≻ pi_{t-1}) for every response of every group and every explored response — each
        judged against ``samples`` fresh responses of pi_{t-1} to the same prompt — centred so that
        a group's own responses average ½ (the explored ones shifted by their group's offset).
        The regression has no normaliser: its targets must average 0 under pi_t, as plain SPPO's
        do by construction (a group's win rates against itself average ½). These do not: pi_t
        tends to beat pi_{t-1}, and the uncentred surplus would lower every sampled response at
        once, moving mass to responses no group holds."""
        from .preference_text import cross_win_rates, sampled_opponents

        assert self.judge is not None
        with self.previous_iterate():
            others = sampled_opponents(self.game, self.agent, groups, int(self.p["samples"]), seed)
        rates = cross_win_rates(self.judge, groups, others)
        offsets = [w.mean() - 0.5 for w in rates]
        extra = cross_win_rates(self.judge, explored, others) if explored else []
        return (
            [float(x - o) for w, o in zip(rates, offsets) for x in w],
            [float(x - o) for w, o in zip(extra, offsets) for x in w],
        )

    def _explored(self, groups: list, seed: int) -> tuple[list, list[float]]:
        """``explore`` responses of pi_1 per prompt, and P̂(z ≻ pi_t) for each against its group
        (the group's K samples of pi_t)."""
        from .preference_text import cross_win_rates, sampled_opponents

        if not self.explore or not groups:
            return [], []
        assert self.judge is not None and self.reference is not None
        with self._weights(self.reference, sync=True):
            explored = sampled_opponents(self.game, self.agent, groups, self.explore, seed)
        return explored, [float(x) for w in cross_win_rates(self.judge, explored, groups) for x in w]

    # -- the kept (averaged) iterate -------------------------------------------------------------
    def _params(self) -> dict[str, Any]:
        return self.model.trainable_parameters()

    def fold(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        """After an iteration: the kept iterate takes in pi_t (module docstring, ``average``)."""
        if self.average == "weights":
            self.keep()
            return {}
        if self.average == "mixture":
            if self.mixture.due(self.updates):
                self.mixture.add(self._params(), self.updates)
            return {"sppo/mixture_members": float(len(self.mixture.snapshots))}
        if self.average != "policy":
            return {}
        from .tokens import learner_decisions

        for d in learner_decisions(trajectories, self.agent):
            self.reservoir.add(d)
        return {"sppo/average_nll": self.distil()}

    def distil(self) -> float:
        """``average_steps`` maximum-likelihood steps of the kept weights on the reservoir."""
        import torch

        from .tokens import action_logprobs

        if not self.reservoir.items:
            return float("nan")
        self._swap()
        try:
            if self.average_optimizer is None:
                lr = self.p["average_lr"] if self.p["average_lr"] is not None else self.p["lr"]
                self.average_optimizer = torch.optim.Adam(self.model.params, lr=float(lr))
            nll = 0.0
            for _ in range(int(self.p["average_steps"])):
                batch = self.reservoir.batch(int(self.p["average_batch"]))
                loss = -action_logprobs(self.model, batch, grad=True)[0].mean()
                self.model.step(loss, self.average_optimizer)
                nll = float(loss.detach())
        finally:
            self._swap()
        return nll

    def keep(self) -> None:
        """Fold the current weights into the running mean (the kept iterate)."""
        import torch

        now = self._params()
        self.kept_count += 1
        if self.kept is None:
            self.kept = copy_weights(now)
            return
        with torch.no_grad():
            for n, p in now.items():
                self.kept[n] += (p.detach() - self.kept[n]) / self.kept_count

    def _swap(self) -> None:
        """Exchange the live weights and the kept ones (twice restores)."""
        import torch

        assert self.kept is not None
        with torch.no_grad():
            for n, p in self._params().items():
                tmp = p.detach().clone()
                p.copy_(self.kept[n])
                self.kept[n] = tmp
        if self.model.base is not None:
            self.model.base.changed()  # an adapter's grouped stacks hold the weights just swapped out

    def kept_size(self) -> int:
        """How many members the kept policy mixes (1 for a kept set of weights or none)."""
        if self.average == "mixture":
            return max(1, len(self.mixture.snapshots))
        return 1

    @contextlib.contextmanager
    def kept_member(self, k: int) -> Iterator[None]:
        """Member ``k`` of the kept policy in the live weights for the block; the last iterate
        comes back after. Before any snapshot (or without ``average``) the member is the live one."""
        if self.average == "mixture" and self.mixture.snapshots:
            with self._weights(self.mixture.snapshots[k]):
                yield
            return
        if self.kept is None:
            yield
            return
        self._swap()
        try:
            yield
        finally:
            self._swap()

    def _load(self, weights: dict[str, Any]) -> None:
        import torch

        with torch.no_grad():
            for n, p in self._params().items():
                p.copy_(weights[n])
        if self.model.base is not None:
            self.model.base.changed()

    def kept_mean(self, measure: Callable[[], Any]) -> np.ndarray:
        """``measure()`` under each member of the kept policy, averaged: the kept policy's exact
        value of anything linear in its play (one decision's action or answer probabilities)."""
        values = []
        for k in range(self.kept_size()):
            with self.kept_member(k):
                values.append(np.asarray(measure(), dtype=float))
        return np.mean(values, axis=0)

    def kept_agent(self) -> Any:
        """The kept policy as an agent: one member per game, drawn from the game's stream. Its
        members are swapped into the trained model, so the agent must play that model."""
        from .mixture import KeptAgent

        if self.model.engine is not None or self.model.view is not None:
            raise ArenaError(
                "trainer 'sppo': the kept agent plays the trained transformers weights, and this "
                "agent plays a vLLM engine; save a snapshot and load llm:model=DIR/mixture instead"
            )
        return KeptAgent(self)

    def save_kept(self, directory: Any) -> None:
        """Snapshots hold the kept iterate (the agent keeps sampling from the last one). A kept
        mixture is no single set of weights: the directory holds the last iterate, and
        ``mixture/`` its members (``member-NNNN``, as the agent saves itself) and
        ``mixture.json`` (their iterations and equal weights)."""
        if self.average == "mixture":
            self._save_last(directory)
            self._save_mixture(Path(directory) / "mixture")
            return
        if self.kept is None:
            self._save_last(directory)
            return
        self._swap()
        try:
            self._save_last(directory)
        finally:
            self._swap()

    def _save_mixture(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        members = []
        for k in range(len(self.mixture.snapshots)):
            with self.kept_member(k):
                self._save_last(root / f"member-{k:04d}")
            members.append({"path": f"member-{k:04d}", "iteration": self.mixture.iterations[k]})
        n = max(1, len(members))
        manifest = {"members": members, "weights": [1.0 / n] * len(members), "snapshots_taken": self.mixture.seen}
        (root / "mixture.json").write_text(json.dumps(manifest, indent=2))

    def _exploitability(self, kept: bool) -> float:
        """The last iterate's exploitability, or the kept policy's: its members' behaviour
        policies mixed per game (reach-weighted, :func:`.mixture.behaviour_mixture`)."""
        from arena.exact.exploitability import exploitability, policy_array
        from arena.exact.tree import get_tree

        from .mixture import behaviour_mixture

        if not kept:
            return float(exploitability(self.game, self.agent))
        tree = get_tree(self.game)
        sigmas = []
        for k in range(self.kept_size()):
            with self.kept_member(k):
                sigmas.append(policy_array(self.game, self.agent, tree))
        return float(exploitability(self.game, behaviour_mixture(tree, sigmas), tree))

    def extra_state(self) -> dict[str, Any]:
        judge = self.judge.state_dict() if self.judge is not None else {}  # a noisy judge's draws resume too
        out = {"kept": dict(self.kept) if self.kept is not None else {}, "kept_count": self.kept_count, "judge": judge}
        if self.previous is not None:
            out["previous"] = dict(self.previous)
        if self.reference is not None:
            out["reference"] = dict(self.reference)
        if self.average == "mixture":
            out["mixture"] = self.mixture.state()
        if self.average == "policy":
            opt = self.average_optimizer.state_dict() if self.average_optimizer is not None else None
            reservoir = self.reservoir.state()
            reservoir["items"] = [dataclasses.asdict(d) for d in reservoir["items"]]  # plain data: a weights_only file
            out["average"] = {"reservoir": reservoir, "optimizer": opt}
        return out

    def load_extra_state(self, state: dict[str, Any]) -> None:
        kept = state.get("kept") or {}
        self.kept = {k: v.clone() for k, v in kept.items()} if kept else None
        self.kept_count = int(state.get("kept_count", 0))
        previous = state.get("previous")
        self.previous = copy_weights(previous) if previous else None
        if state.get("reference"):
            self.reference = copy_weights(state["reference"])
        if self.average == "mixture" and state.get("mixture"):
            self.mixture.load(state["mixture"])
        if self.average == "policy" and state.get("average"):
            from .tokens import Decision

            reservoir = dict(state["average"]["reservoir"])
            self.reservoir.load({**reservoir, "items": [Decision(**d) for d in reservoir["items"]]})
            if state["average"]["optimizer"] is not None:
                import torch

                self.average_optimizer = torch.optim.Adam(self.model.params)
                self.average_optimizer.load_state_dict(state["average"]["optimizer"])
        if self.judge is not None:
            self.judge.load_state_dict(state.get("judge", {}))

    def _logpi(self, items: list[tuple[Any, dict[int, float]]], grad: bool, model: Any = None) -> Any:
        """log pi(y|x) for every (x, candidate y) in ``items`` order, one tensor."""
        import torch

        pairs, spans = [], []
        for obs, cands in items:
            prompt = self.agent.backend.prompt_ids(self.agent.prompts.build(obs))
            labels = obs.action_labels
            conts = [self.agent.backend.encode(self.agent.prompts.continuation(lbl)) for lbl in labels]
            spans.append((len(pairs), len(labels), [obs.legal_actions.index(a) for a in cands]))
            pairs += [(prompt, c) for c in conts]
        seq = self.model.logprobs(pairs, grad=grad, model=model)
        out = []
        for start, n, idx in spans:
            row = seq[start : start + n]
            if self.agent.mode == "scored":
                row = torch.log_softmax(row / max(self.agent.temperature, 1e-6), dim=0)
            out.append(row[torch.tensor(idx, dtype=torch.long)])
        return torch.cat(out)

    def update_text(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        """SPPO on free text (module docstring): K sampled responses per prompt, P̂ from the
        judge's pairwise margins within the group, the regression on whole-response log-probs."""
        import torch

        from .preference_text import pair_margins, response_logprobs, sampled_groups, win_rates

        assert self.judge is not None
        seed = derive_seed(int(self.p["seed"]), "sppo-text", self.updates)
        groups, skipped = sampled_groups(self.game, self.agent, trajectories, int(self.p["samples"]), seed)
        p_hat = [float(x) for w in win_rates(groups, pair_margins(self.judge, groups)) for x in w]
        explored, p_explored = self._explored(groups, derive_seed(seed, "explore"))
        trajs = [c.trajectory for g in groups for c in g]
        self.updates += 1
        if not trajs:
            return {"sppo/prompts": 0.0, "sppo/skipped_games": float(skipped)}
        step_p = p_hat + p_explored
        if self.optimism and self.previous is not None:
            before, before_explored = self._previous_text_rates(groups, explored, derive_seed(seed, "previous"))
            step_p = [2 * x - b for x, b in zip(step_p, before + before_explored)]
        fitted = trajs + [c.trajectory for g in explored for c in g]
        now = self._copy_params()
        with torch.no_grad():
            ref = response_logprobs(self.model, self.agent, fitted, grad=False)
        target = torch.tensor([float(self.p["eta"]) * (x - 0.5) for x in step_p], dtype=ref.dtype, device=ref.device)
        losses = []
        for _ in range(int(self.p["epochs"])):
            loss = ((response_logprobs(self.model, self.agent, fitted, grad=True) - ref - target) ** 2).mean()
            self.model.step(loss)
            losses.append(float(loss.detach()))
        self.model.sync()
        self.previous = now
        kept = self.fold(trajs)
        return {
            **kept,
            "sppo/loss_first": losses[0],
            "sppo/loss_last": losses[-1],
            "sppo/prompts": float(len(groups)),
            "sppo/p_hat_spread": float(np.mean(np.abs(np.array(p_hat) - 0.5))),
            "sppo/skipped_games": float(skipped),
        }

    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        import torch

        mine = all(all(seat == self.agent.name for seat in t.seats) for t in trajectories)
        if self.game.spec.text_decisions and mine and trajectories:  # whole responses, every seat the learner's
            return self.update_text(trajectories)
        starts, skipped = self._starts(trajectories)
        prefs = self._preferences(*starts)
        if not prefs:
            self.updates += 1
            return {"sppo/prompts": 0.0, "sppo/skipped_games": float(skipped)}
        items = [prefs[k] for k in sorted(prefs)]
        p_hat = [p for _, c in items for p in c.values()]
        step_p = p_hat
        if self.optimism and self.previous is not None:
            with self.previous_iterate():  # the same playout starts and seed: common random numbers
                before = self._preferences(*starts)
            step_p = [2 * p - before[k][1][a] for k in sorted(prefs) for a, p in prefs[k][1].items()]
        now = self._copy_params()
        eta = float(self.p["eta"])
        target = torch.tensor([eta * (p - 0.5) for p in step_p], dtype=torch.float32)
        with torch.no_grad():
            ref = self._logpi(items, grad=False)
        target = target.to(ref.device)  # device: cuda
        losses = []
        for _ in range(int(self.p["epochs"])):
            logp = self._logpi(items, grad=True)
            loss = ((logp - ref - target) ** 2).mean()
            self.model.step(loss)
            losses.append(float(loss.detach()))
        self.model.sync()
        self.previous = now
        self.updates += 1
        extra: dict[str, float] = {}
        if self.average:
            extra = self.fold(trajectories)
            if self.game.spec.tree and self.agent.has_policy:
                extra |= {
                    "sppo/kept_exploitability": self._exploitability(kept=True),
                    "sppo/last_exploitability": self._exploitability(kept=False),
                }
        return {
            **extra,
            "sppo/loss_first": losses[0],
            "sppo/loss_last": losses[-1],
            "sppo/prompts": float(len(items)),
            "sppo/p_hat_spread": float(np.mean(np.abs(np.array(p_hat) - 0.5))),
            "sppo/skipped_games": float(skipped),
        }


def average_kind(value: Any) -> str:
    """``average``'s kind: '' (none), 'weights', 'policy' or 'mixture'; one clear error otherwise."""
    if value is None or value is False or value in ("false", "none"):
        return ""
    if value is True or value in ("true", "weights"):
        return "weights"
    if value in ("policy", "mixture"):
        return str(value)
    raise ArenaError(f"trainer 'sppo': average must be false, weights (true), policy or mixture, got {value!r}")


class Reservoir:
    """A uniform sample of at most ``size`` of every item ever added (reservoir sampling, as
    NFSP's average-policy memory), seeded, so a resumed run keeps the same sample."""

    def __init__(self, size: int, seed: int) -> None:
        if size < 1:
            raise ArenaError(f"trainer 'sppo': average_buffer must be at least 1, got {size}")
        self.size, self.seen, self.items = size, 0, []
        self.rng = np.random.default_rng(seed)

    def add(self, item: Any) -> None:
        self.seen += 1
        if len(self.items) < self.size:
            self.items.append(item)
            return
        k = int(self.rng.integers(self.seen))
        if k < self.size:
            self.items[k] = item

    def batch(self, n: int) -> list[Any]:
        idx = self.rng.integers(len(self.items), size=min(n, len(self.items)))
        return [self.items[i] for i in idx]

    def state(self) -> dict[str, Any]:
        return {"seen": self.seen, "items": list(self.items), "rng": self.rng.bit_generator.state}

    def load(self, state: dict[str, Any]) -> None:
        self.seen, self.items = int(state["seen"]), list(state["items"])
        self.rng.bit_generator.state = state["rng"]


def make_sppo(game: Game, learners: Sequence[Any], **params: Any) -> SPPO:
    return SPPO(game, learners, **params)
