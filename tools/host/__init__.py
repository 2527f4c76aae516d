"""Hosting matches between people (over the network) and agents: ``arena host`` / ``arena join``.

Design, and why:

- **The match runner plays the match.** A remote person is an :class:`~arena.agent.Agent`
  (:class:`~arena.tools.host.remote.RemoteHuman`) whose ``act`` opens a turn for its seat and
  waits for that seat's client. So hosted games use the same runner as ``arena match`` and
  tournaments: the same seeds give the same deals, forfeits and transcripts work unchanged,
  and results reach the run store through the runner's ``on_result`` like any other match.
  Driving the state in the host would have meant a second game loop to keep in step.
- **Only the standard library.** ``http.server`` serves the page and a JSON API; the server
  pushes events with Server-Sent Events (browsers reconnect them natively, resuming from the
  last event id) and clients send moves as small JSON POSTs. No dependency, and every
  rejection is a plain HTTP status with a one-line reason that tests can check.
- **Leak-free by construction.** Everything a seat receives is built from that seat's own
  ``observation_text``, its own legal actions and the public seat list — never whose turn it
  is (a Werewolf night move would betray a role) and never another seat's view.

Modules: :mod:`.protocol` (wire format and validation), :mod:`.hub` (seats, tokens, turns,
events), :mod:`.remote` (the remote-human agent and the wrappers that keep views fresh),
:mod:`.server` (HTTP), :mod:`.session` (config → a hosted series with the run store),
:mod:`.client` (the network client ``arena join`` and tests use), :mod:`.command` (CLI).
"""
