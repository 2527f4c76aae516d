"""People's moves as training data, end to end: a hosted Kuhn poker series in which a scripted
person with a consistent style plays over loopback HTTP, its decisions exported as DPO pairs,
a tiny LLM fine-tuned on them through ``configs/llm/human_dpo.yaml`` (``arena llm-train``), and
the agent's agreement with the person's moves on held-out games before and after.

    python -m arena.tools.human_data --seeds 0 1 2 3 4 --out runs/human_data

Why a scripted person: a test and a results page need the same person every time. The style
(:func:`style`) is a deterministic rule of the card and the situation, not a solver's policy:
bet or call with the King; check, then call a bet, with the Queen; check the Jack and fold it
to a bet (value bets, no bluffs). It reaches the host exactly as a person's clicks do (``POST /api/act`` with its
join token), so every recorded row went through the real host path.

Per seed ``s``: the series is ``games`` games at host seed ``s`` against ``opponent``; the tiny
model is built with seed ``s``; held-out games are the ``holdout`` fraction chosen by game id
(:func:`arena.evaluation.human_data.part_of`); the trainer's seed is ``s``. Agreement is the
fraction of held-out decisions where the agent's most likely move is the person's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any, Sequence

CONFIG = Path(__file__).resolve().parent.parent / "configs" / "llm" / "human_dpo.yaml"


def style(ev: dict[str, Any]) -> dict[str, Any]:
    """The scripted person's move at a ``turn`` event of Kuhn poker (see the module's docstring)."""
    labels = {a["label"]: a["action"] for a in ev["actions"]}
    card = next(c for c in ("Jack", "Queen", "King") if f"hold the {c}" in ev["text"])
    first = "check" in labels
    bold = card == "King" or (card == "Queen" and not first)
    want = ("bet" if first else "call") if bold else ("check" if first else "fold")
    return {"action": labels[want]}


def host_series(out: Path, games: int, seed: int, opponent: str = "random") -> Path:
    """``games`` hosted Kuhn games of the scripted person (``ann``) against ``opponent``, stored in
    ``out``: half of them with the person in seat 0, half in seat 1 (two series at seeds ``seed``
    and ``seed + 1000`` into the one run directory, as people who sit where they like pool theirs);
    a real server on 127.0.0.1 at a free port."""
    first = games // 2
    for seats, n, s in (
        (["human:name=ann", opponent], first, seed),
        ([opponent, "human:name=ann"], games - first, seed + 1000),
    ):
        if n:
            _series(out, seats, n, s)
    return out


def _series(out: Path, seats: list[str], games: int, seed: int) -> None:
    from arena.tools.host.client import JoinClient
    from arena.tools.host.session import HostConfig, run_host

    cfg = HostConfig(  # no rate limit: a script moves faster than the 20 requests/s a person gets
        game="kuhn_poker", seats=seats, games=games, seed=seed, port=0, out=str(out), linger=0.2, rate_limit=0
    )
    ready, box = threading.Event(), {}

    def on_ready(server: Any, hub: Any) -> None:
        (seat,) = hub.seats.values()
        box["client"] = JoinClient(server.url(), seat.token)
        ready.set()

    def person() -> None:
        ready.wait(60)
        client = box["client"]
        for ev in client.events(timeout=120):
            if ev["type"] == "turn":
                client.act(ev["turn"], **style(ev))
        client.close()

    thread = threading.Thread(target=person, daemon=True)
    thread.start()
    with open(os.devnull, "w") as quiet:
        run_host(cfg, out=quiet, on_ready=on_ready)
    thread.join(60)


def agreement_of(run: Path, model: Path, holdout: float) -> tuple[int, int]:
    from arena.evaluation.human_data import agreement
    from arena.loading import load_agent, load_game

    agent = load_agent(f"llm:model={model},mode=scored", load_game("kuhn_poker"))
    try:
        return agreement(run, agent, holdout=holdout, part="heldout")
    finally:
        agent.close()


def final_model(train_dir: Path) -> Path:
    """The learner's last snapshot (a Hugging Face model directory) of an ``arena llm-train`` run."""
    snaps = sorted(
        (p for p in (train_dir / "snapshots").glob("learner*") if p.is_dir()),
        key=lambda p: int("".join(ch for ch in p.name.rsplit("-", 1)[-1] if ch.isdigit()) or 0),
    )
    if not snaps:
        raise FileNotFoundError(f"no learner snapshot under {train_dir / 'snapshots'}")
    return snaps[-1]


def one_seed(
    seed: int,
    root: Path,
    games: int = 40,
    holdout: float = 0.25,
    rejected: str = "sampled",
    overrides: Sequence[str] = (),
) -> dict:
    """Host, export, fine-tune, measure for one seed; the numbers as a dict."""
    from arena.cli import main
    from arena.tools.tiny_model import tiny_model_dir

    root.mkdir(parents=True, exist_ok=True)
    run = host_series(root / "host", games, seed)
    model = tiny_model_dir(seed)
    pairs = root / "human-dpo-train.jsonl"
    spec = f"llm:model={model},mode=scored"
    export = ["export", str(run), "--source", "human", "--format", "trl-preference", "--agent", spec]
    export += ["--rejected", rejected, "--holdout", str(holdout), "--part", "train", "--out", str(pairs)]
    if main(export) != 0:
        raise RuntimeError("export failed")
    before = agreement_of(run, model, holdout)
    args = ["llm-train", str(CONFIG), f"model.dir={model}", f"model.seed={seed}", f"params.pairs={pairs}"]
    args += [f"params.seed={seed}", f"seed={seed}", f"out={root / 'train'}", *overrides]
    if main(args) != 0:
        raise RuntimeError("llm-train failed")
    after = agreement_of(run, final_model(root / "train"), holdout)
    n_pairs = sum(1 for _ in pairs.open())
    return {
        "seed": seed,
        "rejected": rejected,
        "pairs": n_pairs,
        "heldout_decisions": before[1],
        "before": before,
        "after": after,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    p.add_argument("--games", type=int, default=40)
    p.add_argument("--holdout", type=float, default=0.25)
    p.add_argument("--out", default="runs/human_data")
    p.add_argument("--rejected", choices=("agent", "sampled"), default="sampled", help="arena export --rejected")
    p.add_argument("overrides", nargs="*", help="llm-train key=value overrides")
    args = p.parse_args(argv)
    rows = []
    for s in args.seeds:
        r = one_seed(s, Path(args.out) / f"seed-{s}", args.games, args.holdout, args.rejected, args.overrides)
        rows.append(r)
        print(json.dumps(r), flush=True)
    summarise(rows)
    return 0


def summarise(rows: list[dict]) -> dict[str, Any]:
    """IQM and mean of held-out agreement before and after, and of the gain, with 95% stratified
    bootstrap intervals over seeds (:func:`arena.experiments.sweep.aggregate`)."""
    from dataclasses import asdict

    from arena.experiments.sweep import aggregate

    def frac(x: list[int]) -> float:
        return x[0] / x[1] if x[1] else float("nan")

    out = {}
    for key in ("before", "after", "gain"):
        vals = [frac(r["after"]) - frac(r["before"]) if key == "gain" else frac(r[key]) for r in rows]
        out[key] = asdict(aggregate(vals))
        print(key, json.dumps(out[key]), flush=True)
    return out


if __name__ == "__main__":
    sys.exit(main())
