"""Level-based foraging: a cooperative grid game where agents must load food items together.

After the level-based foraging environment (``semitable/lb-foraging``, Albrecht & Ramamoorthy
2013; the benchmark of Papoudakis, Christianos, Schäfer, Albrecht, *Benchmarking Multi-Agent Deep
Reinforcement Learning Algorithms in Cooperative Tasks*, arXiv 2006.07869), fully observed.

Rules (lb-foraging's): a ``size`` x ``size`` grid, 2 agents and ``food`` items, each with a
level. Moves (simultaneous): 0 none, 1 north, 2 south, 3 west, 4 east, 5 load. A move off the
grid or onto a food cell is none; if both agents target one cell, no one moves into it (an agent
that stays targets its own cell, so a move into it fails; cells are compared by target only,
so two agents may swap, as in lb-foraging). ``load``: the loading agents 4-adjacent to
a food item pool their levels; if the sum reaches the item's level it is collected and each of
them gets ``level_i * food_level / (sum of their levels * total food level spawned)`` (so the
rewards of a fully eaten episode sum to 1); a failed load costs each loader ``penalty``. The
episode ends when every item is eaten or after ``horizon`` steps.

Spawning (hidden randomness from ``new_initial_state(seed)``): agent levels uniform in
1..``max_level``; items never on the border and never 4- or 8-adjacent to another item; item
level uniform in 1..(sum of the agents' levels); ``coop=True`` forces every item to that sum, so
only a joint load can collect it. Agents start on free cells.

Observation tensor (``3 * (food + 2)``): each item (row, col, level; (-1, -1, 0) once eaten),
then each agent (row, col, level), the observer first, as lb-foraging's full-sight vector.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError
from arena.game import TERMINAL, GameEntry
from arena.games.social.base import RoundGame, RoundState, check_horizon, make_spec
from arena.hookspecs import hookimpl

MOVES = ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1), (0, 0))
NAMES = ("none", "north", "south", "west", "east", "load")
LOAD = 5


def _place_food(size: int, count: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """``count`` interior cells, no two adjacent (8-neighbourhood); placed one by one at random,
    starting over when an earlier choice left no room."""
    interior = [(r, c) for r in range(1, size - 1) for c in range(1, size - 1)]
    while True:
        food: list[tuple[int, int]] = []
        for _ in range(count):
            ok = [x for x in interior if all(max(abs(x[0] - f[0]), abs(x[1] - f[1])) > 1 for f in food)]
            if not ok:
                break
            food.append(ok[int(rng.integers(len(ok)))])
        if len(food) == count:
            return food


class ForagingState(RoundState):
    game: "ForagingGame"

    def __init__(self, game: "ForagingGame", seed: int | None) -> None:
        super().__init__(game)
        rng = np.random.default_rng(seed)
        g = game
        self.levels = [int(x) for x in rng.integers(1, g.max_level + 1, size=2)]
        top = sum(self.levels)
        self.food = _place_food(g.size, g.num_food, rng)
        self.food_level = [top if g.coop else int(rng.integers(1, top + 1)) for _ in self.food]
        self.eaten = [False] * len(self.food)
        self.total_level = float(sum(self.food_level))
        free = [(r, c) for r in range(g.size) for c in range(g.size) if (r, c) not in self.food]
        picks = rng.choice(len(free), size=2, replace=False)
        self.pos = [free[int(i)] for i in picks]
        self.loads = [0, 0]
        """Items each agent helped collect."""

    # -- rules --------------------------------------------------------------------------------------
    def _live_food(self) -> list[tuple[int, int]]:
        return [f for f, e in zip(self.food, self.eaten) if not e]

    def _target(self, p: int, a: int) -> tuple[int, int]:
        r, c = self.pos[p][0] + MOVES[a][0], self.pos[p][1] + MOVES[a][1]
        n = self.game.size
        if not (0 <= r < n and 0 <= c < n) or (r, c) in self._live_food():
            return self.pos[p]  # off the grid or onto food: stays
        return (r, c)

    def _play(self, joint: Sequence[int]) -> list[float]:
        targets = [self._target(p, a) for p, a in enumerate(joint)]
        if targets[0] == targets[1]:  # one cell wanted by both (or by a mover and a stayer): nobody moves there
            targets = [self.pos[p] if targets[p] != self.pos[p] else targets[p] for p in range(2)]
        self.pos = targets
        rewards = [0.0, 0.0]
        for i, (f, lvl) in enumerate(zip(self.food, self.food_level)):
            if self.eaten[i]:
                continue
            loaders = [
                p for p in range(2) if joint[p] == LOAD and abs(self.pos[p][0] - f[0]) + abs(self.pos[p][1] - f[1]) == 1
            ]
            if not loaders:
                continue
            pooled = sum(self.levels[p] for p in loaders)
            if pooled >= lvl:
                self.eaten[i] = True
                for p in loaders:
                    rewards[p] += self.levels[p] * lvl / (pooled * self.total_level)
                    self.loads[p] += 1
            else:
                for p in loaders:
                    rewards[p] -= self.game.penalty
        return rewards

    def current_player(self) -> int:
        if all(self.eaten):
            return TERMINAL
        return super().current_player()

    # -- views --------------------------------------------------------------------------------------
    def observation_tensor(self, player: int) -> np.ndarray:
        out: list[float] = []
        for f, lvl, e in zip(self.food, self.food_level, self.eaten):
            out += [-1.0, -1.0, 0.0] if e else [float(f[0]), float(f[1]), float(lvl)]
        for q in (player, 1 - player):
            out += [float(self.pos[q][0]), float(self.pos[q][1]), float(self.levels[q])]
        return np.asarray(out, dtype=np.float32)

    def action_label(self, player: int, action: int) -> str:
        return NAMES[action]

    def grid_rows(self, player: int) -> list[str]:
        """The grid: digits are live items (their level), A is you, B the other agent, . empty."""
        n = self.game.size
        rows = [["."] * n for _ in range(n)]
        for f, lvl in zip(self._live_food(), [x for x, e in zip(self.food_level, self.eaten) if not e]):
            rows[f[0]][f[1]] = str(lvl)
        for q, ch in ((1 - player, "B"), (player, "A")):
            r, c = self.pos[q]
            rows[r][c] = ch
        return [" ".join(r) for r in rows]

    def observation_struct(self, player: int) -> dict[str, Any]:
        out = self.round_struct(player)
        out.update(
            size=self.game.size,
            me={"row": self.pos[player][0], "col": self.pos[player][1], "level": self.levels[player]},
            other={"row": self.pos[1 - player][0], "col": self.pos[1 - player][1], "level": self.levels[1 - player]},
            food=[
                {"row": f[0], "col": f[1], "level": lvl, "eaten": e}
                for f, lvl, e in zip(self.food, self.food_level, self.eaten)
            ],
            grid=self.grid_rows(player),
            moves=list(NAMES),
        )
        return out

    def observation_text(self, player: int) -> str:
        me, other = self.pos[player], self.pos[1 - player]
        live = sum(not e for e in self.eaten)
        lines = [
            f"Level-based foraging, step {min(self.round + 1, self.game.horizon)} of {self.game.horizon}. "
            "Both agents share the goal of loading every food item; an item is collected when the agents "
            "loading it from adjacent cells have levels summing to at least its level.",
            f"You (A) are at row {me[0]}, col {me[1]}, level {self.levels[player]}; "
            f"the other agent (B) at row {other[0]}, col {other[1]}, level {self.levels[1 - player]}.",
            f"Food items left: {live} of {len(self.food)}.",
            *[
                f"Item at row {f[0]}, col {f[1]}: level {lvl}" + (", eaten." if e else ".")
                for f, lvl, e in zip(self.food, self.food_level, self.eaten)
            ],
            *self.grid_rows(player),
            f"Total reward: you {self.totals[player]:.3f}, other {self.totals[1 - player]:.3f}.",
        ]
        if not self.is_terminal():
            lines.append("Legal: none, north, south, west, east, load.")
        return "\n".join(lines)

    def information_state_key(self, player: int) -> str:
        return f"{super().information_state_key(player)} {self.observation_tensor(player).tolist()}"

    def outcome_info(self) -> dict[str, Any]:
        return {"eaten": int(sum(self.eaten)), "food": len(self.food), "steps": self.round, "loads": list(self.loads)}


class ForagingGame(RoundGame):
    """``foraging(size, food, max_level, coop, penalty, horizon)``."""

    state_class = ForagingState

    def __init__(
        self,
        size: int = 5,
        food: int = 1,
        max_level: int = 2,
        coop: bool = False,
        penalty: float = 0.0,
        horizon: int = 50,
    ) -> None:
        for name, v, lo in (("size", size, 3), ("food", food, 1), ("max_level", max_level, 1)):
            if not isinstance(v, int) or isinstance(v, bool) or v < lo:
                raise ArenaError(f"game 'foraging': {name} must be an integer >= {lo}, got {v!r}")
        if food > ((size - 1) // 2) ** 2:  # interior cells pairwise more than one apart
            raise ArenaError(
                f"game 'foraging': {food} food items do not fit apart in the interior of a {size}x{size} grid"
            )
        try:
            penalty = float(penalty)
        except (TypeError, ValueError):
            raise ArenaError(f"game 'foraging': penalty must be a number >= 0, got {penalty!r}") from None
        if penalty < 0:
            raise ArenaError(f"game 'foraging': penalty must be >= 0, got {penalty:g}")
        self.size, self.num_food, self.max_level, self.coop, self.penalty = size, food, max_level, bool(coop), penalty
        self.horizon, self.discount = check_horizon("foraging", horizon, 1.0)
        defaults = {"size": 5, "food": 1, "max_level": 2, "coop": False, "penalty": 0.0, "horizon": 50}
        given = {
            "size": size,
            "food": food,
            "max_level": max_level,
            "coop": bool(coop),
            "penalty": penalty,
            "horizon": horizon,
        }
        params = {k: v for k, v in given.items() if v != defaults[k]}
        self.spec = make_spec(
            "foraging", 2, 6, (3 * (food + 2),), -penalty * horizon, 1.0, horizon, params,
            "level-based foraging: 2 agents load food items together (cooperative, simultaneous)",
        )  # fmt: skip

    def new_initial_state(self, seed: int | None = None) -> ForagingState:
        return ForagingState(self, seed)


@hookimpl
def arena_games() -> list[GameEntry]:
    return [
        GameEntry(
            "foraging",
            ForagingGame,
            "level-based foraging: 2 agents, food items with levels that need joint loading",
            {"size": 5, "food": 1, "max_level": 2, "coop": False, "penalty": 0.0, "horizon": 50},
        )
    ]
