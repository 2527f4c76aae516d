// Table renderer of Monopoly Deal for the `arena host` web client. Draws the structured view
// (State.observation_struct): your hand as cards, every seat's bank and property sets by colour
// with progress toward a full set, the piles and the pending obligation. Cards, sets, bank notes,
// buildings, seats, the pending demand and "end turn" carry the refs the moves act on
// (games/monopoly_deal/view.py acts_on), so a move is made by clicking what it plays or pays.
"use strict";
(function () {
  const COLOURS = {
    "Brown": "#8b5a2b", "Light Blue": "#8ecdf0", "Pink": "#d9479b", "Orange": "#f28c28", "Red": "#d62828",
    "Yellow": "#f3c614", "Green": "#2a9d4b", "Dark Blue": "#1d3f8f", "Railroad": "#3b3b3b", "Utility": "#9fb3c2",
  };

  function card(h, c, ref, count) {
    const e = h.el("div", `card md ${c.type}`);
    const band = h.el("div", "band");
    const colours = c.colours.length ? c.colours : [];
    for (const col of colours.length > 4 ? ["Red", "Yellow", "Green", "Dark Blue"] : colours) {
      const s = h.el("span");
      s.style.background = COLOURS[col] || "#ccc";
      band.append(s);
    }
    if (!colours.length) band.classList.add(c.type === "money" ? "money" : "action");
    const money = c.type === "money";
    e.append(band, h.el("span", money ? "rank" : "name", c.name), h.el("span", "value", c.value && !money ? `$${c.value}M` : ""));
    if (count > 1) e.append(h.el("span", "count", `\u00d7${count}`));
    e.dataset.title = c.name;
    if (ref) h.ref(e, ref);
    return e;
  }

  function bank(h, s) {
    const e = h.el("div", "bank");
    e.append(h.el("div", "label", `Bank $${s.bank.total}M`));
    const row = h.el("div", "row");
    for (const c of s.bank.cards) row.append(card(h, c, `bank:${s.player}:${c.value}`, c.count));
    e.append(row);
    return e;
  }

  function propertySet(h, s, set) {
    const e = h.ref(h.el("div", "set" + (set.complete ? " complete" : "")), `set:${s.player}:${set.colour_id}`);
    e.dataset.title = `${set.colour} set`;
    const head = h.el("div", "head");
    const name = h.el("span", "", set.colour);
    name.style.borderLeft = `.8rem solid ${COLOURS[set.colour] || "#ccc"}`;
    name.style.paddingLeft = ".3rem";
    head.append(name, h.el("span", "", `${set.cards.length}/${set.size}` + (set.complete ? " \u2713" : "") + ` \u00b7 rent $${set.rent}M`));
    const bar = h.el("div", "progress");
    const fill = h.el("span");
    fill.style.width = `${Math.min(100, (100 * set.cards.length) / set.size)}%`;
    bar.append(fill);
    const row = h.el("div", "row");
    for (const c of set.cards) row.append(card(h, c, `prop:${s.player}:${set.colour_id}:${c.kind}`));
    for (const b of ["house", "hotel"]) {
      if (set[b]) row.append(h.ref(h.el("span", "tag", b === "house" ? "House $3M" : "Hotel $4M"), `building:${s.player}:${set.colour_id}`));
    }
    e.append(head, bar, row);
    return e;
  }

  function seat(h, s, v) {
    const e = h.el("div", "seat" + (s.you ? " you" : "") + (v.to_move === s.player ? " to-move" : ""));
    const name = h.ref(h.el("div", "name", s.you ? "You" : h.seatName(s.player)), `seat:${s.player}`);
    name.dataset.title = s.you ? "You" : `Player ${s.player}`;
    e.append(name);
    e.append(h.el("div", "label", `${s.complete_sets}/${v.sets_to_win} complete sets` + (s.you ? "" : ` \u00b7 ${s.hand_size} cards in hand`)));
    e.append(bank(h, s));
    const sets = h.el("div", "row sets");
    for (const set of s.sets) sets.append(propertySet(h, s, set));
    if (!s.sets.length) sets.append(h.el("span", "label", "no properties"));
    e.append(sets);
    return e;
  }

  function render(v, h) {
    const root = h.el("div", "monopoly-deal");
    if (!v.seats) {
      root.append(h.el("p", "label", "The cards are being dealt."));
      return root;
    }
    const info = v.over
      ? (v.winner === null || v.winner === undefined ? "Game over: a draw." : `Game over: ${h.seatName(v.winner)} won.`)
      : `Turn ${v.turn}/${v.max_turns}: ${v.to_move === v.player ? "your" : h.seatName(v.to_move) + "'s"} turn, ${v.plays_left} of ${v.plays_per_turn} plays left`;
    root.append(h.el("div", "label", `${info} \u00b7 draw pile ${v.draw_pile} \u00b7 discard ${v.discard.reduce((a, c) => a + c.count, 0)}`));
    if (v.pending) root.append(h.ref(h.el("div", "pending", v.pending.text), "pending"));
    for (const s of v.seats.slice(1)) root.append(seat(h, s, v));
    root.append(seat(h, v.seats[0], v));
    const hand = h.el("div", "hand");
    hand.append(h.el("div", "label", `Your hand (${v.hand.reduce((a, c) => a + c.count, 0)})`));
    const row = h.el("div", "row");
    for (const c of v.hand) row.append(card(h, c, `hand:${c.kind}`, c.count));
    hand.append(row);
    root.append(hand);
    if (v.ask) root.append(h.el("p", "label", v.ask));
    if ((v.legal || []).some((m) => (m.on || []).includes("end"))) root.append(h.ref(h.el("div", "chip", "end turn"), "end"));
    return root;
  }

  arenaTable.register(render);
})();
