"""Third-party plugins: real packages built in a temp dir, pip-installed (into a private
target directory, so the test never changes the environment it runs in), discovered through
the ``arena`` entry-point group by a real ``arena`` subprocess."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from support import arena_cmd
from support.packages import make_package, pip_install

GOOD = '''
"""A third-party game (matching pennies, simultaneous) and agent (always heads)."""
import numpy as np
import arena
from arena.agent import Agent, AgentEntry
from arena.game import Game, GameEntry, GameSpec, State, SIMULTANEOUS, TERMINAL


class PenniesState(State):
    def __init__(self):
        self.moves = None

    def num_players(self):
        return 2

    def current_player(self):
        return TERMINAL if self.moves else SIMULTANEOUS

    def legal_actions(self, player=None):
        return [] if self.moves else [0, 1]

    def apply_actions(self, actions):
        self.moves = list(actions)

    def returns(self):
        if not self.moves:
            return [0.0, 0.0]
        win = 1.0 if self.moves[0] == self.moves[1] else -1.0
        return [win, -win]

    def clone(self):
        s = PenniesState(); s.moves = None if self.moves is None else list(self.moves); return s

    def information_state_key(self, player):
        return "start" if not self.moves else f"done {self.moves}"

    def observation_text(self, player):
        return "Choose heads or tails." if not self.moves else f"Moves: {self.moves}"

    def observation_tensor(self, player):
        return np.zeros(1, dtype=np.float32) if not self.moves else np.ones(1, dtype=np.float32)

    def action_label(self, player, action):
        return ["heads", "tails"][action]


class Pennies(Game):
    spec = GameSpec(name="pennies", num_players=2, num_distinct_actions=2, observation_shape=(1,),
                    min_utility=-1, max_utility=1, zero_sum=True, max_game_length=2)

    def new_initial_state(self, seed=None):
        return PenniesState()


class Heads(Agent):
    def act(self, obs):
        return 0


@arena.hookimpl
def arena_games():
    return [GameEntry("pennies", Pennies, "matching pennies")]


@arena.hookimpl
def arena_agents():
    return [AgentEntry("always_heads", lambda game: Heads(), "always plays heads")]
'''

BROKEN = """
raise ImportError("this plugin is broken on purpose")
"""


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    root = tmp_path_factory.mktemp("plugins")
    good = make_package(root, "arena-pennies", "arena_pennies", GOOD)
    broken = make_package(root, "arena-broken", "arena_broken", BROKEN)
    return pip_install(root / "site", good, broken)


def run_arena(args, plugin_path, env):
    env = dict(env, PYTHONPATH=str(plugin_path) + os.pathsep + env.get("PYTHONPATH", ""))
    return subprocess.run(arena_cmd() + args, capture_output=True, text=True, env=env, timeout=120)


def test_installed_plugin_is_listed_and_plays(plugin_path, subprocess_env):
    out = run_arena(["plugins", "--json"], plugin_path, subprocess_env)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    by_name = {(r["name"], r["kind"]): r for r in rows}
    assert by_name[("pennies", "game")]["distribution"] == "arena-pennies"
    assert by_name[("pennies", "game")]["version"] == "1.2.3"
    assert by_name[("always_heads", "agent")]["status"] == "ok"
    broken = by_name[("arena_broken", "plugin")]
    assert broken["status"] == "broken" and "broken on purpose" in broken["description"]
    # built-ins keep working beside the broken plugin
    assert by_name[("kuhn_poker", "game")]["status"] == "ok"

    match = run_arena(
        ["match", "--game", "pennies", "--agents", "always_heads", "random", "--games", "40", "--no-rotate", "--json"],
        plugin_path,
        subprocess_env,
    )
    assert match.returncode == 0, match.stderr
    data = json.loads(match.stdout)
    assert data["agents"]["always_heads"]["games"] == 40
    assert 0 < data["agents"]["always_heads"]["wins"] < 40

    builtin = run_arena(
        ["match", "--game", "kuhn_poker", "--agents", "random", "random", "--games", "5"], plugin_path, subprocess_env
    )
    assert builtin.returncode == 0, builtin.stderr


def test_name_clash_names_both_providers(fresh_registry):
    import types

    import arena
    from arena.game import GameEntry
    from arena.registry import build_registry

    clash = types.ModuleType("clash")
    clash.arena_games = arena.hookimpl(lambda: [GameEntry("kuhn_poker", object, "impostor")])
    reg = build_registry(extra=[("impostor_plugin", clash)])
    with pytest.raises(arena.PluginError) as err:
        reg.get("game", "kuhn_poker")
    assert "impostor_plugin" in str(err.value) and "cards" in str(err.value)
    assert reg.get("game", "leduc_poker")  # the rest still works


def test_hook_that_raises_marks_plugin_broken(fresh_registry):
    import types

    import arena
    from arena.registry import build_registry

    bad = types.ModuleType("bad")

    def arena_agents():
        raise ValueError("cannot build agents")

    bad.arena_agents = arena.hookimpl(arena_agents)
    reg = build_registry(extra=[("bad_hook", bad)])
    assert any(b.plugin == "bad_hook" and "cannot build agents" in b.error for b in reg.broken)
    assert "random" in reg.names("agent")


def test_direct_caller_calls_observers_as_pluggy_does(fresh_registry):
    """Per-game events skip pluggy's dispatch (``registry.direct_caller``): the same
    implementations, last registered first, each with the arguments it takes; a hook with a
    wrapper keeps pluggy's caller."""
    import arena
    from arena.registry import direct_caller, get_registry

    heard = []

    class First:
        @arena.hookimpl
        def arena_match_finished(self, result, context):
            heard.append(("first", result, context["k"]))

    class Second:
        @arena.hookimpl
        def arena_match_finished(self, context):  # a subset of the arguments
            heard.append(("second", context["k"]))

    reg = get_registry()
    reg.register(First(), "first_observer")
    reg.register(Second(), "second_observer")
    hook = reg.hook.arena_match_finished
    direct_caller(hook)(result="r", context={"k": 1})
    mine, heard[:] = list(heard), []
    hook(result="r", context={"k": 1})
    assert mine == heard and ("first", "r", 1) in mine and ("second", 1) in mine

    class Wrapper:
        @arena.hookimpl(wrapper=True)
        def arena_match_finished(self, result, context):
            return (yield)

    reg.register(Wrapper(), "wrapper_observer")
    assert direct_caller(reg.hook.arena_match_finished) is reg.hook.arena_match_finished
