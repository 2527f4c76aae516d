"""The conformance kit fails when a plugin breaks the contract: each check is shown catching a
deliberately broken game, agent or trainer (and passing the correct twin), so a third-party
author can trust a green ``check_*``."""

from __future__ import annotations

import random
import types

import numpy as np
import pytest

import arena
from arena.agent import AgentEntry, PolicyAgent
from arena.game import CHANCE, TERMINAL, Game, GameEntry, GameSpec, State
from arena.testing import ConformanceError, check_agent, check_game, check_trainer


class GuessState(State):
    """Chance hides a coin; player 0 then player 1 guess it; each correct guess scores 1."""

    def __init__(self, game: "GuessGame") -> None:
        self.game, self.coin, self.guesses = game, None, []
        if game.bug == "global_rng":  # the coin comes from outside the seeded stream
            self.coin = random.randrange(2)

    def current_player(self):
        if self.coin is None:
            return CHANCE
        return TERMINAL if len(self.guesses) == 2 else len(self.guesses)

    def chance_outcomes(self):
        return [(0, 0.5), (1, 0.5)]

    def legal_actions(self, player=None):
        return [0, 1] if not self.is_terminal() and not self.is_chance_node() else []

    def apply_action(self, action):
        if self.coin is None:
            self.coin = action
        else:
            self.guesses.append(action)

    def returns(self):
        if not self.is_terminal():
            return [0.0, 0.0]
        score = 5.0 if self.game.bug == "bounds" else 1.0
        return [score * (g == self.coin) for g in self.guesses]

    def clone(self):
        s = GuessState.__new__(GuessState)
        s.game, s.coin, s.guesses = self.game, self.coin, list(self.guesses)
        return s

    def information_state_key(self, player):
        return f"p{player}:{self.guesses[:player]}"

    def observation_text(self, player):
        return f"You are player {player}. Guesses so far: {self.guesses[:player]}"

    def observation_tensor(self, player):
        return np.array([float(len(self.guesses)), float(player), 0.0], dtype=np.float32)

    def action_label(self, player, action):
        return "guess" if self.game.bug == "labels" else ("heads", "tails")[action]

    def num_players(self):
        return 2


class GuessGame(Game):
    def __init__(self, bug: str = "none") -> None:
        self.bug = bug
        self.spec = GameSpec("guess", 2, 2, (3,), 0.0, 1.0, False, 2, tree=True, params={"bug": bug})

    def new_initial_state(self, seed=None):
        return GuessState(self)


class PrivateRandomAgent(PolicyAgent):
    """Samples with its own unseeded generator: results depend on more than the match seed."""

    name = "private_random"

    def __init__(self, game) -> None:
        self.rng = np.random.default_rng()

    def policy(self, obs):
        return {a: 1 / len(obs.legal_actions) for a in obs.legal_actions}

    def act(self, obs):
        return int(self.rng.choice(obs.legal_actions))


class ForgetfulBias(PolicyAgent):
    """Declares a checkpoint but saves nothing: a reload falls back to an even coin."""

    name = "forgetful_bias"

    def __init__(self, game, checkpoint=None) -> None:
        self.bias = 0.5 if checkpoint else 0.9

    def policy(self, obs):
        return {obs.legal_actions[0]: self.bias, obs.legal_actions[1]: 1 - self.bias}

    def save(self, directory):
        pass


def _registry(monkeypatch, module):
    import arena.registry as registry

    monkeypatch.setattr(registry, "_registry", registry.build_registry(extra=[("kit_test", module)]))


@pytest.fixture
def plugins(monkeypatch, fresh_registry):
    from arena.plugins.trainers.ppo import PPOTrainer

    class Forgetful(PPOTrainer):
        """PPO whose state_dict drops the optimiser moments and the minibatch generator."""

        def state_dict(self):
            return {"updates": self.updates}

        def load_state_dict(self, state):
            self.updates = state["updates"]

    class Idle(PPOTrainer):
        def update(self, trajectories):
            return {"loss": 0.0}

    from arena.trainer import TrainerEntry

    mod = types.ModuleType("kit_test")
    mod.arena_games = arena.hookimpl(lambda: [GameEntry("guess", GuessGame, "a coin to guess", {"bug": "none"})])
    mod.arena_agents = arena.hookimpl(
        lambda: [
            AgentEntry("private_random", PrivateRandomAgent, "unseeded"),
            AgentEntry(
                "forgetful_bias", ForgetfulBias, "saves nothing", {"checkpoint": None}, checkpoint_param="checkpoint"
            ),
        ]
    )
    mod.arena_trainers = arena.hookimpl(
        lambda: [
            TrainerEntry("forgetful_ppo", lambda g, ls, **p: Forgetful(g, ls, **p), "drops optimiser state"),
            TrainerEntry("idle_ppo", lambda g, ls, **p: Idle(g, ls, **p), "never updates"),
        ]
    )
    _registry(monkeypatch, mod)


def test_check_game_passes_a_correct_game_and_names_each_broken_promise(plugins):
    check_game("guess", games=50)
    with pytest.raises(ConformanceError, match="game 'guess\\(bug=labels\\)'.*distinct, non-empty labels"):
        check_game("guess(bug=labels)", games=50)
    with pytest.raises(ConformanceError, match="outside the declared \\[0.0, 1.0\\]"):
        check_game("guess(bug=bounds)", games=50)
    with pytest.raises(ConformanceError, match="guess\\(bug=global_rng\\)"):
        check_game("guess(bug=global_rng)", games=50)


def test_check_agent_catches_private_randomness_and_lossy_snapshots(plugins):
    check_agent("random", "guess")
    with pytest.raises(ConformanceError, match="agent 'private_random'.*same seed gives different moves"):
        check_agent("private_random", "guess")
    with pytest.raises(
        ConformanceError, match="agent 'forgetful_bias'.*reloaded from save_checkpoint plays differently"
    ):
        check_agent("forgetful_bias", "kuhn_poker", games=40)


def test_check_trainer_catches_lost_optimiser_state_and_no_learning(plugins):
    pytest.importorskip("torch").set_num_threads(1)
    check_trainer("ppo", "kuhn_poker", ["neural"], games=8)
    with pytest.raises(
        ConformanceError, match="trainer 'forgetful_ppo'.*restored from state_dict\\(\\) updates differently"
    ):
        check_trainer("forgetful_ppo", "kuhn_poker", ["neural"], games=8)
    with pytest.raises(ConformanceError, match="trainer 'idle_ppo'.*left every learner playing exactly as before"):
        check_trainer("idle_ppo", "kuhn_poker", ["neural"], games=8)
    with pytest.raises(ConformanceError, match="learner agent 'random' is not snapshottable"):
        check_trainer("ppo", "kuhn_poker", ["random"])
