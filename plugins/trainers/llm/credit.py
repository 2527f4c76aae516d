"""Turn-level credit for the policy-gradient LLM trainers: ``credit: trajectory | turn | critic``.

A *turn* is one decision of the learner's seat that carries token ids (:func:`tokens.learner_decisions`).
Per (game, seat) with turns ``k = 0..n-1`` the turn rewards are ``r_k``: the seat's step rewards
from turn k up to turn k+1, ``invalid_penalty`` per invalid generation attempt of those steps, and
on the last turn whatever of the game's return the step rewards do not already hold (so
``sum_k r_k`` is exactly the shaped return that ``credit: trajectory`` gives every turn). With a
value ``V_k`` per turn (``V_n = 0``: the game is over) the advantage of turn k is turn-level GAE

    delta_k = r_k + gamma V_{k+1} - V_k,   A_k = sum_j (gamma lam)^j delta_{k+j}

broadcast to every token of that turn's response (the clipped update scores one ratio per
decision). Three estimators:

- ``trajectory`` — today's: every turn of a game gets the game's shaped return minus the
  trainer's own baseline (``selfplay_rlvr``'s role EMA). No values.
- ``turn`` — a *group baseline from the same state* (MT-GRPO; *Reinforcing Multi-Turn Reasoning in
  LLM Agents via Turn-Level Credit Assignment*, arXiv 2505.11821, and GRPO's group baseline moved
  from the prompt to the turn): from the state each turn was decided in (rebuilt exactly by
  :func:`.rollout.replay`) the current policy plays ``playouts`` continuations to the end
  (:func:`.rollout.playout_finals`, the playout machinery of ``lspo_playout``; the other seats are
  played by the learner when it holds them, else by ``playout_agents``), and ``V_k`` is their mean
  return for the deciding seat — a Monte Carlo estimate of ``V^pi(s_k)``. Why it is sound: the
  playouts are independent of the recorded action given ``s_k``, so ``V_k`` is a state-dependent
  baseline and ``G_k - V_k`` (``lam: 1``) is an unbiased advantage; with ``lam < 1`` the recorded
  future past turn k+1 is replaced by ``V_{k+1}``, and since ``E[V_{k+1} | s_k, a_k] = Q(s_k, a_k)``
  (the next turn's state is drawn by the opponents and chance after ``a_k``) ``r_k + V_{k+1} - V_k``
  is unbiased too, with less of the later turns' luck in it. The playouts are games: they are
  counted in ``credit/playout_games`` (a sample-efficiency comparison must count them).
- ``critic`` — a learned utterance-level value (Turn-PPO, arXiv 2512.17008; ArCHer, arXiv
  2402.19446): ``V_k = w . z(h_k) + b`` where ``h_k`` is the policy model's last hidden state at
  the last prompt token of turn k (one no-grad forward over the distinct prompts,
  :meth:`.model.TrainableLLM.prompt_features`) and ``z`` standardises it per dimension with running
  statistics (:meth:`Credit.features`; so one ``critic_lr`` suits any model) and ``w``, ``b`` fit the
  residual of the targets after their running mean (an offset outside the head: the returns' mean is
  not left to a bias that moves ``critic_lr`` per step, while 128 weights fit it instead), trained after each update by ``critic_steps`` full-batch Adam steps of MSE to
  the turn's discounted return-to-go ``G_k = sum_j gamma^j r_{k+j}``. The advantages use the values
  from before that fit (the critic has not seen the games it judges). The head reads the features
  detached, so the value loss never moves the policy's weights; its lr may exceed the actor's.
  Its weights and Adam moments are part of the trainer state (a resumed run makes the same next
  update).

Which trainers take it: ``selfplay_rlvr``. Not ``llm_advantage_alignment``: its credit is already
per time step (returns-to-go with a leave-one-out baseline per time index), and the co-player term
it adds is built from those group advantages. Not ``arenarl``: its rollouts have no per-turn
reward at all — a judge ranks whole rollouts against each other, so the only signal is a rank per
rollout (its group is already a group of continuations from one start state).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import Game
from arena.plugins.trainers.ppo import gae  # turn-level GAE is PPO's over turns, V after the last turn 0
from arena.trainer import Trajectory

from .aa import returns_to_go
from .rollout import playout_finals, replay
from .tokens import Decision

CREDITS = ("trajectory", "turn", "critic")
NORM_MOMENTUM = 0.9
CREDIT_DEFAULTS: dict[str, Any] = {
    "credit": "trajectory",
    "gamma": 1.0,
    "lam": 0.95,
    "playouts": 4,
    "playout_agents": None,
    "critic_lr": 0.003,
    "critic_steps": 20,
}
"""The credit knobs a trainer merges into its ``defaults`` (module docstring)."""


def turns(decisions: Sequence[Decision]) -> dict[tuple[int, int], list[int]]:
    """(trajectory, seat) -> the indices of its decisions, in game order."""
    out: dict[tuple[int, int], list[int]] = {}
    for i, d in enumerate(decisions):
        out.setdefault((d.traj, d.player), []).append(i)
    for idx in out.values():
        idx.sort(key=lambda i: decisions[i].step)
    return out


def turn_rewards(traj: Trajectory, player: int, steps: Sequence[int], invalid_penalty: float) -> np.ndarray:
    """``r_k`` for the turns at step indices ``steps`` (module docstring): step rewards and invalid
    penalties of each turn's window (steps before the first turn count to it), the rest of the
    return on the last turn. ``sum r_k == returns[player] + invalid_penalty * invalid attempts``."""
    r = np.zeros(len(steps))
    total = 0.0
    for j, s in enumerate(traj.steps):
        if s.player != player:
            continue
        k = max(0, int(np.searchsorted(steps, j, side="right")) - 1)
        bad = int(s.extra.get("invalid_attempts", 0) or 0) if isinstance(s.extra, dict) else 0
        r[k] += float(s.reward) + invalid_penalty * bad
        total += float(s.reward)
    r[-1] += float(traj.returns[player]) - total
    return r


class SeatAgents:
    """One agent per seat for playouts: ``act_batch`` splits a batch by the deciding seat."""

    has_policy = False

    def __init__(self, agents: Sequence[Any]) -> None:
        self.agents = list(agents)

    def act_batch(self, observations: Sequence[Any]) -> list[Any]:
        out: list[Any] = [None] * len(observations)
        for seat, agent in enumerate(self.agents):
            idx = [i for i, o in enumerate(observations) if o.player == seat]
            if idx:
                for i, a in zip(idx, agent.act_batch([observations[i] for i in idx])):
                    out[i] = a
        return out


class Credit:
    """The credit of one trainer (``owner`` names it in errors): advantages per decision, the
    critic head when ``credit: critic``, and its state."""

    def __init__(self, owner: str, game: Game, agent: Any, model: Any, params: dict[str, Any]) -> None:
        self.owner, self.game, self.agent, self.model = owner, game, agent, model
        self.mode = params["credit"]
        if self.mode not in CREDITS:
            raise ArenaError(f"trainer '{owner}': credit must be one of {', '.join(CREDITS)}, not {self.mode!r}")
        self.gamma, self.lam = float(params["gamma"]), float(params["lam"])
        for key, v in (("gamma", self.gamma), ("lam", self.lam)):
            if not 0.0 <= v <= 1.0:
                raise ArenaError(f"trainer '{owner}': {key} must be in [0, 1], not {v}")
        self.playouts = int(params["playouts"])
        if self.playouts < 1:
            raise ArenaError(f"trainer '{owner}': playouts must be >= 1, not {params['playouts']}")
        self.playout_specs = _playout_specs(owner, params["playout_agents"])
        self.playout_agents: dict[str, Any] = {}
        self.critic_steps = int(params["critic_steps"])
        self.seed = int(params["seed"])
        self.calls = 0
        self.playout_games = 0
        self.head: Any = None
        self.norm_mean: Any = None
        self.norm_var: Any = None
        self.offset, self.offset_set = 0.0, False
        if self.mode == "critic":
            self._build_head(float(params["critic_lr"]))

    # -- the critic -------------------------------------------------------------------------------
    def _build_head(self, lr: float) -> None:
        import torch

        if lr <= 0:
            raise ArenaError(f"trainer '{self.owner}': critic_lr must be > 0, not {lr}")
        hidden = int(self.model.hidden_size())
        self.head = torch.nn.Linear(hidden, 1)
        torch.nn.init.zeros_(self.head.weight)
        torch.nn.init.zeros_(self.head.bias)
        self.head.to(self.model.device())
        self.head_opt = torch.optim.Adam(self.head.parameters(), lr=lr)

    def features(self, decisions: Sequence[Decision], track: bool = False) -> Any:
        """The standardised hidden state at the last prompt token of each decision (detached):
        ``(h - mu) / sqrt(var + eps)`` per dimension, with ``mu``, ``var`` running means over the
        batches seen (``track``: this batch moves them, by ``NORM_MOMENTUM``; the first sets them).
        A tiny model's states for two prompts that differ in one card are nearly parallel: raw or
        layer-normed, a linear head needs thousands of steps to tell them apart; standardised, tens."""
        import torch

        h = self.model.prompt_features([d.prompt_ids for d in decisions]).float()
        if track and len(h):
            mu, var = h.mean(dim=0), h.var(dim=0, unbiased=False)
            if self.norm_mean is None:
                self.norm_mean, self.norm_var = mu, var
            else:
                m = NORM_MOMENTUM
                self.norm_mean = m * self.norm_mean + (1 - m) * mu
                self.norm_var = m * self.norm_var + (1 - m) * var
        if self.norm_mean is None:
            return h - h  # no statistics yet: V = b
        return (h - self.norm_mean) / torch.sqrt(self.norm_var + 1e-4)

    def values(self, feats: Any) -> np.ndarray:
        import torch

        with torch.no_grad():
            return self.offset + self.head(feats).squeeze(-1).cpu().numpy().astype(np.float64)

    def fit_critic(self, feats: Any, targets: Sequence[float]) -> tuple[float, float]:
        """Move the offset (a running mean of the targets, by ``NORM_MOMENTUM``; the first batch
        sets it), then ``critic_steps`` Adam steps of MSE of the head to the rest of ``targets``;
        the loss of ``V`` before and after the steps."""
        import torch

        mean = float(np.mean(targets))
        self.offset = mean if not self.offset_set else NORM_MOMENTUM * self.offset + (1 - NORM_MOMENTUM) * mean
        self.offset_set = True
        y = torch.tensor(np.asarray(targets, dtype=np.float32) - np.float32(self.offset), device=feats.device)
        first = last = 0.0
        for i in range(max(1, self.critic_steps)):
            loss = torch.mean((self.head(feats).squeeze(-1) - y) ** 2)
            self.head_opt.zero_grad(set_to_none=True)
            loss.backward()
            self.head_opt.step()
            first = float(loss.detach()) if i == 0 else first
        with torch.no_grad():
            last = float(torch.mean((self.head(feats).squeeze(-1) - y) ** 2))
        return first, last

    # -- the turn baseline --------------------------------------------------------------------------
    def _seat_agents(self, seats: Sequence[str]) -> SeatAgents:
        out = []
        for name in seats:
            if name == self.agent.name:
                out.append(self.agent)
                continue
            if name not in self.playout_specs:
                raise ArenaError(
                    f"trainer '{self.owner}': credit: turn plays the games out from each turn, and seat "
                    f"'{name}' is not the learner; give its agent in playout_agents (e.g. "
                    f"playout_agents: {{{name}: fair}}; llm-train names its opponents opponent_0, opponent_1, ...)"
                )
            if name not in self.playout_agents:
                from arena.loading import load_agent

                agent = load_agent(self.playout_specs[name], self.game)
                agent.name = name
                self.playout_agents[name] = agent
            out.append(self.playout_agents[name])
        return SeatAgents(out)

    def playout_values(
        self, trajectories: Sequence[Trajectory], decisions: Sequence[Decision], groups: dict
    ) -> dict[int, float]:
        """Decision index -> mean return of ``playouts`` continuations from its state; decisions
        of games that cannot be replayed are left out (their turns fall back to ``V = 0``)."""
        n = self.playouts
        by_layout: dict[tuple[str, ...], list[tuple[Any, int]]] = {}
        for (t, p), idx in groups.items():
            states = replay(self.game, trajectories[t])
            if states is None:
                continue
            for i in idx:
                by_layout.setdefault(tuple(trajectories[t].seats), []).append((states[decisions[i].step], i))
        out: dict[int, float] = {}
        for li, (layout, items) in enumerate(sorted(by_layout.items())):
            starts = [(st, None, decisions[i].player) for st, i in items for _ in range(n)]
            seed = self.seed * 1_000_033 + self.calls * 101 + li
            finals = playout_finals(self.game, starts, self._seat_agents(layout), seed, cache=False)  # type: ignore[arg-type]
            rets = np.array([float(f.returns()[p]) for f, (_, _, p) in zip(finals, starts)]).reshape(-1, n)
            for (_, i), v in zip(items, rets.mean(axis=1)):
                out[i] = float(v)
            self.playout_games += len(starts)
        return out

    # -- advantages ---------------------------------------------------------------------------------
    def advantages(
        self, trajectories: Sequence[Trajectory], decisions: Sequence[Decision], invalid_penalty: float
    ) -> tuple[list[float], dict[str, float]]:
        """Per decision its turn's advantage (``turn`` / ``critic``), and ``credit/*`` statistics;
        ``critic`` also fits the head on the batch's return targets afterwards."""
        groups = turns(decisions)
        rewards = {
            key: turn_rewards(trajectories[key[0]], key[1], [decisions[i].step for i in idx], invalid_penalty)
            for key, idx in groups.items()
        }
        stats: dict[str, float] = {}
        feats = None
        if self.mode == "critic":
            feats = self.features(decisions, track=True)
            flat = self.values(feats)
            v_of = {i: float(flat[i]) for i in range(len(decisions))}
        else:
            v_of = self.playout_values(trajectories, decisions, groups)
            stats["credit/playout_games"] = float(self.playout_games)
        adv = [0.0] * len(decisions)
        targets = [0.0] * len(decisions)
        for key, idx in groups.items():
            v = [v_of.get(i, 0.0) for i in idx]
            for i, a, g in zip(
                idx, gae(rewards[key], v, self.gamma, self.lam), returns_to_go(rewards[key], self.gamma)
            ):
                adv[i], targets[i] = float(a), float(g)
        if decisions:
            vals = np.array([v_of.get(i, 0.0) for i in range(len(decisions))])
            stats["credit/value_mean"] = float(vals.mean())
            stats["credit/value_error"] = float(np.mean((vals - np.array(targets)) ** 2))
            stats["credit/advantage_abs"] = float(np.mean(np.abs(adv)))
            stats["credit/target_var"] = float(np.var(targets))  # the error of the best constant V
        if feats is not None and decisions:
            before, after = self.fit_critic(feats, targets)
            stats["credit/critic_loss"], stats["credit/critic_loss_after"] = before, after
        self.calls += 1
        return adv, stats

    # -- state --------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"calls": self.calls, "playout_games": self.playout_games}
        if self.head is not None:
            out["head"] = {k: v.detach().clone() for k, v in self.head.state_dict().items()}
            out["head_optimizer"] = self.head_opt.state_dict()
        if self.norm_mean is not None:
            out["norm"] = {"mean": self.norm_mean.clone(), "var": self.norm_var.clone()}
        if self.offset_set:
            out["offset"] = self.offset
        return out

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.calls = int(state.get("calls", 0))
        self.playout_games = int(state.get("playout_games", 0))
        if self.head is not None and "head" in state:
            self.head.load_state_dict(state["head"])
            self.head_opt.load_state_dict(state["head_optimizer"])
        if "offset" in state:
            self.offset, self.offset_set = float(state["offset"]), True
        if "norm" in state:
            dev = self.model.device()
            self.norm_mean, self.norm_var = state["norm"]["mean"].to(dev), state["norm"]["var"].to(dev)


def _playout_specs(owner: str, spec: Any) -> dict[str, Any]:
    """``playout_agents`` as seat name -> agent spec: a mapping as given, or a list whose j-th
    entry plays ``opponent_j`` (the names ``arena llm-train`` gives its ``opponents``)."""
    if spec is None:
        return {}
    if isinstance(spec, dict):
        return {str(k): v for k, v in spec.items()}
    if isinstance(spec, (list, tuple)):
        return {f"opponent_{j}": v for j, v in enumerate(spec)}
    raise ArenaError(
        f"trainer '{owner}': playout_agents must map seat names to agents ({{opponent_0: fair}}) or list "
        f"the opponents in order, not {spec!r}"
    )
