"""SPPO's ``average: mixture``: the averaged iterate kept exactly as a uniform mixture of
snapshots of its iterates. Its distribution is the mean of the snapshots' (recomputed here from
the saved tensors with a plain forward pass), the kept agent plays one snapshot per game, the
snapshots and the reservoir survive save/resume, its tree behaviour policy is PSRO's aggregate,
and bad parameters are one clear error."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("transformers")

import arena  # noqa: E402
from arena.games.cyclic_preference import response_index  # noqa: E402
from arena.loading import load_agent  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.registry import get_registry  # noqa: E402
from arena.tools.bench.preference_cycle import distribution, measured, warm_up  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402
from arena.trainer import load_trainer_state, save_trainer_state  # noqa: E402

LLM = {"name": "llm", "mode": "generated", "temperature": 1.0, "max_text_tokens": 1}
GAME = "cyclic_preference(length=1)"


def _trained(updates, **params):
    """A warmed-up tiny model (mass on A, B, C) and an SPPO trainer after ``updates`` updates."""
    import torch

    torch.manual_seed(0)
    game = arena.load_game(GAME)
    agent = load_agent({**LLM, "model": str(tiny_model_dir())}, game)
    warm_up(agent, game, 40, lr=1e-2)
    p = {"judge": "preference:sample=true", "samples": 4, "epochs": 4, "lr": 3e-2, "average": "mixture"}
    sppo = get_registry().get("trainer", "sppo").factory(game, [agent], torch_threads=1, seed=0, **{**p, **params})
    for k in range(updates):
        sppo.update(_games(game, agent, k))
    return game, agent, sppo


def _games(game, agent, k):
    return [r.trajectory for r in play_games(game, [agent], num_games=8, seed=100 + k, record=True)]


def _independent(agent, game, snapshot):
    """P(answer starts with A, B, C) of a fresh copy of the tiny model holding ``snapshot``."""
    import torch
    import transformers

    from arena.agent import Observation
    from arena.playing.match import game_rng

    model = transformers.AutoModelForCausalLM.from_pretrained(str(tiny_model_dir()))
    missing, unexpected = model.load_state_dict(snapshot, strict=False)
    assert not unexpected and len(snapshot) > 10
    obs = Observation(game.new_initial_state(), 0, game_rng(0, 0), game.spec.full_name)
    prompt = agent.backend.prompt_ids(agent.prompts.build(obs))
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt])).logits[0, -1]
    ids = [agent.backend.tokenizer.convert_tokens_to_ids(c) for c in "ABC"]
    return torch.softmax(logits.double(), dim=0)[ids].numpy()


def test_the_kept_mixture_is_the_mean_of_its_snapshots_and_plays_one_per_game():
    game, agent, sppo = _trained(4)
    snaps = sppo.state_dict()["extra"]["mixture"]["snapshots"]
    assert len(snaps) == 4 and sppo.mixture.iterations == [1, 2, 3, 4]
    members = np.array([_independent(agent, game, s) for s in snaps])
    want = members.mean(axis=0)
    live = distribution(sppo, agent, game)[:3]
    got = measured(sppo, agent, game, "sppo")[:3]
    assert np.abs(members - want).max() > 0.02, members  # the iterates differ: a mixture, not one of them
    assert np.abs(live - want).max() > 0.01, (live, want)  # and the kept policy is not the last iterate
    assert np.allclose(got, want, atol=1e-5), (got, want)
    assert np.allclose(distribution(sppo, agent, game)[:3], live)  # measuring put the last iterate back
    kept = sppo.kept_agent()
    played = play_games(game, [kept], num_games=400, seed=7, record=True)
    answers = [r.trajectory.steps[0].action for r in played]
    freq = np.bincount([response_index(a) for a in answers], minlength=4)[:3] / len(answers)
    assert np.abs(freq - want).max() < 0.08, (freq, want)
    used = np.bincount([r.trajectory.steps[0].extra["mixture_member"] for r in played], minlength=4)
    assert used.min() > 60, used  # one snapshot per game, drawn uniformly
    assert np.allclose(distribution(sppo, agent, game)[:3], live)  # the learner still plays pi_T


def test_snapshots_survive_save_and_resume_and_the_reservoir_goes_on(tmp_path):
    game, agent, sppo = _trained(5, mixture_size=2, mixture_every=1)
    assert len(sppo.mixture.snapshots) == 2 and sppo.mixture.seen == 5
    save_trainer_state(sppo, tmp_path / "trainer.pt")
    copy = load_agent({**LLM, "model": str(tiny_model_dir())}, game)
    resumed = get_registry().get("trainer", "sppo").factory(game, [copy], **sppo.p)
    load_trainer_state(resumed, tmp_path / "trainer.pt")
    assert resumed.mixture.iterations == sppo.mixture.iterations
    assert np.allclose(measured(resumed, copy, game, "sppo"), measured(sppo, agent, game, "sppo"))
    for k in (5, 6, 7):
        games = _games(game, agent, k)
        sppo.update(games)
        resumed.update(games)
        assert resumed.mixture.iterations == sppo.mixture.iterations
    import torch

    for a, b in zip(sppo.mixture.snapshots, resumed.mixture.snapshots):
        assert all(torch.equal(a[n], b[n]) for n in a)
    sppo.save_kept(tmp_path / "snapshot")  # the members beside the last iterate, each a model directory
    manifest = json.loads((tmp_path / "snapshot" / "mixture" / "mixture.json").read_text())
    assert [m["iteration"] for m in manifest["members"]] == sppo.mixture.iterations
    first = load_agent({**LLM, "model": str(tmp_path / "snapshot" / "mixture" / "member-0000")}, game)
    frozen = get_registry().get("trainer", "sppo").factory(game, [first], judge="preference")
    assert np.allclose(distribution(frozen, first, game)[:3], _independent(agent, game, sppo.mixture.snapshots[0]))
    saved = load_agent({**LLM, "model": str(tmp_path / "snapshot" / "mixture")}, game)  # the whole mixture
    want = np.mean([_independent(agent, game, s) for s in sppo.mixture.snapshots], axis=0)
    played = play_games(game, [saved], num_games=400, seed=3, record=True)
    freq = np.bincount([response_index(r.trajectory.steps[0].action) for r in played], minlength=4)[:3] / 400
    assert np.abs(freq - want).max() < 0.08, (freq, want)
    assert 150 < sum(r.trajectory.steps[0].extra["mixture_member"] for r in played) < 250  # half the games each
    (tmp_path / "snapshot" / "mixture" / "mixture.json").write_text("{}")
    with pytest.raises(arena.ArenaError, match="not a mixture manifest"):
        load_agent({**LLM, "model": str(tmp_path / "snapshot" / "mixture")}, game)


def test_the_snapshot_reservoir_keeps_every_iteration_with_equal_probability():
    import torch

    from arena.plugins.trainers.llm.mixture import SnapshotMixture

    hits = np.zeros(200)
    for seed in range(200):
        mix = SnapshotMixture(1, 20, seed)
        for t in range(1, 201):
            mix.add({"w": torch.tensor([float(t)])}, t)
        assert sorted(int(s["w"]) for s in mix.snapshots) == sorted(mix.iterations)
        hits[np.array(mix.iterations) - 1] += 1
    share = hits / 200  # every iteration kept with probability 20/200
    assert abs(share[:50].mean() - 0.1) < 0.02 and abs(share[-50:].mean() - 0.1) < 0.02


def test_the_tree_mixture_is_psros_reach_weighted_aggregate():
    from arena.exact.tree import get_tree
    from arena.plugins.agents.psro.exact import TreeOracle
    from arena.plugins.trainers.llm.mixture import behaviour_mixture

    game = arena.load_game("kuhn_poker")
    tree = get_tree(game)
    oracle = TreeOracle(game, tree)
    rng = np.random.default_rng(0)
    sigmas = []
    for _ in range(3):
        raw = rng.random(tree.num_slots) ** 3
        sigmas.append(raw / np.add.reduceat(raw, tree.info_start)[tree.slot_info])
    got = behaviour_mixture(tree, sigmas)
    for p in range(tree.num_players):
        s0, s1 = tree.player_slots[p]
        want = oracle.aggregate(p, [s[s0:s1] for s in sigmas], np.ones(3) / 3)
        assert np.allclose(got[s0:s1], want)
    assert not np.allclose(got, np.mean(sigmas, axis=0))  # Kuhn's second decisions are reach-weighted


def test_mixture_settings_are_checked():
    game = arena.load_game(GAME)
    agent = load_agent({**LLM, "model": str(tiny_model_dir())}, game)
    make = get_registry().get("trainer", "sppo").factory
    for bad, name in (({"mixture_every": 0}, "mixture_every"), ({"mixture_size": -1}, "mixture_size")):
        with pytest.raises(arena.ArenaError, match=f"{name} must be an integer"):
            make(game, [agent], judge="preference", average="mixture", **bad)
    with pytest.raises(arena.ArenaError, match="policy or mixture"):
        make(game, [agent], judge="preference", average="mixtures")


def test_sppo_with_a_kept_mixture_passes_the_trainer_kit():
    from arena.testing import check_trainer

    llm = {**LLM, "model": str(tiny_model_dir())}
    params = {"judge": "preference:sample=true", "samples": 2, "average": "mixture", "mixture_size": 2}
    check_trainer("sppo", GAME, [llm], params=params, games=2)


def test_on_a_tree_the_kept_exploitability_is_the_reach_weighted_mixture_of_the_iterates():
    """Kuhn poker, scored: after one iteration the kept policy is that iterate; after two, its
    exploitability is the mixture of the two iterates' policies read off the live agent."""
    from arena.exact.exploitability import exploitability, policy_array
    from arena.exact.tree import get_tree
    from arena.plugins.trainers.llm.mixture import behaviour_mixture

    game = arena.load_game("kuhn_poker")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir()), "mode": "scored"}, game)
    make = get_registry().get("trainer", "sppo").factory
    sppo = make(game, [agent], epochs=2, rollouts=1, lr=0.05, average="mixture", torch_threads=1, seed=0)
    tree, sigmas, metrics = get_tree(game), [], []
    for k in range(2):
        metrics.append(sppo.update([r.trajectory for r in play_games(game, [agent, agent], 8, seed=k, record=True)]))
        sigmas.append(policy_array(game, agent, tree))
    assert metrics[0]["sppo/kept_exploitability"] == pytest.approx(metrics[0]["sppo/last_exploitability"])
    assert not np.allclose(sigmas[0], sigmas[1])
    want = exploitability(game, behaviour_mixture(tree, sigmas), tree)
    assert metrics[1]["sppo/kept_exploitability"] == pytest.approx(want, abs=1e-9)
    assert metrics[1]["sppo/last_exploitability"] == pytest.approx(exploitability(game, sigmas[1], tree), abs=1e-9)
