"""The three names arena.league still imports from here; every rating system lives in
:mod:`arena.evaluation.ratings` and :class:`RatingConfig` in :mod:`arena.evaluation.leaderboard`.
Remove this module once arena.league imports them from there."""

from arena.evaluation.leaderboard import RatingConfig
from arena.evaluation.ratings.outcomes import margin_scale
from arena.evaluation.ratings.state import RatingState

__all__ = ["RatingConfig", "RatingState", "margin_scale"]
