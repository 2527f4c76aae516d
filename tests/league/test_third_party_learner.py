"""A third-party package — its own agent (save/load through a manifest) and its own trainer
(``state_dict``) — is a league learner from YAML: snapshots, evaluation, leaderboard, and a run
killed with SIGKILL mid-training then rerun ends with the same stores and weights as an
uninterrupted run. The host never names the plugin: it only reads ``checkpoint_param``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support import arena_cmd
from support.league import kill_when, rows
from support.packages import make_package, pip_install

LEARNER = '''
"""A softmax table over information states trained by REINFORCE with a numpy generator."""
import json
from pathlib import Path

import numpy as np

import arena
from arena.agent import AgentEntry, PolicyAgent
from arena.trainer import Trainer, TrainerEntry


class TableAgent(PolicyAgent):
    def __init__(self, game, path=None, temperature=1.0):
        self.logits = {}
        self.temperature = float(temperature)
        if path is not None:
            self.logits = json.loads((Path(path) / "logits.json").read_text())

    def policy(self, obs):
        z = np.array(self.logits.get(obs.info_state, [0.0] * len(obs.legal_actions))) / self.temperature
        p = np.exp(z - z.max()); p /= p.sum()
        return dict(zip(obs.legal_actions, p.tolist()))

    def save(self, directory):
        (Path(directory) / "logits.json").write_text(json.dumps(self.logits, sort_keys=True))


class TableReinforce(Trainer):
    name = "table_reinforce"

    def __init__(self, game, learners, lr=0.5, seed=0):
        self.learners, self.lr = list(learners), float(lr)
        self.rng = np.random.default_rng(seed)
        self.updates = 0

    def update(self, trajectories):
        me = self.learners[0]
        keep = self.rng.random(len(trajectories)) < 0.9  # the generator matters for the result
        total = 0.0
        for traj, k in zip(trajectories, keep):
            if not k:
                continue
            for seat, who in enumerate(traj.seats):
                if who != me.name:
                    continue
                ret = traj.returns[seat]
                total += ret
                for s in traj.for_player(seat):
                    obs = s.observation
                    z = me.logits.setdefault(obs.info_state, [0.0] * len(obs.legal_actions))
                    p = np.array(list(me.policy(obs).values()))
                    i = obs.legal_actions.index(s.action)
                    for j in range(len(z)):
                        z[j] += self.lr * ret * ((1.0 if j == i else 0.0) - p[j]) / len(trajectories)
        self.updates += 1
        return {"return": total / max(1, int(keep.sum()))}

    def state_dict(self):
        return {"rng": json.dumps(self.rng.bit_generator.state), "updates": self.updates}

    def load_state_dict(self, state):
        self.rng.bit_generator.state = json.loads(state["rng"])
        self.updates = int(state["updates"])


@arena.hookimpl
def arena_agents():
    return [AgentEntry("table", TableAgent, "softmax table", {"path": None, "temperature": 1.0},
                       checkpoint_param="path")]


@arena.hookimpl
def arena_trainers():
    return [TrainerEntry("table_reinforce", TableReinforce, "REINFORCE on a table", {"lr": 0.5, "seed": 0})]
'''

STEPS, GAMES = 6, 40


def league(out: Path) -> dict:
    return {
        "game": "kuhn_poker",
        "seed": 5,
        "steps": STEPS,
        "out": str(out),
        "progress": False,
        "population": [
            {"label": "rand", "agent": "random"},
            {
                "label": "tab",
                "agent": "table:temperature=1.0",
                "role": "learner",
                "trainer": {"name": "table_reinforce", "params": {"lr": 1.0, "seed": 3}},
                "matchmaking": "pfsp",
                "self_play": 0.3,
                "games_per_step": GAMES,
                "snapshot_every": 2,
            },
        ],
        "evaluation": {"every": 3, "games": 6, "ratings": {"bootstrap": 0}},
    }


@pytest.fixture(scope="module")
def learner_path(tmp_path_factory):
    root = tmp_path_factory.mktemp("learner")
    return pip_install(root / "site", make_package(root, "arena-table", "arena_table", LEARNER))


@pytest.mark.slow
def test_third_party_learner_league_survives_sigkill(tmp_path, learner_path, subprocess_env):
    env = dict(subprocess_env, PYTHONPATH=str(learner_path) + os.pathsep + subprocess_env.get("PYTHONPATH", ""))
    runs = {}
    for name in ("clean", "crash"):
        cfg = tmp_path / f"{name}.yaml"
        cfg.write_text(yaml.safe_dump(league(tmp_path / name)))
        runs[name] = arena_cmd() + ["league", str(cfg), "--quiet"]
    clean = subprocess.run(runs["clean"], capture_output=True, text=True, env=env, timeout=300)
    assert clean.returncode == 0, clean.stderr[-2000:]

    assert kill_when(runs["crash"], tmp_path / "crash" / "arena.sqlite", lambda c: c >= 2, env=env) < STEPS
    again = subprocess.run(runs["crash"], capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]

    a, b = tmp_path / "clean", tmp_path / "crash"
    for sub in ("train", ".", "metrics"):
        assert rows(a / sub / "arena.sqlite") == rows(b / sub / "arena.sqlite"), sub
    assert len(rows(b / "train" / "arena.sqlite")) == STEPS * GAMES
    for snap in ("tab@2", "tab@4", "tab@6"):
        manifest = json.loads((b / "snapshots" / snap / "arena_agent.json").read_text())
        assert manifest["agent"] == "table" and manifest["params"] == {"temperature": 1.0}
        assert (a / "snapshots" / snap / "logits.json").read_text() == (
            b / "snapshots" / snap / "logits.json"
        ).read_text()
    board = (b / "leaderboard.md").read_text()
    assert "tab@6" in board and "rand" in board


def test_third_party_plugin_passes_the_conformance_kit(learner_path, subprocess_env):
    """What the plugin's author runs in their own tests: the installed package through arena.testing."""
    env = dict(subprocess_env, PYTHONPATH=str(learner_path) + os.pathsep + subprocess_env.get("PYTHONPATH", ""))
    code = (
        "from arena.testing import check_agent, check_trainer\n"
        "check_agent('table', 'kuhn_poker')\n"
        "check_trainer('table_reinforce', 'kuhn_poker', ['table'], params={'lr': 1.0}, games=40)\n"
        "print('conformant')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0 and "conformant" in proc.stdout, proc.stderr[-2000:]
