"""``mcts``: Monte-Carlo tree search, UCT on perfect-information games and single-observer
information-set MCTS on imperfect-information ones.

UCT (Kocsis & Szepesvári 2006) picks ``argmax Q_p + c·sqrt(ln n / n_a)`` for the player ``p`` to
move, unvisited actions first (``c`` = ``uct_c`` times half the game's return range, so one
setting suits tic-tac-toe's ±1 and Leduc's ±13); every node keeps the *vector* of returns (max^n backup,
Sturtevant 2008), so n-player general-sum games need no sign flips. Leaves are valued by random
playouts (``rollouts`` of them) or by the critic of a ``neural`` checkpoint (``value=DIR``,
one forward pass for every leaf of the decision batch).

Information-set MCTS (Cowling, Powley, Whitehouse, IEEE TCIAIG 2012): nodes are keyed by the
acting player's information-state key, and every simulation first samples a world consistent
with what the searching player knows, so it never reads the hidden cards of the state it was
given; the parent count in the UCB term is the action's *availability* count. On a
perfect-information game the key is the state itself and the sampled world the true one, so
both are one algorithm. Worlds come from the state's ``resample_from_infostate(player,
uniform)`` (OpenSpiel's C++ games have it); a game whose states cannot resample and that does
not declare ``perfect_information = True`` is refused with one line.

Batching: ``act_batch`` searches all its decisions in lockstep, one simulation of each per
round, so leaf evaluations of the whole batch go to the value network together. Every random
draw of a search comes from its game's own stream (``obs.rng``), so moves do not depend on the
batch. ``policy(obs)`` is the visit distribution ``N(a)^(1/T)`` (``temperature`` 0: uniform over
the most-visited actions), and ``act`` samples from it, so exact evaluation sees what it plays.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from arena.agent import Agent, AgentEntry, Observation, sample_from
from arena.errors import ArenaError
from arena.game import Action, Game, State
from arena.hookspecs import hookimpl


class Node:
    """Statistics of one information set (one state under perfect information). Under perfect
    information it also keeps proven outcomes (MCTS-Solver, Winands et al. 2008): ``proven[a]``
    is the exact return vector after ``a``, ``solved`` the node's own once it is known."""

    __slots__ = ("visits", "count", "avail", "total", "player", "legal", "proven", "solved")

    def __init__(self, player: int, legal: Sequence[int]) -> None:
        self.visits = 0
        self.count: dict[int, int] = {}
        self.avail: dict[int, int] = {}
        self.total: dict[int, np.ndarray] = {}
        self.player, self.legal = player, list(legal)
        self.proven: dict[int, np.ndarray] = {}
        self.solved: np.ndarray | None = None

    def try_solve(self, best: float) -> bool:
        """Solved when an action proves the mover's best possible return or all are proven."""
        p = self.player
        wins = [v for v in self.proven.values() if v[p] >= best]
        if wins:
            self.solved = wins[0]
        elif len(self.proven) == len(self.legal):
            self.solved = max(self.proven.values(), key=lambda v: v[p])
        return self.solved is not None


def perfect_information(game: Game) -> bool | None:
    """True/False when the game says, None when it cannot tell."""
    flag = getattr(game, "perfect_information", None)
    if flag is not None:
        return bool(flag)
    pyspiel_game = getattr(game, "pyspiel_game", None)
    if pyspiel_game is not None and hasattr(pyspiel_game, "get_type"):
        import pyspiel

        return bool(pyspiel_game.get_type().information == pyspiel.GameType.Information.PERFECT_INFORMATION)
    return None


def playout(state: State, rng: np.random.Generator) -> np.ndarray:
    """Returns of one uniformly random playout (chance sampled from its probabilities)."""
    s = state.clone()
    while not s.is_terminal():
        if s.is_chance_node():
            s.apply_action(chance_draw(s, rng))
        else:
            legal = s.legal_actions(s.current_player())
            s.apply_action(legal[int(rng.integers(len(legal)))])
    return np.asarray(s.returns(), dtype=float)


def chance_draw(state: State, rng: np.random.Generator) -> int:
    outcomes = state.chance_outcomes()
    u, acc = rng.random(), 0.0
    for a, p in outcomes:
        acc += p
        if u < acc:
            return int(a)
    return int(outcomes[-1][0])


class Search:
    """One decision's search: its root state, searching player, table and random stream."""

    def __init__(self, agent: "MCTSAgent", obs: Observation) -> None:
        self.agent = agent
        self.root = obs.state
        self.player = obs.player
        self.rng = obs.rng
        self.table: dict[tuple[int, str], Node] = {}
        self.path: list[tuple[Node, int]] = []

    def world(self) -> State:
        if self.agent.perfect:
            return self.root.clone()
        uniform = self.rng.random
        return self.agent.game_wrap(self.root, self.player, uniform)

    def descend(self) -> tuple[State, bool]:
        """Select from a sampled world down to a new node or the end; True when a leaf needs a value."""
        s = self.world()
        self.path = []
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(chance_draw(s, self.rng))
                continue
            p = s.current_player()
            key = (p, s.information_state_key(p))
            node = self.table.get(key)
            legal = s.legal_actions(p)
            if node is None:
                node = self.table[key] = Node(p, legal)
                a = legal[int(self.rng.integers(len(legal)))]
                self.path.append((node, a))
                for b in legal:
                    node.avail[b] = 1
                s.apply_action(a)
                return s, True
            a = self.select(node, p, legal)
            self.path.append((node, a))
            s.apply_action(a)
        return s, False

    def select(self, node: Node, p: int, legal: Sequence[int]) -> int:
        for b in legal:
            node.avail[b] = node.avail.get(b, 0) + 1
        win = [b for b, v in node.proven.items() if v[p] >= self.agent.best]
        if win:
            return win[0]
        fresh = [b for b in legal if b not in node.count and b not in node.proven]
        if fresh:
            return fresh[int(self.rng.integers(len(fresh)))]
        c = self.agent.uct_c
        best, pick = -math.inf, legal[0]
        for b in legal:
            if b in node.proven:
                score = node.proven[b][p]
            else:
                n = node.count[b]
                score = node.total[b][p] / n + c * math.sqrt(math.log(node.avail[b]) / n)
            if score > best:
                best, pick = score, b
        return pick

    def backup(self, value: np.ndarray, terminal: bool) -> None:
        for node, a in self.path:
            node.visits += 1
            node.count[a] = node.count.get(a, 0) + 1
            node.total[a] = node.total.get(a, 0.0) + value
        if terminal and self.agent.perfect and self.path:
            self.prove(value)

    def prove(self, value: np.ndarray) -> None:
        """Pass a proven terminal outcome up the path while nodes become solved."""
        for i in range(len(self.path) - 1, -1, -1):
            node, a = self.path[i]
            node.proven[a] = value
            if node.solved is not None or not node.try_solve(self.agent.best):
                return
            value = node.solved  # type: ignore[assignment]

    def visits(self) -> dict[int, int]:
        """Visit counts at the root; once the root is solved, only its optimal actions count."""
        node = self.table.get((self.player, self.root.information_state_key(self.player)))
        legal = self.root.legal_actions(self.player)
        counts = {a: (node.count.get(a, 0) if node else 0) for a in legal}
        if node is not None and node.solved is not None:
            target = node.solved[self.player]
            counts = {
                a: (n + 1 if a in node.proven and node.proven[a][self.player] >= target else 0)
                for a, n in counts.items()
            }
        return counts


class MCTSAgent(Agent):
    """UCT / information-set MCTS with random playouts or a value network."""

    name = "mcts"

    def __init__(
        self,
        game: Game,
        simulations: int = 400,
        uct_c: float = 2.0,
        rollouts: int = 1,
        temperature: float = 0.0,
        value: str | None = None,
    ) -> None:
        spec = game.spec
        where = f"agent 'mcts' on '{spec.full_name}'"
        if not spec.tree or spec.text_decisions or spec.simultaneous:
            raise ArenaError(
                f"{where}: MCTS needs a tree view (deterministic clone, explicit chance, turn-based choice "
                "decisions); this game has none"
            )
        if int(simulations) < 1 or int(rollouts) < 1 or float(temperature) < 0 or float(uct_c) < 0:
            raise ArenaError(f"{where}: simulations and rollouts must be >= 1, uct_c and temperature >= 0")
        perfect = perfect_information(game)
        if perfect is None:
            raise ArenaError(
                f"{where}: cannot tell whether the game has perfect information (declare "
                "perfect_information on the game, or give its states resample_from_infostate)"
            )
        self.game = game
        self.perfect = perfect
        self.best = float(spec.max_utility)
        self.simulations, self.rollouts = int(simulations), int(rollouts)
        half_range = (float(spec.max_utility) - float(spec.min_utility)) / 2
        self.uct_c = float(uct_c) * (half_range if math.isfinite(half_range) and half_range > 0 else 1.0)
        self.temperature = float(temperature)
        self.value_net: Any = None
        if value is not None:
            from arena.plugins.agents.neural import load_neural

            self.value_net = load_neural(value, game)

    # -- worlds and values ----------------------------------------------------------------------------
    def game_wrap(self, root: State, player: int, uniform: Any) -> State:
        """A world drawn from ``player``'s information at ``root`` (OpenSpiel resampling)."""
        resample = getattr(root, "resample_from_infostate", None)
        if resample is not None:
            return resample(player, uniform)
        inner = getattr(root, "pyspiel_state", None)
        if inner is None:
            raise ArenaError(f"agent 'mcts': states of '{self.game.spec.full_name}' cannot resample a world")
        return self.game.wrap(inner.resample_from_infostate(player, uniform))  # type: ignore[attr-defined]

    def evaluate(self, states: Sequence[State], rngs: Sequence[np.random.Generator]) -> list[np.ndarray]:
        """Values (one return per player) of non-terminal leaves: playouts or one network pass."""
        if self.value_net is None:
            return [np.mean([playout(s, r) for _ in range(self.rollouts)], axis=0) for s, r in zip(states, rngs)]
        import torch

        n = self.game.spec.num_players
        shape = self.value_net.shape
        x = np.stack(
            [np.asarray(s.observation_tensor(p), dtype=np.float32).reshape(shape) for s in states for p in range(n)]
        )
        with torch.no_grad():
            v = self.value_net.value(torch.as_tensor(x)).cpu().numpy().astype(float)
        return list(v.reshape(len(states), n))

    # -- acting ----------------------------------------------------------------------------------------
    def search_batch(self, observations: Sequence[Observation]) -> list[dict[int, int]]:
        """Visit counts at every root after ``simulations`` lockstep rounds."""
        searches = [Search(self, o) for o in observations]
        for _ in range(self.simulations):
            leaves, owners = [], []
            for s in searches:
                state, needs_value = s.descend()
                if needs_value and not state.is_terminal():
                    leaves.append(state)
                    owners.append(s)
                else:
                    s.backup(np.asarray(state.returns(), dtype=float), terminal=True)
            for s, v in zip(owners, self.evaluate(leaves, [o.rng for o in owners])):
                s.backup(np.asarray(v, dtype=float), terminal=False)
        return [s.visits() for s in searches]

    def distribution(self, visits: Mapping[int, int]) -> dict[int, float]:
        counts = np.asarray(list(visits.values()), dtype=float)
        if self.temperature == 0 or counts.sum() == 0:
            w = (counts == counts.max()).astype(float)
        else:
            w = (counts / counts.max()) ** (1.0 / self.temperature)
        w /= w.sum()
        return {a: float(p) for a, p in zip(visits, w)}

    def act_batch(self, observations: Sequence[Observation]) -> list[Action]:
        return self.act_batch_info(observations)[0]

    def act_batch_info(self, observations: Sequence[Observation]) -> tuple[list[Action], list[dict[str, Any]]]:
        actions: list[Action] = []
        infos: list[dict[str, Any]] = []
        for o, visits in zip(observations, self.search_batch(observations)):
            probs = self.distribution(visits)
            actions.append(sample_from(probs, o))
            infos.append({"visits": {int(a): int(n) for a, n in visits.items()}})
        return actions, infos

    def policy(self, obs: Observation) -> Mapping[int, float]:
        return self.distribution(self.search_batch([obs])[0])


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry(
            "mcts",
            MCTSAgent,
            "UCT / information-set MCTS (random playouts or a neural critic); policy = visit counts",
            {"simulations": 400, "uct_c": 2.0, "rollouts": 1, "temperature": 0.0, "value": None},
        )
    ]
