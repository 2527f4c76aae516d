"""Probes behind the diagnosis of LSPO on Kuhn poker with table talk (docs/results/lspo.md).

Why: LSPO's DPO step raised the LLM's abstract-game exploitability although sigma* was exact and
the DPO loss fell. Two probes isolate why:

``separation MODEL_DIR`` — can DPO move two Kuhn situations apart? Six balanced pairs at player
0's first move (King: bet over check, Jack: check over bet, after three different lines of talk),
``--rounds`` DPO fits of ``--epochs`` full-batch steps each; prints P(bet) with the Jack, Queen
and King after each round. A model that does not read its card moves all three alike.

``infosets CONFIG [key=value ...]`` — one LSPO iteration of an ``arena llm-train`` config (the
model is built/warmed up as the config says), then, per abstract information set: sigma*, the
LLM's policy before and after the DPO step (the same estimate the trainer logs), and the
preference pairs' directions.

``noise CONFIG [key=value ...]`` — how much the guard's reading of an exploitability varies with
the sampling seed alone: the config's first iteration is played and clustered (no DPO step), then
the LLM's exploitability in that abstract game is read ``--reads`` times with different seeds at
each ``--samples`` count (``eval_samples``: utterances per abstract talk infoset). ``--model DIR``
reads another checkpoint (e.g. a sweep's final one) in the same game.

``report SWEEP_DIR`` — the headline numbers of an ``arena sweep`` of an LSPO config: per seed,
the LLM's abstract-game exploitability before LSPO and after each iteration (``metrics.csv``),
then IQM, mean and bootstrap CIs over seeds (:func:`arena.experiments.sweep.aggregate`) of the first
iteration's, the final one's, and final minus first; with ``fixed_abstraction`` the same in the
first iteration's abstract game (every iteration's policy measured in one game).

    python tools/lspo_probe.py separation runs/lspo/tiny-talk-resp-s1 --per-token
    python tools/lspo_probe.py infosets configs/llm/kuhn_talk_lspo.yaml seed=0 params.seed=0
    python tools/lspo_probe.py noise configs/llm/kuhn_talk_lspo.yaml --samples 8 32
    python tools/lspo_probe.py report runs/lspo/kuhn_talk-sweep
"""

from __future__ import annotations

import argparse
import collections
import sys
from typing import Any

import numpy as np

GAME = "table_talk(game=kuhn_poker,max_chars=24)"
TALK = ["i have a great hand", "my card is bad", "could go either way"]


def separation(model: str, rounds: int, epochs: int, per_token: bool, lr: float, beta: float) -> None:
    from arena.agent import Observation
    from arena.loading import load_agent, load_game
    from arena.plugins.trainers.llm.dpo import PreferencePair
    from arena.registry import get_registry

    g = load_game(GAME)
    spec = {"name": "llm", "model": model, "mode": "scored", "temperature": 1, "score": "mean", "max_text_tokens": 24}
    agent = load_agent(spec, g)
    params = {"beta": beta, "epochs": epochs, "lr": lr, "reference": "iteration", "seed": 0}
    trainer = get_registry().get("trainer", "dpo").factory(g, [agent], **params)

    def obs(card: int, talk: str) -> Observation:
        s = g.new_initial_state()
        for a in (card, (card + 1) % 3, talk):
            s.apply_action(a)
        return Observation(s, 0, np.random.default_rng(0), g.spec.full_name)

    def p_bet() -> str:
        return " ".join(
            f"{c} {np.mean([trainer.agent.policy(obs(i, t))[1] for t in TALK]):.3f}" for i, c in enumerate("JQK")
        )

    enc, cont = agent.backend.encode, agent.prompts.continuation
    pairs = []
    for t in TALK:
        for card, good, bad in ((2, "bet", "check"), (0, "check", "bet")):
            prompt = tuple(agent.backend.prompt_ids(agent.prompts.build(obs(card, t))))
            pairs.append(PreferencePair(prompt, tuple(enc(cont(good))), tuple(enc(cont(bad))), per_token=per_token))
    print(f"P(bet) before: {p_bet()}")
    for r in range(rounds):
        out = trainer.fit(pairs)
        print(f"round {r + 1}: P(bet) {p_bet()}  (DPO loss {out['dpo/loss_first']:.3f} -> {out['dpo/loss_last']:.3f})")


def _first_iteration(config: str, overrides: list[str], **params: Any) -> tuple[Any, Any, Any, Any, list]:
    """An ``arena llm-train`` config, its game, LLM (built/warmed up as the config says) and
    ``lspo`` trainer without the guard (the config's params with ``params`` over them), and its
    first iteration's games."""
    from arena.config import load_config
    from arena.loading import load_agent, load_game
    from arena.playing.match import play_games
    from arena.plugins.trainers.llm.driver import LLMTrainConfig, ensure_model
    from arena.registry import get_registry

    cfg = load_config(LLMTrainConfig, config, overrides=overrides)
    game = load_game(cfg.game)
    agent = load_agent({"name": "llm", **dict(cfg.agent), "model": str(ensure_model(cfg, game))}, game)
    agent.name = "learner"
    unguarded = {"guard": False, "guard_first": False, "guard_split": False}
    trainer = (
        get_registry().get("trainer", "lspo").factory(game, [agent], **{**dict(cfg.params), **unguarded, **params})
    )
    games = play_games(game, [agent, agent], num_games=cfg.games_per_iter, seed=cfg.seed, record=True)
    return cfg, game, agent, trainer, [r.trajectory for r in games]


def infosets(config: str, overrides: list[str]) -> None:
    from arena.exact.exploitability import policy_array
    from arena.exact.tree import get_tree
    from arena.plugins.agents.cfr.run import make_solve, run_solve

    _, game, agent, trainer, trajectories = _first_iteration(
        config, overrides, measure_before=True, compare_initial=False, fixed_abstraction=False
    )
    seen: dict[str, Any] = {"sigma": []}
    measure, fit = trainer.abstract_policy, trainer.fit

    def abstract_policy(abstract: Any, who: Any, seed: int) -> Any:
        seen["sigma"].append(measure(abstract, who, seed))
        return seen["sigma"][-1]

    def fit_pairs(pairs: Any) -> Any:
        seen["pairs"] = pairs
        return fit(pairs)

    trainer.abstract_policy, trainer.fit = abstract_policy, fit_pairs
    out = trainer.update(trajectories)
    print({k: round(v, 4) for k, v in out.items() if k.startswith(("lspo/llm", "lspo/latent", "dpo/loss"))})
    abstract = game.abstract(trainer.latent.k)  # type: ignore[attr-defined]
    tree = get_tree(abstract)
    solve = make_solve(abstract, str(trainer.p["solver"]), seed=int(trainer.p["seed"]) * 100_003)
    run_solve(solve, int(trainer.p["solver_iterations"]))
    star = policy_array(abstract, solve.policy(), tree)
    before, after = seen["sigma"]
    from arena.exact.exploitability import exploitability

    talk = np.zeros(tree.num_slots, dtype=bool)  # the slots of talk infosets (k messages) vs moves
    for i in range(tree.num_infosets):
        st = tree.state_of(i, abstract)
        if st.decision_kind(int(tree.info_player[i])) == "text" or st._talking():  # type: ignore[attr-defined]
            talk[int(tree.info_start[i]) : int(tree.info_start[i]) + int(tree.info_size[i])] = True
    for name, sigma in (
        ("before", before),
        ("after", after),
        ("talk after, moves before", np.where(talk, after, before)),
        ("moves after, talk before", np.where(talk, before, after)),
    ):
        print(f"exploitability {name}: {exploitability(abstract, sigma, tree):.4f}")
    print("latent strategies:", trainer.latent.representatives)
    print("infoset | sigma* | LLM before | LLM after")
    for i in range(tree.num_infosets):
        s0, n = int(tree.info_start[i]), int(tree.info_size[i])
        key = tree.state_of(i, abstract).information_state_key(int(tree.info_player[i]))
        row = [np.round(v[s0 : s0 + n], 2).tolist() for v in (star, before, after)]
        print(key, *row)
    dec = agent.backend.decode
    moves = collections.Counter(
        (dec(p.chosen_ids).strip(), dec(p.rejected_ids).strip()) for p in seen["pairs"] if p.per_token
    )
    print("move pairs (chosen, rejected): count", dict(moves))


def noise(config: str, overrides: list[str], samples: list[int], reads: int, model: str | None) -> None:
    from arena.loading import load_agent

    cfg, game, _, trainer, trajectories = _first_iteration(
        config, overrides, measure_before=False, fixed_abstraction=True
    )
    trainer.fit = lambda pairs: {}  # the first iteration's clustering and abstract game, no DPO step
    trainer.update(trajectories)
    fixed = trainer._fixed_game()
    if model is not None:
        trainer.agent = load_agent({"name": "llm", **dict(cfg.agent), "model": model}, game)
    print(f"abstract game: {trainer.fixed.k} latent strategies; model {model or 'warmed-up'}")
    for m in samples:
        trainer.p["eval_samples"] = m
        xs = np.array([trainer._fixed_exploitability(fixed, seed) for seed in range(reads)])
        print(
            f"eval_samples {m}: mean {xs.mean():.4f}, sd {xs.std(ddof=1):.4f}, "
            f"range [{xs.min():.4f}, {xs.max():.4f}] over {reads} reads"
        )


def _rows(run: str, column: str) -> list[dict[str, str]]:
    """The rows of a run's ``metrics.csv`` that record ``column`` (the LSPO iterations' rows)."""
    import csv
    from pathlib import Path

    with open(Path(run) / "metrics.csv") as fh:
        return [r for r in csv.DictReader(fh) if r.get(column)]


def exploitability_by_iteration(run: str) -> tuple[list[float], list[float]]:
    """(before, after) per LSPO iteration from a run's ``metrics.csv``: the LLM's exploitability in
    that iteration's abstract game just before and just after its DPO step."""
    rows = _rows(run, "train/learner/llm_exploitability")
    before = [float(r.get("train/learner/llm_exploitability_before") or "nan") for r in rows]
    return before, [float(r["train/learner/llm_exploitability"]) for r in rows]


def fixed_by_iteration(run: str) -> list[float]:
    """The LLM's exploitability in the first iteration's abstract game (``fixed_abstraction``):
    the warmed-up model's, then after each iteration; empty when the run did not measure it."""
    rows = _rows(run, "train/learner/fixed_llm_exploitability")
    if not rows:
        return []
    return [float(rows[0].get("train/learner/fixed_llm_exploitability_before") or "nan")] + [
        float(r["train/learner/fixed_llm_exploitability"]) for r in rows
    ]


def kept_steps(run: str) -> list[str]:
    """Per LSPO iteration under ``guard``, the kept fit's DPO steps: ``24``, ``12``, ... or
    ``null`` (every try refused: the iteration kept its starting weights); with ``guard_split``,
    ``12 moves`` / ``12 talk`` when only that block of pairs was kept."""
    block = {2: " moves", 3: " talk"}  # lspo/guard_set: 1 all pairs, 2 the move pairs, 3 the talk pairs
    out = []
    for r in _rows(run, "train/learner/guard_epochs"):
        steps, kept = float(r["train/learner/guard_epochs"]), int(float(r.get("train/learner/guard_set") or 1))
        out.append(f"{steps:.0f}{block.get(kept, '')}" if steps > 0 else "null")
    return out


def _aggregate(label: str, xs: list[float]) -> None:
    from arena.experiments.sweep import aggregate

    a = aggregate(xs)
    print(
        f"{label}: IQM {a.iqm:.3f} [{a.iqm_ci[0]:.3f}, {a.iqm_ci[1]:.3f}], "
        f"mean {a.mean:.3f} [{a.mean_ci[0]:.3f}, {a.mean_ci[1]:.3f}] (n {a.n}, 95% bootstrap)"
    )


def report(sweep: str) -> None:
    from pathlib import Path

    runs = sorted(Path(sweep).glob("seed-*/metrics.csv"), key=lambda p: int(p.parent.name.split("-")[1]))
    if not runs:
        raise SystemExit(f"lspo_probe report: no seed-*/metrics.csv under {sweep}")
    first, final, drop = [], [], []
    for path in runs:
        before, after = exploitability_by_iteration(str(path.parent))
        if not after:
            print(f"{path.parent.name}: no LSPO iteration recorded yet")
            continue
        falls = all(b < a for a, b in zip(after, after[1:]))
        lowered = sum(a < b for b, a in zip(before, after))
        print(
            f"{path.parent.name}: warmed-up {before[0]:.3f}; after iterations "
            + " ".join(f"{a:.3f}" for a in after)
            + f"; before each {' '.join(f'{b:.3f}' for b in before)}; falls every iteration: {falls}; "
            f"the DPO step lowered it in {lowered} of {len(after)}"
        )
        first.append(after[0])
        final.append(after[-1])
        drop.append(after[-1] - after[0])
    for name, xs in (("first iteration", first), ("final iteration", final), ("final - first", drop)):
        _aggregate(name, xs)
    fixed = {p.parent.name: fixed_by_iteration(str(p.parent)) for p in runs}
    fixed = {k: v for k, v in fixed.items() if len(v) > 1}
    if not fixed:
        return
    print("in the first iteration's abstract game (fixed_abstraction):")
    for name, xs in fixed.items():
        falls = all(b < a for a, b in zip(xs[1:], xs[2:]))
        print(
            f"{name}: warmed-up {xs[0]:.3f}; after iterations "
            + " ".join(f"{x:.3f}" for x in xs[1:])
            + f"; falls every iteration: {falls}; final below first: {xs[-1] < xs[1]}"
            + (f"; kept steps: {', '.join(kept)}" if (kept := kept_steps(str(Path(sweep) / name))) else "")
        )
    for name, i in (("fixed game, warmed-up", 0), ("fixed game, first iteration", 1), ("fixed game, final", -1)):
        _aggregate(name, [xs[i] for xs in fixed.values()])
    _aggregate("fixed game, final - first", [xs[-1] - xs[1] for xs in fixed.values()])


def main(argv: list[str] | None = None) -> int:
    import torch

    torch.set_num_threads(1)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="probe", required=True)
    s = sub.add_parser("separation")
    s.add_argument("model")
    s.add_argument("--rounds", type=int, default=3)
    s.add_argument("--epochs", type=int, default=4)
    s.add_argument("--lr", type=float, default=3e-4)
    s.add_argument("--beta", type=float, default=0.5)
    s.add_argument("--per-token", action="store_true")
    i = sub.add_parser("infosets")
    i.add_argument("config")
    i.add_argument("overrides", nargs="*")
    n = sub.add_parser("noise")
    n.add_argument("config")
    n.add_argument("overrides", nargs="*")
    n.add_argument("--samples", type=int, nargs="+", default=[8, 32])
    n.add_argument("--reads", type=int, default=10)
    n.add_argument("--model", default=None)
    r = sub.add_parser("report")
    r.add_argument("sweep")
    args = p.parse_args(argv)
    if args.probe == "separation":
        separation(args.model, args.rounds, args.epochs, args.per_token, args.lr, args.beta)
    elif args.probe == "noise":
        noise(args.config, args.overrides, args.samples, args.reads, args.model)
    elif args.probe == "report":
        report(args.sweep)
    else:
        infosets(args.config, args.overrides)
    return 0


if __name__ == "__main__":
    sys.exit(main())
