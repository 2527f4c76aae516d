"""What an LLM decided in a stored game: one JSON line per decision, beside the game's record.

Why: post-training tools (TRL, verl) learn from prompts, completions and the returns that
followed; a run store that kept only outcomes could not give them. A recorded game (one played
with trajectories: every training game of a league) keeps, for each decision whose agent
reported a ``prompt`` in its info, the seat, the step, the prompt, the completion the model gave,
the action it became, its log-prob and reward, and what the harness did (invalid attempts,
whether the move was substituted). The store writes them to ``decisions/<match id>.jsonl`` with
the game (:meth:`arena.evaluation.store.RunStore.record_match`); the game's seed, index and
returns stay in the match row. Decisions of agents without prompts (neural, scripted) are not
kept: their observations are the game's to re-render.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from arena.trainer import Trajectory

DIRECTORY = "decisions"


def decision_rows(trajectory: Trajectory | None) -> list[dict[str, Any]] | None:
    """The LLM decisions of a recorded game (``None`` when it has none)."""
    if trajectory is None:
        return None
    rows = []
    for k, step in enumerate(trajectory.steps):
        ex = step.extra
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


def write_decisions(run_dir: Path, match_id: str, rows: list[dict[str, Any]]) -> None:
    """``decisions/<match_id>.jsonl`` (rewritten whole when a game is replayed after a crash)."""
    folder = run_dir / DIRECTORY
    folder.mkdir(exist_ok=True)
    (folder / f"{match_id}.jsonl").write_text("".join(json.dumps(r, default=str) + "\n" for r in rows))


def read_decisions(run_dir: Path, match_id: str) -> Iterator[dict[str, Any]]:
    """The decision rows stored with game ``match_id`` (none when it has none)."""
    path = run_dir / DIRECTORY / f"{match_id}.jsonl"
    if not path.exists():
        return
    with path.open() as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)
