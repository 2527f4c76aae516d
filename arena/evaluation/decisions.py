"""What an LLM decided in a stored game: one JSON line per decision, beside the game's record.

Why: post-training tools (TRL, verl) learn from prompts, completions and the returns that
followed; a run store that kept only outcomes could not give them. A recorded game (one played
with trajectories: every training game of a league) keeps, for each decision whose agent
reported a ``prompt`` in its info, the seat, the step, the prompt, the completion the model gave,
the action it became, its log-prob and reward, and what the harness did (invalid attempts,
whether the move was substituted). The store writes them to ``decisions/<match id>.jsonl`` with
the game (:meth:`arena.evaluation.store.RunStore.record_match`); the game's seed, index and
returns stay in the match row. Decisions of agents without prompts (neural, scripted) are not
kept: their observations are the game's to re-render. A person's decisions at a hosted table
(``arena host``) are kept too, marked ``human``, with what they saw (:func:`human_row`): the
data of ``arena export --source human`` (:mod:`arena.evaluation.human_data`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from arena.atomic import write_text_atomic
from arena.trainer import Step, Trajectory

DIRECTORY = "decisions"


def decision_rows(trajectory: Trajectory | None) -> list[dict[str, Any]] | None:
    """The LLM decisions of a recorded game (``None`` when it has none)."""
    if trajectory is None:
        return None
    rows = []
    for k, step in enumerate(trajectory.steps):
        ex = step.extra
        if ex.get("human"):
            rows.append(human_row(k, step, trajectory.seats[step.player]))
            continue
        if "prompt" not in ex:
            continue
        obs, action = step.observation, step.action
        label = action if isinstance(action, str) else obs.label_of(int(action))
        attempts = ex.get("attempts") or []
        substituted = bool(ex.get("substituted") or ex.get("fallback"))
        rows.append(
            {
                "step": k,
                "seat": step.player,
                "agent": trajectory.seats[step.player],
                "decision": obs.decision,
                "prompt": ex["prompt"],
                # what the model wrote: its last answer (generated) or the action's text (scored)
                "completion": str(attempts[-1]) if attempts and not substituted else str(label),
                "action": str(label),
                "legal": list(obs.action_labels) if obs.decision == "choice" else [],
                "log_prob": step.log_prob,
                "reward": float(step.reward),
                "invalid_attempts": int(ex.get("invalid_attempts") or 0),
                "substituted": substituted,
            }
        )
    return rows or None


def human_row(k: int, step: Step, agent: str) -> dict[str, Any]:
    """A person's decision (a hosted seat, :class:`arena.tools.host.remote.RemoteHuman`): what
    they saw — the observation text, the structured view, the legal moves with their labels,
    the information-state key — and the move they made, by them or by the clock."""
    obs, action, ex = step.observation, step.action, step.extra
    text_move = isinstance(action, str)
    try:
        info_state: str | None = obs.info_state
    except (NotImplementedError, AttributeError):
        info_state = None
    return {
        "step": k,
        "seat": step.player,
        "agent": agent,
        "human": True,
        "decision": obs.decision,
        "observation": obs.text,
        "observation_struct": ex.get("observation_struct"),
        "info_state": info_state,
        "legal_actions": list(obs.legal_actions),
        "legal": list(obs.action_labels) if obs.decision == "choice" else [],
        "max_text_length": obs.max_text_length,
        "action": action if text_move else obs.label_of(int(action)),
        "action_id": None if text_move else int(action),
        "by": ex.get("by", "you"),
        "seconds": ex.get("seconds"),
        "reward": float(step.reward),
    }


def write_decisions(run_dir: Path, match_id: str, rows: list[dict[str, Any]]) -> None:
    """``decisions/<match_id>.jsonl``, whole or not at all (a process killed mid-write leaves
    no half file; rewritten whole when a game is replayed after a crash)."""
    text = "".join(json.dumps(r, default=str) + "\n" for r in rows)
    write_text_atomic(run_dir / DIRECTORY / f"{match_id}.jsonl", text)


def read_decisions(run_dir: Path, match_id: str) -> Iterator[dict[str, Any]]:
    """The decision rows stored with game ``match_id`` (none when it has none)."""
    path = run_dir / DIRECTORY / f"{match_id}.jsonl"
    if not path.exists():
        return
    with path.open() as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)
