"""Value decomposition for cooperative simultaneous-move games: VDN and QMIX, and the ``qnet``
agent they train.

VDN (Sunehag et al., arXiv 1706.05296) learns ``Q_tot(s, a) = sum_i Q_i(o_i, a_i)``; QMIX
(Rashid et al., ICML 2018, arXiv 1803.11485) learns ``Q_tot = f(Q_1..Q_n; s)`` with ``f``
monotone in every ``Q_i`` (hypernetworks of the state give non-negative weights, ``|W|``; ELU
hidden layer; a state-dependent bias ``V(s)``), so each agent's greedy action is the joint
greedy action. Both fit the team reward by TD on joint transitions from a replay buffer; the
state is the concatenation of the agents' observations. The agents act alone: ``qnet`` is
epsilon-greedy on its own Q-values, and the trainer anneals epsilon.

``weighting=optimistic`` adds the loss weighting of optimistically-weighted QMIX (OW-QMIX).

Known limit (and why the climbing game is here): neither factorisation can represent every
payoff table — VDN only additive ones, QMIX only monotone ones — so both can settle on a
sub-optimal joint action (docs/results/cooperative.md has the numbers).

The replay buffer, optimiser, target networks, mixer and counters are the trainer's
``state_dict``, so a league run resumes to the same numbers.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from arena.agent import Agent, AgentEntry, Observation
from arena.errors import ArenaError
from arena.game import Action, Game
from arena.hookspecs import hookimpl
from arena.trainer import Trainer, TrainerEntry, Trajectory


@lru_cache(maxsize=None)
def _torch():
    from arena.plugins.agents.neural import require_torch

    return require_torch()


def _mlp(inp: int, hidden: int, out: int):
    nn = _torch().nn
    return nn.Sequential(
        nn.Linear(inp, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, out)
    )


class QAgent(Agent):
    """Epsilon-greedy on its own Q-values over the game's actions (illegal ones masked)."""

    name = "qnet"

    def __init__(
        self, game: Game, hidden: int = 32, seed: int = 0, epsilon: float = 0.0, checkpoint: str | None = None
    ) -> None:
        torch = _torch()
        if checkpoint:
            hidden = int(json.loads((Path(checkpoint) / "config.json").read_text())["hidden"])
        self.game = game
        self.features = int(np.prod(game.spec.observation_shape))
        self.num_actions = game.spec.num_distinct_actions
        self.hidden, self.epsilon = int(hidden), float(epsilon)
        torch.manual_seed(seed)
        self.net = _mlp(self.features, self.hidden, self.num_actions)
        if checkpoint:
            self.net.load_state_dict(torch.load(Path(checkpoint) / "weights.pt", weights_only=True))

    def q_values(self, observations: Sequence[Observation]) -> np.ndarray:
        torch = _torch()
        x = np.stack([np.asarray(o.tensor, dtype=np.float32).reshape(-1) for o in observations])
        with torch.no_grad():
            q = self.net(torch.as_tensor(x)).numpy().astype(float)
        for row, o in zip(q, observations):
            illegal = np.ones(self.num_actions, dtype=bool)
            illegal[o.legal_actions] = False
            row[illegal] = -np.inf
        return q

    def distribution(self, q: np.ndarray, legal: Sequence[int]) -> dict[int, float]:
        best = max(legal, key=lambda a: q[a])
        eps = self.epsilon
        return {a: eps / len(legal) + (1.0 - eps) * (a == best) for a in legal}

    def policy(self, obs: Observation) -> Mapping[int, float]:
        return self.distribution(self.q_values([obs])[0], obs.legal_actions)

    def act_batch(self, observations: Sequence[Observation]) -> list[Action]:
        out: list[Action] = []
        for o, q in zip(observations, self.q_values(observations)):
            legal = o.legal_actions
            if o.uniform() < self.epsilon:
                out.append(legal[min(int(o.uniform() * len(legal)), len(legal) - 1)])
            else:
                out.append(max(legal, key=lambda a: q[a]))
        return out

    def save(self, directory: str | Path) -> None:
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text(json.dumps({"hidden": self.hidden, "game": self.game.spec.full_name}))
        _torch().save(self.net.state_dict(), d / "weights.pt")


@dataclass
class VDConfig:
    lr: float = 5e-3
    gamma: float = 0.99
    batch: int = 64
    buffer: int = 2000
    train_steps: int = 4
    """Gradient steps per update call."""
    eps_start: float = 1.0
    eps_end: float = 0.05
    eps_updates: int = 100
    """Update calls over which epsilon falls linearly from ``eps_start`` to ``eps_end``."""
    target_every: int = 10
    mixer_hidden: int = 32
    weighting: str = "none"
    """``optimistic``: the loss weight of Weighted QMIX's OW variant (Rashid, Farquhar, Peng,
    Whiteson, arXiv 2006.10800) — 1 where Q_tot is below its target, ``alpha`` elsewhere — so
    the fit favours the joint actions that paid more than believed. Without WQMIX's unrestricted
    central Q* (exact here for one-round games, whose target is the reward)."""
    alpha: float = 0.1
    seed: int = 0


class ValueDecomposition(Trainer):
    """``vdn`` (sum) or ``qmix`` (monotone mixing network) over one ``qnet`` learner per seat."""

    def __init__(self, game: Game, learners: Sequence[Any], mixer: str, **params: Any) -> None:
        torch = _torch()
        self.name = mixer
        known = {f.name for f in fields(VDConfig)}
        if set(params) - known:
            raise ArenaError(
                f"trainer '{mixer}' has no parameter {sorted(set(params) - known)}; parameters: {sorted(known)}"
            )
        if not game.spec.simultaneous:
            raise ArenaError(f"trainer '{mixer}' is for simultaneous-move games; '{game.spec.full_name}' is not one")
        n = game.spec.num_players
        if len(learners) != n or not all(isinstance(a, QAgent) for a in learners):
            raise ArenaError(
                f"trainer '{mixer}' needs one qnet learner per seat ({n}), got {[a.name for a in learners]}"
            )
        self.config, self.game, self.learners = VDConfig(**params), game, list(learners)
        if self.config.weighting not in ("none", "optimistic") or not 0 < self.config.alpha <= 1:
            raise ArenaError(f"trainer '{mixer}': weighting must be none or optimistic and alpha in (0, 1]")
        torch.manual_seed(self.config.seed)
        self.state_size = n * learners[0].features
        self.mixer = _Mixer(n, self.state_size, self.config.mixer_hidden) if mixer == "qmix" else None
        self.targets = [_mlp(a.features, a.hidden, a.num_actions) for a in self.learners]
        self.target_mixer = _Mixer(n, self.state_size, self.config.mixer_hidden) if self.mixer else None
        params_ = [p for a in self.learners for p in a.net.parameters()] + (
            list(self.mixer.parameters()) if self.mixer else []
        )
        self.optimizer = torch.optim.Adam(params_, lr=self.config.lr)
        self.generator = torch.Generator().manual_seed(self.config.seed)
        self.buffer: dict[str, Any] = {}
        self.updates = 0
        self._sync_targets()
        self._set_epsilon()

    def _sync_targets(self) -> None:
        for a, t in zip(self.learners, self.targets):
            t.load_state_dict(a.net.state_dict())
        if self.mixer is not None and self.target_mixer is not None:
            self.target_mixer.load_state_dict(self.mixer.state_dict())

    def _set_epsilon(self) -> None:
        c = self.config
        frac = min(1.0, self.updates / max(1, c.eps_updates))
        for a in self.learners:
            a.epsilon = c.eps_start + frac * (c.eps_end - c.eps_start)

    def transitions(self, trajectories: Sequence[Trajectory]) -> dict[str, np.ndarray]:
        """Joint transitions: every player's observation and action per round, the team reward
        (player 0's), the next round's observations and whether the game ended."""
        obs, act, rew, nxt, done = [], [], [], [], []
        n = self.game.spec.num_players
        for traj in trajectories:
            per = [[s for s in traj.for_player(p) if s.observation.decision == "choice"] for p in range(n)]
            rounds = min(len(steps) for steps in per)
            for t in range(rounds):
                obs.append(
                    np.concatenate(
                        [np.asarray(per[p][t].observation.tensor, dtype=np.float32).reshape(-1) for p in range(n)]
                    )
                )
                act.append([int(per[p][t].action) for p in range(n)])
                rew.append(float(per[0][t].reward))
                last = t == rounds - 1
                nxt.append(
                    obs[-1]
                    if last
                    else np.concatenate(
                        [np.asarray(per[p][t + 1].observation.tensor, dtype=np.float32).reshape(-1) for p in range(n)]
                    )
                )
                done.append(float(last))
        return {"obs": np.asarray(obs, np.float32), "act": np.asarray(act, np.int64), "rew": np.asarray(rew, np.float32),
                "next": np.asarray(nxt, np.float32), "done": np.asarray(done, np.float32)}  # fmt: skip

    def _remember(self, new: dict[str, np.ndarray]) -> None:
        torch = _torch()
        for k, v in new.items():
            t = torch.as_tensor(v)
            old = self.buffer.get(k)
            self.buffer[k] = (t if old is None else torch.cat([old, t]))[-self.config.buffer :]

    def q_tot(self, nets: Sequence[Any], mixer: Any, obs, actions=None):
        """Q_tot of the given joint actions (or of every agent's greedy action when None)."""
        torch = _torch()
        f = self.learners[0].features
        qs = []
        for i, net in enumerate(nets):
            q = net(obs[:, i * f : (i + 1) * f])
            qs.append(q.max(dim=1).values if actions is None else q.gather(1, actions[:, i : i + 1]).squeeze(1))
        q = torch.stack(qs, dim=1)
        return q.sum(dim=1) if mixer is None else mixer(q, obs)

    def update(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        torch = _torch()
        self._remember(self.transitions(trajectories))
        size = len(self.buffer.get("rew", []))
        losses = []
        for _ in range(self.config.train_steps if size else 0):
            idx = torch.randint(0, size, (min(self.config.batch, size),), generator=self.generator)
            b = {k: v[idx] for k, v in self.buffer.items()}
            with torch.no_grad():
                nxt = self.q_tot(self.targets, self.target_mixer, b["next"])
                target = b["rew"] + self.config.gamma * (1.0 - b["done"]) * nxt
            q = self.q_tot([a.net for a in self.learners], self.mixer, b["obs"], b["act"])
            w = torch.ones_like(q)
            if self.config.weighting == "optimistic":
                w = torch.where(q < target, w, torch.full_like(q, self.config.alpha))
            loss = (w * (q - target) ** 2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for g in self.optimizer.param_groups for p in g["params"]], 10.0)
            self.optimizer.step()
            losses.append(float(loss.detach()))
        self.updates += 1
        if self.updates % self.config.target_every == 0:
            self._sync_targets()
        self._set_epsilon()
        return {
            "loss": float(np.mean(losses)) if losses else 0.0,
            "epsilon": self.learners[0].epsilon,
            "buffer": float(size),
        }

    def state_dict(self) -> dict[str, Any]:
        return {
            "optimizer": self.optimizer.state_dict(),
            "generator": self.generator.get_state(),
            "buffer": dict(self.buffer),
            "updates": self.updates,
            "targets": [t.state_dict() for t in self.targets],
            "mixer": self.mixer.state_dict() if self.mixer else {},
            "target_mixer": self.target_mixer.state_dict() if self.target_mixer else {},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        self.buffer = dict(state["buffer"])
        self.updates = int(state["updates"])
        for t, s in zip(self.targets, state["targets"]):
            t.load_state_dict(s)
        if self.mixer is not None and self.target_mixer is not None:
            self.mixer.load_state_dict(state["mixer"])
            self.target_mixer.load_state_dict(state["target_mixer"])
        self._set_epsilon()

    def save(self, directory: str | Path) -> None:
        for agent in self.learners:
            agent.save(Path(directory) / agent.name)


def _Mixer(n: int, state: int, hidden: int):
    """QMIX's monotone mixing network (hypernetworks of the state; |W| keeps dQ_tot/dQ_i >= 0)."""
    torch = _torch()
    nn = torch.nn

    class Mixer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w1, self.b1 = nn.Linear(state, n * hidden), nn.Linear(state, hidden)
            self.w2 = nn.Linear(state, hidden)
            self.v = nn.Sequential(nn.Linear(state, hidden), nn.ReLU(), nn.Linear(hidden, 1))

        def forward(self, q, s):
            w1 = self.w1(s).abs().view(-1, n, hidden)
            h = nn.functional.elu(torch.bmm(q.unsqueeze(1), w1).squeeze(1) + self.b1(s))
            return (h * self.w2(s).abs()).sum(dim=1) + self.v(s).squeeze(1)

    return Mixer()


def make_vdn(game: Game, learners: Sequence[Any], **params: Any) -> ValueDecomposition:
    return ValueDecomposition(game, learners, "vdn", **params)


def make_qmix(game: Game, learners: Sequence[Any], **params: Any) -> ValueDecomposition:
    return ValueDecomposition(game, learners, "qmix", **params)


@hookimpl
def arena_trainers() -> list[TrainerEntry]:
    defaults = asdict(VDConfig())
    return [
        TrainerEntry(
            "vdn", make_vdn, "VDN: team Q as a sum of per-agent Q (qnet learners, simultaneous games)", defaults
        ),
        TrainerEntry("qmix", make_qmix, "QMIX: team Q as a monotone mix of per-agent Q (qnet learners)", defaults),
    ]


@hookimpl
def arena_agents() -> list[AgentEntry]:
    return [
        AgentEntry(
            "qnet",
            QAgent,
            "epsilon-greedy Q-network agent (trained by vdn / qmix)",
            {"hidden": 32, "seed": 0, "epsilon": 0.0, "checkpoint": None},
            checkpoint_param="checkpoint",
        )
    ]
