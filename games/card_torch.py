"""Kuhn poker (2+ players) and Leduc hold'em as torch tensors on any device, and rollouts of a torch policy that
never leave it.

The numpy array face (:mod:`arena.games.card_arrays`) steps B games per call but hands every
decision to Python; here the whole game lives in tensors on one device (``cpu`` or ``cuda``):
the deal, the legal mask, the observation (OpenSpiel's ``information_state_tensor``, what
``State.observation_tensor`` gives), the step, the returns, and the per-game SplitMix64 streams
of :mod:`arena.rng` that chance and the agents draw from. :func:`rollout` plays B games with a
``torch.nn.Module`` per seat (observation → logits → masked softmax → a draw from each game's
stream → step) in a fixed number of steps, with no host round trip inside the loop (no ``.item()``,
no boolean indexing, no ``.any()``): finished games ride along masked.

Exactness. The streams are SplitMix64 in int64 tensor arithmetic: addition and multiplication
wrap modulo 2⁶⁴ in two's complement exactly as ``uint64`` does, XOR is bitwise, and the logical
right shift is the arithmetic one masked to its low ``64 - k`` bits; a uniform is the top 53 bits
times 2⁻⁵³ in float64. The keys (one per game, set-up only) are :class:`~arena.arrays.ArrayRandom`'s,
computed once in numpy and moved to the device. So the deals, the random agent's choices and a
policy's draws are the numpy face's, draw for draw (tested on 10,000 games of each). A policy's
probabilities are float32 as the neural agent's are; its ``act_arrays`` runs the network once per
distinct information state (padded to 16 rows) where :func:`rollout` runs it on all B rows, so a
log-probability may differ in the last bit and an action only if a uniform falls within that
last bit of a cumulative probability.

Layout after Koyamada et al., "Pgx: Hardware-Accelerated Parallel Game Simulators for
Reinforcement Learning" (arXiv 2303.17503): a state is a bundle of batched tensors, a step a pure
tensor function of it; unlike PGX, the rules, action ids and the first mover are OpenSpiel's
(player 0 opens; Kuhn 0 = pass, 1 = bet; Leduc 0 = fold, 1 = call, 2 = raise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from arena.arrays import ArrayRandom
from arena.errors import ArenaError
from arena.game import TERMINAL
from arena.rng import _GOLDEN


def _signed(x: int) -> int:
    """A uint64 constant as the int64 with the same bits."""
    return x - (1 << 64) if x >= 1 << 63 else x


_G = _signed(_GOLDEN)
_M1 = _signed(0xBF58476D1CE4E5B9)
_M2 = _signed(0x94D049BB133111EB)


def _shr(z: torch.Tensor, k: int) -> torch.Tensor:
    """Logical right shift of int64 bits (torch's ``>>`` is arithmetic)."""
    return (z >> k) & ((1 << (64 - k)) - 1)


def mix(z: torch.Tensor) -> torch.Tensor:
    """SplitMix64's output function on int64 tensors, bit for bit :func:`arena.rng._mix`."""
    z = (z ^ _shr(z, 30)) * _M1
    z = (z ^ _shr(z, 27)) * _M2
    return z ^ _shr(z, 31)


class TorchRandom:
    """:class:`~arena.arrays.ArrayRandom` on a device: the same streams, counters as tensors."""

    def __init__(self, seed: int, indices: Sequence[int], device: Any = "cpu") -> None:
        host = ArrayRandom(seed, indices)
        self.device = torch.device(device)
        self.keys = torch.from_numpy(host.keys.view(np.int64).copy()).to(self.device)
        self.counters = torch.ones(len(host), dtype=torch.int64, device=self.device)

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def uniform(self, live: torch.Tensor | None = None) -> torch.Tensor:
        """float64 [B]: each game's next uniform; only games where ``live`` (bool [B]) draw
        (the others' counters stay, and their values are to be ignored)."""
        step = torch.ones_like(self.counters) if live is None else live.to(torch.int64)
        self.counters = self.counters + step
        z = mix(self.keys + self.counters * _G)
        return _shr(z, 11).to(torch.float64) * (1.0 / (1 << 53))


def kth_true(mask: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """:func:`arena.arrays.kth_true` on tensors, column by column: a few one-dimensional passes
    over the games, which ``torch.compile`` fuses and vectorises (a cumsum along a row of 2–6 does
    neither)."""
    seen = torch.zeros_like(k)
    out = torch.zeros_like(k)
    for j in range(mask.shape[1]):
        seen = seen + mask[:, j].to(k.dtype)
        out = out + (seen <= k).to(k.dtype)
    return out


def pick_uniform(mask: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """:func:`arena.arrays.pick_uniform` on tensors: ``legal[min(int(u·k), k-1)]``."""
    k = mask.to(torch.int64).sum(1)
    return kth_true(mask, torch.minimum((u * k).to(torch.int64), k - 1))


def pick_weighted(weights: torch.Tensor, mask: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """:func:`arena.arrays.pick_weighted` on tensors: the first action whose running sum of the
    (masked, non-negative) weights exceeds ``u · total``; a rounding miss takes the last positive
    weight, a zero total the uniform choice."""
    w = torch.where(mask, weights.clamp(min=0), torch.zeros_like(weights))
    cum = w.cumsum(1)
    total = cum[:, -1]
    target = u * total.to(u.dtype)
    first = (cum.to(u.dtype) <= target[:, None]).sum(1)
    width = w.shape[1]
    last_positive = width - 1 - torch.argmax((w > 0).flip(1).to(torch.int8), 1)
    out = torch.where(first < width, first, last_positive)
    return torch.where(total <= 0, pick_uniform(mask, u), out)


def one_hot(x: torch.Tensor, n: int) -> torch.Tensor:
    """bool [B, n]: ``x`` (int64 [B], each in ``0..n-1``) one-hot, by comparison: unlike
    ``torch.nn.functional.one_hot`` it checks no range, so compiled it adds no reduction over the
    batch (which keeps the fused loop from vectorising)."""
    return x[:, None] == torch.arange(n, device=x.device)


_EDGES: dict[tuple[int, torch.device], torch.Tensor] = {}


def _edges(left: int, device: torch.device) -> torch.Tensor:
    """The inverse-CDF edges of ``left`` equally likely cards, on ``device`` (made once: no copy
    from the host inside a rollout; a plain dict, which ``torch.compile`` traces)."""
    if (left, device) not in _EDGES:
        acc, edges = 0.0, []
        for _ in range(left):
            acc += 1.0 / left
            edges.append(acc)
        _EDGES[left, device] = torch.tensor(edges, dtype=torch.float64, device=device)
    return _EDGES[left, device]


def _deal_one(u: torch.Tensor, dealt: torch.Tensor, left: int) -> torch.Tensor:
    """One card per game from those not yet dealt (OpenSpiel's order: the rest ascending, equally
    likely), by inverse CDF with float edges summed as :func:`arena.arrays.cdf_pick` sums them;
    ``left`` cards remain in every game."""
    e = _edges(left, u.device)
    k = torch.zeros(u.shape, dtype=torch.int64, device=u.device)
    for i in range(left):
        k = k + (u >= e[i]).to(torch.int64)
    return kth_true(~dealt, torch.clamp(k, max=left - 1))


@dataclass
class KuhnTensors:
    """B Kuhn games on one device. ``player``: the player to move, ``TERMINAL`` once over."""

    cards: torch.Tensor  # int64 [B, n]
    moves: torch.Tensor  # int64 [B, 2n-1], -1 where not yet played
    count: torch.Tensor  # int64 [B]: moves so far
    bet_at: torch.Tensor  # int64 [B]: move number of the first bet, -1 while none
    in_pot: torch.Tensor  # bool [B, n]: bet or called
    player: torch.Tensor  # int64 [B]
    returns: torch.Tensor  # float64 [B, n], 0 until a game ends

    @property
    def done(self) -> torch.Tensor:
        return self.player == TERMINAL


class KuhnTorch:
    """Kuhn poker with ``players`` players, B games at a time as tensors on ``device``."""

    def __init__(self, players: int = 2, device: Any = "cpu") -> None:
        if int(players) < 2:
            raise ArenaError(f"KuhnTorch: players must be at least 2, got {players}")
        self.n = int(players)
        self.device = torch.device(device)
        self.num_actions = 2
        self.max_moves = 2 * self.n - 1
        self.obs_width = self.n + (self.n + 1) + 2 * self.max_moves

    def reset(self, rng: TorchRandom) -> KuhnTensors:
        b, n, dev = len(rng), self.n, self.device
        dealt = torch.zeros((b, n + 1), dtype=torch.bool, device=dev)
        cards = []
        for i in range(n):
            c = _deal_one(rng.uniform(), dealt, n + 1 - i)
            dealt = dealt | one_hot(c, n + 1)  # not dealt[i, c] = True: a host copy
            cards.append(c)
        z = torch.zeros(b, dtype=torch.int64, device=dev)
        return KuhnTensors(
            cards=torch.stack(cards, 1),
            moves=torch.full((b, self.max_moves), -1, dtype=torch.int64, device=dev),
            count=z.clone(),
            bet_at=z - 1,
            in_pot=torch.zeros((b, n), dtype=torch.bool, device=dev),
            player=z.clone(),
            returns=torch.zeros((b, n), dtype=torch.float64, device=dev),
        )

    def legal_mask(self, s: KuhnTensors) -> torch.Tensor:
        """bool [B, 2]: pass and bet are always legal (a finished game's row is all True too)."""
        return torch.ones((s.player.shape[0], 2), dtype=torch.bool, device=s.player.device)

    def observations(self, s: KuhnTensors) -> torch.Tensor:
        """float32 [B, 3n+1 + 2(2n-1)]: the player to move's ``information_state_tensor``
        (player one-hot, own card one-hot, each move so far as a pass/bet one-hot); a finished
        game's row is player 0's."""
        n = self.n
        p = s.player.clamp(min=0)
        seat = one_hot(p, n).to(torch.int64)
        card = one_hot(s.cards.gather(1, p[:, None])[:, 0], n + 1).to(torch.int64)
        acts = (s.moves[:, :, None] == torch.arange(2, device=p.device)).flatten(1)
        return torch.cat([seat, card, acts.to(seat.dtype)], 1).to(torch.float32)

    def step(self, s: KuhnTensors, actions: torch.Tensor) -> KuhnTensors:
        """Each live game's ``actions`` (int64 [B]) by its player to move; finished games stay."""
        n, live = self.n, s.player >= 0
        a = actions.to(torch.int64)
        p = s.player.clamp(min=0)
        slot = one_hot(s.count.clamp(max=self.max_moves - 1), self.max_moves)
        moves = torch.where(slot & live[:, None], a[:, None], s.moves)
        bet = (a == 1) & live
        in_pot = s.in_pot | (one_hot(p, n) & bet[:, None])
        bet_at = torch.where(bet & (s.bet_at < 0), s.count, s.bet_at)
        count = s.count + live.to(torch.int64)
        over = live & torch.where(bet_at < 0, count == n, count == bet_at + n)
        player = torch.where(live, torch.where(over, torch.full_like(count, TERMINAL), count % n), s.player)
        returns = torch.where(over[:, None], self._settle(s.cards, in_pot), s.returns)
        return KuhnTensors(s.cards, moves, count, bet_at, in_pot, player, returns)

    @staticmethod
    def _settle(cards: torch.Tensor, in_pot: torch.Tensor) -> torch.Tensor:
        """Showdown among those who bet or called (everyone when nobody bet): the pot to the highest card."""
        nobody = ~in_pot.any(1)
        contender = in_pot | nobody[:, None]
        winner = torch.argmax(torch.where(contender, cards, torch.full_like(cards, -1)), 1)
        paid = 1.0 + in_pot.to(torch.float64)
        won = one_hot(winner, cards.shape[1]).to(torch.float64)
        return -paid + won * paid.sum(1, keepdim=True)


# -- Leduc hold'em ------------------------------------------------------------------------------
FOLD, CALL, RAISE = 0, 1, 2


@dataclass
class LeducTensors:
    """B Leduc games on one device. ``player``: the player to move, ``TERMINAL`` once over."""

    dealt: torch.Tensor  # bool [B, 6]
    cards: torch.Tensor  # int64 [B, 2]: private cards (card // 2 is the rank)
    public: torch.Tensor  # int64 [B], -1 before round 2
    moves: torch.Tensor  # int64 [B, 8]: round 1's moves then round 2's, -1 where none
    round2: torch.Tensor  # bool [B]
    stakes: torch.Tensor  # int64 [B]
    paid0: torch.Tensor  # int64 [B]: what player 0 has put in
    paid1: torch.Tensor  # int64 [B]: what player 1 has put in
    raises: torch.Tensor  # int64 [B]: raises this round
    round_moves: torch.Tensor  # int64 [B]
    player: torch.Tensor  # int64 [B]
    gain: torch.Tensor  # float64 [B]: player 0's return, 0 until a game ends (player 1's is -gain)

    @property
    def done(self) -> torch.Tensor:
        return self.player == TERMINAL

    @property
    def returns(self) -> torch.Tensor:
        """float64 [B, 2]. The state keeps one column per quantity (``paid0``, ``gain``): compiled,
        a game is then a row of one-dimensional passes, which vectorise along the games."""
        return torch.stack([self.gain, -self.gain], 1)


class LeducTorch:
    """Leduc hold'em (2 players, OpenSpiel's rules and action ids: 0 fold, 1 call, 2 raise), B
    games at a time as tensors on ``device``; the public card is dealt inside :meth:`step` from
    the games' streams, as the numpy face deals it."""

    n = 2
    num_actions = 3
    max_moves = 8
    obs_width = 30

    def __init__(self, device: Any = "cpu") -> None:
        self.device = torch.device(device)
        self.rng: TorchRandom | None = None
        self._call_raise = torch.tensor([CALL, RAISE], device=self.device)

    def reset(self, rng: TorchRandom) -> LeducTensors:
        self.rng = rng
        b, dev = len(rng), self.device
        dealt = torch.zeros((b, 6), dtype=torch.bool, device=dev)
        cards = []
        for i in range(2):
            c = _deal_one(rng.uniform(), dealt, 6 - i)
            dealt = dealt | one_hot(c, 6)
            cards.append(c)
        z = torch.zeros(b, dtype=torch.int64, device=dev)
        return LeducTensors(
            dealt=dealt,
            cards=torch.stack(cards, 1),
            public=z - 1,
            moves=torch.full((b, 8), -1, dtype=torch.int64, device=dev),
            round2=torch.zeros(b, dtype=torch.bool, device=dev),
            stakes=z + 1,
            paid0=z + 1,
            paid1=z + 1,
            raises=z.clone(),
            round_moves=z.clone(),
            player=z.clone(),
            gain=torch.zeros(b, dtype=torch.float64, device=dev),
        )

    def legal_mask(self, s: LeducTensors) -> torch.Tensor:
        """bool [B, 3]: fold only when facing a raise, raise while fewer than 2 this round."""
        fold = torch.where(s.player == 1, s.paid1, s.paid0) < s.stakes
        return torch.stack([fold, torch.ones_like(fold), s.raises < 2], 1)

    def observations(self, s: LeducTensors) -> torch.Tensor:
        """float32 [B, 30]: OpenSpiel's ``information_state_tensor`` of the player to move: player
        one-hot, private card one-hot, public card one-hot, then each round's up to 4 moves as
        call ``[1, 0]`` / raise ``[0, 1]``."""
        p = s.player.clamp(min=0)
        seat = one_hot(p, 2).to(torch.int64)
        card = one_hot(s.cards.gather(1, p[:, None])[:, 0], 6).to(torch.int64)
        public = one_hot(s.public + 1, 7)[:, 1:].to(torch.int64)
        acts = (s.moves[:, :, None] == self._call_raise).flatten(1)
        return torch.cat([seat, card, public, acts.to(seat.dtype)], 1).to(torch.float32)

    def step(self, s: LeducTensors, actions: torch.Tensor) -> LeducTensors:
        """Each live game's ``actions`` (int64 [B]) by its player to move; finished games stay."""
        live = s.player >= 0
        a = actions.to(torch.int64)
        p = s.player.clamp(min=0)
        slot = s.round2.to(torch.int64) * 4 + s.round_moves.clamp(max=3)
        moves = torch.where(one_hot(slot, 8) & live[:, None], a[:, None], s.moves)
        raised = (a == RAISE) & live
        stakes = s.stakes + torch.where(raised, torch.where(s.round2, 4, 2), 0)
        raises = s.raises + raised.to(torch.int64)
        pays = live & (a != FOLD)  # a call or a raise brings the mover up to the stakes
        paid0 = torch.where(pays & (p == 0), stakes, s.paid0)
        paid1 = torch.where(pays & (p == 1), stakes, s.paid1)
        round_moves = s.round_moves + live.to(torch.int64)
        player = torch.where(live, 1 - p, s.player)
        folded = live & (a == FOLD)
        ended = live & (a == CALL) & (round_moves >= 2)
        showdown = ended & s.round2
        deal = ended & ~s.round2
        gain = torch.where(folded, self._pay(paid0, paid1, p == 1), s.gain)  # the folder's opponent wins
        gain = torch.where(showdown, self._showdown(s.cards, s.public, paid0, paid1), gain)
        player = torch.where(folded | showdown, torch.full_like(player, TERMINAL), player)
        assert self.rng is not None, "LeducTorch.step before reset"
        public = torch.where(deal, _deal_one(self.rng.uniform(deal), s.dealt, 4), s.public)
        dealt = s.dealt | (one_hot(public.clamp(min=0), 6) & deal[:, None])
        zero = torch.zeros_like(raises)
        return LeducTensors(
            dealt=dealt,
            cards=s.cards,
            public=public,
            moves=moves,
            round2=s.round2 | deal,
            stakes=stakes,
            paid0=paid0,
            paid1=paid1,
            raises=torch.where(deal, zero, raises),
            round_moves=torch.where(deal, zero, round_moves),
            player=torch.where(deal, zero, player),
            gain=gain,
        )

    @staticmethod
    def _pay(paid0: torch.Tensor, paid1: torch.Tensor, zero_wins: torch.Tensor) -> torch.Tensor:
        """Player 0's return when the pot goes to player 0 (``zero_wins``) or to player 1: the
        winner wins what the other put in."""
        return torch.where(zero_wins, paid1, -paid0).to(torch.float64)

    def _showdown(
        self, cards: torch.Tensor, public: torch.Tensor, paid0: torch.Tensor, paid1: torch.Tensor
    ) -> torch.Tensor:
        """A pair with the public card wins, then the higher rank; a tie splits (returns 0)."""
        rank0, rank1, board = cards[:, 0] // 2, cards[:, 1] // 2, public // 2
        strength0 = (rank0 == board).to(torch.int64) * 10 + rank0
        strength1 = (rank1 == board).to(torch.int64) * 10 + rank1
        out = self._pay(paid0, paid1, strength0 > strength1)
        return torch.where(strength0 == strength1, torch.zeros_like(out), out)


def _decide(policy: Any, x: torch.Tensor, mask: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Every row's action and its log-probability (0 for ``"random"``) under one policy."""
    if isinstance(policy, str):
        if policy != "random":
            raise ArenaError(f"rollout: a policy is a torch module or 'random', got {policy!r}")
        return pick_uniform(mask, u), torch.zeros(x.shape[0], dtype=torch.float32, device=x.device)
    logp = policy(x).masked_fill(~mask, float("-inf")).log_softmax(-1)
    a = pick_weighted(logp.exp(), mask, u)
    return a, logp.gather(1, a[:, None])[:, 0]


def rollout(
    game: KuhnTorch | LeducTorch, policies: Sequence[Any], rng: TorchRandom
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Play ``len(rng)`` games on ``game.device``, seat ``i`` deciding by ``policies[i]``: a
    ``torch.nn.Module`` (observations → logits; sampled from the masked softmax with one uniform
    of the game's stream, as the neural agent's ``act_arrays`` draws) or ``"random"`` (the random
    agent: ``pick_uniform`` with one uniform). Returns ``(returns float64 [B, n], actions int64
    [B, M]: each game's decisions in order, -1 after its end), log_probs float32 [B, M] (0 for
    random seats and after the end))``, all on the device, ``M = game.max_moves`` (Kuhn: ``2n-1``;
    Leduc: 8). No host round trip inside: ``M`` steps, finished games masked."""
    if len(policies) != game.n:
        raise ArenaError(f"rollout: policies must name one policy per seat ({game.n}), got {len(policies)}")
    s: Any = game.reset(rng)  # the game's own tensors
    b = len(rng)
    actions = torch.full((b, game.max_moves), -1, dtype=torch.int64, device=game.device)
    logps = torch.zeros((b, game.max_moves), dtype=torch.float32, device=game.device)
    for t in range(game.max_moves):
        live = s.player >= 0
        mask = game.legal_mask(s)
        u = rng.uniform(live)
        action = torch.zeros(b, dtype=torch.int64, device=game.device)
        logp_t = torch.zeros(b, dtype=torch.float32, device=game.device)
        x = game.observations(s)
        picked: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # one forward pass per distinct policy
        for seat, policy in enumerate(policies):
            mine = s.player == seat
            if id(policy) not in picked:
                picked[id(policy)] = _decide(policy, x, mask, u)
            a, lp = picked[id(policy)]
            action = torch.where(mine, a, action)
            logp_t = torch.where(mine, lp, logp_t)
        actions[:, t] = torch.where(live, action, -1)
        logps[:, t] = logp_t
        s = game.step(s, action)
    return s.returns, actions, logps


def compiled_rollout(game: KuhnTorch | LeducTorch, policies: Sequence[Any]) -> Any:
    """:func:`rollout` of ``game`` with ``policies`` as one ``torch.compile``-d function of the
    games' streams: the same games, fused into a few kernels (on a CPU, Kuhn poker's whole rollout
    runs 6× faster than eager). The first call compiles (10–80 s on a CPU; cached on disk by
    torch); every call must bring the same batch size, or it compiles again."""

    def play(rng: TorchRandom) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return rollout(game, policies, rng)

    return torch.compile(play, dynamic=False)
