"""A run's LLM data in the formats post-training tools read, streamed row by row.

Why: a run keeps every LLM decision of its recorded games (:mod:`arena.evaluation.decisions`)
and the preference pairs its DPO-family trainers fit (``data/<unit>/pairs/``), but TRL and
verl read their own layouts. Each format below is a generator over the stores, so memory
stays one page of games (or one row group of parquet) whatever the run's size:

- ``jsonl``: one decision per line, every field arena keeps (prompt, completion, action, legal
  actions, log-prob, reward, the game's return, harness counts) with the game, seat, seed, step;
- ``trl-prompt``: TRL's prompt-completion type (standard format: ``prompt``, ``completion``
  strings) plus the game, seat, seed, step and return of each row (SFT, GKD; ``prompt`` alone
  for GRPO/RLOO);
- ``trl-preference``: TRL's preference type (``prompt``, ``chosen``, ``rejected``; explicit
  prompt, as DPO recommends) from the stored pairs, with where each pair was made;
- ``verl``: verl's parquet rows (``data_source``, ``prompt`` as a chat list, ``ability``,
  ``reward_model`` ``{"style": "rule", "ground_truth": the action played}``, ``extra_info``).

Prompts are stored as the agent sent them: an agent that used its model's chat template
(``chat: auto`` with a chat model) stored the templated text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any, Iterator

from arena.errors import ArenaError
from arena.evaluation.decisions import read_decisions
from arena.evaluation.store import DB_NAME, RunStore

FORMATS = ("trl-prompt", "trl-preference", "verl", "jsonl")
SPLITS = (("evaluation", ""), ("train", "train"))
"""The stores a run directory may hold: its own, and a league's training games under ``train/``."""
PAGE = 256
"""Games read from a store at once (each game's decisions are read from its own file)."""
ROW_GROUP = 512
"""Parquet rows per row group: what the verl writer holds in memory at once."""


def stores(run_dir: Path) -> list[tuple[str, Path]]:
    """``(split, store directory)`` of every store in ``run_dir`` (an ArenaError if none)."""
    found = [(split, run_dir / sub) for split, sub in SPLITS if (run_dir / sub / DB_NAME).exists()]
    if not found:
        RunStore.open_existing(run_dir).close()  # says what is wrong with the path
    return found


def decision_records(run_dir: Path) -> Iterator[dict[str, Any]]:
    """Every stored LLM decision with its game's id, seed, index and the seat's return."""
    for split, path in stores(run_dir):
        store = RunStore.open_existing(path)
        try:
            for rec in store.iter_matches(page=PAGE):
                for row in read_decisions(path, rec.id):
                    if row.get("human"):  # a person's decision: ``--source human`` exports those
                        continue
                    seat = row["seat"]
                    ret = rec.returns[seat] if seat < len(rec.returns) else None
                    yield {
                        "split": split,
                        "match_id": rec.id,
                        "game": rec.game,
                        "seed": rec.seed,
                        "game_index": rec.game_index,
                        **row,
                        "return": ret,
                    }
        finally:
            store.close()


def pair_records(run_dir: Path) -> Iterator[dict[str, Any]]:
    """Every stored preference pair, by trainer unit and update."""
    for path in sorted(run_dir.glob("data/*/pairs/update-*.jsonl")):
        with path.open() as fh:
            for line in fh:
                if line.strip():
                    yield {"unit": path.parent.parent.name, **json.loads(line)}


_META = ("game", "seat", "seed", "game_index", "step")


def trl_prompt(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "prompt": row["prompt"],
        "completion": row["completion"],
        **{k: row[k] for k in _META},
        "return": row["return"],
        "split": row["split"],
        "match_id": row["match_id"],
    }


def trl_preference(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "prompt": row["prompt"],
        "chosen": row["chosen"],
        "rejected": row["rejected"],
        **{k: row.get(k) for k in _META},
        "source": row["source"],
        "unit": row["unit"],
        "update": row["update"],
    }


def verl(row: dict[str, Any], index: int) -> dict[str, Any]:
    return {
        "data_source": f"arena/{row['game']}",
        "prompt": [{"role": "user", "content": row["prompt"]}],
        "ability": "game",
        "reward_model": {"style": "rule", "ground_truth": row["action"]},
        "extra_info": {
            "split": row["split"],
            "index": index,
            "match_id": row["match_id"],
            **{k: row[k] for k in _META},
            "return": row["return"],
            "completion": row["completion"],
            "legal": row["legal"],
        },
    }


def rows(run_dir: str | Path, fmt: str) -> Iterator[dict[str, Any]]:
    """The run's rows in format ``fmt`` (an ArenaError when the run has none to give)."""
    if fmt not in FORMATS:
        raise ArenaError(f"export: format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    run = Path(run_dir)
    if fmt == "trl-preference":
        source = pair_records(run)
        empty = (
            f"{run} holds no preference pairs (data/<unit>/pairs/: the dpo and lspo trainers of "
            "`arena llm-train` / `arena league` write them)"
        )
    else:
        source = decision_records(run)
        empty = (
            f"{run} holds no LLM decisions (decisions/: kept for games played with trajectories "
            "by agents that report their prompts, e.g. the training games of `arena llm-train`)"
        )
    first = next(source, None)  # read now: a run with nothing to give fails before any file is made
    if first is None:
        raise ArenaError(empty)
    return _shaped(first, source, fmt)


def _shaped(first: dict[str, Any], rest: Iterator[dict[str, Any]], fmt: str) -> Iterator[dict[str, Any]]:
    for i, row in enumerate(_chain(first, rest)):
        if fmt == "jsonl":
            yield row
        elif fmt == "trl-prompt":
            yield trl_prompt(row)
        elif fmt == "trl-preference":
            yield trl_preference(row)
        else:
            yield verl(row, i)


def _chain(first: dict[str, Any], rest: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    yield first
    yield from rest


def write_jsonl(source: Iterator[dict[str, Any]], out: IO[str]) -> int:
    n = 0
    for row in source:
        out.write(json.dumps(row, default=str) + "\n")
        n += 1
    return n


def verl_schema() -> Any:
    """The parquet schema of a ``verl`` row (fixed, so every row group agrees)."""
    import pyarrow as pa

    extra = pa.struct(
        [
            ("split", pa.string()),
            ("index", pa.int64()),
            ("match_id", pa.string()),
            ("game", pa.string()),
            ("seat", pa.int64()),
            ("seed", pa.int64()),
            ("game_index", pa.int64()),
            ("step", pa.int64()),
            ("return", pa.float64()),
            ("completion", pa.string()),
            ("legal", pa.list_(pa.string())),
        ]
    )
    return pa.schema(
        [
            ("data_source", pa.string()),
            ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
            ("ability", pa.string()),
            ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
            ("extra_info", extra),
        ]
    )


def write_parquet(source: Iterator[dict[str, Any]], path: Path) -> int:
    """verl rows to a parquet file, :data:`ROW_GROUP` rows at a time."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ArenaError("export: --format verl writes parquet and needs pyarrow (pip install 'arena-rl[bridges]')")
    schema = verl_schema()
    n = 0
    with pq.ParquetWriter(str(path), schema) as writer:
        chunk: list[dict[str, Any]] = []
        for row in source:
            chunk.append(row)
            if len(chunk) == ROW_GROUP:
                writer.write_table(pa.Table.from_pylist(chunk, schema=schema))
                n, chunk = n + len(chunk), []
        if chunk:
            writer.write_table(pa.Table.from_pylist(chunk, schema=schema))
            n += len(chunk)
    return n
