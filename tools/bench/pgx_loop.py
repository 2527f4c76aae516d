"""Random PGX games/s, for ``arena bench array-games --pgx-python PY``: run by ``PY``, an
interpreter with ``pgx`` and ``jax`` (PGX, arXiv 2303.17503; arena does not depend on either),
so it imports nothing from arena. Prints one JSON object: games/s per game at one batch size.

Each batch is one jitted call: ``vmap``-ed ``init``, then ``vmap``-ed ``step`` with uniformly
random legal actions inside ``lax.while_loop`` until every game has terminated. Timed after a
warm-up call (compilation), best of ``repeats``.
"""

from __future__ import annotations

import json
import sys
import time

PGX_IDS = {"kuhn_poker": "kuhn_poker", "leduc_poker": "leduc_holdem"}


def games_per_second(game: str, games: int, batch: int, repeats: int) -> float:
    import jax
    import jax.numpy as jnp
    import pgx

    env = pgx.make(PGX_IDS[game])
    init, step = jax.vmap(env.init), jax.vmap(env.step)

    @jax.jit
    def play(key: jax.Array) -> jax.Array:
        k_init, k_act = jax.random.split(key)
        state = init(jax.random.split(k_init, batch))

        def body(carry: tuple) -> tuple:
            s, k = carry
            k, now = jax.random.split(k)
            logits = jnp.where(s.legal_action_mask, 0.0, -jnp.inf)
            action = jax.random.categorical(now, logits, axis=-1)
            return step(s, action), k

        state, _ = jax.lax.while_loop(lambda c: ~c[0].terminated.all(), body, (state, k_act))
        return state.rewards

    play(jax.random.PRNGKey(0)).block_until_ready()  # compile
    rounds = max(1, games // batch)
    best = float("inf")
    for r in range(repeats):
        start = time.perf_counter()
        for k in range(rounds):
            play(jax.random.PRNGKey(1 + r * rounds + k)).block_until_ready()
        best = min(best, time.perf_counter() - start)
    return rounds * batch / best


def main(argv: list[str]) -> None:
    games, batch, repeats = int(argv[1]), int(argv[2]), int(argv[3])
    out = {g: games_per_second(g, games, batch, repeats) for g in argv[0].split(",")}
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
