"""How close two rankings are: what a format's or a rating's order is judged by against the truth."""

from __future__ import annotations

from typing import Any, Sequence


def kendall_tau(order: Sequence[Any], truth: Sequence[Any]) -> float:
    """Kendall τ between two rankings of the same items (best first), by ``scipy.stats.kendalltau``
    on the items' positions (without ties τ-b is (concordant − discordant) pairs over all pairs;
    rounded to 12 digits, so identical rankings read exactly 1)."""
    from scipy.stats import kendalltau

    if len(order) < 2:
        return 1.0
    pos = {x: i for i, x in enumerate(truth)}
    return round(float(kendalltau([pos[x] for x in order], range(len(order))).statistic), 12)
