"""``neupl``: one conditional policy network that best-responds to any mixture of a population.

Simplex-NeuPL (Liu, Lanctot, Marris, Heess, *Simplex Neural Population Learning: Any-Mixture
Bayes-Optimality in Symmetric Zero-sum Games*, arXiv 2205.15879), after NeuPL (Liu, Marris,
Hennes, Merel, Heess, Graepel, *NeuPL: Neural Population Learning*, arXiv 2202.07415): the
network ``pi(a | o, sigma)`` takes the opponents' mixture ``sigma`` over N basis policies as an
input beside the observation, and is trained on mixtures sampled over the whole simplex, so
that conditioned on any ``sigma`` it is a best response to that mixture. The opponent is drawn
from ``sigma`` once per game and not revealed, so the best response is Bayes-optimal against the
mixture (it may infer which basis policy it faces from the opponent's moves).

Why the tree: training here is full-width. For each sampled ``sigma`` and seat, one backward
pass per basis policy over the game's compiled tree (:mod:`arena.exact.tree`) gives the exact
counterfactual value of every own action against the mixture (opponent and chance reach times
the action's value, as :func:`arena.exact.exploitability.correlated_best_response` computes
them), and the loss ascends ``sum_a pi(a | I, sigma) q(I, a)`` at every own infoset — a
sample-free counterfactual policy gradient whose fixed points best-respond at every infoset.
So the trained policy's gap to the exact best response is measured, not estimated
(:meth:`NeuPLAgent.gaps`). Games whose tree cannot be compiled are refused.

The basis population: N random behaviour policies (``basis=random``: each infoset's action
distribution drawn from Dirichlet(1)) or N random pure policies (``basis=deterministic``),
from ``basis_seed``; they play every seat but the learner's. Acting, the agent conditions on its
``mixture`` (default uniform). ``improve(budget)`` runs ``budget`` training iterations of
``batch`` sampled mixtures each (a league solver step). A checkpoint is a directory:
``config.json``, ``basis.npy`` and ``weights.pt``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from arena.agent import AgentEntry, Observation, PolicyAgent
from arena.errors import ArenaError
from arena.exact.exploitability import correlated_best_response
from arena.exact.tree import Tree, backward, forward, get_tree
from arena.game import Game
from arena.hookspecs import hookimpl
from arena.plugins.agents.neural import require_torch

BASES = ("random", "deterministic")
EVAL_SEED = 20_222_205


@lru_cache(maxsize=None)
def _net_class() -> Any:
    torch = require_torch()
    nn = torch.nn

    class ConditionalNet(nn.Module):
        """Observation features and the mixture sigma in, logits over the game's actions out."""

        def __init__(self, features: int, basis: int, actions: int, hidden: int, layers: int) -> None:
            super().__init__()
            dims = [features + basis] + [hidden] * layers
            body = [m for i in range(layers) for m in (nn.Linear(dims[i], dims[i + 1]), nn.ReLU())]
            self.body = nn.Sequential(*body, nn.Linear(dims[-1], actions))

        def forward(self, x: Any, sigma: Any) -> Any:
            return self.body(torch.cat([x, sigma], dim=-1))

    return torch, ConditionalNet


def random_basis(tree: Tree, size: int, kind: str, seed: int) -> np.ndarray:
    """``size`` slot vectors: per infoset, a Dirichlet(1) distribution (``random``) or one action
    (``deterministic``)."""
    rng = np.random.default_rng(seed)
    out = np.zeros((size, tree.num_slots))
    for k in range(size):
        for i in range(tree.num_infosets):
            s0, n = int(tree.info_start[i]), int(tree.info_size[i])
            out[k, s0 : s0 + n] = rng.dirichlet(np.ones(n)) if kind == "random" else np.eye(n)[rng.integers(n)]
    return out


class NeuPLAgent(PolicyAgent):
    """A mixture-conditioned policy over a fixed basis population (see the module docstring)."""

    name = "neupl"

    def __init__(
        self,
        game: Game,
        basis: str = "random",
        basis_size: int = 4,
        basis_seed: int = 0,
        hidden: int = 64,
        layers: int = 2,
        lr: float = 0.003,
        batch: int = 16,
        alpha: float = 1.0,
        iterations: int = 0,
        seed: int = 0,
        mixture: Sequence[float] | None = None,
        checkpoint: str | None = None,
    ) -> None:
        torch, Net = _net_class()
        self.game = game
        try:
            self.tree = get_tree(game)
        except ArenaError as exc:
            raise ArenaError(f"agent 'neupl': trains on the compiled game tree, and {exc}") from None
        saved = _read(checkpoint) if checkpoint else None
        if saved is not None:
            cfg, self.basis = saved
            basis, basis_size, hidden, layers = cfg["basis"], cfg["basis_size"], cfg["hidden"], cfg["layers"]
        _check(basis, basis_size, hidden, layers, lr, batch, alpha, iterations)
        if saved is None:
            self.basis = random_basis(self.tree, int(basis_size), basis, int(basis_seed))
        self.config = {"basis": basis, "basis_size": int(basis_size), "hidden": int(hidden), "layers": int(layers)}
        self.batch, self.alpha = int(batch), float(alpha)
        self.mixture = self._mixture(mixture)
        self.rng = np.random.default_rng(seed)
        torch.manual_seed(seed)
        self._features()
        self.net = Net(self.features.shape[1], len(self.basis), game.spec.num_distinct_actions, hidden, layers)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=float(lr))
        self.iteration = 0
        if checkpoint:
            self.net.load_state_dict(torch.load(Path(checkpoint) / "weights.pt", weights_only=True))
            self.iteration = int(cfg.get("iteration", 0))
        if iterations and not checkpoint:  # trained on creation; a checkpoint is loaded as it was saved
            self.improve(int(iterations))

    # -- setup ------------------------------------------------------------------------------------
    def _mixture(self, mixture: Sequence[float] | None) -> np.ndarray:
        n = len(self.basis)
        if mixture is None:
            return np.full(n, 1.0 / n)
        m = np.asarray(list(mixture), dtype=float)
        if m.shape != (n,) or (m < 0).any() or m.sum() <= 0:
            raise ArenaError(f"agent 'neupl': mixture must be {n} non-negative weights (basis_size), got {mixture!r}")
        return m / m.sum()

    def _features(self) -> None:
        """Every infoset's observation tensor (at its representative history) and legal mask."""
        t, g = self.tree, self.game
        rows = [
            np.asarray(Observation(t.state_of(i, g), int(t.info_player[i])).tensor, dtype=np.float32).ravel()
            for i in range(t.num_infosets)
        ]
        self.features = np.stack(rows)
        self.slot_col = t.slot_action.astype(np.int64)
        d = t.derived()  # each basis policy's edge probabilities, and the others' reach at each seat's edges
        self._probs = [t.probs_with(profile) for profile in self.basis]
        self._reach = [
            [forward(t, np.where(d["owner_mask"][p], 1.0, pr[t.edge]))[d["player_edges"][p][1]] for pr in self._probs]
            for p in range(t.num_players)
        ]
        self.mask = np.zeros((t.num_infosets, g.spec.num_distinct_actions), dtype=bool)
        self.mask[t.slot_info, self.slot_col] = True

    # -- the conditional policy -------------------------------------------------------------------
    def slot_policy(self, sigma: np.ndarray, grad: bool = False) -> Any:
        """The policy conditioned on ``sigma`` at every infoset, as a slot vector: numpy
        probabilities, or with ``grad`` torch log-probabilities."""
        torch = _net_class()[0]
        x = torch.as_tensor(self.features)
        s = torch.as_tensor(np.asarray(sigma, dtype=np.float32)).expand(x.shape[0], -1)
        with torch.set_grad_enabled(grad):
            logits = self.net(x, s).masked_fill(~torch.as_tensor(self.mask), float("-inf"))
            logp = logits.log_softmax(-1)[torch.as_tensor(self.tree.slot_info), torch.as_tensor(self.slot_col)]
        return logp if grad else logp.exp().numpy().astype(float)

    def policy(self, obs: Observation) -> Mapping[int, float]:
        torch = _net_class()[0]
        x = torch.as_tensor(np.asarray(obs.tensor, dtype=np.float32).reshape(1, -1))
        with torch.no_grad():
            logits = self.net(x, torch.as_tensor(self.mixture, dtype=torch.float32)[None])[0]
        legal = obs.legal_actions
        p = logits[legal].softmax(-1).numpy()
        return {a: float(q) for a, q in zip(legal, p)}

    # -- exact values against a mixture ----------------------------------------------------------
    def action_values(self, own: np.ndarray, sigma: np.ndarray, player: int) -> tuple[np.ndarray, float]:
        """Counterfactual values of ``player``'s slots when it plays ``own`` (a slot vector; only
        its slots are read) against the basis mixed by ``sigma``, and its expected return."""
        tree = self.tree
        child, par, slot = tree.derived()["player_edges"][player]
        s0, s1 = tree.player_slots[player]
        q, value = np.zeros(s1 - s0), 0.0
        for w, pr, reach in zip(sigma, self._probs, self._reach[player]):
            if w <= 0:
                continue
            pr = pr.copy()
            pr[s0:s1] = own[s0:s1]
            values = backward(tree, pr[tree.edge], tree.utility[player].copy())
            q += np.bincount(slot, weights=w * reach * values[child], minlength=s1 - s0)
            value += w * float(values[0])
        return q, value

    def gaps(self, mixtures: Sequence[np.ndarray]) -> np.ndarray:
        """Per mixture, the exact best-response value minus the conditional policy's value,
        averaged over seats (each seat against the mixture in the others)."""
        out = []
        for sigma in mixtures:
            own = self.slot_policy(sigma)
            g = 0.0
            for p in range(self.tree.num_players):
                br, _ = correlated_best_response(self.tree, list(self.basis), list(sigma), p)
                g += br - self.action_values(own, sigma, p)[1]
            out.append(g / self.tree.num_players)
        return np.asarray(out)

    def eval_mixtures(self, count: int = 20, seed: int = EVAL_SEED) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        return [rng.dirichlet(np.ones(len(self.basis))) for _ in range(count)]

    # -- training --------------------------------------------------------------------------------
    def train_step(self) -> float:
        """One update on ``batch`` mixtures from Dirichlet(alpha): at every infoset, cross-entropy
        toward the greedy actions of the exact counterfactual values q (given the current policy
        downstream; ties split), weighted by the stake ``max q - min q``. Its fixed points
        best-respond at every infoset; unlike ascending ``sum_a pi q`` it does not stall where
        the softmax has saturated on a wrong action. Returns the policy's mean value against its
        mixtures (seat-averaged)."""
        torch = _net_class()[0]
        t, n = self.tree, self.tree.num_players
        starts = t.info_start
        loss: Any = 0.0
        mean = 0.0
        for _ in range(self.batch):
            sigma = self.rng.dirichlet(np.full(len(self.basis), self.alpha))
            logp = self.slot_policy(sigma, grad=True)
            own = logp.detach().exp().numpy().astype(float)
            q = np.zeros(t.num_slots)
            for p in range(n):
                s0, s1 = t.player_slots[p]
                q[s0:s1], v = self.action_values(own, sigma, p)
                mean += v / (n * self.batch)
            hi = np.maximum.reduceat(q, starts)[t.slot_info]
            lo = np.minimum.reduceat(q, starts)[t.slot_info]
            best = (q >= hi - 1e-12 * (1.0 + np.abs(hi))).astype(float)
            target = best / np.add.reduceat(best, starts)[t.slot_info] * (hi - lo)
            loss = loss - (logp * torch.as_tensor(target, dtype=logp.dtype)).sum() / self.batch
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.iteration += 1
        return mean

    def improve(self, budget: int) -> dict[str, float]:
        """``budget`` training iterations; the scalars a league records (the mean and largest gap
        to the exact best response over 20 fixed random mixtures)."""
        value = 0.0
        for _ in range(int(budget)):
            value = self.train_step()
        g = self.gaps(self.eval_mixtures())
        return {"iterations": float(self.iteration), "value": value, "gap": float(g.mean()), "max_gap": float(g.max())}

    # -- checkpoints -----------------------------------------------------------------------------
    def save(self, directory: str | Path) -> None:
        torch = _net_class()[0]
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        cfg = {**self.config, "game": self.game.spec.full_name, "iteration": self.iteration, "name": self.name}
        cfg["mixture"] = self.mixture.tolist()
        (d / "config.json").write_text(json.dumps(cfg, indent=2))
        np.save(d / "basis.npy", self.basis)
        torch.save(self.net.state_dict(), d / "weights.pt")


def _check(basis: str, size: int, hidden: int, layers: int, lr: float, batch: int, alpha: float, its: int) -> None:
    if basis not in BASES:
        raise ArenaError(f"agent 'neupl': basis must be one of {', '.join(BASES)}, got {basis!r}")
    for name, v in (("basis_size", size), ("hidden", hidden), ("layers", layers), ("batch", batch)):
        if not isinstance(v, int) or v < 1:
            raise ArenaError(f"agent 'neupl': {name} must be a positive integer, got {v!r}")
    if not isinstance(its, int) or its < 0:
        raise ArenaError(f"agent 'neupl': iterations must be a non-negative integer, got {its!r}")
    if not lr > 0 or not alpha > 0:
        raise ArenaError(f"agent 'neupl': lr and alpha must be positive, got {lr!r} and {alpha!r}")


def _read(directory: str) -> tuple[dict[str, Any], np.ndarray]:
    d = Path(directory)
    if not (d / "config.json").exists() or not (d / "basis.npy").exists():
        raise ArenaError(f"agent 'neupl': {directory} is not a neupl checkpoint (config.json, basis.npy)")
    return json.loads((d / "config.json").read_text()), np.load(d / "basis.npy")


def make_neupl(game: Game, mixture: Any = None, **params: Any) -> NeuPLAgent:
    """``mixture`` may be given as ``"0.5/0.25/0.25"`` in an agent spec string."""
    if isinstance(mixture, str):
        try:
            mixture = [float(x) for x in mixture.split("/")]
        except ValueError:
            raise ArenaError(f"agent 'neupl': mixture must be weights separated by '/', got {mixture!r}") from None
    agent = NeuPLAgent(game, mixture=mixture, **params)
    if params.get("checkpoint") and mixture is None:
        agent.mixture = agent._mixture(_read(params["checkpoint"])[0].get("mixture"))
    return agent


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry(
            "neupl",
            make_neupl,
            "Simplex-NeuPL: one network best-responding to any mixture of a basis population (tree games)",
            {
                "basis": "random",
                "basis_size": 4,
                "basis_seed": 0,
                "hidden": 64,
                "layers": 2,
                "lr": 0.003,
                "batch": 16,
                "alpha": 1.0,
                "iterations": 0,
                "seed": 0,
                "mixture": None,
                "checkpoint": None,
            },
            checkpoint_param="checkpoint",
        )
    ]
