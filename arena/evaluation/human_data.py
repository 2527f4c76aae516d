"""People's decisions at hosted tables as training data: SFT rows, DPO pairs, agreement.

Why: a hosted game (``arena host``) keeps every decision a person made with what they saw —
the observation text, the structured view, the legal moves with their labels — beside the
game in the run store (:func:`arena.evaluation.decisions.human_row`). That is demonstration
data: what a person does at a position an agent also meets. This module turns it into

- **SFT rows** (``trl-prompt``, ``verl``, ``jsonl``): ``prompt`` = the prompt the named agent
  builds for that observation, ``completion`` = the person's move (its label, or what they said
  at a text decision);
- **DPO pairs** (``trl-preference``): ``chosen`` = the person's move, ``rejected`` = either a
  legal move drawn uniformly from the others, seeded by the game and step (``rejected: sampled``,
  the default: a pair at every choice with two or more moves) or the named agent's own move at
  the same observation (``rejected: agent``: "play like the person, not like you do now"; a
  decision where the agent already agrees gives no pair). Sampled is the default because the
  agent's pairs cover only its mistakes: DPO on those alone moves the preferred labels
  everywhere, the situations the agent had right included (measured: a tiny model that bet and
  called everywhere, given only "check"/"fold" pairs at the Queen and Jack, learned to check and
  fold the King too; docs/results/human_data.md). Pairs at every decision keep the rest anchored;
- **agreement**: how often an agent's most likely move is the person's (:func:`agreement`), the
  measure of imitation on held-out games.

The named agent sees a rebuilt observation (:func:`observation_of`): the stored text, view,
legal moves, labels and information-state key, not the live state — so it must be an agent that
reads those (``llm``, table agents such as ``cfr``), not one that searches the state or reads
tensors. Its move is its policy's most likely move when it exposes one (deterministic), else
what it plays from the decision's own seeded stream.

Held-out split by game, never by decision: a game is ``heldout`` when the first 8 bytes of
SHA-256 of its match id, read as a fraction of 2^64, fall below ``holdout``; so the split of a
game never changes when more games join the run directory, and no game's decisions are on both
sides.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from arena.agent import Agent, Observation
from arena.errors import ArenaError
from arena.evaluation.decisions import read_decisions
from arena.evaluation.store import RunStore

PARTS = ("train", "heldout", "all")
REJECTED = ("agent", "sampled")
BATCH = 64
"""Observations handed to the named agent at once."""


def part_of(match_id: str, holdout: float) -> str:
    """``heldout`` or ``train`` for a game, from its id alone (stable as the pool grows)."""
    u = int.from_bytes(hashlib.sha256(match_id.encode()).digest()[:8], "big") / 2**64
    return "heldout" if u < holdout else "train"


def check_holdout(holdout: float, part: str) -> None:
    if not 0.0 <= holdout < 1.0:
        raise ArenaError(f"export: --holdout must be in [0, 1), not {holdout}")
    if part not in PARTS:
        raise ArenaError(f"export: --part must be one of {', '.join(PARTS)}, not {part!r}")


def human_decisions(
    run_dir: str | Path, holdout: float = 0.2, part: str = "all", human: str | None = None
) -> Iterator[dict[str, Any]]:
    """Every stored human decision of the run (in store order), with its game's id, game, seed,
    index, the seat's return and its ``part``; only ``part`` (``all``: both) and, with
    ``human``, only that person's seat name."""
    check_holdout(holdout, part)
    path = Path(run_dir)
    store = RunStore.open_existing(path)
    try:
        for rec in store.iter_matches(page=256):
            side = part_of(rec.id, holdout)
            if part != "all" and side != part:
                continue
            for row in read_decisions(path, rec.id):
                if not row.get("human") or (human is not None and row["agent"] != human):
                    continue
                seat = row["seat"]
                yield {
                    "match_id": rec.id,
                    "game": rec.game,
                    "seed": rec.seed,
                    "game_index": rec.game_index,
                    "part": side,
                    **row,
                    "return": rec.returns[seat] if seat < len(rec.returns) else None,
                }
    finally:
        store.close()


def observation_of(row: dict[str, Any]) -> Observation:
    """The observation a stored human decision was made at, rebuilt from what was recorded
    (no state behind it): text, structured view, legal moves, labels, information-state key;
    its random stream is seeded by the game's id and the step."""
    seed = int.from_bytes(hashlib.sha256(f"{row['match_id']}/{row['step']}".encode()).digest()[:8], "big")
    obs = Observation(None, int(row["seat"]), np.random.default_rng(seed), row["game"])  # type: ignore[arg-type]
    obs.__dict__.update(
        decision=row["decision"],
        legal_actions=list(row["legal_actions"]),
        action_labels=list(row["legal"]),
        max_text_length=int(row.get("max_text_length") or 0),
        text=row["observation"],
        struct=row.get("observation_struct"),
    )
    if row.get("info_state") is not None:
        obs.__dict__["info_state"] = row["info_state"]
    return obs


def agent_moves(agent: Agent, rows: Sequence[dict[str, Any]]) -> list[tuple[str | None, Any]]:
    """``(prompt, move)`` of ``agent`` at each row's observation: the prompt it reports in its
    decision info (None if it reports none) and its most likely move (its policy's argmax, ties
    to the first legal move) or, without a policy, the move it plays; moves as labels (or text)."""
    out: list[tuple[str | None, Any]] = []
    for start in range(0, len(rows), BATCH):
        chunk = rows[start : start + BATCH]
        obs = [observation_of(r) for r in chunk]
        try:
            actions, infos = agent.act_batch_info(obs)
            for o, r, a, info in zip(obs, chunk, actions, infos):
                if o.decision == "choice" and agent.has_policy:
                    probs = agent.policy(o)
                    a = max(o.legal_actions, key=lambda x: probs.get(x, 0.0))
                move = a if o.decision == "text" else o.label_of(int(a))
                out.append((info.get("prompt") if info else None, move))
        except (AttributeError, NotImplementedError, TypeError) as exc:
            raise ArenaError(
                f"export: agent '{agent.name}' needs more than a stored observation ({type(exc).__name__}: {exc}); "
                "name an agent that reads the observation text and legal moves (e.g. llm) or an information-state table"
            ) from None
    return out


def _prompts(agent: Agent, rows: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    moves = agent_moves(agent, rows)
    if rows and moves[0][0] is None:
        raise ArenaError(
            f"export: agent '{agent.name}' reports no prompt; the SFT and DPO rows need the prompt "
            "of the agent that will learn from them (name an llm agent: --agent 'llm:model=DIR,mode=scored')"
        )
    return [(str(p), m) for p, m in moves]


def _meta(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("game", "seat", "seed", "game_index", "step", "return", "part", "match_id", "agent", "by")
    return {k: row.get(k) for k in keys}


def sft_records(
    run_dir: str | Path, agent: Agent, holdout: float = 0.2, part: str = "train", human: str | None = None
) -> Iterator[dict[str, Any]]:
    """One row per human decision: the agent's prompt, the person's move as the completion, and
    every field :mod:`arena.evaluation.export` shapes for ``trl-prompt`` and ``verl``."""
    rows = list(human_decisions(run_dir, holdout, part, human))
    for row, (prompt, _) in zip(rows, _prompts(agent, rows)):
        yield {
            **_meta(row),
            "split": row["part"],
            "prompt": prompt,
            "completion": str(row["action"]),
            "action": str(row["action"]),
            "legal": row["legal"],
        }


def pair_records(
    run_dir: str | Path,
    agent: Agent,
    holdout: float = 0.2,
    part: str = "train",
    rejected: str = "sampled",
    human: str | None = None,
) -> Iterator[dict[str, Any]]:
    """DPO pairs: the person's move chosen over a uniformly drawn other legal move (``sampled``) or
    over the agent's own (``rejected: agent``; decisions where they agree give none)."""
    if rejected not in REJECTED:
        raise ArenaError(f"export: --rejected must be one of {', '.join(REJECTED)}, not {rejected!r}")
    rows = list(human_decisions(run_dir, holdout, part, human))
    for row, (prompt, move) in zip(rows, _prompts(agent, rows)):
        chosen = row["action"]
        if rejected == "sampled":
            others = [lbl for lbl in row["legal"] if lbl != chosen]
            if not others:  # a text decision, or a single legal move: nothing to prefer over
                continue
            move = others[int(observation_of(row).rng.integers(len(others)))]
        if move == chosen:
            continue
        yield {
            "prompt": prompt,
            "chosen": str(chosen),
            "rejected": str(move),
            **_meta(row),
            "source": "human",
            "rejected_by": agent.name if rejected == "agent" else "sampled",
            "response": "move",
            "legal": row["legal"],
        }


def agreement(
    run_dir: str | Path, agent: Agent, holdout: float = 0.2, part: str = "heldout", human: str | None = None
) -> tuple[int, int]:
    """``(agreed, decisions)``: how many of the human decisions of ``part`` the agent's most likely
    move matches (choice decisions only: text has no single right answer)."""
    rows = [r for r in human_decisions(run_dir, holdout, part, human) if r["decision"] == "choice"]
    moves = agent_moves(agent, rows)
    return sum(m == r["action"] for r, (_, m) in zip(rows, moves)), len(rows)
