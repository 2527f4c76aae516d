"""``arithmetic``: integer expressions over ``+``, ``-``, ``*`` with an exact verifier.

A single-seat solver game for verifiable-reward training (RLVR) and for proposer/solver self-play
(:mod:`arena.plugins.trainers.llm.proposer_solver`). The chance stream draws a task: a depth
``d`` (uniform over the depths the split has), an expression *shape* of that depth (uniform over
the split's shapes, e.g. ``(n+n)*n``), then one operand in ``[0, max_operand]`` per leaf. The
player answers with text; the return is 1 when the text is exactly the integer value, else 0.

**Verifier.** A task text is checked by :func:`parse_task`: only the characters
``0-9 + - * ( )`` and spaces (so no names, calls, attributes or comments ever reach the parser),
at most :data:`MAX_TASK_CHARS` characters, then ``ast.parse(mode="eval")`` and a walk that
accepts nothing but ``BinOp`` over ``Add``/``Sub``/``Mult`` and non-negative ``int`` literals in
range, of bounded depth. The value comes from our own tree walk (never ``eval``). An answer is
checked by :func:`check_answer`: an optional sign and digits, compared as ints.

**Held-out split by structure.** Every shape of depth >= 2 is assigned to ``train`` or
``heldout`` by a stable hash (``heldout_fraction`` of them held out, ``split_seed`` picks
which), and every shape of a depth in ``heldout_depths`` is held out; depth-1 shapes are
training shapes unless their depth is held out. No held-out shape is ever drawn by the
``train`` split, so a learner trained on it never sees the held-out structures.
:meth:`Arithmetic.agent_metrics` measures an agent on a fixed grid of held-out tasks (pass@1,
pass@k over ``probe_samples`` samples, per-token entropy of its answers) and on a training grid.

Shapes are enumerated, so ``max_depth`` is 1..3 (3 gives 7,203 shapes).
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Union

import numpy as np

from arena.agent import Agent, AgentEntry, Observation
from arena.errors import ArenaError
from arena.game import CHANCE, TERMINAL, Action, Game, GameEntry, GameSpec, IllegalActionError, State, decision_struct
from arena.hookspecs import hookimpl

OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
PREC = {"+": 1, "-": 1, "*": 2}
ALLOWED_CHARS = frozenset("0123456789+-*() ")
MAX_TASK_CHARS = 80
ANSWER = re.compile(r"[+-]?\d{1,12}")
SPLITS = ("train", "heldout")
SOLVER_PREFIX = "role: solver\ntask: "
PROPOSER_PREFIX = "role: proposer\ntask: "
"""Role prefixes: the solver reads ``SOLVER_PREFIX + task``; a proposer writes the task after
``PROPOSER_PREFIX``."""

Node = Union[int, tuple[str, "Node", "Node"]]
"""An expression tree: an int leaf, or ``(op, left, right)``."""


class InvalidTask(ValueError):
    """A task text the verifier rejects (the message says why)."""


# -- trees ---------------------------------------------------------------------------------------
def depth_of(node: Node) -> int:
    return 0 if isinstance(node, int) else 1 + max(depth_of(node[1]), depth_of(node[2]))


def value_of(node: Node) -> int:
    if isinstance(node, int):
        return node
    a, b = value_of(node[1]), value_of(node[2])
    return a + b if node[0] == "+" else a - b if node[0] == "-" else a * b


def render(node: Node, leaf: str | None = None) -> str:
    """Shortest text that parses back to the same tree (Python precedence, left-associative):
    a child is parenthesised when it binds looser than its parent, or equally as a right child."""
    if isinstance(node, int):
        return str(node) if leaf is None else leaf
    op, left, right = node
    ls, rs = render(left, leaf), render(right, leaf)
    if not isinstance(left, int) and PREC[left[0]] < PREC[op]:
        ls = f"({ls})"
    if not isinstance(right, int) and PREC[right[0]] <= PREC[op]:
        rs = f"({rs})"
    return f"{ls}{op}{rs}"


def shape_of(node: Node) -> str:
    """The structure without the numbers: ``(3+4)*2`` -> ``(n+n)*n``."""
    return render(node, "n")


def normal_form(node: Node) -> str:
    """Canonical text for duplicate detection: operands of ``+`` and ``*`` sorted (so ``3+4``
    and ``4+3``, ``2*(1+5)`` and ``(5+1)*2`` are one task)."""
    if isinstance(node, int):
        return str(node)
    op, a, b = node[0], normal_form(node[1]), normal_form(node[2])
    if op in "+*" and b < a:
        a, b = b, a
    return f"({a}{op}{b})"


def leaves(node: Node) -> list[int]:
    return [node] if isinstance(node, int) else leaves(node[1]) + leaves(node[2])


def leaks_answer(node: Node) -> bool:
    """The answer is written in the task: the value appears as one of its literals
    (``7*1``, ``0+5``, ``4+3-3``) — a proposer could otherwise farm easy tasks."""
    return value_of(node) in leaves(node) and not isinstance(node, int)


def fill(shape: str, operands: list[int]) -> Node:
    """The tree of ``shape`` with its ``n`` leaves replaced by ``operands`` in order."""
    it = iter(operands)
    return _tree(ast.parse(shape, mode="eval").body, lambda _: next(it))


def _tree(expr: ast.AST, leaf: Any) -> Node:
    if isinstance(expr, ast.BinOp) and type(expr.op) in OPS:
        return (OPS[type(expr.op)], _tree(expr.left, leaf), _tree(expr.right, leaf))
    return int(leaf(expr))


# -- the verifier ----------------------------------------------------------------------------------
def parse_task(text: Any, max_depth: int = 3, max_operand: int = 9) -> Node:
    """The tree of a task text, or :class:`InvalidTask` (module docstring: the rules)."""
    if not isinstance(text, str):
        raise InvalidTask("not text")
    s = text.strip()
    if not s:
        raise InvalidTask("empty")
    if len(s) > MAX_TASK_CHARS:
        raise InvalidTask(f"longer than {MAX_TASK_CHARS} characters")
    bad = sorted(set(s) - ALLOWED_CHARS)
    if bad:
        raise InvalidTask(f"characters outside 0-9 + - * ( ): {''.join(bad)!r}")
    try:
        tree = ast.parse(s, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise InvalidTask(f"not an expression ({type(exc).__name__})") from None
    node = _checked(tree.body, max_operand, 0, max_depth)
    if depth_of(node) < 1:
        raise InvalidTask("a bare number is not a task")
    return node


def _checked(expr: ast.AST, max_operand: int, level: int, max_depth: int) -> Node:
    if level > max_depth:
        raise InvalidTask(f"deeper than {max_depth}")
    if isinstance(expr, ast.BinOp) and type(expr.op) in OPS:
        return (
            OPS[type(expr.op)],
            _checked(expr.left, max_operand, level + 1, max_depth),
            _checked(expr.right, max_operand, level + 1, max_depth),
        )
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        if not 0 <= expr.value <= max_operand:
            raise InvalidTask(f"operand {expr.value} outside 0..{max_operand}")
        return int(expr.value)
    raise InvalidTask(f"{type(expr).__name__} is not allowed (only + - * on integers)")


def check_answer(node: Node, answer: Any) -> bool:
    """True iff ``answer`` is exactly the task's integer value (sign and digits only)."""
    if not isinstance(answer, str):
        return False
    s = answer.strip()
    return bool(ANSWER.fullmatch(s)) and int(s) == value_of(node)


# -- shapes and the split --------------------------------------------------------------------------
@lru_cache(maxsize=None)
def shapes_up_to(depth: int) -> tuple[tuple[str, ...], ...]:
    """Per depth 0..``depth``, every shape of exactly that depth, sorted."""
    by: list[list[Node]] = [[0]]
    for d in range(1, depth + 1):
        lower = [t for ts in by for t in ts]
        new: list[Node] = [
            (op, a, b) for op in "+-*" for a in lower for b in lower if max(depth_of(a), depth_of(b)) == d - 1
        ]
        by.append(new)
    return tuple(tuple(sorted(shape_of(t) for t in ts)) for ts in by)


def _held_out(shape: str, depth: int, fraction: float, depths: tuple[int, ...], seed: int) -> bool:
    if depth in depths:
        return True
    if depth < 2:
        return False
    h = int.from_bytes(hashlib.sha256(f"{seed}:{shape}".encode()).digest()[:8], "big")
    return h / 2**64 < fraction


class ArithmeticState(State):
    def __init__(self, game: "Arithmetic", split: str) -> None:
        self.game, self.split = game, split
        self.depth: int | None = None
        self.shape: str | None = None
        self.operands: list[int] = []
        self.node: Node | None = None
        self.answer: str | None = None

    def _leaves_needed(self) -> int:
        return (self.shape or "").count("n")

    def current_player(self) -> int:
        if self.node is None:
            return CHANCE
        return TERMINAL if self.answer is not None else 0

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.depth is None:
            ds = self.game.depths(self.split)
            return [(d, 1.0 / len(ds)) for d in ds]
        if self.shape is None:
            n = len(self.game.shapes(self.split, self.depth))
            return [(i, 1.0 / n) for i in range(n)]
        m = self.game.max_operand + 1
        return [(v, 1.0 / m) for v in range(m)]

    def legal_actions(self, player: int | None = None) -> list[int]:
        return [a for a, _ in self.chance_outcomes()] if self.node is None else []

    def decision_kind(self, player: int) -> Any:
        return "text"

    def max_text_length(self, player: int) -> int:
        return self.game.answer_chars

    def apply_action(self, action: Action) -> None:
        if self.node is None:
            if isinstance(action, str) or int(action) not in self.legal_actions():
                raise IllegalActionError(f"chance outcome {action!r} is not legal here")
            a = int(action)
            if self.depth is None:
                self.depth = a
            elif self.shape is None:
                self.shape = self.game.shapes(self.split, self.depth)[a]
            else:
                self.operands.append(a)
            if self.shape is not None and len(self.operands) == self._leaves_needed():
                self.node = fill(self.shape, self.operands)
        elif self.answer is None:
            if not isinstance(action, str):
                raise IllegalActionError("arithmetic expects a text answer")
            self.answer = action[: self.game.answer_chars]
        else:
            raise IllegalActionError("the task is over")

    def set_task(self, node: Node) -> None:
        """Start from a given task (a proposer's) instead of the chance stream."""
        self.node, self.depth, self.shape = node, depth_of(node), shape_of(node)
        self.operands = leaves(node)

    @property
    def task(self) -> str:
        return render(self.node) if self.node is not None else ""

    def returns(self) -> list[float]:
        if self.answer is None or self.node is None:
            return [0.0]
        return [1.0 if check_answer(self.node, self.answer) else 0.0]

    def clone(self) -> "ArithmeticState":
        c = ArithmeticState(self.game, self.split)
        c.depth, c.shape, c.operands, c.node, c.answer = (
            self.depth,
            self.shape,
            list(self.operands),
            self.node,
            self.answer,
        )
        return c

    def information_state_key(self, player: int) -> str:
        return f"{self.task}|{self.answer}"

    def observation_text(self, player: int) -> str:
        text = SOLVER_PREFIX + self.task
        return text if self.answer is None else f"{text}\nanswer: {self.answer}"

    def observation_struct(self, player: int) -> dict[str, Any]:
        out = decision_struct(self, player)
        known = self.node is not None  # the chance stream's partial draws stay hidden, as in the text
        out.update(
            game="arithmetic",
            role="solver",
            task=self.task,
            shape=self.shape if known else None,
            depth=self.depth if known else None,
            split=self.split,
        )
        out["answer"] = self.answer
        return out

    def observation_tensor(self, player: int) -> np.ndarray:
        out = np.zeros(self.game.game_max_depth + 1, dtype=np.float32)
        if self.node is not None and self.depth is not None:
            out[self.depth] = 1.0
        return out

    def num_players(self) -> int:
        return 1

    def summary(self) -> str:
        return f"{self.task} = {self.answer!r}"


DEFAULTS: dict[str, Any] = {
    "max_depth": 2,
    "max_operand": 9,
    "split": "train",
    "heldout_fraction": 0.25,
    "heldout_depths": [],
    "split_seed": 0,
    "answer_chars": 8,
    "probe_tasks": 48,
    "probe_samples": 8,
}


@dataclass(frozen=True)
class Probe:
    """What :meth:`Arithmetic.probe` measured on a grid of tasks."""

    pass1: float
    passk: float
    entropy: float


class Arithmetic(Game):
    def __init__(
        self,
        max_depth: int = 2,
        max_operand: int = 9,
        split: str = "train",
        heldout_fraction: float = 0.25,
        heldout_depths: Any = (),
        split_seed: int = 0,
        answer_chars: int = 8,
        probe_tasks: int = 48,
        probe_samples: int = 8,
    ) -> None:
        if not 1 <= int(max_depth) <= 3:
            raise ArenaError(f"arithmetic: max_depth must be 1..3 (shapes are enumerated), not {max_depth}")
        if not 1 <= int(max_operand) <= 99:
            raise ArenaError(f"arithmetic: max_operand must be 1..99, not {max_operand}")
        if split not in SPLITS:
            raise ArenaError(f"arithmetic: split must be one of {', '.join(SPLITS)}, not {split!r}")
        if not 0.0 <= float(heldout_fraction) < 1.0:
            raise ArenaError(f"arithmetic: heldout_fraction must be in [0, 1), not {heldout_fraction}")
        if int(answer_chars) < 1 or int(probe_tasks) < 1 or int(probe_samples) < 1:
            raise ArenaError("arithmetic: answer_chars, probe_tasks and probe_samples must be >= 1")
        self.game_max_depth, self.max_operand, self.split = int(max_depth), int(max_operand), split
        self.heldout_fraction, self.split_seed = float(heldout_fraction), int(split_seed)
        self.heldout_depths = tuple(sorted(int(d) for d in heldout_depths))
        self.answer_chars, self.probe_tasks, self.probe_samples = (
            int(answer_chars),
            int(probe_tasks),
            int(probe_samples),
        )
        self._split: dict[str, list[tuple[str, ...]]] = {s: [] for s in SPLITS}
        for d, shapes in enumerate(shapes_up_to(self.game_max_depth)):
            held = {s for s in shapes if d and self.is_heldout_shape(s, d)}
            self._split["heldout"].append(tuple(s for s in shapes if d and s in held))
            self._split["train"].append(tuple(s for s in shapes if d and s not in held))
        for s in SPLITS:
            if not self.depths(s):
                raise ArenaError(f"arithmetic: the {s} split has no shapes (heldout_fraction, heldout_depths)")
        given = dict(
            max_depth=self.game_max_depth,
            max_operand=self.max_operand,
            split=split,
            heldout_fraction=self.heldout_fraction,
            heldout_depths=list(self.heldout_depths),
            split_seed=self.split_seed,
            answer_chars=self.answer_chars,
            probe_tasks=self.probe_tasks,
            probe_samples=self.probe_samples,
        )
        self.spec = GameSpec(
            name="arithmetic",
            num_players=1,
            num_distinct_actions=max(self.max_operand + 1, len(shapes_up_to(self.game_max_depth)[-1])),
            observation_shape=(self.game_max_depth + 1,),
            min_utility=0.0,
            max_utility=1.0,
            zero_sum=False,
            max_game_length=3 + 2**self.game_max_depth,
            text_decisions=True,
            params={k: v for k, v in given.items() if v != DEFAULTS[k]},
            description="integer expressions over + - * with an exact verifier and a held-out split by shape",
        )

    # -- the split ---------------------------------------------------------------------------------
    def is_heldout_shape(self, shape: str, depth: int) -> bool:
        return _held_out(shape, depth, self.heldout_fraction, self.heldout_depths, self.split_seed)

    def shapes(self, split: str, depth: int) -> tuple[str, ...]:
        return self._split[split][depth] if depth < len(self._split[split]) else ()

    def depths(self, split: str) -> list[int]:
        return [d for d, s in enumerate(self._split[split]) if s]

    def new_initial_state(self, seed: int | None = None) -> ArithmeticState:
        return ArithmeticState(self, self.split)

    def state_for(self, task: Node | str) -> ArithmeticState:
        """A state whose task is given (text goes through :meth:`parse`)."""
        node = self.parse(task) if isinstance(task, str) else task
        s = ArithmeticState(self, self.split)
        s.set_task(node)
        return s

    def parse(self, text: Any) -> Node:
        """:func:`parse_task` with this game's depth and operand limits."""
        return parse_task(text, self.game_max_depth, self.max_operand)

    def sample_task(self, rng: np.random.Generator, split: str = "train") -> Node:
        """A task of ``split`` drawn as the chance stream draws it."""
        ds = self.depths(split)
        d = ds[int(rng.integers(len(ds)))]
        shapes = self.shapes(split, d)
        shape = shapes[int(rng.integers(len(shapes)))]
        return fill(shape, [int(x) for x in rng.integers(self.max_operand + 1, size=shape.count("n"))])

    def grid(self, split: str) -> list[Node]:
        """The fixed probe grid of ``split``: ``probe_tasks`` tasks from a stream of its own."""
        rng = np.random.default_rng([self.split_seed, 2026, SPLITS.index(split)])
        return [self.sample_task(rng, split) for _ in range(self.probe_tasks)]

    # -- measurement -------------------------------------------------------------------------------
    def probe(self, agent: Any, tasks: list[Node], samples: int, stream: int = 0) -> Probe:
        """pass@1 (mean exact rate), pass@``samples`` (share of tasks with any exact answer) and
        the per-token entropy estimate (mean negative log-prob of the sampled answer tokens, when
        the agent reports them) of ``agent`` on ``tasks``; fixed random streams."""
        from arena.playing.match import game_rng

        obs = [
            Observation(self.state_for(t), 0, game_rng(987_654_321 + stream, i * samples + k), self.spec.full_name)
            for i, t in enumerate(tasks)
            for k in range(samples)
        ]
        if hasattr(agent, "act_batch_info"):
            answers, infos = agent.act_batch_info(obs)
        else:
            answers, infos = list(agent.act_batch(obs)), [{} for _ in obs]
        ok = np.array(
            [check_answer(t, str(answers[i * samples + k])) for i, t in enumerate(tasks) for k in range(samples)]
        )
        ok = ok.reshape(len(tasks), samples)
        nll, toks = 0.0, 0
        for info in infos:
            lps = info.get("completion_logprobs")
            if lps:
                nll -= float(sum(lps))
                toks += len(lps)
        return Probe(float(ok.mean()), float(ok.any(axis=1).mean()), nll / toks if toks else float("nan"))

    def agent_metrics(self, agent: Any) -> dict[str, float]:
        """Held-out and training grids: ``heldout_pass1``, ``heldout_pass{k}``, ``heldout_entropy``,
        ``train_pass1``, ``train_pass{k}``, ``train_entropy`` (k = ``probe_samples``; the entropies
        only for agents that report log-probs)."""
        k = self.probe_samples
        out: dict[str, float] = {}
        for split in SPLITS:
            p = self.probe(agent, self.grid(split), k, stream=SPLITS.index(split))
            out.update({f"{split}_pass1": p.pass1, f"{split}_pass{k}": p.passk})
            if p.entropy == p.entropy:  # known only for agents that report their tokens' log-probs
                out[f"{split}_entropy"] = p.entropy
        return out

    def random_answer(self, rng: np.random.Generator) -> str:
        """The value of a random *other* training task: answers with the right form and marginal
        distribution that say nothing about the task asked (the guesser's warm-up answers)."""
        return str(value_of(self.sample_task(rng, "train")))


class ArithmeticGuesser(Agent):
    """Answers an arithmetic task with the value of a random other training task: a warm-up
    corpus player (``model.pretrain_agent: arithmetic_guesser``) that teaches a model what an
    answer looks like without teaching it any arithmetic.

    ``accuracy`` q: the right value with probability q instead (a weak tutor). A model warmed up
    on its answers starts RL as a base model does, right on some tasks and some samples, so the
    verifier's reward has successes to reinforce from the first update."""

    name = "arithmetic_guesser"

    def __init__(self, game: Arithmetic, accuracy: float = 0.0) -> None:
        self.game, self.accuracy = game, accuracy

    def act(self, obs: Observation) -> Action:
        if obs.decision != "text":
            raise ArenaError("arithmetic_guesser only answers arithmetic tasks")
        guess = self.game.random_answer(obs.rng)  # drawn first: at accuracy 0 the stream (and a
        if self.accuracy > 0 and obs.rng.random() < self.accuracy:  # warm-up built on it) is as before
            return str(value_of(self.game.parse(obs.struct["task"])))
        return guess


def make_guesser(game: Game, accuracy: float = 0.0, **params: Any) -> ArithmeticGuesser:
    if not isinstance(game, Arithmetic) or params:
        raise ArenaError("agent 'arithmetic_guesser' plays the arithmetic game and takes only 'accuracy'")
    if isinstance(accuracy, bool) or not isinstance(accuracy, (int, float)) or not 0 <= accuracy <= 1:
        raise ArenaError(f"arithmetic_guesser: 'accuracy' must be a probability in [0, 1], got {accuracy!r}")
    return ArithmeticGuesser(game, float(accuracy))


@hookimpl
def arena_games() -> list[GameEntry]:
    return [
        GameEntry(
            "arithmetic",
            Arithmetic,
            "integer expressions over + - * with an exact verifier and a held-out split by shape (RLVR, proposer/solver)",
            dict(DEFAULTS),
        )
    ]


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry(
            "arithmetic_guesser",
            make_guesser,
            "answers arithmetic tasks with the value of a random other task, or rightly with probability accuracy (warm-up corpus player)",
            {"accuracy": 0.0},
        )
    ]
