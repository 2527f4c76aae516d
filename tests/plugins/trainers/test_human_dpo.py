"""People's moves as training data, end to end: a scripted person with a consistent style plays a
hosted Kuhn series over loopback HTTP; its decisions are exported as DPO pairs; a tiny LLM is
fine-tuned on them by ``arena llm-train configs/llm/human_dpo.yaml``; the agent's agreement with
the person's moves on held-out games rises. Plus the ``dpo`` trainer's ``pairs`` file reading."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")

from arena.errors import ArenaError  # noqa: E402
from arena.evaluation.human_data import human_decisions, observation_of  # noqa: E402
from arena.loading import load_agent, load_game  # noqa: E402
from arena.tools import human_data as exp  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402


@pytest.mark.slow
def test_fine_tuning_on_a_persons_pairs_raises_held_out_agreement(tmp_path):
    # ~1 min on 2 CPU cores: 60 hosted games, one export, 4 llm-train iterations, two measurements
    r = exp.one_seed(1, tmp_path, games=60, holdout=0.3, rejected="sampled")
    (a0, n), (a1, n1) = r["before"], r["after"]
    assert n == n1 >= 15 and r["pairs"] >= 30
    before, after = a0 / n, a1 / n
    assert after >= before + 0.25 and after >= 0.75, r  # measured: 9/25 -> 20/25
    # the held-out games gave no pair: the pairs are the train part's decisions, the person's move chosen
    pairs = [json.loads(line) for line in (tmp_path / "human-dpo-train.jsonl").open()]
    held = {d["match_id"] for d in human_decisions(tmp_path / "host", 0.3, "heldout")}
    assert held and not {p["match_id"] for p in pairs} & held
    for p in pairs:
        assert p["part"] == "train" and p["chosen"] != p["rejected"]


def _trainer(pairs, **params):
    from arena.plugins.trainers.llm.dpo import DPO

    game = load_game("kuhn_poker")
    agent = load_agent(f"llm:model={tiny_model_dir()},mode=scored", game)
    return DPO(game, [agent], pairs=str(pairs), outcome_pairs=False, torch_threads=1, **params), agent


def test_a_pairs_file_is_read_in_the_tokens_the_agent_scores(tmp_path):
    run = exp.host_series(tmp_path / "host", 6, 2)
    rows = list(human_decisions(run, 0.0))
    spec = f"llm:model={tiny_model_dir()},mode=scored"
    from arena.cli import main

    out = tmp_path / "pairs.jsonl"
    assert main(["export", str(run), "--source", "human", "--format", "trl-preference"] + [
        "--agent", spec, "--rejected", "sampled", "--holdout", "0", "--out", str(out)
    ]) == 0  # fmt: skip
    dpo, agent = _trainer(out)
    assert len(dpo.file_pairs) == len(rows)
    for pair, row in zip(dpo.file_pairs, rows):  # what the agent scores at that observation
        obs = observation_of(row)
        (_,), (info,) = agent.act_batch_info([obs])
        assert list(pair.prompt_ids) == info["prompt_ids"]
        labels = {lbl: agent.backend.encode(agent.prompts.continuation(lbl)) for lbl in row["legal"]}
        assert list(pair.chosen_ids) == labels[row["action"]] and list(pair.rejected_ids) != list(pair.chosen_ids)
    stats = dpo.update([])  # the league's update with no games: the file's pairs alone are fit
    assert stats["dpo/file_pairs"] == len(rows) and stats["dpo/loss_last"] < stats["dpo/loss_first"]
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"prompt": "x", "chosen": "a", "rejected": "b", "game": "leduc_poker"}) + "\n")
    with pytest.raises(ArenaError, match="is a pair of game 'leduc_poker', not 'kuhn_poker'"):
        _trainer(other)
    with pytest.raises(ArenaError, match="pairs file not found"):
        _trainer(tmp_path / "missing.jsonl")
