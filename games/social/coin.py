"""Coin Game (Lerer & Peysakhovich 2017, LOLA rules) on a ``size`` x ``size`` torus.

Two agents (red = player 0, blue = player 1), one coin at a time. Moves: up, down, left, right
(no stay). Stepping onto the coin pays the collector +1; if the coin has the other agent's
colour, that agent loses 2. Both arriving at once both collect (fixing the original code's
red-first asymmetry). The coin then respawns on a cell free of agents with the other colour.

Start cells and coin cells are hidden randomness drawn from the state's own generator (seeded
by ``new_initial_state(seed)``), so the game has no tree view.

Observation tensor, egocentric (rolled so the observer sits at the centre cell): four planes
(self, other, coin of my colour, coin of the other's colour), shape ``(4, size, size)``.

``memory=k`` (default 0: none) adds four constant planes that count the pickups of the last
``k`` steps from the observer's side (:data:`PICKUP_EVENTS`: I took my coin, I took the other's
coin, the other took its coin, the other took my coin); shape ``(8, size, size)``. It plays the
role of ``ipd(memory=k)``: without it the observation is the grid alone, and a policy cannot
tell a co-player who takes its coins from one who does not, so it cannot retaliate
(docs/results/social_dilemmas.md). Counts over a window rather than one plane per step keep the
observations few (a policy needs who took whose coin lately, not in which step), so decisions
repeat and Advantage Alignment's ``past: partner`` credit finds peers to compare with.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError

from .base import RoundGame, RoundState, check_horizon, make_spec

MOVES = ((-1, 0), (1, 0), (0, -1), (0, 1))
MOVE_NAMES = ("up", "down", "left", "right")
COLOURS = ("red", "blue")
PICKUP_EVENTS = ("I took my coin", "I took the other's coin", "the other took its coin", "the other took my coin")


class CoinState(RoundState):
    game: "CoinGame"

    def __init__(self, game: "CoinGame", seed: int | None) -> None:
        super().__init__(game)
        self.rng = np.random.default_rng(seed)
        n = game.size
        cells = self.rng.choice(n * n, size=2, replace=False)
        self.pos = [divmod(int(c), n) for c in cells]
        self.coin_colour = int(self.rng.integers(2))
        self.coin = self._free_cell()
        self.picks = np.zeros((2, 2), dtype=int)  # picks[p][own?0:1]
        self.taken: list[tuple[int, int]] = []  # per step: colour of the coin each player took (-1: none)

    def _free_cell(self) -> tuple[int, int]:
        n = self.game.size
        free = [divmod(c, n) for c in range(n * n) if divmod(c, n) not in self.pos]
        return free[int(self.rng.integers(len(free)))]

    def _play(self, joint: Sequence[int]) -> list[float]:
        n = self.game.size
        for p, a in enumerate(joint):
            dr, dc = MOVES[a]
            r, c = self.pos[p]
            self.pos[p] = ((r + dr) % n, (c + dc) % n)
        rewards = [0.0, 0.0]
        takers = [p for p in range(2) if self.pos[p] == self.coin]
        self.taken.append((self.coin_colour if 0 in takers else -1, self.coin_colour if 1 in takers else -1))
        for p in takers:
            rewards[p] += 1.0
            own = p == self.coin_colour
            self.picks[p][0 if own else 1] += 1
            if not own:
                rewards[self.coin_colour] -= 2.0
        if takers:
            self.coin_colour = 1 - self.coin_colour
            self.coin = self._free_cell()
        return rewards

    def observation_tensor(self, player: int) -> np.ndarray:
        n = self.game.size
        planes = np.zeros((4, n, n), dtype=np.float32)
        planes[0][self.pos[player]] = 1
        planes[1][self.pos[1 - player]] = 1
        planes[2 if self.coin_colour == player else 3][self.coin] = 1
        r, c = self.pos[player]
        grid = np.roll(planes, (n // 2 - r, n // 2 - c), axis=(1, 2))
        k = self.game.memory
        if not k:
            return grid
        counts = np.zeros(4, dtype=np.float32)
        for taken in self.taken[-k:]:
            counts += self.pickup_events(player, taken)
        return np.concatenate([grid, np.broadcast_to(counts[:, None, None], (4, n, n))])

    @staticmethod
    def pickup_events(player: int, taken: tuple[int, int]) -> list[float]:
        """One step's pickups from ``player``'s side, in :data:`PICKUP_EVENTS` order."""
        me, other = taken[player], taken[1 - player]
        return [float(me == player), float(me == 1 - player), float(other == 1 - player), float(other == player)]

    def action_label(self, player: int, action: int) -> str:
        return MOVE_NAMES[action]

    def grid_text(self) -> str:
        n = self.game.size
        rows = []
        for r in range(n):
            row = []
            for c in range(n):
                ch = "."
                if (r, c) == self.coin:
                    ch = "r" if self.coin_colour == 0 else "b"
                here = [p for p in range(2) if self.pos[p] == (r, c)]
                if len(here) == 2:
                    ch = "X"
                elif here:
                    ch = "R" if here[0] == 0 else "B"
                row.append(ch)
            rows.append(" ".join(row))
        return "\n".join(rows)

    def observation_struct(self, player: int) -> dict[str, Any]:
        out = self.round_struct(player)
        out.update(
            size=self.game.size,
            you=COLOURS[player],
            agents=[{"colour": COLOURS[q], "row": self.pos[q][0], "col": self.pos[q][1]} for q in range(2)],
            coin={"colour": COLOURS[self.coin_colour], "row": self.coin[0], "col": self.coin[1]},
            grid=self.grid_text().split("\n"),
            picks={"own": int(self.picks[player][0]), "other": int(self.picks[player][1])},
        )
        if self.game.memory:
            out["recent_pickups"] = self.recent_pickups(player)
        return out

    def recent_pickups(self, player: int) -> list[str]:
        """The last ``memory`` steps' pickups, oldest first, in words (empty steps as "none")."""
        window = self.taken[-self.game.memory :]
        return [
            "; ".join(e for e, on in zip(PICKUP_EVENTS, self.pickup_events(player, t)) if on) or "none" for t in window
        ]

    def observation_text(self, player: int) -> str:
        me = COLOURS[player]
        lines = [
            f"Coin Game, step {min(self.round + 1, self.game.horizon)} of {self.game.horizon}. "
            f"You are {me} ({me[0].upper()}); the coin is {COLOURS[self.coin_colour]} (lower case). "
            "Any coin pays you +1; taking the other's coin costs them 2. X = both on a cell.",
            self.grid_text(),
            f"Totals: you {self.totals[player]:g}, other {self.totals[1 - player]:g}. "
            f"Coins taken by you: {self.picks[player][0]} yours, {self.picks[player][1]} the other's.",
        ]
        if self.game.memory and self.taken:
            lines.append("Pickups in the last steps, oldest first: " + ", ".join(self.recent_pickups(player)) + ".")
        if not self.is_terminal():
            lines.append("Legal: up, down, left, right.")
        return "\n".join(lines)

    def information_state_key(self, player: int) -> str:
        return f"{super().information_state_key(player)} pos={self.pos} coin={self.coin}/{self.coin_colour}"

    def outcome_info(self) -> dict[str, Any]:
        total = self.picks.sum(axis=1)
        own_rate = [float(self.picks[p][0] / total[p]) if total[p] else float("nan") for p in range(2)]
        return {
            "own_coin_rate": own_rate,
            "own_picks": self.picks[:, 0].tolist(),
            "other_picks": self.picks[:, 1].tolist(),
        }


class CoinGame(RoundGame):
    state_class = CoinState

    def __init__(self, size: int = 3, horizon: int = 16, discount: float = 1.0, memory: int = 0) -> None:
        if not isinstance(size, int) or size < 2:
            raise ArenaError(f"game 'coin_game': size must be an integer >= 2, got {size!r}")
        if not isinstance(memory, int) or isinstance(memory, bool) or memory < 0:
            raise ArenaError(f"game 'coin_game': memory must be an integer >= 0, got {memory!r}")
        self.size, self.memory = size, memory
        self.horizon, self.discount = check_horizon("coin_game", horizon, discount)
        defaults = {"size": 3, "horizon": 16, "discount": 1.0, "memory": 0}
        given = {"size": size, "horizon": horizon, "discount": discount, "memory": memory}
        params = {k: v for k, v in given.items() if v != defaults[k]}
        self.spec = make_spec(
            "coin_game",
            2,
            4,
            (8 if memory else 4, size, size),
            -2.0 * self.horizon,
            2.0 * self.horizon,
            self.horizon,
            params,
            f"Coin Game on a {size}x{size} torus, {self.horizon} steps (LOLA rules)",
        )

    def new_initial_state(self, seed: int | None = None) -> CoinState:
        return CoinState(self, seed)

    def array_face(self) -> Any:
        """B games as numpy arrays (:mod:`arena.games.social.coin_arrays`), for the runner's array
        path; ``None`` (the ``State`` path) if this numpy's ``default_rng`` draws other values
        than the face's copy of it (:func:`~arena.games.social.pcg64_arrays.matches_numpy`)."""
        if getattr(self, "_face", None) is None:
            from .coin_arrays import CoinFace
            from .pcg64_arrays import matches_numpy

            self._face = CoinFace(self) if matches_numpy() else False
        return self._face or None

    def scripted_kinds(self) -> tuple[str, ...]:
        return ("always_cooperate", "always_defect", "take_every_coin")

    def agent_metrics(self, agent: Any) -> dict[str, float]:
        """The retaliation probe: P(step onto the coin) when it lies next to the player, for the
        other's coin and for its own (red at the centre, the coin on each of its 4 neighbours,
        blue on every other free cell: the mean over those 28 states). ``calm``: no pickups in
        memory; ``after its grab`` (``memory`` > 0): blue took red's coin on the step before. A
        reciprocator reads near 0 and near 1 for the other's coin, near 1 for its own; a policy
        that cannot see the history has only the calm reading; one that ignores the coin reads 0.25."""
        from arena.agent import Observation

        if not agent.has_policy:
            return {}
        histories = {"calm": []} if not self.memory else {"calm": [], "after its grab": [(-1, 0)]}
        n, mid = self.size, (self.size // 2, self.size // 2)
        out = {}
        for label, taken in histories.items():
            for colour, whose in ((1, "other's"), (0, "own")):
                probs = []
                for a, (dr, dc) in enumerate(MOVES):
                    coin = ((mid[0] + dr) % n, (mid[1] + dc) % n)
                    for other in [divmod(c, n) for c in range(n * n)]:
                        if other in (mid, coin):
                            continue
                        state = self.new_initial_state(seed=0)
                        state.pos, state.coin, state.coin_colour, state.taken = [mid, other], coin, colour, list(taken)
                        obs = Observation(state, 0, np.random.default_rng(0), self.spec.full_name)
                        probs.append(float(agent.policy(obs)[a]))
                out[f"probe/P(take {whose} coin|{label})"] = float(np.mean(probs))
        return out

    def scripted_action(self, kind: str, obs: Any) -> int:
        planes = np.asarray(obs.tensor).reshape(-1, self.size, self.size)[:4]  # the grid; memory planes unused
        if kind in ("take_every_coin", "always_defect"):
            target = planes[2] + planes[3]
        elif kind == "always_cooperate":  # chase own coins only; otherwise step away from the coin
            target = planes[2]
        else:
            return super().scripted_action(kind, obs)
        me = np.argwhere(planes[0] > 0)[0]
        if target.sum() == 0:
            other_coin = np.argwhere(planes[3] > 0)
            if len(other_coin):  # avoid stepping on the other's coin
                safe = [a for a in range(4) if tuple((me + MOVES[a]) % self.size) != tuple(other_coin[0])]
                return safe[int(obs.rng.integers(len(safe)))]
            return int(obs.rng.integers(4))
        goal = np.argwhere(target > 0)[0]
        best, best_d = [], None
        for a, (dr, dc) in enumerate(MOVES):
            r, c = (me[0] + dr) % self.size, (me[1] + dc) % self.size
            d = _torus(r, goal[0], self.size) + _torus(c, goal[1], self.size)
            if best_d is None or d < best_d:
                best, best_d = [a], d
            elif d == best_d:
                best.append(a)
        return best[int(obs.rng.integers(len(best)))]


def _torus(a: int, b: int, n: int) -> int:
    d = abs(int(a) - int(b)) % n
    return min(d, n - d)
