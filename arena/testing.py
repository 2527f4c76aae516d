"""Conformance checks for plugin authors: ``check_game``, ``check_agent``, ``check_trainer``.

Import them in your package's tests (``from arena.testing import check_game``); the project's
own conformance suite runs the same functions on every built-in, so a third-party plugin that
passes them meets the contract the host relies on. Each check raises
:class:`ConformanceError` (an ``AssertionError``, so pytest shows it as a failure) naming the
plugin and the broken promise.

What they verify, and why the host needs it:

- ``check_game``: PettingZoo's own ``api_test``/``seed_test`` (and the parallel ones for
  simultaneous games); the name round-trips through ``load_game`` (workers of the process and
  Ray executors rebuild the game from it); random games end with returns inside the declared
  bounds (zero-sum when declared); chance distributions are proper; every legal action has a
  distinct label and every decision a text rendering (people and LLMs play from them);
  results depend only on the seed, not on how games were batched. A game with structured
  views (``observation_struct``) returns plain JSON at every decision, with the player's own
  legal moves and labels, and leaks nothing: replaying a game with another chance outcome, a
  player whose text and info-state key are unchanged must get the same structured view.
- ``check_array_face``: a game's array face (:mod:`arena.arrays`) against its ``State``: the
  same games played side by side with the same decisions agree at every decision (player to
  move, legal actions, info-state key and tensor, the streams' draws) and in their returns, so
  the runner may take either path.
- ``check_agent``: legal moves from every seat; the same seed gives the same moves on a fresh
  instance and with any batch size (agents draw from the observation's stream); a declared
  ``policy`` is a distribution over legal actions; a snapshottable agent reloads from
  :func:`arena.loading.save_checkpoint` and plays exactly as before.
- ``check_trainer``: ``update`` returns finite scalar metrics; the learners' weights change;
  a trainer rebuilt from its ``state_dict`` (through the safe ``weights_only`` file) and
  reloaded learners continue to the same metrics and the same moves as the uninterrupted one —
  the league's resume guarantee.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from arena import make_env, make_parallel_env
from arena.agent import Agent, Observation
from arena.arrays import ArrayGames, ArrayRandom, pick_uniform
from arena.game import SIMULTANEOUS, TERMINAL, Game, State
from arena.loading import checkpoint_param, load_agent, load_checkpoint, load_game, parse_agent_spec, save_checkpoint
from arena.playing.match import GameResult, play_games, sample_chance
from arena.registry import get_registry
from arena.rng import derive_seed, start_games
from arena.trainer import Trainer, load_trainer_state, save_trainer_state

__all__ = ["ConformanceError", "check_game", "check_structured_views", "check_agent", "check_trainer"]


class ConformanceError(AssertionError):
    """A plugin breaks a promise of the arena contract."""


def _require(ok: bool, what: str, why: str) -> None:
    if not ok:
        raise ConformanceError(f"{what}: {why}")


def _game(game: str | Game, **params: Any) -> Game:
    return game if isinstance(game, Game) else load_game(game, **params)


# -- games --------------------------------------------------------------------------------------


def check_game(game: str | Game, *, games: int = 200, seed: int = 0, pettingzoo_cycles: int = 300) -> None:
    """Check a game plugin (``"name"``, ``"name(key=value)"`` or a loaded :class:`Game`)."""
    g = _game(game)
    spec = g.spec
    what = f"game '{spec.full_name}'"
    _require(
        spec.num_players >= 1 and spec.min_utility <= spec.max_utility,
        what,
        f"spec has {spec.num_players} players and utility range [{spec.min_utility}, {spec.max_utility}]",
    )
    reloaded = _game(spec.full_name)
    _require(
        reloaded.spec == spec,
        what,
        f"load_game('{spec.full_name}') builds a different spec ({reloaded.spec}); executors rebuild games by name",
    )
    if not spec.text_decisions:
        _check_pettingzoo(spec.full_name, spec.simultaneous, pettingzoo_cycles, what)
    for k in range(min(games, 20)):
        _walk(g, derive_seed(seed, "walk", k), what, _renderings(what))
    check_structured_views(g, games=min(games, 3), seed=seed, walks=0)
    _check_random_play(g, games, seed, what)


def check_array_face(game: str | Game, *, games: int = 500, seed: int = 0) -> None:
    """Play games ``0..games-1`` of seed ``seed`` on the array face and as states side by side,
    each decision uniformly random from the game's own stream, checking they agree throughout."""
    g = _game(game)
    what = f"game '{g.spec.full_name}' array face"
    face = g.array_face()
    _require(face is not None, what, "Game.array_face() returned None")
    rng = ArrayRandom(seed, range(games))
    batch = face.reset(rng)
    streams, bits = start_games(seed, range(games))
    states = [g.new_initial_state(seed=b) for b in bits]
    for state, stream in zip(states, streams):
        sample_chance(state, stream)
    while True:
        for b, state in enumerate(states):
            p = TERMINAL if state.is_terminal() else state.current_player()
            _require(p == int(batch.player[b]), what, f"game {b}: player to move {batch.player[b]}, State says {p}")
        turn, joint = np.flatnonzero(batch.player >= 0), np.flatnonzero(batch.player == SIMULTANEOUS)
        if not len(turn) and not len(joint):
            break
        if len(turn):
            actions = _face_decisions(face, batch, rng, states, streams, turn, None, what)
            for b, a in zip(turn.tolist(), actions.tolist()):
                states[b].apply_action(a)
                sample_chance(states[b], streams[b])
            batch.step(turn, actions)
        if len(joint):
            moves = np.stack(
                [_face_decisions(face, batch, rng, states, streams, joint, p, what) for p in range(g.spec.num_players)],
                1,
            )
            for b, m in zip(joint.tolist(), moves.tolist()):
                states[b].apply_actions(m)
                sample_chance(states[b], streams[b])
            batch.step(joint, moves)
    reports = type(batch).outcome_info is not ArrayGames.outcome_info
    for b, state in enumerate(states):
        _require(batch.returns()[b].tolist() == list(state.returns()), what, f"game {b}: returns differ")
        _require(
            not reports or _same(batch.outcome_info(b), state.outcome_info()), what, f"game {b}: outcome info differs"
        )


def _same(a: Any, b: Any) -> bool:
    """``a == b`` for plain data, NaN equal to NaN (a rate over no events, e.g. the Coin Game's)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return bool(a == b)


def _face_decisions(
    face: Any,
    batch: Any,
    rng: ArrayRandom,
    states: list[State],
    streams: list[Any],
    rows: np.ndarray,
    player: int | None,
    what: str,
) -> np.ndarray:
    """Random decisions for ``rows`` (``player`` at a simultaneous node), each compared with its state first."""
    mask, infos, tensors = (
        batch.legal_mask(rows, player),
        batch.info_state_keys(rows, player),
        batch.observations(rows, player),
    )
    u = rng.uniform(rows)
    for k, b in enumerate(rows.tolist()):
        state, p = states[b], int(batch.player[b]) if player is None else player
        _require(
            np.flatnonzero(mask[k]).tolist() == list(state.legal_actions(p)), what, f"game {b}: legal actions differ"
        )
        _require(
            infos[k] == state.information_state_key(p),
            what,
            f"game {b}: info-state key differs",
        )
        _require(np.array_equal(tensors[k], state.observation_tensor(p)), what, f"game {b}: observation tensor differs")
        _require(streams[b].uniform() == u[k], what, f"game {b}: the face's draw is not the game stream's")
    return pick_uniform(mask, u)


def check_structured_views(game: str | Game, *, games: int = 3, seed: int = 0, walks: int = 10) -> None:
    """The structured-view part of :func:`check_game` (nothing when the game has none): at every
    decision of ``walks`` random games the player's ``observation_struct`` is plain JSON offering
    its legal moves with their labels; and ``games`` counterfactual replays (one chance outcome
    changed) find no view that differs where the player's text and info-state key do not."""
    g = _game(game)
    what = f"game '{g.spec.full_name}'"

    def check(state: State, player: int) -> bool:
        _check_struct(state, player, what)
        return True

    for k in range(walks):
        _walk(g, derive_seed(seed, "struct", k), what, check)
    for k in range(games):
        _check_struct_leaks(g, derive_seed(seed, "counterfactual", k), what)


def _check_pettingzoo(name: str, simultaneous: bool, cycles: int, what: str) -> None:
    from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

    try:
        api_test(make_env(name), num_cycles=cycles)
        seed_test(lambda: make_env(name), num_cycles=cycles)
        if simultaneous:
            parallel_api_test(make_parallel_env(name), num_cycles=cycles)
            parallel_seed_test(lambda: make_parallel_env(name), num_cycles=cycles)
    except AssertionError as exc:
        raise ConformanceError(f"{what}: PettingZoo conformance failed: {exc}") from exc


def _walk(game: Game, seed: int, what: str, check: Callable[[State, int], bool]) -> None:
    """One random game stepped by hand: ``check(state, player)`` runs at every decision before
    the player's random move (``False`` ends the walk there). The state's seed is drawn from
    ``seed``'s generator, 31 bits, as the AEC env draws its own."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state(int(rng.integers(2**31)))
    for _ in range(100_000):
        if state.is_terminal():
            returns = state.returns()
            _require(len(returns) == game.spec.num_players, what, f"returns() has {len(returns)} entries")
            return
        if state.is_chance_node():
            _sample_chance(state, rng, what)
            continue
        players = state.acting_players()
        _require(bool(players), what, "a non-terminal, non-chance state has no acting player")
        joint: list[Any] = [0] * game.spec.num_players
        for p in players:
            if not check(state, p):
                return
            joint[p] = _random_move(state, p, rng, what)
        if state.is_simultaneous_node():
            state.apply_actions(joint)
        else:
            state.apply_action(joint[players[0]])
    raise ConformanceError(f"{what}: a random game did not end within 100,000 moves")


def _sample_chance(state: State, rng: np.random.Generator, what: str) -> None:
    outcomes = state.chance_outcomes()
    weights = np.array([w for _, w in outcomes], dtype=float)
    _require(
        bool(outcomes) and bool((weights > 0).all()) and abs(weights.sum() - 1) < 1e-9,
        what,
        f"chance_outcomes() is not a distribution: {outcomes[:8]}",
    )
    state.apply_action(outcomes[int(rng.choice(len(outcomes), p=weights / weights.sum()))][0])


def _random_move(state: State, player: int, rng: np.random.Generator, what: str) -> Any:
    if state.decision_kind(player) == "text":
        return "ok"
    legal = state.legal_actions(player)
    _require(bool(legal), what, f"player {player} must act but has no legal actions:\n{state.observation_text(player)}")
    return int(legal[int(rng.integers(len(legal)))])


def _renderings(what: str) -> Callable[[State, int], bool]:
    """A walk check: every decision has a text rendering, and legal actions distinct labels."""

    def check(state: State, player: int) -> bool:
        text = state.observation_text(player)
        _require(isinstance(text, str) and bool(text.strip()), what, f"observation_text({player}) is empty")
        if state.decision_kind(player) != "text":
            labels = [state.action_label(player, a) for a in state.legal_actions(player)]
            _require(
                all(isinstance(x, str) and x.strip() for x in labels) and len(set(labels)) == len(labels),
                what,
                f"legal actions need distinct, non-empty labels (people and LLMs choose by label): {labels}",
            )
        _check_struct(state, player, what)
        return True

    return check


def _plain_struct(state: State, player: int, what: str) -> dict[str, Any] | None:
    """``observation_struct(player)``, checked to survive a strict JSON round trip unchanged."""
    view = state.observation_struct(player)
    if view is None:
        return None
    _require(isinstance(view, dict), what, f"observation_struct({player}) is a {type(view).__name__}, not a dict")
    try:
        same = json.loads(json.dumps(view, allow_nan=False)) == view
    except (TypeError, ValueError) as exc:
        raise ConformanceError(f"{what}: observation_struct({player}) is not plain JSON: {exc}") from None
    _require(same, what, f"observation_struct({player}) changes in a JSON round trip (tuples, int keys?)")
    return view


def _check_struct(state: State, player: int, what: str) -> None:
    """At ``player``'s decision: its structured view offers exactly its legal moves, labelled."""
    view = _plain_struct(state, player, what)
    if view is None:
        return
    _require(
        view.get("player") == player and view.get("your_turn") is True,
        what,
        "observation_struct lacks "
        f"player={player}, your_turn=true at the player's decision (start from arena.game.decision_struct)",
    )
    if state.decision_kind(player) != "text":
        want = [{"action": a, "label": state.action_label(player, a)} for a in state.legal_actions(player)]
        got = [{"action": x.get("action"), "label": x.get("label")} for x in view.get("legal", [])]
        _require(got == want, what, f"observation_struct legal moves {got[:6]} differ from the state's {want[:6]}")


def _history(game: Game, seed: int) -> tuple[int, list[tuple[bool, Any]]]:
    """A random game: the state's seed and its moves as (chance?, move) pairs (a joint move is a list)."""
    rng = np.random.default_rng(seed)
    state_seed = int(rng.integers(2**31))
    state, out = game.new_initial_state(state_seed), list[tuple[bool, Any]]()
    while not state.is_terminal() and len(out) < 2000:
        chance = state.is_chance_node()
        if chance:
            outcomes = state.chance_outcomes()
            move: Any = outcomes[int(rng.integers(len(outcomes)))][0]
        elif state.is_simultaneous_node():
            acting = state.acting_players()
            move = [_random_move(state, p, rng, "") if p in acting else 0 for p in range(game.spec.num_players)]
        else:
            move = _random_move(state, state.current_player(), rng, "")
        out.append((chance, move))
        _apply(state, move)
    return state_seed, out


def _apply(state: State, move: Any) -> None:
    if isinstance(move, list):
        state.apply_actions(move)
    else:
        state.apply_action(move)


def _allowed(state: State, move: Any) -> bool:
    """Whether ``move`` (from another world's history) is a legal move here."""
    if state.is_chance_node():
        return move in [a for a, _ in state.chance_outcomes()]
    if isinstance(move, list):
        return all(
            state.decision_kind(p) == "text" or move[p] in state.legal_actions(p) for p in state.acting_players()
        )
    return isinstance(move, str) or move in state.legal_actions(state.current_player())


def _check_struct_leaks(game: Game, seed: int, what: str) -> None:
    """Counterfactual replay: the same game with one chance outcome changed (another card dealt,
    another role, another draw). Wherever a player's text and info-state key agree in the two
    worlds, so must its structured view: it may not carry what the player cannot know."""
    if game.new_initial_state(0).observation_struct(0) is None:
        return
    state_seed, history = _history(game, seed)
    chances = [i for i, (c, _) in enumerate(history) if c]
    if chances:
        rng = np.random.default_rng(seed)
        for i in sorted({chances[0], chances[int(rng.integers(len(chances)))]}):
            _replay_two_worlds(game, state_seed, history, i, what)


def _replay_two_worlds(game: Game, state_seed: int, history: list[tuple[bool, Any]], i: int, what: str) -> None:
    worlds = [game.new_initial_state(state_seed), game.new_initial_state(state_seed)]
    for t, (_, move) in enumerate(history):
        moves = [move, move]
        if t == i:
            others = [a for a, _ in worlds[1].chance_outcomes() if a != move]
            if not others:
                return
            moves[1] = others[len(others) // 2]
        if not all(_allowed(w, m) for w, m in zip(worlds, moves)):
            return  # the other world forbids this move: the replay ends here
        for w, m in zip(worlds, moves):
            _apply(w, m)
        a, b = worlds
        if a.is_terminal() or b.is_terminal() or a.current_player() != b.current_player():
            return
        for p in range(game.spec.num_players):
            if a.observation_text(p) != b.observation_text(p):
                continue
            if a.information_state_key(p) != b.information_state_key(p):
                continue
            _require(
                _plain_struct(a, p, what) == _plain_struct(b, p, what),
                what,
                f"player {p}'s structured view depends on a chance outcome its text and info-state key do not "
                f"show (outcome {history[i][1]} replaced at step {i}, the views differ at step {t})",
            )


def _check_random_play(game: Game, games: int, seed: int, what: str) -> None:
    n = game.spec.num_players
    results = _play(game, [load_agent("random", game) for _ in range(n)], games, seed, rotate=True, record=False)
    for r in results:
        _require(r.forfeit is None, what, f"random legal play forfeited: {r.forfeit}")
        _require(len(r.returns) == n, what, f"a result has {len(r.returns)} returns for {n} players")
        lo, hi = game.spec.min_utility - 1e-9, game.spec.max_utility + 1e-9
        _require(
            all(lo <= x <= hi for x in r.returns),
            what,
            f"returns {r.returns} outside the declared [{game.spec.min_utility}, {game.spec.max_utility}]",
        )
        if game.spec.zero_sum:
            _require(abs(sum(r.returns)) < 1e-6, what, f"declared zero-sum but returns sum to {sum(r.returns)}")
    k = min(games, 16)
    batched = _play(game, [load_agent("random", game) for _ in range(n)], k, seed, rotate=True)
    single = _play(game, [load_agent("random", game) for _ in range(n)], k, seed, rotate=True, batch_size=1)
    _require(
        _same_play(batched, single, 1e-5),
        what,
        "the same seed played one game at a time gives different games than batched "
        "(the game must take its randomness from the seed only)",
    )


def _play(
    game: Game,
    agents: Sequence[Agent],
    games: int,
    seed: int,
    rotate: bool = False,
    batch_size: int | None = None,
    record: bool = True,
) -> list[GameResult]:
    return play_games(
        game, agents, num_games=games, seed=seed, rotate_seats=rotate, record=record, batch_size=batch_size
    )


def _moves(results: Sequence[Any]) -> list[Any]:
    """What identifies a played game: who moved what, and the returns."""
    return [([(s.player, s.action) for s in r.trajectory.steps], list(r.returns)) for r in results]


def _same_play(a: Sequence[Any], b: Sequence[Any], tol: float = 0.0) -> bool:
    """The same moves and returns, and log-probs within ``tol`` (a batched forward pass may
    differ from a single one in the last bits; a restored run must not differ at all)."""
    if _moves(a) != _moves(b):
        return False
    pa = [s.log_prob for r in a for s in r.trajectory.steps]
    pb = [s.log_prob for r in b for s in r.trajectory.steps]
    return all(
        (x is None and y is None) or (x is not None and y is not None and abs(x - y) <= tol) for x, y in zip(pa, pb)
    )


# -- agents -------------------------------------------------------------------------------------


def check_agent(spec: Any, game: str | Game, *, games: int = 20, seed: int = 0) -> None:
    """Check an agent plugin on a game: ``spec`` is what ``arena.load_agent`` takes
    (``"name"``, ``"name:key=value"`` or ``{"name": ..., **params}``)."""
    g = _game(game)
    name, _ = parse_agent_spec(spec)
    what = f"agent '{name}' on '{g.spec.full_name}'"
    n = g.spec.num_players

    def seats(agent: Agent, p: int) -> list[Agent]:
        return [agent if q == p else load_agent("random", g) for q in range(n)]

    first = load_agent(spec, g)
    fresh = load_agent(spec, g)
    for p in range(n):
        played = _play(g, seats(first, p), games, derive_seed(seed, "seat", p))
        bad = [r.forfeit for r in played if r.forfeit is not None]
        _require(not bad, what, f"forfeits from seat {p}: {bad[0] if bad else ''}")
        again = _play(g, seats(fresh, p), games, derive_seed(seed, "seat", p), batch_size=1)
        _require(
            _same_play(played, again, 1e-5),
            what,
            f"seat {p}: the same seed gives different moves on a fresh instance played one game at a time "
            "(draw randomness from obs.uniform()/obs.rng, not a private generator or batch position)",
        )
    if first.has_policy:
        for k in range(min(games, 10)):
            walk = derive_seed(seed, "walk", k)
            _walk(g, walk, what, _policy_is_a_distribution(g, first, walk, what))
    if checkpoint_param(name) is not None:
        _check_reload(g, first, spec, games, seed, what)


def _policy_is_a_distribution(game: Game, agent: Agent, seed: int, what: str) -> Callable[[State, int], bool]:
    """A walk check: ``agent.policy`` puts non-negative mass summing to 1 on legal actions only
    (the walk ends at the first free-text decision, which has no distribution)."""

    def check(state: State, player: int) -> bool:
        if state.decision_kind(player) == "text":
            return False
        probs = dict(agent.policy(Observation(state, player, np.random.default_rng(seed), game.spec.full_name)))
        legal = set(state.legal_actions(player))
        _require(set(probs) <= legal, what, f"policy puts mass on illegal actions {sorted(set(probs) - legal)}")
        total = sum(probs.values())
        _require(
            all(v >= 0 for v in probs.values()) and abs(total - 1) < 1e-6,
            what,
            f"policy is not a distribution (sum {total}): {probs}",
        )
        return True

    return check


def _check_reload(game: Game, agent: Agent, spec: Any, games: int, seed: int, what: str) -> None:
    n = game.spec.num_players
    with tempfile.TemporaryDirectory() as tmp:
        save_checkpoint(agent, Path(tmp) / "agent", spec)
        copy = load_checkpoint(Path(tmp) / "agent", game)
        before = _play(game, [agent] + [load_agent("random", game) for _ in range(n - 1)], games, seed)
        after = _play(game, [copy] + [load_agent("random", game) for _ in range(n - 1)], games, seed)
    _require(
        _same_play(before, after, 1e-5),
        what,
        "an agent reloaded from save_checkpoint plays differently from the one saved",
    )


# -- trainers -----------------------------------------------------------------------------------


def check_trainer(
    name: str,
    game: str | Game,
    learners: Sequence[Any],
    *,
    params: Mapping[str, Any] | None = None,
    games: int = 16,
    seed: int = 0,
) -> None:
    """Check a trainer plugin: ``learners`` are agent specs (snapshottable agents) that play
    every seat in turn (self-play), as a league team does; ``params`` go to the factory."""
    g = _game(game)
    what = f"trainer '{name}' on '{g.spec.full_name}'"
    factory = get_registry().get("trainer", name).factory
    specs = list(learners)
    _require_snapshottable(specs, what)

    def build(agents: list[Agent]) -> Trainer:
        return factory(g, agents, **dict(params or {}))

    def step(trainer: Trainer, agents: list[Agent], k: int) -> dict[str, float]:
        return _update(g, trainer, agents, games, derive_seed(seed, "train", k), what)

    def probe(xs: list[Agent]) -> list[GameResult]:
        return _play(g, _seated(g, xs), games, derive_seed(seed, "probe"))

    agents = [_labelled(k, load_agent(s, g)) for k, s in enumerate(specs)]
    trainer = build(agents)
    before = probe(agents)
    step(trainer, agents, 0)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for k, (a, s) in enumerate(zip(agents, specs)):
            save_checkpoint(a, root / f"learner{k}", s)
        save_trainer_state(trainer, root / "trainer.pt")
        copies = [_labelled(k, load_checkpoint(root / f"learner{k}", g)) for k in range(len(specs))]
        resumed = build(copies)
        load_trainer_state(resumed, root / "trainer.pt")
    _require(
        not _same_play(probe(agents), before),
        what,
        "one update left every learner playing exactly as before (same moves and log-probs)",
    )
    _require(
        _same_play(probe(copies), probe(agents)), what, "learners reloaded from their checkpoints play differently"
    )
    went_on, restored = step(trainer, agents, 1), step(resumed, copies, 1)
    _require(
        went_on == restored,
        what,
        f"a trainer restored from state_dict() updates differently: {went_on} vs {restored} "
        "(optimiser moments, random generators and counters belong in state_dict)",
    )
    _require(
        _same_play(probe(copies), probe(agents)),
        what,
        "after one more update the restored run and the uninterrupted run play differently",
    )


def _require_snapshottable(specs: Sequence[Any], what: str) -> None:
    _require(bool(specs), what, "needs at least one learner spec")
    for s in specs:
        agent_name = parse_agent_spec(s)[0]
        _require(
            checkpoint_param(agent_name) is not None,
            what,
            f"learner agent '{agent_name}' is not snapshottable (no checkpoint_param): a league cannot resume it",
        )


def _labelled(k: int, agent: Agent) -> Agent:
    agent.name = f"learner{k}"
    return agent


def _seated(game: Game, agents: Sequence[Agent]) -> list[Agent]:
    """The learners in every seat in turn (self-play)."""
    return [agents[i % len(agents)] for i in range(game.spec.num_players)]


def _update(game: Game, trainer: Trainer, agents: list[Agent], games: int, seed: int, what: str) -> dict[str, float]:
    """One training step on ``games`` self-play games; its metrics, checked to be finite numbers."""
    played = _play(game, _seated(game, agents), games, seed, rotate=len(agents) < game.spec.num_players)
    out = trainer.update([r.trajectory for r in played if r.trajectory is not None])  # recorded: all are there
    _require(isinstance(out, Mapping), what, f"update() must return a dict of metrics, got {type(out).__name__}")
    for key, v in out.items():
        _require(
            isinstance(key, str) and isinstance(v, (int, float)) and math.isfinite(float(v)),
            what,
            f"metric {key!r} = {v!r} is not a finite number",
        )
    return {k: float(v) for k, v in out.items()}
