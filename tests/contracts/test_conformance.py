"""Every registered plugin passes the conformance kit third-party authors use
(:mod:`arena.testing`): every game (PettingZoo's ``api_test``/``seed_test``, the parallel ones for
simultaneous games, 200 random games, renderings, batch-independent seeding), every agent on a
game it plays, every trainer's resume guarantee; plus game-specific conventions."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

import arena
from arena.registry import get_registry
from arena.testing import check_agent, check_game, check_trainer
from support import REPO

GAMES = get_registry().names("game")

AGENTS = {  # every registered agent, on a game it plays (llm: below, with a locally built model)
    "random": ("random", "kuhn_poker"),
    "fixed": ("fixed:path=configs/league/policies/kuhn_always_bet.json", "kuhn_poker"),
    "cfr": ("cfr:iterations=50", "leduc_poker"),
    "psro": ("psro:iterations=3", "kuhn_poker"),
    "neural": ("neural:arch=gru,hidden=16", "ipd(horizon=4)"),
    "always_cooperate": ("always_cooperate", "ipd"),
    "always_defect": ("always_defect", "public_goods"),
    "tit_for_tat": ("tit_for_tat", "ipd"),
    "take_every_coin": ("take_every_coin", "coin_game"),
    "greedy_splitter": ("greedy_splitter", "trust_split"),
    "hand_teller": ("hand_teller", "trust_split(talk=true)"),
    "fair": ("fair", "deal_or_no_deal"),
    "greedy": ("greedy", "deal_or_no_deal"),
    "concede": ("concede", "deal_or_no_deal"),
    "monopoly_deal_heuristic": ("monopoly_deal_heuristic", "monopoly_deal"),
    "monopoly_deal_mccfr": ("monopoly_deal_mccfr:iterations=100", "monopoly_deal(variant=paper)"),
    "werewolf_scripted": ("werewolf_scripted", "werewolf"),
    "table_talker": ("table_talker", "table_talk"),
    "mcts": ("mcts:simulations=20", "kuhn_poker"),
    "qnet": ("qnet:epsilon=0.2", "climbing"),
    "alphazero": ("alphazero:simulations=4,hidden=16", "openspiel:tic_tac_toe"),
    "subgame_perfect": ("subgame_perfect", "ultimatum(rounds=2)"),
    "ucb1": ("ucb1", "bandit(horizon=20)"),
    "thompson": ("thompson", "bandit(horizon=20)"),
    "neupl": ("neupl:basis_size=2,hidden=16,iterations=2", "kuhn_poker"),
    "arithmetic_guesser": ("arithmetic_guesser", "arithmetic"),
}
KIT_ELSEWHERE = {
    "inpo": "tests/plugins/trainers/test_inpo.py runs check_trainer on cyclic_preference (free text)",
    "proposer_solver": "tests/plugins/trainers/test_proposer_solver.py runs check_trainer on arithmetic",
}
"""Trainers whose kit run lives beside their own tests (the shared LLM case is near its time limit)."""
NOT_CHECKED = {
    "human": "reads moves from the terminal (tests/contracts/test_play_cli.py drives it)",
    "llm": "needs a model: test_llm_agent_and_trainer_conform builds one locally",
}
TRAINERS = {  # every registered trainer: (game, learner specs, params)
    "ppo": ("kuhn_poker", ["neural"], {}),
    "reinforce": ("ipd", ["neural"], {}),
    "advantage_alignment": ("ipd", ["neural", "neural"], {}),
    "mappo": ("climbing(horizon=3)", ["neural", "neural"], {}),
    "vdn": ("climbing(horizon=3)", ["qnet", "qnet"], {}),
    "qmix": ("penalty(horizon=3)", ["qnet", "qnet"], {"weighting": "optimistic"}),
    "alphazero": (
        "openspiel:tic_tac_toe",
        ["alphazero:simulations=4,hidden=16"],
        {"steps": 4, "batch": 32, "lr": 0.05},
    ),
}
LLM_TRAINERS = {  # (game, trainer params, llm agent params)
    "selfplay_rlvr": ("kuhn_poker", {}, {}),
    "sppo": ("kuhn_poker", {"epochs": 1, "rollouts": 2}, {}),
    "llm_advantage_alignment": ("ipd(horizon=3)", {}, {}),
    "arenarl": ("open_task", {"group": 4, "judge": "scorer:noise=0.05"}, {"mode": "generated", "max_text_tokens": 8}),
    "dpo": ("kuhn_poker", {}, {}),
    "lspo": (
        "table_talk(game=kuhn_poker,max_chars=8)",
        {"candidates": 1, "solver_iterations": 20, "eval_samples": 1, "epochs": 1},
        {"score": "mean", "max_text_tokens": 8},
    ),
    "lspo_playout": (
        "werewolf(players=5,talk=text,scripted=wolves,max_days=2,max_message_chars=8)",
        {"candidates": 1, "max_decisions": 2, "playouts": 1, "epochs": 1, "margin": 0.0},
        {"score": "mean", "max_text_tokens": 8},
    ),
}


@pytest.mark.parametrize("name", GAMES)
def test_every_game_passes_check_game(name):
    check_game(name)


def test_every_agent_and_trainer_has_a_conformance_case():
    reg = get_registry()
    assert set(reg.names("agent")) == set(AGENTS) | set(NOT_CHECKED)
    assert set(reg.names("trainer")) == set(TRAINERS) | set(LLM_TRAINERS) | set(KIT_ELSEWHERE)


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_every_agent_passes_check_agent(name):
    spec, game = AGENTS[name]
    check_agent(spec, game, games=4 if "monopoly" in game else 12)


@pytest.mark.parametrize("name", sorted(TRAINERS))
def test_every_trainer_passes_check_trainer(name):
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    game, learners, params = TRAINERS[name]
    check_trainer(name, game, learners, params=params, games=8)


def test_llm_agent_and_trainers_conform():
    pytest.importorskip("transformers")
    from arena.tools.tiny_model import tiny_model_dir

    llm = {"name": "llm", "model": str(tiny_model_dir()), "temperature": 8}
    check_agent(llm, "kuhn_poker", games=2)
    for name, (game, params, agent) in LLM_TRAINERS.items():
        check_trainer(name, game, [{**llm, **agent}], params=params, games=8 if name == "dpo" else 2)


def test_registry_has_the_card_games():
    assert {"kuhn_poker", "leduc_poker", "liars_dice"} <= set(GAMES)


SIMULTANEOUS = [n for n in GAMES if arena.load_game(n).spec.simultaneous] + ["openspiel:goofspiel(num_cards=4)"]


def test_simultaneous_games_are_marked():
    assert {"ipd", "chicken", "stag_hunt", "coin_game", "public_goods", "trust_split"} <= set(SIMULTANEOUS)
    assert not {"kuhn_poker", "leduc_poker", "werewolf", "deal_or_no_deal"} & set(SIMULTANEOUS)
    assert not arena.load_game("trust_split(talk=true)").spec.simultaneous  # the talk phase is turn-based


def test_parallel_env_plays_joint_moves():
    """One parallel step is one round of the matrix game: both rewards at once, from the game's
    payoff table (IPD: mutual defection costs each player 2)."""
    env = arena.make_parallel_env("ipd")
    obs, infos = env.reset(seed=0)
    assert set(obs) == {"player_0", "player_1"} and obs["player_0"]["action_mask"].tolist() == [1, 1]
    game = arena.load_game("ipd")
    state = game.new_initial_state()
    state.apply_actions([1, 1])
    _, rewards, terms, truncs, _ = env.step({"player_0": 1, "player_1": 1})
    assert [rewards["player_0"], rewards["player_1"]] == state.returns()
    assert not any(terms.values()) and env.agents == ["player_0", "player_1"]
    with pytest.raises(arena.ArenaError, match="turn-based decisions.*arena.make_env"):
        arena.make_parallel_env("kuhn_poker")


def test_step_before_reset_is_pettingzoo_order_error():
    env = arena.make_env("kuhn_poker")
    with pytest.raises(AssertionError, match="reset\\(\\) needs to be called before step"):
        env.step(0)
    with pytest.raises(AttributeError, match="before reset"):
        env.agent_selection


def test_reset_without_seed_continues_the_stream():
    """Gymnasium convention: reset(seed) seeds, a later reset() draws the next episode from the
    same stream — so two envs seeded alike replay the same sequence of episodes."""

    def episodes(env, n):
        out = []
        for k in range(n):
            env.reset(seed=5 if k == 0 else None)
            rng = np.random.default_rng(k)
            trace = []
            for agent in env.agent_iter():
                obs, rew, term, trunc, _ = env.last()
                trace.append((agent, obs["observation"].tolist(), rew))
                env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            out.append(trace)
        return out

    a, b = episodes(arena.make_env("leduc_poker"), 6), episodes(arena.make_env("leduc_poker"), 6)
    assert a == b
    assert len({str(t[:2]) for t in a}) > 1  # later episodes are new deals, not replays


@pytest.mark.parametrize(
    "name",
    [
        "kuhn_poker(players=3)",
        "openspiel:tic_tac_toe",
        "openspiel:goofspiel(num_cards=4)",
        "deal_or_no_deal(max_turns=4,text=brief)",
    ],
)
def test_parametrized_and_imported_games(name):
    check_game(name, games=50)


HOLDEM_LIMIT = yaml.safe_load((REPO / "configs/match/holdem_limit_random.yaml").read_text())["game"]


@pytest.mark.parametrize("name", ["openspiel:blackjack", HOLDEM_LIMIT, "openspiel:dou_dizhu"])
def test_adapter_games_pass_check_game(name):
    """One seat against a dealer, heads-up limit hold'em (``universal_poker`` with the parameters
    of ``pyspiel.hulh_game_string``) and a three-seat game with a bidding phase all play through
    the OpenSpiel adapter under the full kit, each with a match config."""
    check_game(name)
    assert arena.load_game(name).spec.num_players == {"openspiel:blackjack": 1, "openspiel:dou_dizhu": 3}.get(name, 2)


def test_holdem_config_is_openspiels_heads_up_limit_game():
    import pyspiel

    ours = arena.load_game(HOLDEM_LIMIT).pyspiel_game.get_parameters()
    assert ours == pyspiel.load_game(pyspiel.hulh_game_string("fcpa")).get_parameters()


def test_env_seeding_is_reproducible():
    def rollout(seed):
        env = arena.make_env("leduc_poker")
        env.reset(seed=seed)
        rng = np.random.default_rng(0)
        trace = []
        for agent in env.agent_iter():
            obs, rew, term, trunc, _ = env.last()
            trace.append((agent, obs["observation"].tolist(), rew))
            action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
        return trace

    assert rollout(3) == rollout(3)
    assert rollout(3) != rollout(4)


def test_card_games_use_openspiel_info_state_keys():
    import pyspiel

    game = arena.load_game("leduc_poker")
    state = game.new_initial_state()
    ref = pyspiel.load_game("leduc_poker").new_initial_state()
    for a in (0, 3, 1, 2):
        state.apply_action(a)
        ref.apply_action(a)
    assert state.information_state_key(0) == ref.information_state_string(0)
    assert state.information_state_key(1) == ref.information_state_string(1)


def test_readable_renderings():
    game = arena.load_game("kuhn_poker")
    s = game.new_initial_state()
    s.apply_action(2)  # player 0: King
    s.apply_action(0)  # player 1: Jack
    s.apply_action(1)  # player 0 bets
    text = s.observation_text(1)
    assert "You hold the Jack" in text and "bets" in text and "Legal: fold, call" in text
    assert [s.action_label(1, a) for a in s.legal_actions()] == ["fold", "call"]
    assert "King" not in text  # the opponent's card is private


def test_pettingzoo_adapter_roundtrip():
    """arena → AEC → arena: an arena env wrapped back as a game plays like the original."""
    from arena.adapters.pettingzoo import from_pettingzoo

    game = from_pettingzoo(
        lambda: arena.make_env("kuhn_poker"), name="kuhn-via-aec", min_utility=-2, max_utility=2, zero_sum=True
    )
    assert game.spec.num_players == 2 and game.spec.num_distinct_actions == 2 and not game.spec.tree
    results = arena.play(game, [arena.load_agent("random", game)] * 2, games=100, seed=0)
    assert all(r.forfeit is None and r.returns[0] == -r.returns[1] and abs(r.returns[0]) in (1, 2) for r in results)


def test_kuhn_final_view_hides_folded_cards():
    game = arena.load_game("kuhn_poker")
    for moves, revealed in (([1, 0], False), ([1, 1], True), ([0, 0], True), ([0, 1, 0], False)):
        s = game.new_initial_state()
        for a in [2, 0] + moves:  # player 0 holds the King, player 1 the Jack
            s.apply_action(a)
        assert s.is_terminal()
        assert ("King" in s.observation_text(1)) == revealed, (moves, s.observation_text(1))
