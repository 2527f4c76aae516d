"""``open_task``: an open-ended one-line text task whose quality only a hidden scorer knows.

Why: ArenaRL and preference trainers are for tasks without a verifiable reward. To *measure*
whether they work, the benchmark still needs a ground truth the trainer cannot see. Here a
chance node draws one of ``instances`` task instances ("Task 3: write a one-line plan to
organise a picnic."); the player answers with one line of text (at most ``length``
characters). Its hidden quality, in [0, 1], is a fixed function drawn from ``secret`` whose
**shape** (``shape``) says what it depends on (:data:`SHAPES`; ``L`` = ``length``):

- ``chars`` (default): every character is worth ``0.6`` if it is in a shared hidden set of 10
  "good" characters plus ``0.4`` if it is in the instance's hidden theme set (3), summed and
  divided by ``L`` — which characters appear, not their order;
- ``pairs``: every *adjacent pair* is worth ``0.6`` if it is one of 80 shared hidden bigrams
  plus ``0.4`` if it is one of the instance's 30, divided by ``L − 1`` — which character
  follows which;
- ``order``: an adjacent pair (a, b) is worth 1 if b is one of the 3 characters after a on a
  hidden cyclic order of the 27 characters, divided by ``L − 1`` — a chain through the alphabet;
- ``position``: character k is worth 1 if it is in position k's own hidden set (6), divided by
  ``L`` — what goes where;
- ``length``: each instance has a hidden target length t ∈ [L/4, L]; good characters (the shared
  set) among the first t count +1, every character beyond t −1, divided by t and clipped at 0 —
  stop at the right length;
- ``themes``: only the instance's hidden theme set (5 characters) counts, +1 each, divided by
  ``L`` — the answer must depend on the prompt.

:data:`DEVELOPMENT_SHAPES` are the ones settings may be chosen on; :data:`HELD_OUT_SHAPES`
are for checking them only.

The trainer's view has no exact check: the game's returns are 0 (``reveal=false``, default;
``reveal=true`` makes the return the hidden quality, e.g. for leaderboards). Judges read the
quality through :meth:`OpenTask.judge_score` (the ``scorer`` judge's game metric, optionally
with noise) and learner metrics through :meth:`OpenTask.agent_metrics` (``true_score``: the
mean quality of the agent's answers to every instance, ``probe_samples`` each).
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from arena.errors import ArenaError
from arena.game import CHANCE, TERMINAL, Action, Game, GameEntry, GameSpec, IllegalActionError, State, decision_struct
from arena.hookspecs import hookimpl

GOALS = (
    "organise a picnic",
    "plan a trip",
    "cook dinner",
    "fix a bike",
    "learn a song",
    "paint a room",
    "write a report",
    "clean a garage",
    "train for a race",
    "host a party",
    "start a garden",
    "move house",
    "study for an exam",
    "build a shelf",
    "teach a class",
    "launch a website",
)
ALPHABET = string.ascii_lowercase + " "
SHAPES = ("chars", "pairs", "order", "position", "length", "themes")
"""What the hidden quality depends on (module docstring)."""
DEVELOPMENT_SHAPES = ("chars", "pairs", "position")
"""Shapes on which a method's settings may be chosen."""
HELD_OUT_SHAPES = ("order", "length", "themes")
"""Shapes never used to choose settings: they only check what was chosen on the others."""
DEFAULTS: dict[str, Any] = {
    "instances": 16,
    "length": 24,
    "secret": 0,
    "reveal": False,
    "probe_samples": 4,
    "shape": "chars",
}


class OpenTaskState(State):
    def __init__(self, game: "OpenTask") -> None:
        self.game = game
        self.instance: int | None = None
        self.answer: str | None = None

    def current_player(self) -> int:
        if self.instance is None:
            return CHANCE
        return TERMINAL if self.answer is not None else 0

    def chance_outcomes(self) -> list[tuple[int, float]]:
        n = self.game.instances
        return [(i, 1.0 / n) for i in range(n)]

    def legal_actions(self, player: int | None = None) -> list[int]:
        return list(range(self.game.instances)) if self.instance is None else []

    def decision_kind(self, player: int) -> Any:
        return "text"

    def max_text_length(self, player: int) -> int:
        return self.game.length

    def apply_action(self, action: Action) -> None:
        if self.instance is None:
            if isinstance(action, str) or not 0 <= int(action) < self.game.instances:
                raise IllegalActionError(f"chance outcome {action!r} is not an instance")
            self.instance = int(action)
        elif self.answer is None:
            if not isinstance(action, str):
                raise IllegalActionError("open_task expects a text answer")
            self.answer = action[: self.game.length]
        else:
            raise IllegalActionError("the task is over")

    def returns(self) -> list[float]:
        if self.answer is None or not self.game.reveal:
            return [0.0]
        return [self.game.quality(self.instance or 0, self.answer)]

    def clone(self) -> "OpenTaskState":
        c = OpenTaskState(self.game)
        c.instance, c.answer = self.instance, self.answer
        return c

    def information_state_key(self, player: int) -> str:
        return f"{self.instance}|{self.answer}"

    def observation_text(self, player: int) -> str:
        i = self.instance or 0
        text = f"Task {i}: write a one-line plan to {GOALS[i % len(GOALS)]}."
        return text if self.answer is None else f"{text}\nAnswer: {self.answer}"

    def observation_struct(self, player: int) -> dict[str, Any]:
        i = self.instance or 0
        out = decision_struct(self, player)
        out.update(game="open_task", task=i, goal=GOALS[i % len(GOALS)], answer=self.answer)
        return out

    def observation_tensor(self, player: int) -> np.ndarray:
        out = np.zeros(self.game.instances, dtype=np.float32)
        if self.instance is not None:
            out[self.instance] = 1.0
        return out

    def num_players(self) -> int:
        return 1

    def summary(self) -> str:
        return f"task {self.instance}: {self.answer!r}"


class OpenTask(Game):
    def __init__(
        self,
        instances: int = 16,
        length: int = 24,
        secret: int = 0,
        reveal: bool = False,
        probe_samples: int = 4,
        shape: str = "chars",
    ) -> None:
        if not 1 <= int(instances) <= len(GOALS) or int(length) < 1 or int(probe_samples) < 1:
            raise ArenaError(f"open_task: instances must be 1..{len(GOALS)}, length and probe_samples >= 1")
        if shape not in SHAPES:
            raise ArenaError(f"open_task: shape must be one of {', '.join(SHAPES)}, not {shape!r}")
        if shape in ("pairs", "order") and int(length) < 2:
            raise ArenaError(f"open_task: shape {shape!r} needs length >= 2")
        self.instances, self.length, self.secret = int(instances), int(length), int(secret)
        self.reveal, self.probe_samples, self.shape = bool(reveal), int(probe_samples), str(shape)
        rng = np.random.default_rng([self.secret, 16])
        letters = list(ALPHABET)
        self.good = frozenset(rng.choice(letters, size=10, replace=False).tolist())
        self.themes = [frozenset(rng.choice(letters, size=3, replace=False).tolist()) for _ in range(self.instances)]
        self._draw_shape(np.random.default_rng([self.secret, 16, SHAPES.index(self.shape)]))
        self.spec = GameSpec(
            name="open_task",
            num_players=1,
            num_distinct_actions=self.instances,
            observation_shape=(self.instances,),
            min_utility=0.0,
            max_utility=1.0,
            zero_sum=False,
            max_game_length=2,
            text_decisions=True,
            params={
                k: v
                for k, v in (
                    ("instances", self.instances),
                    ("length", self.length),
                    ("secret", self.secret),
                    ("reveal", self.reveal),
                    ("probe_samples", self.probe_samples),
                    ("shape", self.shape),
                )
                if v != DEFAULTS[k]
            },
            description="open-ended one-line text task with a hidden quality (for judges and ArenaRL)",
        )

    def new_initial_state(self, seed: int | None = None) -> OpenTaskState:
        return OpenTaskState(self)

    def _draw_shape(self, rng: np.random.Generator) -> None:
        """The shape's own hidden parameters (the ``chars`` sets are drawn for every shape)."""
        bigrams = [a + b for a in ALPHABET for b in ALPHABET]
        n, L = self.instances, self.length
        self.good_pairs = frozenset(rng.choice(bigrams, size=80, replace=False).tolist())
        self.theme_pairs = [frozenset(rng.choice(bigrams, size=30, replace=False).tolist()) for _ in range(n)]
        cycle = rng.permutation(len(ALPHABET))
        self.successors = {
            ALPHABET[cycle[i]]: frozenset(ALPHABET[cycle[(i + d) % len(cycle)]] for d in (1, 2, 3))
            for i in range(len(cycle))
        }
        self.position_sets = [frozenset(rng.choice(list(ALPHABET), size=6, replace=False).tolist()) for _ in range(L)]
        self.targets = [int(t) for t in rng.integers(max(1, L // 4), L + 1, size=n)]
        self.theme5 = [frozenset(rng.choice(list(ALPHABET), size=5, replace=False).tolist()) for _ in range(n)]

    def quality(self, instance: int, answer: str) -> float:
        """The hidden ground truth of ``answer`` to ``instance``, in [0, 1] (module docstring)."""
        a, L = answer.lower()[: self.length], self.length
        if self.shape == "chars":
            theme = self.themes[instance]
            return sum(0.6 * (c in self.good) + 0.4 * (c in theme) for c in a) / L
        if self.shape == "pairs":
            tp = self.theme_pairs[instance]
            pairs = [a[k : k + 2] for k in range(len(a) - 1)]
            return sum(0.6 * (p in self.good_pairs) + 0.4 * (p in tp) for p in pairs) / (L - 1)
        if self.shape == "order":
            return sum(a[k + 1] in self.successors.get(a[k], ()) for k in range(len(a) - 1)) / (L - 1)
        if self.shape == "position":
            return sum(c in self.position_sets[k] for k, c in enumerate(a)) / L
        if self.shape == "length":
            t = self.targets[instance]
            return max(0.0, sum(c in self.good for c in a[:t]) - max(0, len(a) - t)) / t
        return sum(c in self.theme5[instance] for c in a) / L

    def judge_score(self, state: State, player: int) -> float:
        """The hidden quality of a finished answer (what the ``scorer`` judge reads)."""
        assert isinstance(state, OpenTaskState)
        if state.answer is None:
            raise ArenaError("open_task: judge_score needs a finished answer")
        return self.quality(state.instance or 0, state.answer)

    def agent_metrics(self, agent: Any) -> dict[str, float]:
        """``true_score``: mean hidden quality of the agent's answers, ``probe_samples`` per
        instance (fixed streams, so two agents are probed on the same draws)."""
        from arena.agent import Observation
        from arena.playing.match import game_rng

        obs, states = [], []
        for i in range(self.instances):
            for k in range(self.probe_samples):
                s = self.new_initial_state()
                s.apply_action(i)
                states.append(s)
                obs.append(Observation(s, 0, game_rng(987_654_321, i * self.probe_samples + k), self.spec.full_name))
        answers = agent.act_batch(obs)
        scores = [self.quality(s.instance or 0, str(a)[: self.length]) for s, a in zip(states, answers)]
        return {"true_score": float(np.mean(scores))}


@hookimpl
def arena_games() -> list[GameEntry]:
    return [
        GameEntry(
            "open_task",
            OpenTask,
            "open-ended one-line text task with a hidden quality only a scorer knows (ArenaRL benchmark)",
            dict(DEFAULTS),
        )
    ]
