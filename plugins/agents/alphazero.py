"""``alphazero``: PUCT search guided by a policy-value network (Silver et al., *A general
reinforcement learning algorithm that masters chess, shogi, and Go through self-play*, Science
2018), the agent the ``alphazero`` trainer improves.

The network is a ``neural`` agent's (an MLP over the observation tensor: actor logits, critic).
At a new node the search evaluates the state once, on the mover's observation: the actor's
softmax over the legal actions is the prior ``P`` and the critic ``v`` the mover's value (what
the trainer fits: the decider's outcome from the decider's observation); the value vector is
``v`` for the mover and ``-v`` for the opponent (two-player zero-sum games), and each node's
``Q`` reads its own mover's entry. Selection is ``argmax Q_p(a) + c·P(a)·sqrt(N)/(1 + n(a))``
(unvisited: ``Q`` = 0). The root's prior gets Dirichlet noise ``(1-ε)·P + ε·Dir(α)`` while
training (``noise`` ε, ``alpha``). Moves: sampled from the visit counts for the first
``sample_moves`` moves of a game, then the most-visited one; ``greedy`` (evaluation) always
takes the most-visited and adds no noise. Every decision's info carries ``pi``, the visit
distribution over the game's actions: the trainer's policy target. It exposes no ``policy``:
its games are tic-tac-toe-sized and up, where exact evaluation would search at every history.

Search runs on the state itself, so it is for perfect-information turn-based games with a tree
view (tic-tac-toe, connect four); decisions of a batch search in lockstep with one network pass
per round for all their new leaves. Randomness comes from each game's stream.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from arena.agent import Agent, AgentEntry, Observation
from arena.errors import ArenaError
from arena.game import Action, Game, State
from arena.hookspecs import hookimpl

from .mcts import chance_draw, perfect_information

PARAMS = {
    "simulations": 40,
    "c_puct": 1.5,
    "sample_moves": 4,
    "alpha": 0.5,
    "noise": 0.25,
    "greedy": False,
    "hidden": 64,
    "layers": 2,
    "seed": 0,
    "checkpoint": None,
}


class Node:
    __slots__ = ("prior", "visits", "count", "total", "player")

    def __init__(self, player: int, prior: dict[int, float]) -> None:
        self.player, self.prior = player, prior
        self.visits = 0
        self.count: dict[int, int] = {}
        self.total: dict[int, np.ndarray] = {}


class AlphaZeroAgent(Agent):
    name = "alphazero"

    def __init__(self, game: Game, **params: Any) -> None:
        from arena.plugins.agents.neural import NeuralAgent

        unknown = sorted(set(params) - set(PARAMS))
        if unknown:
            raise ArenaError(f"agent 'alphazero' has no parameter {unknown}; parameters: {sorted(PARAMS)}")
        p = {**PARAMS, **params}
        spec = game.spec
        if not spec.tree or spec.simultaneous or spec.text_decisions or perfect_information(game) is not True:
            raise ArenaError(
                f"agent 'alphazero' searches perfect-information turn-based games with a tree view; "
                f"'{spec.full_name}' is not one"
            )
        if spec.num_players != 2 or not spec.zero_sum:
            raise ArenaError(
                f"agent 'alphazero' searches two-player zero-sum games (its critic values the mover's "
                f"outcome, the opponent's is the negation); '{spec.full_name}' is not one"
            )
        if int(p["simulations"]) < 1:
            raise ArenaError("agent 'alphazero': simulations must be >= 1")
        self.game, self.params = game, p
        ckpt = p["checkpoint"]
        self.net = NeuralAgent(
            game, hidden=int(p["hidden"]), layers=int(p["layers"]), seed=int(p["seed"]), checkpoint=ckpt
        )
        if ckpt:
            saved = json.loads((Path(ckpt) / "alphazero.json").read_text())
            self.params.update({k: v for k, v in saved.items() if k not in ("checkpoint", "greedy")})
            self.params["greedy"] = bool(params.get("greedy", saved.get("greedy", False)))

    # -- network -------------------------------------------------------------------------------------
    def evaluate(self, states: Sequence[State]) -> list[tuple[dict[int, float], np.ndarray]]:
        """Prior over the legal actions of the player to move and every player's value, one pass.

        The critic is trained on the mover's observation against the mover's outcome, so it is
        read on the mover's observation only: ``v`` for the mover, ``-v`` for the opponent (two
        players, zero-sum). Reading it on each player's own observation is wrong where the two
        observations coincide (tic-tac-toe's board planes): both players would get the mover's
        value and every opponent node in the search would back up the wrong sign.
        """
        import torch

        if not states:
            return []
        shape = self.net.shape
        movers = [np.asarray(s.observation_tensor(s.current_player()), dtype=np.float32).reshape(shape) for s in states]
        with torch.no_grad():
            x = torch.as_tensor(np.stack(movers))
            v = self.net.value(x).numpy().astype(float).reshape(len(states))
            logits = self.net.net.actor(x).numpy().astype(float)
        out = []
        for s, lg, vm in zip(states, logits, v):
            mover = s.current_player()
            legal = s.legal_actions(mover)
            z = lg[legal] - lg[legal].max()
            w = np.exp(z) / np.exp(z).sum()
            val = np.full(2, -vm)
            val[mover] = vm
            out.append(({a: float(x) for a, x in zip(legal, w)}, val))
        return out

    # -- search --------------------------------------------------------------------------------------
    def search_batch(self, observations: Sequence[Observation]) -> list[dict[int, int]]:
        roots = [o.state for o in observations]
        tables: list[dict[tuple[int, str], Node]] = [{} for _ in roots]
        paths: list[list[tuple[Node, int]]] = [[] for _ in roots]
        for sim in range(int(self.params["simulations"]) + 1):
            leaves, owners = [], []
            for i, (root, o) in enumerate(zip(roots, observations)):
                state, key = self.descend(root, tables[i], paths, i, o.rng)
                if state.is_terminal():
                    self.backup(paths[i], np.asarray(state.returns(), dtype=float))
                else:
                    leaves.append((state, key))
                    owners.append(i)
            for (state, key), i, (prior, value) in zip(leaves, owners, self.evaluate([s for s, _ in leaves])):
                if sim == 0 and not self.params["greedy"]:
                    prior = self.noisy(prior, observations[i].rng)
                tables[i][key] = Node(state.current_player(), prior)
                self.backup(paths[i], value)
        out = []
        for root, o, table in zip(roots, observations, tables):
            node = table[(o.player, root.information_state_key(o.player))]
            out.append({a: node.count.get(a, 0) for a in root.legal_actions(o.player)})
        return out

    def descend(self, root: State, table: dict, paths: list, i: int, rng: np.random.Generator) -> tuple[State, Any]:
        s = root.clone()
        paths[i] = []
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(chance_draw(s, rng))
                continue
            p = s.current_player()
            key = (p, s.information_state_key(p))
            node = table.get(key)
            if node is None:
                return s, key
            a = self.select(node)
            paths[i].append((node, a))
            s.apply_action(a)
        return s, None

    def select(self, node: Node) -> int:
        c, root_n = float(self.params["c_puct"]), math.sqrt(max(1, node.visits))
        best, pick = -math.inf, next(iter(node.prior))
        for a, prior in node.prior.items():
            n = node.count.get(a, 0)
            q = node.total[a][node.player] / n if n else 0.0
            score = q + c * prior * root_n / (1 + n)
            if score > best:
                best, pick = score, a
        return pick

    @staticmethod
    def backup(path: list[tuple[Node, int]], value: np.ndarray) -> None:
        for node, a in path:
            node.visits += 1
            node.count[a] = node.count.get(a, 0) + 1
            node.total[a] = node.total.get(a, 0.0) + value

    def noisy(self, prior: dict[int, float], rng: np.random.Generator) -> dict[int, float]:
        eps = float(self.params["noise"])
        eta = rng.dirichlet([float(self.params["alpha"])] * len(prior))
        return {a: (1 - eps) * p + eps * float(e) for (a, p), e in zip(prior.items(), eta)}

    # -- acting --------------------------------------------------------------------------------------
    def act_batch_info(self, observations: Sequence[Observation]) -> tuple[list[Action], list[dict[str, Any]]]:
        actions: list[Action] = []
        infos: list[dict[str, Any]] = []
        size = self.game.spec.num_distinct_actions
        for o, visits in zip(observations, self.search_batch(observations)):
            counts = np.asarray(list(visits.values()), dtype=float)
            pi = np.zeros(size)
            pi[list(visits)] = counts / counts.sum()
            moved = len(o.state.history()) if hasattr(o.state, "history") else 0
            if self.params["greedy"] or moved >= int(self.params["sample_moves"]):
                best = [a for a, n in visits.items() if n == counts.max()]
                actions.append(best[min(int(o.uniform() * len(best)), len(best) - 1)])
            else:
                actions.append(_sample(visits, counts, o.uniform()))
            infos.append({"pi": pi.tolist()})
        return actions, infos

    def act_batch(self, observations: Sequence[Observation]) -> list[Action]:
        return self.act_batch_info(observations)[0]

    def save(self, directory: str | Path) -> None:
        d = Path(directory)
        self.net.save(d)
        keep = {k: v for k, v in self.params.items() if k != "checkpoint"}
        (d / "alphazero.json").write_text(json.dumps(keep))


def _sample(visits: Mapping[int, int], counts: np.ndarray, u: float) -> int:
    cdf = np.cumsum(counts / counts.sum())
    return list(visits)[int(min(np.searchsorted(cdf, u, side="right"), len(cdf) - 1))]


def make_alphazero(game: Game, **params: Any) -> AlphaZeroAgent:
    return AlphaZeroAgent(game, **params)


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry(
            "alphazero",
            make_alphazero,
            "PUCT search with a policy-value network (trained by the alphazero trainer)",
            dict(PARAMS),
            checkpoint_param="checkpoint",
        )
    ]
