"""``arena bench preference-cycle``: do preference trainers find the von Neumann winner of
``cyclic_preference`` — (1/7, 2/7, 4/7) over A, B, C — where a reward-model learner collapses?

Each method trains a tiny random-initialised local model (generated mode, one-character
answers, T = 1) on free-text answers to the game's one prompt, preferences from the
``preference`` judge with sampled ±1 labels (``--labels probabilities``: the probabilities
themselves). The methods start, as their papers do, from a supervised policy that gives every
response mass: ``--warmup`` maximum-likelihood steps on the three answers equally (the untrained
model puts under 3% on them, and a sampled method cannot find a response it never samples).
Then ``sppo`` with ``average: mixture``, its optimistic step (``--no-sppo-optimism``: the
published Hedge step) and ``explore`` (``--sppo-explore``: responses of the warmed-up policy fitted
beside pi_t's) — its averaged iterate, the exact uniform mixture of snapshots of every iterate, is
what is measured: the mean of the snapshots' distributions —, ``inpo`` with a moving
reference (last iterate) and ``dpo`` (the judged winner of each pair chosen over the loser: a
Bradley–Terry learner), each with the settings in :data:`SETTINGS`. The figure is the model's
exact distribution over the first character of its answer — A, B, C and anything else — read
from the next-token probabilities at the prompt (not sampled), and its L1 distance to the winner
(the other mass counts as error). ``--preferences`` plays another cycle, whose winner the game
solves: a game no setting was chosen on.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from arena.cli_api import Benchmark
from arena.hookspecs import hookimpl

METHODS = ("sppo", "inpo", "dpo")
SETTINGS: dict[str, dict[str, Any]] = {
    "sppo": {
        "eta": 1.0,
        "epochs": 8,
        "lr": 1e-4,
        "average": "mixture",
        "mixture_every": 1,
    },
    "inpo": {"eta": 1.0, "tau": 0.1, "reference_every": 40, "epochs": 8, "lr": 1e-4},
    "dpo": {"lr": 1e-3},
}
"""Per method. SPPO and INPO fit their regression with 8 Adam steps at lr 1e-4, which realises
the intended step (the change in log-ratios over one update is 0.7–1.8× η times the exact
preference advantage; 4 steps at lr 1e-3 gave −8× to +9×: Adam's normalised steps swamp
targets of 0.05–0.1 nats). SPPO's average is the exact mixture of all its iterates (a snapshot
after every iteration; ``average: policy``, the same mixture distilled into one model with its
own Adam at 3e-4, ended 0.155–0.243 from the winner after 300 × 64 with swings of 0.04–0.36
from the distillation's noise). INPO runs at
τ 0.1 with its reference moved every 40 updates (a fixed reference stops at the regularised
equilibrium, L1 0.07 from the winner at τ 0.02)."""


def distribution(trainer: Any, agent: Any, game: Any) -> np.ndarray:
    """P(first character = A, B, C, other) under the trainer's current weights."""
    prompt, ids = _prompt_and_answers(agent, game)
    p = trainer.model.logprobs([(prompt, [i]) for i in ids], grad=False).exp().cpu().numpy()
    return np.r_[p, max(0.0, 1.0 - p.sum())]


def warm_up(agent: Any, game: Any, steps: int, lr: float = 1e-3) -> None:
    """``steps`` maximum-likelihood steps of the agent's own model on A, B and C equally."""
    from arena.plugins.trainers.llm.model import TrainableLLM

    prompt, ids = _prompt_and_answers(agent, game)
    model = TrainableLLM(agent, lr=lr)  # the agent now samples from these weights
    for _ in range(steps):
        model.step(-model.logprobs([(prompt, [i]) for i in ids], grad=True).mean())


def _prompt_and_answers(agent: Any, game: Any) -> tuple[list[int], list[int]]:
    from arena.agent import Observation
    from arena.playing.match import game_rng

    obs = Observation(game.new_initial_state(), 0, game_rng(0, 0), game.spec.full_name)
    prompt = agent.backend.prompt_ids(agent.prompts.build(obs))
    return prompt, [agent.backend.tokenizer.convert_tokens_to_ids(c) for c in "ABC"]


def dpo_step(trainer: Any, trajectories: list, seed: int, samples: int) -> None:
    """DPO on the judged pairs of the same sampled groups: winner chosen over loser."""
    from arena.plugins.trainers.llm.dpo import PreferencePair
    from arena.plugins.trainers.llm.preference_text import pair_margins, sampled_groups
    from arena.plugins.trainers.llm.tokens import learner_decisions

    judge = trainer.pair_judge
    groups, _ = sampled_groups(trainer.game, trainer.agent, trajectories, samples, seed)
    pairs = []
    for grp, margins in zip(groups, pair_margins(judge, groups)):
        dec = learner_decisions([c.trajectory for c in grp], trainer.agent)
        for (i, j), m in margins.items():
            if m != 0 and dec[i].responses[0] != dec[j].responses[0]:
                w, lo = (i, j) if m > 0 else (j, i)
                pairs.append(
                    PreferencePair(tuple(dec[w].prompt_ids), tuple(dec[w].responses[0]), tuple(dec[lo].responses[0]))
                )
    if pairs:
        trainer.fit(pairs)


def train_one(method: str, seed: int, args: argparse.Namespace) -> tuple[np.ndarray, list[float], list[float]]:
    """One method, one seed: the final distribution, the L1 curve of what is measured and that
    of the last iterate (every 10 iterations; the two are one for all but SPPO)."""
    import torch

    import arena
    from arena.loading import load_agent, load_judge
    from arena.playing.match import play_games
    from arena.registry import get_registry
    from arena.rng import derive_seed
    from arena.tools.tiny_model import tiny_model_dir

    torch.set_num_threads(1)
    game = arena.load_game(game_name(args))
    target = winner(game)
    spec = {"name": "llm", "model": str(tiny_model_dir(seed)), "mode": "generated", "max_text_tokens": 1}
    agent = load_agent({**spec, "temperature": 1.0}, game)
    torch.manual_seed(seed)
    warm_up(agent, game, args.warmup)
    judge = {"name": "preference", "sample": args.labels == "sampled", "seed": seed}
    params: dict[str, Any] = {"seed": seed, "torch_threads": 1, **SETTINGS[method]}
    if args.lr is not None:
        params["lr"] = args.lr
    if method == "sppo":
        params.update(optimism=args.sppo_optimism, explore=args.sppo_explore)
    if method != "dpo":
        params.update(judge=judge, samples=args.samples)
    trainer = get_registry().get("trainer", method).factory(game, [agent], **params)
    if method == "dpo":
        trainer.pair_judge = load_judge(judge, game)
    curve, last = [], []
    for k in range(args.iterations):
        played = play_games(game, [agent], num_games=args.prompts, seed=derive_seed(seed, "cycle", k), record=True)
        trajs = [r.trajectory for r in played]
        if method == "dpo":
            dpo_step(trainer, trajs, derive_seed(seed, "dpo", k), args.samples)
        else:
            trainer.update(trajs)
        if (k + 1) % 10 == 0 or k + 1 == args.iterations:
            curve.append(float(np.abs(measured(trainer, agent, game, method) - target).sum()))
            last.append(float(np.abs(distribution(trainer, agent, game) - target).sum()))
            print(
                f"{method} seed {seed} iteration {k + 1}: L1 {curve[-1]:.3f} (last iterate {last[-1]:.3f})",
                file=sys.stderr,
                flush=True,
            )
    return measured(trainer, agent, game, method), curve, last


def game_name(args: argparse.Namespace) -> str:
    p_ab, p_bc, p_ca = args.preferences
    return f"cyclic_preference(length=1,p_ab={p_ab},p_bc={p_bc},p_ca={p_ca})"


def three_probabilities(text: str) -> tuple[float, float, float]:
    """``--preferences``: three comma-separated probabilities."""
    wanted = f"want P(A≻B),P(B≻C),P(C≻A), three numbers in [0, 1], got {text!r}"
    try:
        p_ab, p_bc, p_ca = (float(x) for x in text.split(","))  # too few, too many or not numbers
    except ValueError:
        raise argparse.ArgumentTypeError(wanted) from None
    if not all(0.0 <= x <= 1.0 for x in (p_ab, p_bc, p_ca)):
        raise argparse.ArgumentTypeError(wanted)
    return p_ab, p_bc, p_ca


def winner(game: Any) -> np.ndarray:
    """The game's von Neumann winner over A, B, C, and no mass on other answers."""
    return np.r_[game.von_neumann_winner(), 0.0]


def measured(trainer: Any, agent: Any, game: Any, method: str) -> np.ndarray:
    """SPPO's averaged iterate (its guarantee is for it: with ``average: mixture`` the mean of
    its snapshots' distributions, the mixture's exact one), the last iterate otherwise."""
    if method == "sppo":
        return trainer.kept_mean(lambda: distribution(trainer, agent, game))
    return distribution(trainer, agent, game)


def run(args: argparse.Namespace) -> dict[str, Any]:
    import arena

    target = winner(arena.load_game(game_name(args)))
    out: dict[str, Any] = {"game": game_name(args), "winner": [round(float(x), 4) for x in target[:3]]}
    for method in [m for m in args.methods.split(",") if m]:
        l1s = []
        for seed in [int(s) for s in args.seeds.split(",")]:
            dist, curve, last = train_one(method, seed, args)
            l1 = float(np.abs(dist - target).sum())
            l1s.append(l1)
            out[f"{method}_s{seed}_distribution"] = [round(float(x), 3) for x in dist]
            out[f"{method}_s{seed}_l1_curve"] = [round(x, 3) for x in curve]
            if method == "sppo":
                out[f"{method}_s{seed}_last_l1_curve"] = [round(x, 3) for x in last]
            print(f"{method} seed {seed}: A B C other {np.round(dist, 3)} L1 {l1:.3f}", file=sys.stderr, flush=True)
        out[f"{method}_l1_mean"] = float(np.mean(l1s))
        out[f"{method}_l1_max"] = float(np.max(l1s))
        out[f"{method}_max_share_mean"] = float(
            np.mean([max(out[f"{method}_s{s}_distribution"]) for s in args.seeds.split(",")])
        )
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument(
        "--preferences",
        type=three_probabilities,
        default=(0.9, 0.6, 0.7),
        help="P(A≻B),P(B≻C),P(C≻A) of the game (another cycle: a game the settings were not chosen on)",
    )
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--prompts", type=int, default=64, help="games (prompts answered) per iteration")
    p.add_argument("--samples", type=int, default=8, help="responses per prompt (K)")
    p.add_argument("--lr", type=float, default=None, help="every method's learning rate (default: SETTINGS)")
    p.add_argument("--warmup", type=int, default=100, help="supervised steps on A, B, C equally before training")
    p.add_argument(
        "--labels",
        choices=("sampled", "probabilities"),
        default="sampled",
        help="the judge's label for a pair: a sampled winner (±1, as a person or a binary oracle "
        "gives) or P(y ≻ y') itself (as a preference model such as PairRM gives)",
    )
    p.add_argument(
        "--sppo-optimism",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="SPPO's optimistic step (--no-sppo-optimism: the published Hedge step)",
    )
    p.add_argument(
        "--sppo-explore",
        type=int,
        default=4,
        help="SPPO's explore: responses of the starting policy per prompt, judged and fitted beside "
        "pi_t's (4: chosen on this game with --samples 16 --prompts 32; 0: none)",
    )


@hookimpl
def arena_benchmarks() -> list[Benchmark]:
    return [
        Benchmark(
            "preference-cycle",
            "SPPO, INPO and DPO on cyclic_preference: distance to the von Neumann winner (1/7, 2/7, 4/7)",
            run,
            add_arguments,
            baseline="DPO (a Bradley-Terry learner) on the same judged pairs",
            ratio="",
        )
    ]
