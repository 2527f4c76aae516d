"""Rating systems, all computed from stored match records (so every rating is reproducible).

- :mod:`.outcomes` — what one game says about a pair of agents (win/draw/loss or margin
  scores) and which games are independent (the bootstrap's units).
- :mod:`.elo` — online, order-dependent; replayed in plan order so a resumed run equals a clean one.
- :mod:`.openskill` — Weng–Lin ratings (Plackett–Luce by default) through the ``openskill``
  package: 1v1, free-for-all and teams.
- :mod:`.bradley_terry` — maximum likelihood with a bootstrap confidence interval over deals
  (the recipe of "Chatbot Arena: An Open Platform for Evaluating LLMs by Human Preference",
  arXiv 2403.04132).
- :mod:`.game_theory` — α-Rank ("α-Rank: Multi-Agent Evaluation by Evolution", arXiv 1903.01373)
  and Nash averaging ("Re-evaluating Evaluation", arXiv 1806.02643) of the empirical payoff matrix.
- :mod:`.agreement` — how close two rankings are (Kendall τ).
- :mod:`.state` — :class:`~.state.RatingState`, every rating a leaderboard shows, updated one
  game at a time.
"""
