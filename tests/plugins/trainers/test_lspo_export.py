"""An LSPO run's data out: the preference pairs it fit load with ``datasets`` as a TRL
preference set that tokenizes back to the very pairs, and its decisions load in every other
format with the documented columns, each row traceable to its stored game."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")
datasets = pytest.importorskip(
    "datasets", reason="arena export's tests load with datasets (pip install 'arena-rl[bridges]')"
)

from arena.cli import main  # noqa: E402
from arena.evaluation.export import decision_records  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402

CONFIG = """
game: table_talk(game=kuhn_poker,max_chars=8)
model: {{dir: {model}}}
agent: {{mode: scored, max_text_tokens: 8}}
trainer: lspo
params: {{candidates: 1, k_min: 2, k_max: 2, solver_iterations: 50, eval_samples: 1, compare_initial: false,
         measure_before: false, seed: 0, epochs: 1, lr: 0.0001}}
iterations: 1
games_per_iter: 4
eval_every: 1
eval_games: 2
eval_opponents: [random]
out: {out}
quiet: true
"""


@pytest.fixture(scope="module")
def lspo_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("lspo")
    (root / "lspo.yaml").write_text(CONFIG.format(model=tiny_model_dir(), out=root / "run"))
    assert main(["llm-train", str(root / "lspo.yaml")]) == 0
    return root / "run"


def test_dpo_preference_set_round_trips_through_trl_format(lspo_run, tmp_path):
    from transformers import AutoTokenizer

    out = tmp_path / "pairs.jsonl"
    assert main(["export", str(lspo_run), "--format", "trl-preference", "--out", str(out)]) == 0
    ds = datasets.load_dataset("json", data_files=str(out), split="train")
    assert {"prompt", "chosen", "rejected", "game", "seat", "seed", "game_index", "step"} <= set(ds.column_names)
    stored = [json.loads(line) for f in sorted(lspo_run.glob("data/*/pairs/*.jsonl")) for line in f.open()]
    assert len(ds) == len(stored) > 0
    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir()))
    ids = lambda text: tok(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    decisions = {(r["seed"], r["game_index"], r["step"]): r for r in decision_records(lspo_run)}
    for row, pair in zip(ds, stored):  # the text is the pair the trainer fit, token for token
        assert ids(row["prompt"]) == pair["prompt_ids"]
        assert ids(row["chosen"]) == pair["chosen_ids"] and ids(row["rejected"]) == pair["rejected_ids"]
        assert row["chosen"] != row["rejected"] and row["source"] == "lspo"
        made_at = decisions[(row["seed"], row["game_index"], row["step"])]  # a stored decision of a stored game
        assert made_at["prompt"] == row["prompt"] and made_at["seat"] == row["seat"]


@pytest.mark.parametrize("fmt", ["trl-prompt", "verl", "jsonl"])
def test_decisions_load_with_datasets_in_every_format(lspo_run, tmp_path, fmt):
    out = tmp_path / ("data.parquet" if fmt == "verl" else "data.jsonl")
    assert main(["export", str(lspo_run), "--format", fmt, "--out", str(out)]) == 0
    ds = datasets.load_dataset("parquet" if fmt == "verl" else "json", data_files=str(out), split="train")
    records = list(decision_records(lspo_run))
    assert len(ds) == len(records) > 0
    if fmt == "verl":
        assert ds.column_names == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
        row = ds[0]
        assert row["data_source"].startswith("arena/table_talk") and row["prompt"][0]["role"] == "user"
        assert row["reward_model"]["style"] == "rule" and row["extra_info"]["match_id"] == records[0]["match_id"]
    else:
        cols = {"prompt", "completion", "game", "seat", "seed", "game_index", "step", "return"}
        assert cols <= set(ds.column_names)
        assert [r["prompt"] for r in ds] == [r["prompt"] for r in records]
        assert all(r["return"] in (-2.0, -1.0, 1.0, 2.0) for r in ds)  # Kuhn's returns, the seat's own
