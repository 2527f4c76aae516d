"""Update rules of the CFR family, written once for numpy and torch arrays.

Every rule sees one player's slots at a time: the instantaneous counterfactual regrets ``r``
(already summed over each infoset's histories), the player's own reach ``own`` of each slot's
infoset, and the 1-based iteration ``t``. It updates the solver's cumulative regrets ``R``,
cumulative average ``S`` and current policy ``sigma`` for those slots, in place.

Average weights ``w_t ∝ t^γ`` are applied in discounted form, ``S ← S·((t-1)/t)^γ + π_i·σ``,
which gives the same normalized average as OpenSpiel's ``S += t^γ·π_i·σ`` without overflowing
float32 on GPUs. Sources of the equations and defaults (CFR+, DCFR, PCFR+, PDCFR+, VAD-CFR):
docs/solvers.md, "CFR family".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class Rule:
    """Base: plain CFR (R ← R + r, regret matching, uniform average weights)."""

    name = "cfr"
    gamma = 0.0
    average_fallback = "uniform"
    """What the average is where nothing was accumulated: ``uniform`` or ``current`` policy."""

    def params(self) -> dict[str, Any]:
        return {}

    def init(self, sol: Any) -> None:
        """Allocate rule-specific state on the solver."""

    def step(self, sol: Any, p: int, r: Any, own: Any, t: int) -> None:
        lay = sol.layout[p]
        sl = slice(lay.s0, lay.s1)
        self.accumulate(sol, sl, own, t)
        sol.R[sl] = self.regrets(sol.R[sl], r, t)
        sol.sigma[sl] = self.policy(sol, lay, sol.R[sl], r, t)

    def accumulate(self, sol: Any, sl: slice, own: Any, t: int) -> None:
        S = sol.S[sl]  # a view: updated in place
        if self.gamma:
            S *= ((t - 1) / t) ** self.gamma
        S += own * sol.sigma[sl]

    def regrets(self, R: Any, r: Any, t: int) -> Any:
        return R + r

    def policy(self, sol: Any, lay: Any, R: Any, r: Any, t: int) -> Any:
        return sol.regret_matching(lay, R)


class CFRPlus(Rule):
    """Tammelin's CFR+: regret matching+ (clip cumulative regrets at 0), linear averaging."""

    name = "cfr+"
    gamma = 1.0

    def regrets(self, R, r, t):
        return (R + r).clip(min=0.0)


@dataclass
class DCFR(Rule):
    """Brown & Sandholm's discounted CFR: after adding r^t, positive regrets are scaled by
    t^α/(t^α+1) and negative ones by t^β/(t^β+1) (OpenSpiel's placement); w_t ∝ t^γ."""

    alpha: float = 1.5
    beta: float = 0.0
    gamma: float = 2.0
    name: str = "dcfr"

    def params(self):
        return {"alpha": self.alpha, "beta": self.beta, "gamma": self.gamma}

    def regrets(self, R, r, t):
        R = R + r
        pos, neg = t**self.alpha, t**self.beta
        return R * ((R >= 0) * (pos / (pos + 1) - neg / (neg + 1)) + neg / (neg + 1))


def LCFR() -> DCFR:
    """Linear CFR is DCFR(1, 1, 1)."""
    return DCFR(1.0, 1.0, 1.0, name="lcfr")


@dataclass
class PCFRPlus(Rule):
    """Farina et al.'s predictive CFR+: R^t = [R^{t-1} + r^t]^+, σ^{t+1} ∝ [R^t + r^t]^+
    (prediction m^{t+1} = r^t), w_t ∝ t^γ."""

    gamma: float = 2.0
    name: str = "pcfr+"

    def params(self):
        return {"gamma": self.gamma}

    def regrets(self, R, r, t):
        return (R + r).clip(min=0.0)

    def policy(self, sol, lay, R, r, t):
        return sol.regret_matching(lay, R + r)


@dataclass
class PDCFRPlus(Rule):
    """Xu et al.'s predictive discounted CFR+: R^t = [d(t-1)·R^{t-1} + r^t]^+,
    σ^{t+1} ∝ [d(t)·R^t + r^t]^+ with d(s) = s^α/(s^α+1), w_t ∝ t^γ."""

    alpha: float = 2.3
    gamma: float = 5.0
    name: str = "pdcfr+"

    def params(self):
        return {"alpha": self.alpha, "gamma": self.gamma}

    def d(self, s: int) -> float:
        return s**self.alpha / (s**self.alpha + 1)

    def regrets(self, R, r, t):
        return (self.d(t - 1) * R + r).clip(min=0.0)

    def policy(self, sol, lay, R, r, t):
        return sol.regret_matching(lay, self.d(t) * R + r)


@dataclass
class VADCFR(Rule):
    """VAD-CFR (Li et al. 2026, v1 Listing 5): volatility-adaptive discounting, boosted positive
    regrets, a signed floor, optimistic power-1.5 regret matching, and a hard warm start with
    regret-magnitude weights for the average.

    Choices the paper leaves open, made here: regrets are summed over an infoset's histories
    before the update; the volatility EWMA ``E`` is kept per infoset (the listing shares one
    scalar across infosets and players, which depends on traversal order); the average is
    accumulated once per infoset with the player's own reach; updates alternate (the CFR+
    seed's default); before the warm-up ends the output is the current policy.
    """

    warmup: int = 500
    base_alpha: float = 1.5
    base_beta: float = -0.1
    sensitivity: float = 0.5
    max_regret: float = 2.0
    boost: float = 1.1
    ewma: float = 0.1
    floor: float = -20.0
    optimism_decay: float = 100.0
    power: float = 1.5
    base_gamma: float = 2.0
    max_gamma: float = 4.0
    gamma_sensitivity: float = 1.5
    name: str = "vad-cfr"
    average_fallback: str = "current"

    def params(self):
        return {"warmup": self.warmup}

    def init(self, sol):
        sol.E = sol.zeros(sol.tree.num_infosets)

    def step(self, sol, p, r, own, t):
        lay = sol.layout[p]
        sl = slice(lay.s0, lay.s1)
        t0, tau = t - 1, float(t)
        m = sol.segmax(lay, abs(r))
        E = m if t0 == 0 else self.ewma * m + (1 - self.ewma) * sol.E[lay.i0 : lay.i1]
        sol.E[lay.i0 : lay.i1] = E
        v = (E / self.max_regret).clip(max=1.0)
        alpha = (self.base_alpha - self.sensitivity * v).clip(min=0.1)
        beta = sol.minimum(alpha, self.base_beta - self.sensitivity * v)
        d_pos = (tau**alpha / (tau**alpha + 1))[lay.local]
        d_neg = (tau**beta / (tau**beta + 1))[lay.local]
        if t0 >= self.warmup:
            vi = (m / self.max_regret).clip(max=1.0)
            g = (2.0 + self.gamma_sensitivity * vi).clip(max=self.max_gamma)
            w = tau**g / (1 + m**1.5) * ((1 + m / self.max_regret) ** 0.5).clip(min=0.1)
            sol.S[sl] = sol.S[sl] + w[lay.local] * own * sol.sigma[sl]
        rb = sol.where(r > 0, self.boost * r, r)
        R = sol.R[sl]
        R = (sol.where(R >= 0, d_pos, d_neg) * R + rb).clip(min=self.floor)
        sol.R[sl] = R
        omega = (1.0 / (1.0 + t0 / self.optimism_decay)) * (1 - self.sensitivity * v).clip(min=0.0)
        Rhat = sol.where(R >= 0, d_pos, d_neg) * R + omega[lay.local] * rb
        sol.sigma[sl] = sol.regret_matching(lay, Rhat, power=self.power)


ALGORITHMS = {
    "cfr": Rule,
    "cfr+": CFRPlus,
    "lcfr": LCFR,
    "dcfr": DCFR,
    "pcfr+": PCFRPlus,
    "pdcfr+": PDCFRPlus,
    "vad-cfr": VADCFR,
}
