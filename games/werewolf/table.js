// Table renderer of Werewolf for the `arena host` web client. Draws the structured view
// (State.observation_struct): the seats, alive or dead, with what your role knows of them and the
// last public vote table; your role, the day and phase. Seats ("seat:<n>", "seat:abstain"), role
// claims ("claim:<role>") and silence carry the refs the moves act on, so a night target, an
// accusation or a vote is made by clicking the seat.
"use strict";
(function () {
  function seat(h, v, s) {
    const cls = "seat" + (s.you ? " you" : "") + (s.alive ? "" : " dead");
    const e = h.ref(h.el("div", cls), `seat:${s.seat}`);
    e.dataset.title = `player_${s.seat}`;
    e.append(h.el("div", "name", `player_${s.seat}` + (s.you ? " (you)" : "")));
    e.append(h.el("span", "tag", s.alive ? "alive" : "dead"));
    if (s.werewolf && !s.you) e.append(h.el("span", "tag wolf", "werewolf (team)"));
    if (s.checked) e.append(h.el("span", "tag " + (s.checked === "werewolf" ? "wolf" : "good"), `checked: ${s.checked}`));
    if (s.revealed) e.append(h.el("span", "tag", `was ${s.revealed}`));
    if (s.role) e.append(h.el("span", "tag " + (s.role === "werewolf" ? "wolf" : "good"), s.role));
    if (v.last_protected === s.seat) e.append(h.el("span", "tag good", "you protected"));
    const voters = (v.votes || []).filter((x) => x.for === s.seat).map((x) => `p${x.voter}`);
    if (voters.length) e.append(h.el("div", "label", `votes: ${voters.join(" ")}`));
    if (v.your_vote === s.seat) e.append(h.el("div", "label", "your vote"));
    return e;
  }

  function render(v, h) {
    const root = h.el("div", "werewolf");
    if (!v.seats) {
      root.append(h.el("p", "label", "Roles are being dealt."));
      return root;
    }
    const when = v.phase === "over" ? `game over: ${v.winner} ${v.winner === "draw" ? "" : "win"}` : v.day ? `day ${v.day}/${v.max_days}, ${v.phase}` : "";
    root.append(h.el("div", "label", `You are player_${v.player}, ${v.role}` + (v.alive ? "" : " (dead)") + (when ? ` \u00b7 ${when}` : "")));
    const seats = h.el("div", "row seats");
    for (const s of v.seats) seats.append(seat(h, v, s));
    root.append(seats);
    const extra = h.el("div", "row");
    const legal = v.legal || [];
    const refs = new Set(legal.flatMap((m) => m.on || []));
    if (refs.has("seat:abstain")) extra.append(h.ref(h.el("div", "chip", "abstain"), "seat:abstain"));
    if (refs.has("silent")) extra.append(h.ref(h.el("div", "chip", "stay silent"), "silent"));
    for (const r of [...refs].filter((x) => x.startsWith("claim:"))) extra.append(h.ref(h.el("div", "chip", `claim ${r.slice(6)}`), r));
    const abstained = (v.votes || []).filter((x) => x.for === "abstain").map((x) => `p${x.voter}`);
    if (abstained.length) extra.append(h.el("span", "label", `abstained: ${abstained.join(" ")}`));
    if (extra.childNodes.length) root.append(extra);
    if (v.ask) root.append(h.el("p", "label", { kill: "Night: click the werewolves' target.", protect: "Night: click a player to protect.", inspect: "Night: click a player to inspect.", speak: "Your turn to speak: click a player to accuse, defend or report, or a claim.", vote: "Vote: click a player to exile." }[v.ask] || v.ask));
    return root;
  }

  arenaTable.register(render);
})();
