"""``proposer_solver``: self-play task synthesis with a verifier (RLVR without a fixed task set).

One LLM plays two roles, told apart by a role prefix (``role: proposer`` / ``role: solver``):

1. **propose** — ``proposals`` tasks are sampled after the proposer prefix; each goes through the
   game's verifier (:func:`arena.games.arithmetic.parse_task`: only ``+ - *`` on in-range integer
   literals, bounded depth; names, calls and anything else are rejected) and is then dropped,
   with ``invalid_reward``, when it is **leaky** (the answer is one of its literals), has a
   **held-out shape** (the evaluation's structures never enter training) or is a **duplicate**
   of an earlier proposal of the batch (same normalised AST: ``+`` and ``*`` operands sorted);
2. **solve** — every kept task is answered ``group`` times (G) by the same model after the solver
   prefix; each answer's reward is the verifier's 0/1; the solver advantage is the reward minus
   its group's mean (groups the solver always or never solves carry no gradient);
3. **reward the proposer** at the solver's frontier, from the solve rate p over the G answers:
   ``intermediate`` — ``4p(1-p)`` (Search Self-play, arXiv 2510.18821; R-Zero, arXiv
   2508.05004: the challenger is paid near the solver's capability edge); ``band`` — 1 iff
   ``band[0] <= p <= band[1]`` (SvS, arXiv 2508.14029: 1..5 correct of 8); ``one_minus_acc`` —
   ``1 - p``. **Diversity**: a kept task whose shape (``(n+n)*n``) occurred more than
   ``shape_cap`` times among the last ``shape_window`` kept tasks has its reward scaled by
   ``1 - shape_penalty`` (scaled, not reduced: a kept task never earns less than a rejected one,
   whose ``invalid_reward`` is below every kept task's, or the penalty would teach the proposer
   to write nonsense). The proposer advantage is its reward minus the batch mean;
4. one clipped policy-gradient step (:meth:`LLMTrainer.policy_gradient_step`) on the solver's and
   the proposer's decisions together.

``mode: fixed`` is plain RLVR, the ablation: no proposer, and the tasks are those the league
played for the learner (the game's ``train`` split, drawn by its chance stream) — same G, same
group advantage, same single update per step. Either way the league's games also give
``ps/league_solve_rate`` (one answer per played task).

Resume: the shape window and the update count are in ``state_dict``; every random stream is
derived from ``seed`` and the update count, so a resumed run draws what the unbroken run would.
"""

from __future__ import annotations

from collections import Counter, deque
from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import Game
from arena.trainer import Trajectory

from .base import PG_DEFAULTS, LLMTrainer
from .tokens import Decision

MODES = ("selfplay", "fixed")
PROPOSER_REWARDS = ("intermediate", "band", "one_minus_acc")
REJECTIONS = ("invalid", "leaky", "heldout", "duplicate")


def intermediate_reward(p: float) -> float:
    """``4p(1-p)``: 1 at p = 1/2, 0 when the solver always or never solves the task."""
    return 4.0 * p * (1.0 - p)


def band_reward(p: float, lo: float = 1 / 8, hi: float = 5 / 8) -> float:
    """SvS: 1 iff the solve rate lies in ``[lo, hi]`` (with G = 8: 1..5 correct)."""
    return 1.0 if lo - 1e-9 <= p <= hi + 1e-9 else 0.0


def proposer_reward(kind: str, p: float, band: Sequence[float] = (1 / 8, 5 / 8)) -> float:
    if kind == "intermediate":
        return intermediate_reward(p)
    if kind == "band":
        return band_reward(p, float(band[0]), float(band[1]))
    return 1.0 - p


class ShapeWindow:
    """The shapes of the last ``size`` kept tasks; a shape seen more than ``cap`` times is over-used."""

    def __init__(self, size: int, cap: int) -> None:
        self.size, self.cap = size, cap
        self.recent: deque[str] = deque(maxlen=size)

    def overused(self, shape: str) -> bool:
        return Counter(self.recent)[shape] > self.cap

    def add(self, shapes: Sequence[str]) -> None:
        self.recent.extend(shapes)


class ProposerSolver(LLMTrainer):
    name = "proposer_solver"
    game: Any  # an arithmetic game (checked in __init__): its verifier and prompts are used here
    defaults = {
        **PG_DEFAULTS,
        "mode": "selfplay",
        "proposals": 16,
        "group": 8,
        "reward": "intermediate",
        "band": [1 / 8, 5 / 8],
        "invalid_reward": -0.5,
        "shape_window": 64,
        "shape_cap": 8,
        "shape_penalty": 0.5,
        "proposer_weight": 1.0,
        "proposer_tokens": 24,
        "temperature": 1.0,
    }

    def __init__(self, game: Game, learners: Sequence[Any], **params: Any) -> None:
        super().__init__(game, learners, **params)
        p = self.p
        _check_params(game, p)
        self.window = ShapeWindow(int(p["shape_window"]), int(p["shape_cap"]))

    # -- prompts -----------------------------------------------------------------------------------
    def solver_prompt(self, node: Any) -> str:
        from arena.agent import Observation

        return str(self.agent.prompts.build(Observation(self.game.state_for(node), 0, None, self.game.spec.full_name)))

    def proposer_prompt(self) -> str:
        """The solver's prompt for a placeholder task, cut where the task would start, with the
        proposer's role line: the model writes a task where it has only ever read one."""
        from arena.agent import Observation
        from arena.games.arithmetic import PROPOSER_PREFIX, SOLVER_PREFIX

        state = self.game.state_for("1+1")
        text = str(self.agent.prompts.build(Observation(state, 0, None, self.game.spec.full_name)))
        cut = text.index(SOLVER_PREFIX + state.task)
        return text[:cut] + PROPOSER_PREFIX.rstrip(" ") + " "

    def _generate(self, prompts: list[str], max_tokens: int, stream: int) -> list[Any]:
        rng = np.random.default_rng([int(self.p["seed"]), self.updates, stream])
        return self.agent.backend.generate(
            prompts,
            max_tokens=max_tokens,
            temperature=float(self.p["temperature"]),
            seeds=[int(s) for s in rng.integers(2**31, size=len(prompts))],
            stop=["\n"],
        )

    # -- the two roles -------------------------------------------------------------------------------
    def propose(self) -> tuple[list[Any], list[Any], list[str | None]]:
        """Sampled proposals, their trees (None when rejected) and why each was rejected."""
        from arena.games.arithmetic import InvalidTask, leaks_answer, normal_form, shape_of

        gens = self._generate([self.proposer_prompt()] * int(self.p["proposals"]), int(self.p["proposer_tokens"]), 1)
        seen: set[str] = set()
        nodes: list[Any] = []
        why: list[str | None] = []
        for g in gens:
            try:
                node = self.game.parse(g.text)
            except InvalidTask:
                nodes.append(None)
                why.append("invalid")
                continue
            key = normal_form(node)
            reason = (
                "leaky"
                if leaks_answer(node)
                else "heldout"
                if self.game.is_heldout_shape(shape_of(node), _depth(node))
                else "duplicate"
                if key in seen
                else None
            )
            seen.add(key)
            nodes.append(None if reason else node)
            why.append(reason)
        return gens, nodes, why

    def solve(self, tasks: list[Any]) -> tuple[list[Any], np.ndarray]:
        """``group`` answers per task; the 0/1 verifier rewards as a (tasks, group) array."""
        from arena.games.arithmetic import check_answer

        g = int(self.p["group"])
        prompts = [self.solver_prompt(t) for t in tasks for _ in range(g)]
        gens = self._generate(prompts, int(self.agent.max_text_tokens), 2) if prompts else []
        rewards = np.array(
            [float(check_answer(t, gen.text)) for t, gen in zip([t for t in tasks for _ in range(g)], gens)]
        )
        return gens, rewards.reshape(len(tasks), g)

    def league_tasks(self, trajectories: Sequence[Trajectory]) -> tuple[list[Any], list[float]]:
        """The tasks the league played for the learner, and the reward of its recorded answer."""
        from arena.games.arithmetic import SOLVER_PREFIX

        tasks, rewards = [], []
        for traj in trajectories:
            for step in traj.steps:
                if traj.seats[step.player] != self.agent.name:
                    continue
                line = str(step.observation.text).split("\n")[-1]
                tasks.append(self.game.parse(line[len(SOLVER_PREFIX.split("\n")[-1]) :]))
                rewards.append(float(traj.returns[step.player]))
        return tasks, rewards

    # -- the update ----------------------------------------------------------------------------------
    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        from arena.games.arithmetic import shape_of

        league, league_r = self.league_tasks(trajectories)
        out: dict[str, float] = {"ps/league_solve_rate": float(np.mean(league_r)) if league_r else 0.0}
        decisions: list[Decision] = []
        advantages: list[float] = []
        if self.p["mode"] == "fixed":
            tasks = league
        else:
            gens, nodes, why = self.propose()
            tasks = [n for n in nodes if n is not None]
        sgens, rewards = self.solve(tasks)
        g = int(self.p["group"])
        for i, gen in enumerate(sgens):
            decisions.append(_decision(gen, len(decisions)))
            advantages.append(float(rewards[i // g, i % g] - rewards[i // g].mean()))
        rates = rewards.mean(axis=1) if len(tasks) else np.zeros(0)
        out.update(_solver_stats(rewards, sgens))
        if self.p["mode"] == "selfplay":
            r, stats = self.proposer_rewards(nodes, why, rates)
            base = float(np.mean(r))
            w = float(self.p["proposer_weight"])
            for gen, x in zip(gens, r):
                decisions.append(_decision(gen, len(decisions)))
                advantages.append(w * (x - base))
            out.update(stats)
            self.window.add([shape_of(t) for t in tasks])
        pg = self.policy_gradient_step(decisions, advantages)
        out.update({f"ps/{k}": v for k, v in pg.items()})
        return out

    def proposer_rewards(
        self, nodes: list[Any], why: list[str | None], rates: np.ndarray
    ) -> tuple[list[float], dict[str, float]]:
        """Each proposal's reward (frontier reward minus the over-used-shape penalty; rejected:
        ``invalid_reward``) and the proposer's statistics."""
        from arena.games.arithmetic import shape_of

        kind, band = str(self.p["reward"]), self.p["band"]
        out, k, penalised = [], 0, 0.0
        for node in nodes:
            if node is None:
                out.append(float(self.p["invalid_reward"]))
                continue
            x = proposer_reward(kind, float(rates[k]), band)
            if self.window.overused(shape_of(node)):
                x *= 1.0 - float(self.p["shape_penalty"])
                penalised += 1.0
            out.append(x)
            k += 1
        kept = [n for n in nodes if n is not None]
        n = max(1, len(nodes))
        stats = {f"ps/{r}_rate": sum(w == r for w in why) / n for r in REJECTIONS}
        stats.update(
            {"ps/valid_rate": len(kept) / n, "ps/proposer_reward": float(np.mean(out)), "ps/shape_penalised": penalised}
        )
        if kept:  # about the kept tasks: left out of a step that kept none
            stats.update(
                {
                    "ps/proposed_solve_rate": float(rates.mean()),
                    "ps/in_band_frac": float(np.mean([band_reward(float(x), *map(float, band)) for x in rates])),
                    "ps/distinct_shape_ratio": len({shape_of(t) for t in kept}) / len(kept),
                    "ps/mean_depth": float(np.mean([_depth(t) for t in kept])),
                }
            )
        return out, stats

    def extra_state(self) -> dict[str, Any]:
        return {"shapes": list(self.window.recent)}

    def load_extra_state(self, state: dict[str, Any]) -> None:
        self.window.recent.clear()
        self.window.add(list(state.get("shapes", [])))


def _depth(node: Any) -> int:
    from arena.games.arithmetic import depth_of

    return depth_of(node)


def _decision(gen: Any, i: int) -> Decision:
    lps = gen.token_logprobs
    return Decision(
        i, 0, 0, list(gen.prompt_ids), [list(gen.completion_ids)], 0, False, 1.0, float(sum(lps)) if lps else None
    )


def _solver_stats(rewards: np.ndarray, gens: Sequence[Any]) -> dict[str, float]:
    lps = [x for g in gens for x in (g.token_logprobs or [])]
    n = rewards.size
    return {
        "ps/tasks": float(rewards.shape[0]),
        "ps/solver_reward": float(rewards.mean()) if n else 0.0,
        "ps/solver_informative_groups": float(((rewards.min(axis=1) != rewards.max(axis=1)).sum()) if n else 0.0),
        "ps/solver_token_entropy": -float(np.mean(lps)) if lps else 0.0,
    }


def _check_params(game: Game, p: dict[str, Any]) -> None:
    """One clear error per bad setting."""
    from arena.games.arithmetic import Arithmetic

    def bad(key: str, why: str) -> ArenaError:
        return ArenaError(f"trainer 'proposer_solver': {key} {why}, not {p[key]!r}")

    if not isinstance(game, Arithmetic):
        raise ArenaError(
            f"trainer 'proposer_solver' needs a game with a task verifier (arithmetic), not '{game.spec.full_name}'"
        )
    if p["mode"] not in MODES:
        raise bad("mode", f"must be one of {', '.join(MODES)}")
    if p["reward"] not in PROPOSER_REWARDS:
        raise bad("reward", f"must be one of {', '.join(PROPOSER_REWARDS)}")
    band = p["band"]
    if not (isinstance(band, (list, tuple)) and len(band) == 2 and 0 <= float(band[0]) <= float(band[1]) <= 1):
        raise bad("band", "must be [lo, hi] with 0 <= lo <= hi <= 1")
    if int(p["group"]) < 2:
        raise bad("group", "must be at least 2 solver samples per task")
    if int(p["proposals"]) < 1:
        raise bad("proposals", "must be at least 1")
    if not 0.0 <= float(p["shape_penalty"]) <= 1.0:
        raise bad("shape_penalty", "must be in [0, 1] (the share of an over-used shape's reward taken away)")
    if float(p["invalid_reward"]) > 0.0:
        raise bad("invalid_reward", "must be <= 0 (a rejected task may not beat a kept one)")
    if int(p["shape_window"]) < 1 or int(p["shape_cap"]) < 0:
        raise ArenaError("trainer 'proposer_solver': shape_window must be >= 1 and shape_cap >= 0")
    if float(p["temperature"]) <= 0:
        raise bad("temperature", "must be > 0 (the proposer and solver sample)")
    if int(p["proposer_tokens"]) < 1:
        raise bad("proposer_tokens", "must be >= 1")


def make_proposer_solver(game: Game, learners: Sequence[Any], **params: Any) -> ProposerSolver:
    return ProposerSolver(game, learners, **params)
