"""Any PettingZoo AEC env is an arena game (without tree access).

``arena.load_game("pettingzoo:pettingzoo.classic.rps_v2")`` imports the module and calls its
``env()``; ``pettingzoo:pkg.module:factory`` names another callable. From Python,
:func:`from_pettingzoo` wraps any env factory. Randomness stays inside the env, seeded by
``reset(seed)``, so there are no explicit chance nodes and no tree view. Each state owns its own
env instance (``clone`` deep-copies it).
"""

from __future__ import annotations

import copy
import importlib
from typing import Any, Callable

import numpy as np

from arena.errors import ArenaError
from arena.game import TERMINAL, Game, GameNamespace, GameSpec, State
from arena.hookspecs import hookimpl


class PettingZooState(State):
    def __init__(self, game: "PettingZooGame", env: Any) -> None:
        self.game = game
        self.env = env
        self.names = list(env.possible_agents)
        self.totals = np.zeros(len(self.names))
        self._skip_dead()

    def _skip_dead(self) -> None:
        env = self.env
        while env.agents:
            a = env.agent_selection
            if env.terminations.get(a, False) or env.truncations.get(a, False):
                env.step(None)
                self._collect()
            else:
                break

    def _collect(self) -> None:
        for a, r in self.env.rewards.items():
            self.totals[self.names.index(a)] += float(r)

    def num_players(self) -> int:
        return len(self.names)

    def current_player(self) -> int:
        if not self.env.agents:
            return TERMINAL
        return self.names.index(self.env.agent_selection)

    def _obs(self, player: int) -> Any:
        return self.env.observe(self.names[player])

    def legal_actions(self, player: int | None = None) -> list[int]:
        player = self.current_player() if player is None else player
        if player != self.current_player() or player < 0:
            return []
        obs = self._obs(player)
        mask = None
        if isinstance(obs, dict) and "action_mask" in obs:
            mask = obs["action_mask"]
        elif "action_mask" in self.env.infos.get(self.names[player], {}):
            mask = self.env.infos[self.names[player]]["action_mask"]
        if mask is not None:
            return [int(a) for a in np.flatnonzero(mask)]
        return list(range(self.env.action_space(self.names[player]).n))

    def apply_action(self, action: Any) -> None:
        self.env.step(int(action))
        self._collect()
        self._skip_dead()

    def returns(self) -> list[float]:
        return [float(x) for x in self.totals]

    def clone(self) -> "PettingZooState":
        return copy.deepcopy(self)

    def observation_tensor(self, player: int) -> np.ndarray:
        obs = self._obs(player)
        if isinstance(obs, dict):
            obs = obs.get("observation", np.zeros(0))
        return np.asarray(obs, dtype=np.float32).reshape(-1)

    def observation_text(self, player: int) -> str:
        t = self.observation_tensor(player)
        shown = np.array2string(t[:64], precision=2, separator=",")
        return f"{self.names[player]} observes {shown}{' ...' if t.size > 64 else ''}"

    def information_state_key(self, player: int) -> str:
        return self.observation_tensor(player).tobytes().hex()


class PettingZooGame(Game):
    def __init__(
        self,
        env_fn: Callable[[], Any],
        name: str,
        min_utility: float = -1.0,
        max_utility: float = 1.0,
        zero_sum: bool = False,
        **env_kwargs: Any,
    ) -> None:
        self.env_fn = lambda: env_fn(**env_kwargs)
        probe = self.env_fn()
        probe.reset(seed=0)
        agents = list(probe.possible_agents)
        try:
            n_actions = max(probe.action_space(a).n for a in agents)
        except AttributeError:
            raise ArenaError(
                f"PettingZoo env '{name}' has non-discrete action spaces; arena needs Discrete actions"
            ) from None
        space = probe.observation_space(agents[0])
        inner = space["observation"] if hasattr(space, "spaces") and "observation" in space.spaces else space
        shape = (int(np.prod(inner.shape)),) if getattr(inner, "shape", None) else (0,)
        probe.close()
        self.spec = GameSpec(
            name=name,
            num_players=len(agents),
            num_distinct_actions=int(n_actions),
            observation_shape=shape,
            min_utility=min_utility,
            max_utility=max_utility,
            zero_sum=zero_sum,
            max_game_length=-1,
            tree=False,
            params=dict(env_kwargs),
            description=f"PettingZoo env {name}",
        )

    def new_initial_state(self, seed: int | None = None) -> PettingZooState:
        env = self.env_fn()
        env.reset(seed=seed)
        return PettingZooState(self, env)


def from_pettingzoo(env_fn: Callable[..., Any], name: str = "pettingzoo-env", **kwargs: Any) -> PettingZooGame:
    """Wrap a PettingZoo AEC env factory as an arena game."""
    return PettingZooGame(env_fn, name, **kwargs)


def load_pettingzoo(target: str, **params: Any) -> PettingZooGame:
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ArenaError(f"cannot import PettingZoo env module '{module_name}': {exc}") from None
    fn = getattr(module, attr or "env", None)
    if not callable(fn):
        raise ArenaError(f"module '{module_name}' has no callable '{attr or 'env'}'")
    return PettingZooGame(fn, f"pettingzoo:{target}", **params)


@hookimpl
def arena_game_namespaces() -> list[GameNamespace]:
    return [
        GameNamespace(
            "pettingzoo", load_pettingzoo, "any PettingZoo AEC env: pettingzoo:<module>[:factory] (no tree view)"
        )
    ]
