"""``neural``: MLP or GRU policies on tensor observations (torch), with the critics trainers need.

One network per agent holds an actor (logits over the game's distinct actions, masked to the
legal ones), a critic ``value(obs)`` for the agent's own return and an opponent critic
``opp_value(obs)`` for the return of a co-player seen from *its* observation (Advantage
Alignment needs the opponent's advantage when the opponent is not itself a learner, e.g. a past
snapshot in a league). The GRU reads an observation of shape ``(T, F)`` as a sequence (e.g.
``ipd(memory=4)``); other shapes are one step of flattened features.

Sampling takes one uniform per decision from each game's own stream (``obs.uniform()``), so
rollouts are reproducible per seed whatever the batching; ``act_batch_info`` returns the
log-probability of every sampled action for the trainers. On a game with an array face
(:mod:`arena.arrays`) the agent decides from arrays (``act_arrays``, ``act_arrays_info``): the
face's tensors, one forward pass per distinct information state of the call, the same draw from
the same stream (:func:`arena.arrays.pick_weighted`), so a seed plays the same games, with the
same log-probabilities, on either path of the match runner. ``array_native=false`` keeps it on
the ``State`` path. A checkpoint is a directory: ``config.json`` plus ``weights.pt``.
torch is imported lazily, so the plugin registers (and fails with one clear line) without it.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from arena.agent import Agent, AgentEntry, Observation
from arena.arrays import ArrayGames, pick_weighted
from arena.errors import ArenaError
from arena.game import Action, Game
from arena.hookspecs import hookimpl

ARCHS = ("mlp", "gru")

MIN_ROWS = 16
"""Acting runs the network on at least this many rows (a smaller batch is padded): torch's CPU
kernels sum in another order for a handful of rows than for more (measured with torch 2.13: rows
in a call of 1 to 7 differ in the last bit from the same rows among 8 or more), and a decision's
log-probability must not depend on how many games shared its call."""


def require_torch():
    try:
        import torch
    except ImportError:
        raise ArenaError("the neural agent needs torch: pip install 'arena-rl[torch]'") from None
    return torch


@lru_cache(maxsize=None)
def _modules():
    """Torch classes, defined on first use so importing this plugin never needs torch."""
    torch = require_torch()
    nn = torch.nn

    class Encoder(nn.Module):
        def __init__(self, shape: tuple[int, ...], arch: str, hidden: int, layers: int) -> None:
            super().__init__()
            self.arch = arch
            self.steps, self.feat = (shape[0], int(np.prod(shape[1:]))) if len(shape) == 2 else (1, int(np.prod(shape)))
            if arch == "gru":
                self.rnn = nn.GRU(self.feat, hidden, batch_first=True)
                self.body = nn.Sequential(
                    *[m for _ in range(layers - 1) for m in (nn.Linear(hidden, hidden), nn.Tanh())]
                )
            else:
                dims = [self.steps * self.feat] + [hidden] * layers
                self.body = nn.Sequential(
                    *[m for i in range(layers) for m in (nn.Linear(dims[i], dims[i + 1]), nn.Tanh())]
                )

        def forward(self, x):
            if self.arch == "gru":
                _, h = self.rnn(x.reshape(x.shape[0], self.steps, self.feat))
                return self.body(h[-1])
            return self.body(x.reshape(x.shape[0], -1))

    class PolicyValueNet(nn.Module):
        def __init__(self, shape: tuple[int, ...], actions: int, arch: str, hidden: int, layers: int) -> None:
            super().__init__()
            self.actor = nn.Sequential(Encoder(shape, arch, hidden, layers), nn.Linear(hidden, actions))
            self.critic = nn.Sequential(Encoder(shape, arch, hidden, layers), nn.Linear(hidden, 1))
            self.opp_critic = nn.Sequential(Encoder(shape, arch, hidden, layers), nn.Linear(hidden, 1))
            with torch.no_grad():  # near-uniform initial policy
                self.actor[-1].weight.mul_(0.01)
                self.actor[-1].bias.zero_()

    return torch, PolicyValueNet


class NeuralAgent(Agent):
    """A torch policy with critics; ``name`` is its seat label in trajectories (keep it unique)."""

    def __init__(
        self,
        game: Game,
        arch: str = "mlp",
        hidden: int = 64,
        layers: int = 2,
        device: str = "cpu",
        seed: int = 0,
        greedy: bool = False,
        checkpoint: str | None = None,
        array_native: bool = True,
    ) -> None:
        if checkpoint:
            cfg = _read_config(checkpoint)
            arch, hidden, layers = cfg["arch"], cfg["hidden"], cfg["layers"]
        if arch not in ARCHS:
            raise ArenaError(f"agent 'neural': arch must be one of {', '.join(ARCHS)}, got {arch!r}")
        torch, Net = _modules()
        if str(device).startswith("cuda") and not torch.cuda.is_available():
            raise ArenaError(f"agent 'neural': device {device!r} requested but CUDA is not available")
        self.game = game
        self.shape = tuple(game.spec.observation_shape)
        self.num_actions = game.spec.num_distinct_actions
        self.config = {
            "arch": arch,
            "hidden": int(hidden),
            "layers": int(layers),
            "game": game.spec.full_name,
            "observation_shape": list(self.shape),
            "num_actions": self.num_actions,
        }
        self.device = torch.device(device)
        self.greedy = greedy
        self.array_native = bool(array_native)
        """Whether the match runner may play this agent on a game's array face (``act_arrays``)."""
        torch.manual_seed(seed)
        self.net = Net(self.shape, self.num_actions, arch, int(hidden), int(layers)).to(self.device)
        self.name = f"neural-{arch}"
        if checkpoint:
            self.load_weights(checkpoint)

    # -- tensors ---------------------------------------------------------------------------------
    def batch(self, observations: Sequence[Observation]):
        """Stacked observation tensors and legal-action masks on the agent's device."""
        torch = _modules()[0]
        x = np.stack([np.asarray(o.tensor, dtype=np.float32).reshape(self.shape) for o in observations])
        mask = np.zeros((len(observations), self.num_actions), dtype=bool)
        for i, o in enumerate(observations):
            mask[i, o.legal_actions] = True
        return torch.as_tensor(x, device=self.device), torch.as_tensor(mask, device=self.device)

    def log_probs(self, x, mask):
        """Log-probabilities over all actions (illegal ones at -inf)."""
        logits = self.net.actor(x).masked_fill(~mask, float("-inf"))
        return logits.log_softmax(-1)

    def value(self, x):
        return self.net.critic(x).squeeze(-1)

    def opp_value(self, x):
        return self.net.opp_critic(x).squeeze(-1)

    # -- acting ----------------------------------------------------------------------------------
    def act_log_probs(self, x, mask, inverse=None):
        """Log-probabilities for acting, each row's independent of the others in the call
        (:data:`MIN_ROWS`): the actor on ``x``, its rows ``inverse`` when given (one forward
        pass per distinct observation), masked to ``mask``."""
        logits = self.net.actor(_padded(x, 0.0))[: x.shape[0]]
        if inverse is not None:
            logits = logits[inverse]
        n = logits.shape[0]
        logits = _padded(logits, 0.0).masked_fill(~_padded(mask, True), float("-inf"))
        return logits.log_softmax(-1)[:n]

    def choose(self, logp: np.ndarray, mask: np.ndarray, u: np.ndarray | None) -> np.ndarray:
        """Each row's action: the most likely (``greedy``) or drawn with its uniform ``u``
        (:func:`~arena.arrays.pick_weighted`: ``sample_from`` on the probabilities)."""
        p = np.exp(logp)
        if self.greedy or u is None:
            return p.argmax(axis=1)
        return pick_weighted(p, mask, u)

    def act_batch_info(self, observations: Sequence[Observation]) -> tuple[list[Action], list[dict[str, Any]]]:
        torch = _modules()[0]
        choice = [i for i, o in enumerate(observations) if o.decision == "choice"]
        actions: list[Action] = ["" for _ in observations]  # a neural policy has nothing to say at text turns
        infos: list[dict[str, Any]] = [{} for _ in observations]
        if not choice:
            return actions, infos
        chosen = [observations[i] for i in choice]
        with torch.no_grad():
            x, mask = self.batch(chosen)
            logp = self.act_log_probs(x, mask).cpu().numpy()
        u = None if self.greedy else np.array([o.uniform() for o in chosen])
        picked = self.choose(logp, mask.cpu().numpy(), u)
        for i, a, lp in zip(choice, picked.tolist(), logp[np.arange(len(choice)), picked].tolist()):
            actions[i] = a
            infos[i] = {"log_prob": lp}
        return actions, infos

    def act_batch(self, observations: Sequence[Observation]) -> list[Action]:
        return self.act_batch_info(observations)[0]

    def act_arrays_info(self, games: Any, rows: np.ndarray, player: int | None = None):
        """:meth:`act_batch_info` on an array face (:mod:`arena.arrays`): the actions of games
        ``rows`` and each decision's ``{"log_prob": ...}``, the same values from the same draws."""
        actions, logp = self._arrays(games, rows, player)
        return actions, [{"log_prob": v} for v in logp.tolist()]

    def act_arrays(self, games: Any, rows: np.ndarray, player: int | None = None) -> np.ndarray:
        return self._arrays(games, rows, player)[0]

    def _arrays(self, games: Any, rows: np.ndarray, player: int | None) -> tuple[np.ndarray, np.ndarray]:
        """Actions and their log-probabilities; a face whose tensors are its tables' runs the
        network once per distinct information state of the call."""
        torch = _modules()[0]
        mask = games.legal_mask(rows, player)
        inverse = None
        if games.face.tabled and type(games).observations is ArrayGames.observations:  # tensors: the tables'
            states, inverse = np.unique(games.info_states(rows, player), return_inverse=True)
            x = games.face.tensors(states)
        else:
            x = games.observations(rows, player)
        x = np.asarray(x, dtype=np.float32).reshape((len(x),) + self.shape)
        with torch.no_grad():
            logp = (
                self.act_log_probs(
                    torch.as_tensor(x, device=self.device),
                    torch.as_tensor(mask, device=self.device),
                    None if inverse is None else torch.as_tensor(inverse.reshape(-1), device=self.device),
                )
                .cpu()
                .numpy()
            )
        u = None if self.greedy else games.rng.uniform(rows)
        actions = self.choose(logp, mask, u)
        return actions, logp[np.arange(len(rows)), actions]

    def policy(self, obs: Observation) -> Mapping[int, float]:
        torch = _modules()[0]
        with torch.no_grad():
            x, mask = self.batch([obs])
            p = self.log_probs(x, mask).exp()[0].cpu().numpy()
        return {a: float(p[a]) for a in obs.legal_actions}

    # -- checkpoints -----------------------------------------------------------------------------
    def save(self, directory: str | Path) -> None:
        torch = _modules()[0]
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text(json.dumps({**self.config, "name": self.name}, indent=2))
        torch.save(self.net.state_dict(), d / "weights.pt")

    def load_weights(self, directory: str | Path) -> None:
        torch = _modules()[0]
        path = Path(directory) / "weights.pt"
        if not path.exists():
            raise ArenaError(f"agent 'neural': no weights.pt in checkpoint directory {directory}")
        try:
            self.net.load_state_dict(torch.load(path, map_location=self.device, weights_only=True))
        except RuntimeError as exc:
            raise ArenaError(
                f"agent 'neural': checkpoint {directory} does not fit this game/architecture: "
                f"{str(exc).splitlines()[0]}"
            ) from None

    def snapshot(self, name: str) -> "NeuralAgent":
        """A frozen copy (for leagues: past selves as opponents)."""
        twin = copy.copy(self)
        twin.net = copy.deepcopy(self.net)
        twin.name = name
        return twin


def _padded(t, fill: float | bool):
    """``t`` with rows of ``fill`` appended up to :data:`MIN_ROWS`."""
    if t.shape[0] >= MIN_ROWS:
        return t
    torch = _modules()[0]
    pad = torch.full((MIN_ROWS - t.shape[0],) + tuple(t.shape[1:]), fill, dtype=t.dtype, device=t.device)
    return torch.cat([t, pad])


def _read_config(directory: str | Path) -> dict[str, Any]:
    path = Path(directory) / "config.json"
    if not path.exists():
        raise ArenaError(f"agent 'neural': checkpoint directory {directory} has no config.json")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ArenaError(f"agent 'neural': {path} is not valid JSON ({exc.msg})") from None


def load_neural(directory: str | Path, game: Game, **params: Any) -> NeuralAgent:
    """A neural agent from a checkpoint directory written by :meth:`NeuralAgent.save`."""
    agent = NeuralAgent(game, checkpoint=str(directory), **params)
    agent.name = _read_config(directory).get("name", agent.name)
    return agent


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry(
            "neural",
            NeuralAgent,
            "MLP/GRU policy on tensor observations (torch); checkpoint=DIR loads one",
            {
                "arch": "mlp",
                "hidden": 64,
                "layers": 2,
                "device": "cpu",
                "seed": 0,
                "greedy": False,
                "checkpoint": None,
                "array_native": True,
            },
            checkpoint_param="checkpoint",
        )
    ]
