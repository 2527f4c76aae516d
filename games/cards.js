// Table renderer of Kuhn poker, Leduc hold'em and Liar's dice for the `arena host` web client.
// Draws the structured view (State.observation_struct): the cards as cards, each seat's stake as
// chips, the pot, and the betting moves as chips (data-ref "chip:<move>", "bid:<q-f>") that the
// client makes clickable when they are legal.
"use strict";
(function () {
  const SUITS = { 1: "\u2660", 2: "\u2665" };

  function card(h, c) {
    const e = h.el("div", "card");
    e.append(h.el("span", "rank", c.rank));
    if (c.suit) e.append(h.el("span", "suit", SUITS[c.suit] || c.suit));
    e.setAttribute("aria-label", c.rank + (c.suit ? ` of suit ${c.suit}` : ""));
    return e;
  }

  function back(h) {
    const e = h.el("div", "card back", "?");
    e.setAttribute("aria-label", "a hidden card");
    return e;
  }

  function stack(h, n, what) {
    const e = h.el("div", "stack");
    for (let i = 0; i < Math.min(n, 12); i++) e.append(h.el("span", "chip small"));
    e.append(h.el("span", "label", ` ${n} ${what}`));
    return e;
  }

  function moveChips(h, v, prefix, cls) {
    const row = h.el("div", cls || "row moves");
    for (const m of v.legal || []) row.append(h.ref(h.el("div", "chip", m.label), prefix + m.label));
    return row;
  }

  function poker(v, h) {
    const root = h.el("div", "poker");
    const seats = h.el("div", "row seats-row");
    for (let q = 0; q < v.players; q++) {
      const s = h.el("div", "seat" + (q === v.player ? " you" : "") + (v.to_move === q ? " to-move" : ""));
      s.append(h.el("div", "name", h.seatName(q)));
      const cards = h.el("div", "row");
      const shown = (v.showdown || []).find((x) => x.player === q);
      if (q === v.player) v.hand.forEach((c) => cards.append(card(h, c)));
      else cards.append(shown ? card(h, shown) : back(h));
      s.append(cards);
      if (!v.over && v.stakes && v.stakes[q] !== undefined) s.append(stack(h, v.stakes[q], "in"));
      seats.append(s);
    }
    root.append(seats);
    const middle = h.el("div", "row middle");
    if (v.board) {
      const board = h.el("div", "board");
      board.append(h.el("div", "label", "Board"));
      board.append(v.board.length ? card(h, v.board[0]) : back(h));
      middle.append(board);
    }
    if (!v.over || v.game === "kuhn_poker") {  // OpenSpiel's Leduc empties the pot at the end
      const pot = h.el("div", "pot");
      pot.append(h.el("div", "label", "Pot"), stack(h, v.pot === null ? 0 : v.pot, "chips"));
      middle.append(pot);
    }
    if (v.over) middle.append(h.el("div", "label", `Your return: ${v.returns[v.player] > 0 ? "+" : ""}${v.returns[v.player]}`));
    root.append(middle);
    if (v.your_turn) root.append(moveChips(h, v, "chip:"));
    return root;
  }

  function dice(v, h) {
    const root = h.el("div", "liars-dice");
    const mine = h.el("div", "row");
    mine.append(h.el("span", "label", "Your dice"));
    v.dice.forEach((d) => mine.append(h.el("span", "die", d)));
    root.append(mine);
    const bids = h.el("div", "row");
    bids.append(h.el("span", "label", `Bids (${v.wild}s are wild)`));
    v.bids.forEach((b) => bids.append(h.el("span", "tag", `${b.quantity} \u00d7 ${b.face}`)));
    if (v.liar_called) bids.append(h.el("span", "tag wolf", "liar!"));
    root.append(bids);
    if (v.your_turn) root.append(moveChips(h, v, "bid:", "bid-grid"));
    return root;
  }

  arenaTable.register((v, h) => (v.game === "liars_dice" ? dice(v, h) : poker(v, h)));
})();
