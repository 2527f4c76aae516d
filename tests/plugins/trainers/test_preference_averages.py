"""What the preference trainers keep besides their last iterate: SPPO's distilled average policy
(a reservoir of pi_t's decisions, maximum likelihood on it) and INPO's moving reference."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformers")

import arena  # noqa: E402
from arena.loading import load_agent  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.registry import get_registry  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402

LLM = {"name": "llm", "mode": "generated", "temperature": 1.0, "max_text_tokens": 1}


def _trainer(name, game, **params):
    agent = load_agent({**LLM, "model": str(tiny_model_dir())}, game)
    return agent, get_registry().get("trainer", name).factory(game, [agent], torch_threads=1, seed=0, **params)


def _answer_probs(trainer, agent, game):
    """P(first character = A, B, C) under the live weights, read at the prompt."""
    from arena.agent import Observation
    from arena.playing.match import game_rng

    obs = Observation(game.new_initial_state(), 0, game_rng(0, 0), game.spec.full_name)
    prompt = agent.backend.prompt_ids(agent.prompts.build(obs))
    ids = [agent.backend.tokenizer.convert_tokens_to_ids(c) for c in "ABC"]
    return prompt, ids, trainer.model.logprobs([(prompt, [i]) for i in ids], grad=False).exp().cpu().numpy()


def test_the_reservoir_keeps_every_item_with_equal_probability():
    from arena.plugins.trainers.llm.sppo import Reservoir

    hits = np.zeros(1000)
    for seed in range(300):
        r = Reservoir(100, seed)
        for i in range(1000):
            r.add(i)
        hits[r.items] += 1
    share = hits / 300  # each of the 1000 items is kept with probability 100/1000
    assert abs(share[:100].mean() - 0.1) < 0.02 and abs(share[-100:].mean() - 0.1) < 0.02
    a, b = Reservoir(10, 7), Reservoir(10, 7)
    for i in range(50):
        a.add(i)
        b.add(i)
    c = Reservoir(10, 0)
    c.load(a.state())
    for i in range(50, 80):
        b.add(i)
        c.add(i)
    assert c.items == b.items and c.batch(5) == b.batch(5)  # a loaded reservoir goes on as the original


def test_the_average_policy_learns_the_reservoir_and_leaves_the_last_iterate_alone():
    """Fill the reservoir with answers A 70% / C 30%: the kept weights' answer distribution moves
    there, the sampling weights do not move."""
    import torch

    from arena.plugins.trainers.llm.tokens import Decision

    torch.manual_seed(0)
    game = arena.load_game("cyclic_preference(length=1)")
    agent, sppo = _trainer("sppo", game, judge="preference", average="policy", average_steps=60, lr=3e-3)
    prompt, ids, live_before = _answer_probs(sppo, agent, game)
    for k in range(100):
        answer = ids[0] if k % 10 < 7 else ids[2]
        sppo.reservoir.add(Decision(0, 0, 0, list(prompt), [[answer]], 0, False, 1.0, None))
    sppo.distil()
    _, _, live_after = _answer_probs(sppo, agent, game)
    sppo._swap()
    _, _, kept = _answer_probs(sppo, agent, game)
    sppo._swap()
    assert np.allclose(live_after, live_before)
    assert abs(kept[0] - 0.7) < 0.1 and abs(kept[2] - 0.3) < 0.1 and kept[1] < 0.05, kept


def test_average_settings_are_checked():
    game = arena.load_game("cyclic_preference")
    with pytest.raises(arena.ArenaError, match="average must be false, weights"):
        _trainer("sppo", game, judge="preference", average="mean")
    with pytest.raises(arena.ArenaError, match="average_buffer must be at least 1"):
        _trainer("sppo", game, judge="preference", average="policy", average_buffer=0)
    with pytest.raises(arena.ArenaError, match="reference_every must be >= 0"):
        _trainer("inpo", game, judge="preference", reference_every=-1)


def test_sppo_with_an_average_policy_passes_the_trainer_kit():
    from arena.testing import check_trainer

    llm = {**LLM, "model": str(tiny_model_dir())}
    params = {"judge": "preference:sample=true", "samples": 2, "average": "policy", "average_steps": 2}
    check_trainer("sppo", "cyclic_preference(length=1)", [llm], params=params, games=2)


@pytest.mark.parametrize("every", [0, 2])
def test_inpo_moves_its_reference_every_n_updates(every):
    """With ``reference_every: 2`` the reference is the weights at the start of update 2 (after
    two updates); without it, the weights training started from."""
    import torch

    game = arena.load_game("cyclic_preference(length=1)")
    agent, inpo = _trainer("inpo", game, judge="preference:sample=true", samples=4, reference_every=every, lr=1e-2)
    start = {k: v.clone() for k, v in inpo.model.model.state_dict().items()}
    weights = []
    for k in range(3):
        weights.append({k: v.clone() for k, v in inpo.model.model.state_dict().items()})
        inpo.update([r.trajectory for r in play_games(game, [agent], num_games=4, seed=k, record=True)])
    want = weights[2] if every else start
    ref = inpo.reference.state_dict()
    assert all(torch.equal(ref[k], want[k]) for k in want)
    assert not all(torch.equal(weights[2][k], start[k]) for k in start)  # the weights did move
