"""The stochastic multi-armed bandit as a one-player game: ``bandit``.

``arms`` arms, ``horizon`` pulls. Each pull of arm ``j`` pays a reward drawn from the arm's
distribution: ``kind=bernoulli`` pays 1 with probability ``mu_j`` and 0 otherwise;
``kind=gaussian`` pays ``mu_j + sigma * z`` with ``z`` one of 32 equally likely points (the
midpoint quantiles of the standard normal, rescaled to unit variance) — a discrete stand-in for
N(mu_j, sigma^2) that keeps every draw an explicit chance node, so the runner draws it from the
game's own stream and a game is reproducible from the match seed.

The means are ``means`` when given (``bandit(means=[0.5,0.6])``; the game name then carries
them, so they are public) and otherwise drawn at the start of each game from the game's chance
stream, one chance node per arm, uniformly from {0.05, 0.15, ..., 0.95}; drawn means are hidden
from the player (no view shows them).

Metrics (``outcome_info``, averaged per agent like every game's numeric outcome facts, e.g. as
learner metrics): ``regret`` is the pseudo-regret of the game, ``horizon * mu* - sum_t
mu_{I_t}`` (the sum of the gaps of the arms pulled); its mean over games estimates the expected
regret E[R_n] bounded by Auer, Cesa-Bianchi and Fischer (*Finite-time Analysis of the
Multiarmed Bandit Problem*, Machine Learning 47, 2002, Theorem 1). ``realized_regret`` is
``horizon * mu* - sum_t X_t``, the rewards actually missed (noisier, same expectation).
``best_arm_rate`` is the share of pulls on a best arm, ``arms_tried`` the share of arms pulled
at least once (greedy language agents leave many arms untried: Schmied et al., *LLMs are Greedy
Agents*, arXiv 2504.16078).

``payoff=regret`` makes the player's return minus the pseudo-regret (0 at best) instead of the
sum of rewards: the same ordering of policies in expectation, without the variance of the drawn
means and of the rewards — a lower-variance training signal computed by the environment from
what the player cannot see (the views still show rewards only).

Views: the text names every arm's pulls and mean reward so far and the last ``recent`` pulls
with their rewards (``text=brief``: one short line of the same numbers, for small models); the
structured view has the per-arm counts and reward sums (what UCB1 and Thompson sampling need),
the recent pulls and the reward range the agents rescale to [0, 1]. Observation tensor, shape
(2 * arms + 1,): per arm its pulls / horizon and mean reward rescaled to [0, 1], then pulls so
far / horizon.
"""

from __future__ import annotations

from statistics import NormalDist
from typing import Any

import numpy as np

from arena.errors import ArenaError
from arena.game import CHANCE, TERMINAL, Action, Game, GameEntry, GameSpec, IllegalActionError, State, decision_struct
from arena.hookspecs import hookimpl

GRID = tuple(round(0.05 + 0.1 * i, 2) for i in range(10))
"""The means drawn when none are given."""
QUANTILES = 32
_Z = np.array([NormalDist().inv_cdf((i + 0.5) / QUANTILES) for i in range(QUANTILES)])
Z = tuple(float(z) for z in _Z / np.sqrt(np.mean(_Z**2)))
"""Gaussian noise points: equally likely, mean 0, variance exactly 1."""
DEFAULTS: dict[str, Any] = {
    "arms": 3,
    "horizon": 100,
    "kind": "bernoulli",
    "means": None,
    "sigma": 1.0,
    "recent": 10,
    "text": "full",
    "payoff": "reward",
}


class BanditState(State):
    def __init__(self, game: "BanditGame") -> None:
        self.game = game
        self.means: list[float] = list(game.means or [])
        self.pulls: list[tuple[int, float]] = []
        self.pending: int | None = None
        self.counts = [0] * game.arms
        self.sums = [0.0] * game.arms
        self._key = ""

    # -- contract ---------------------------------------------------------------------------
    def num_players(self) -> int:
        return 1

    def current_player(self) -> int:
        if len(self.means) < self.game.arms or self.pending is not None:
            return CHANCE
        return TERMINAL if len(self.pulls) >= self.game.horizon else 0

    def legal_actions(self, player: int | None = None) -> list[int]:
        cur = self.current_player()
        if cur == CHANCE:
            return [a for a, _ in self.chance_outcomes()] if player in (None, CHANCE) else []
        if cur != 0 or player not in (None, 0):
            return []
        return list(range(self.game.arms))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.current_player() != CHANCE:
            return []
        if len(self.means) < self.game.arms:
            return [(i, 1.0 / len(GRID)) for i in range(len(GRID))]
        if self.game.kind == "gaussian":
            return [(i, 1.0 / QUANTILES) for i in range(QUANTILES)]
        mu = self.means[self.pending]  # type: ignore[index]
        return [(r, p) for r, p in ((0, 1.0 - mu), (1, mu)) if p > 0]

    def apply_action(self, action: Action) -> None:
        cur = self.current_player()
        if isinstance(action, str) or int(action) not in self.legal_actions(cur):
            raise IllegalActionError(f"bandit: {action!r} is not a legal move for player {cur}")
        a = int(action)
        if cur == 0:
            self.pending = a
        elif len(self.means) < self.game.arms:
            self.means.append(GRID[a])
        else:
            arm, self.pending = int(self.pending), None  # type: ignore[arg-type]
            reward = self.means[arm] + self.game.sigma * Z[a] if self.game.kind == "gaussian" else float(a)
            self.pulls.append((arm, reward))
            self.counts[arm] += 1
            self.sums[arm] += reward
            self._key += f" {arm}:{reward:.6g}"

    def returns(self) -> list[float]:
        if self.game.payoff == "regret":
            return [-self.regret() if len(self.means) == self.game.arms else 0.0]
        return [float(sum(self.sums))]

    def clone(self) -> "BanditState":
        c = BanditState.__new__(BanditState)
        c.__dict__.update(self.__dict__)
        c.means, c.pulls, c.counts, c.sums = list(self.means), list(self.pulls), list(self.counts), list(self.sums)
        return c

    # -- metrics ------------------------------------------------------------------------------
    def regret(self) -> float:
        """Pseudo-regret so far: the sum of the gaps of the arms pulled."""
        best = max(self.means)
        return float(sum(n * (best - mu) for n, mu in zip(self.counts, self.means)))

    def outcome_info(self) -> dict[str, Any]:
        n, best = len(self.pulls), max(self.means)
        top = sum(c for c, mu in zip(self.counts, self.means) if mu == best)
        return {
            "regret": self.regret(),
            "realized_regret": n * best - float(sum(self.sums)),
            "best_arm_rate": top / n if n else 0.0,
            "arms_tried": sum(c > 0 for c in self.counts) / self.game.arms,
            "means": list(self.means),
        }

    def summary(self) -> str:
        return f"{len(self.pulls)} pulls, reward {sum(self.sums):g}, regret {self.regret():.3g}"

    # -- renderings ---------------------------------------------------------------------------
    def action_label(self, player: int, action: int) -> str:
        if player == CHANCE:
            return f"chance {action}"
        return f"arm {action}"

    def information_state_key(self, player: int) -> str:
        return f"t{len(self.pulls)}{self._key}"

    def _mean(self, arm: int) -> float | None:
        return self.sums[arm] / self.counts[arm] if self.counts[arm] else None

    def _recent(self) -> list[tuple[int, float]]:
        k = self.game.recent
        return self.pulls[-k:] if k else []

    def observation_text(self, player: int) -> str:
        if self.game.text == "brief":
            return self.brief_text()
        g = self.game
        pays = "1 or 0" if g.kind == "bernoulli" else f"a Gaussian reward (standard deviation {g.sigma:g})"
        lines = [
            f"Multi-armed bandit: {g.arms} arms (arm 0 to arm {g.arms - 1}), {g.horizon} pulls in all. Each pull "
            f"of an arm pays {pays}; each arm has its own hidden mean reward. Your score is the sum of rewards.",
            f"Pull {min(len(self.pulls) + 1, g.horizon)} of {g.horizon}.",
        ]
        stats = [
            f"arm {j}: {n} pulls" + ("" if n == 0 else f", mean reward {self.sums[j] / n:.2f}")
            for j, n in enumerate(self.counts)
        ]
        lines.append("So far: " + "; ".join(stats) + ".")
        recent = self._recent()
        if recent:
            lines.append("Last pulls (oldest first): " + ", ".join(f"arm {a} paid {r:.2f}" for a, r in recent) + ".")
        lines.append(f"Total reward: {sum(self.sums):.2f}.")
        if self.is_terminal():
            lines.append("Game over.")
        elif self.current_player() == 0:
            lines.append("Choose an arm to pull. Legal: " + ", ".join(f"arm {j}" for j in range(g.arms)) + ".")
        return "\n".join(lines)

    def brief_text(self) -> str:
        """``t 4/10 n 2 1 1 m .50 1.0 0 last 0:1 2:0``: pulls so far, pulls and mean reward per
        arm (``-`` never pulled), the recent pulls as arm:reward."""
        g = self.game
        n = " ".join(map(str, self.counts))
        m = " ".join("-" if c == 0 else _short(s / c) for c, s in zip(self.counts, self.sums))
        text = f"t {len(self.pulls)}/{g.horizon} n {n} m {m}"
        recent = self._recent()
        return text + (" last " + " ".join(f"{a}:{_short(r)}" for a, r in recent) if recent else "")

    def observation_struct(self, player: int) -> dict[str, Any]:
        g = self.game
        out = decision_struct(self, player)
        out.update(
            game="bandit",
            kind=g.kind,
            arms=g.arms,
            horizon=g.horizon,
            pull=min(len(self.pulls) + 1, g.horizon),
            reward_range=list(g.reward_range),
            stats=[
                {"arm": j, "pulls": self.counts[j], "total": float(self.sums[j]), "mean": self._mean(j)}
                for j in range(g.arms)
            ],
            recent=[{"arm": a, "reward": float(r)} for a, r in self._recent()],
            total_reward=float(sum(self.sums)),
        )
        if g.kind == "gaussian":
            out["sigma"] = g.sigma
        return out

    def observation_tensor(self, player: int) -> np.ndarray:
        g = self.game
        lo, hi = g.reward_range
        x = np.zeros(2 * g.arms + 1, dtype=np.float32)
        for j in range(g.arms):
            x[2 * j] = self.counts[j] / g.horizon
            if self.counts[j]:
                x[2 * j + 1] = (self.sums[j] / self.counts[j] - lo) / (hi - lo)
        x[-1] = len(self.pulls) / g.horizon
        return x


def _short(x: float) -> str:
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return s.replace("0.", ".", 1) if s.startswith("0.") else (s or "0")


def _means(value: Any, arms: int | None) -> list[float] | None:
    """``means`` as given (a list, or ``0.5;0.6`` / ``[0.5;0.6]`` as a game name writes it)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [v for v in value.strip("[]() ").replace(",", ";").split(";") if v.strip()]
    try:
        out = [float(v) for v in value]
    except (TypeError, ValueError):
        raise ArenaError(f"game 'bandit': parameter 'means' must be a list of numbers, got {value!r}") from None
    if arms is not None and len(out) != arms:
        raise ArenaError(f"game 'bandit': parameter 'means' has {len(out)} values for {arms} arms")
    return out


class BanditGame(Game):
    """``bandit(arms=3 (or len(means)), horizon=100, kind=bernoulli, means=None, sigma=1.0, recent=10,
    text=full, payoff=reward)``."""

    def __init__(
        self,
        arms: int | None = None,
        horizon: int = 100,
        kind: str = "bernoulli",
        means: Any = None,
        sigma: float = 1.0,
        recent: int = 10,
        text: str = "full",
        payoff: str = "reward",
    ) -> None:
        if arms is None:
            arms = 3 if means is None else len(_means(means, None) or ())
        for key, value, lo, hi in (
            ("arms", arms, 2, 100),
            ("horizon", horizon, 1, 100_000),
            ("recent", recent, 0, 1000),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ArenaError(f"game 'bandit': parameter '{key}' must be an integer {lo}..{hi}, got {value!r}")
        if kind not in ("bernoulli", "gaussian"):
            raise ArenaError(f"game 'bandit': parameter 'kind' must be bernoulli or gaussian, got {kind!r}")
        if payoff not in ("reward", "regret"):
            raise ArenaError(f"game 'bandit': parameter 'payoff' must be reward or regret, got {payoff!r}")
        if text not in ("full", "brief"):
            raise ArenaError(f"game 'bandit': parameter 'text' must be full or brief, got {text!r}")
        if isinstance(sigma, bool) or not isinstance(sigma, (int, float)) or not sigma > 0:
            raise ArenaError(f"game 'bandit': parameter 'sigma' must be a positive number, got {sigma!r}")
        self.means = _means(means, arms)
        if kind == "bernoulli" and self.means and not all(0.0 <= m <= 1.0 for m in self.means):
            raise ArenaError(f"game 'bandit': Bernoulli 'means' must lie in [0, 1], got {self.means}")
        self.arms, self.horizon, self.kind, self.sigma = arms, horizon, kind, float(sigma)
        self.recent, self.text, self.payoff = recent, text, payoff
        self.reward_range = self._range()
        given = {"arms": arms, "horizon": horizon, "kind": kind, "means": self.means, "sigma": self.sigma}
        given.update(recent=recent, text=text, payoff=payoff)
        params = {k: v for k, v in given.items() if v != DEFAULTS[k]}
        lo, hi = self.reward_range
        self.spec = GameSpec(
            name="bandit",
            num_players=1,
            num_distinct_actions=arms,
            observation_shape=(2 * arms + 1,),
            min_utility=lo * horizon if payoff == "reward" else -self._spread() * horizon,
            max_utility=hi * horizon if payoff == "reward" else 0.0,
            zero_sum=False,
            max_game_length=2 * horizon + arms,
            tree=False,
            params=params,
            description=f"{arms}-armed {kind} bandit, {horizon} pulls, means "
            + ("given" if self.means else "drawn per game (hidden)"),
        )

    def _spread(self) -> float:
        """The largest possible gap between two arms' means."""
        means = self.means or list(GRID)
        return max(means) - min(means)

    def _range(self) -> tuple[float, float]:
        """The rewards' range, for rescaling to [0, 1] (from the game's parameters only)."""
        if self.kind == "bernoulli":
            return (0.0, 1.0)
        means = self.means or list(GRID)
        return (min(means) + self.sigma * Z[0], max(means) + self.sigma * Z[-1])

    def new_initial_state(self, seed: int | None = None) -> BanditState:
        return BanditState(self)


@hookimpl
def arena_games() -> list[GameEntry]:
    return [
        GameEntry(
            "bandit",
            BanditGame,
            "multi-armed bandit (Bernoulli or Gaussian arms, means given or drawn): one player, regret metrics",
            dict(DEFAULTS),
        )
    ]
