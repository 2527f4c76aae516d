"""The web client's table in headless Chromium (Playwright): games drawn from their structured
views by the game's renderer and played by clicking what a move acts on — cards and bank notes in
Monopoly Deal against the heuristic, chips in Leduc against CFR (one move by keyboard only), seats
in a Werewolf day — never the button list. The outcomes shown are checked against the run store,
the visible elements (cards, sets, chips, seats) are counted, the page is checked not to overflow
a phone-width screen, and screenshots are kept in test-artifacts/.

Needs Debian's Chromium (``apt-get install -y chromium``) and the ``playwright`` package.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.evaluation.store import RunStore
from support import REPO
from support.host import HostProcess

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
READY = "#table-view .act:not(.sent), #result:not([hidden])"
ARTIFACTS = REPO / "test-artifacts"

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="headless browser test needs /usr/bin/chromium (apt-get install -y chromium)"
)


def shown_outcome(returns: list[float], p: int) -> str:
    mine, best, worst = returns[p], max(returns), min(returns)
    word = "lost" if mine < best else "won" if worst < best else "drew"
    return f"You {word} ({'+' if mine > 0 else ''}{mine:g})."


def actionable(page) -> list[tuple[str, list[str]]]:
    """(ref, labels of the moves on it) of every clickable thing on the table."""
    return page.eval_on_selector_all(
        "#table-view .act:not(.sent)",
        "els => els.map(e => [e.dataset.ref, e.getAttribute('aria-label').split(': ').slice(-1)[0].split(' / ')])",
    )


def click_move(page, ref: str, label: str) -> None:
    """Click the element with ``ref``; if it offers several moves, pick ``label`` from the menu."""
    page.locator(f'#table-view [data-ref="{ref}"].act').first.click()
    if page.is_visible("#choices"):
        page.locator("#choice-list button", has_text=label).first.click()


def best(options: list[tuple[str, list[str]]], order: list[str]) -> tuple[str, str]:
    """The (ref, label) whose label comes first in ``order`` (prefixes), ties by page order."""
    ranked = [
        (next((i for i, p in enumerate(order) if lbl.startswith(p)), len(order)), k, ref, lbl)
        for k, (ref, labels) in enumerate(options)
        for lbl in labels
    ]
    _, _, ref, label = min(ranked)
    return ref, label


def open_page(pw, host, seat: int, width: int, height: int, errors: list[str]):
    ARTIFACTS.mkdir(exist_ok=True)
    browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
    page = browser.new_page(viewport={"width": width, "height": height})
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{host.url}/#token={host.tokens[seat]}")
    return browser, page


def stored(run: Path):
    with RunStore.open_existing(run) as store:
        (record,) = store.matches()
    return record


def test_monopoly_deal_against_the_heuristic_by_clicking_cards_on_a_phone(tmp_path, subprocess_env):
    from playwright.sync_api import sync_playwright

    run = tmp_path / "md"
    args = ["--game", "monopoly_deal(max_turns=60)", "--seats", "human", "monopoly_deal_heuristic"]
    host = HostProcess([*args, "--seed", "5", "--out", str(run), "--move-time", "120"], 2, subprocess_env)
    order = ["play ", "charge ", "build ", "bank ", "pay ", "give ", "take ", "accept", "discard ", "end turn"]
    clicked: list[str] = []
    errors: list[str] = []
    seen = {"cards": 0, "sets": 0, "bank": 0, "overflow": 0}
    try:
        with sync_playwright() as pw:
            browser, page = open_page(pw, host, 0, 390, 844, errors)
            try:
                page.wait_for_selector("#game:has-text('you are player 0')", timeout=30_000)
                while True:
                    page.wait_for_selector(READY, timeout=60_000)
                    if page.is_visible("#result"):
                        break
                    assert page.locator("#table-view").is_visible() and not page.locator("#textbox").get_attribute(
                        "open"
                    )
                    seen["cards"] = max(seen["cards"], page.locator("#table-view .hand .card:visible").count())
                    seen["sets"] = max(seen["sets"], page.locator("#table-view .set:visible").count())
                    seen["bank"] = max(seen["bank"], page.locator("#table-view .bank .card:visible").count())
                    seen["overflow"] = max(seen["overflow"], page.evaluate("document.documentElement.scrollWidth"))
                    if len(clicked) == 12:
                        page.screenshot(path=str(ARTIFACTS / "host_table_monopoly_deal_phone.png"), full_page=True)
                        box = page.locator("#table-view .hand .card").last.bounding_box()
                        assert box and box["width"] > 30 and box["x"] + box["width"] <= 390  # a card, on screen
                    ref, label = best(actionable(page), order)
                    click_move(page, ref, label)
                    clicked.append(ref)
                outcome = page.inner_text("#outcome")
                log = page.locator("#lines li").all_inner_texts()
                page.set_viewport_size({"width": 1200, "height": 900})
                page.screenshot(path=str(ARTIFACTS / "host_table_monopoly_deal.png"), full_page=True)
            finally:
                browser.close()
        assert host.wait() == 0, "".join(host.err)
    finally:
        host.stop()
    record = stored(run)
    assert outcome == shown_outcome(record.returns, 0)
    kinds = {r.split(":")[0] for r in clicked}
    assert {"hand", "end"} <= kinds, kinds  # cards played from the hand, turns ended on the table
    assert seen["cards"] >= 3 and seen["sets"] >= 1 and seen["bank"] >= 1, seen
    assert seen["overflow"] <= 390, seen  # nothing wider than a phone
    assert any(line.startswith("You draw ") for line in log)  # the log is the game's events ...
    assert not [line for line in log if line.startswith("Monopoly Deal (")]  # ... not repeated views
    assert not errors, errors
    assert (ARTIFACTS / "host_table_monopoly_deal_phone.png").stat().st_size > 10_000


def test_leduc_against_cfr_by_clicking_chips_and_by_keyboard(tmp_path, subprocess_env):
    from playwright.sync_api import sync_playwright

    run = tmp_path / "leduc"
    host = HostProcess(
        ["--game", "leduc_poker", "--seats", "human", "cfr:iterations=50", "--seed", "11", "--out", str(run)],
        2,
        subprocess_env,
    )
    clicked: list[str] = []
    errors: list[str] = []
    seen = {"pot": 0, "moves": 0, "board": 0, "shot": 0}
    try:
        with sync_playwright() as pw:
            browser, page = open_page(pw, host, 0, 1200, 800, errors)
            try:
                while True:
                    page.wait_for_selector(READY, timeout=60_000)
                    if page.is_visible("#result"):
                        break
                    assert page.locator("#table-view .seat.you .card").count() == 1  # my card, face up
                    assert page.locator("#table-view .seats-row .card.back").count() == 1  # the opponent's, face down
                    seen["pot"] = max(seen["pot"], page.locator("#table-view .pot .chip:visible").count())
                    seen["moves"] = max(seen["moves"], page.locator("#table-view .moves .chip:visible").count())
                    seen["board"] = max(
                        seen["board"], page.locator("#table-view .board .card:not(.back):visible").count()
                    )
                    ref, label = best(actionable(page), ["call", "check", "raise"])
                    if not clicked:  # the first move by keyboard alone: focus the chip, Enter
                        page.locator(f'[data-ref="{ref}"]').focus()
                        page.keyboard.press("Enter")
                        page.wait_for_selector(f"#lines li:has-text('You: {label}')", timeout=30_000)
                    else:
                        click_move(page, ref, label)
                    clicked.append(ref)
                    if seen["board"] and not seen["shot"]:
                        page.screenshot(path=str(ARTIFACTS / "host_table_leduc.png"), full_page=True)
                        seen["shot"] = 1
                outcome = page.inner_text("#outcome")
                log = page.locator("#lines li").all_inner_texts()
            finally:
                browser.close()
        assert host.wait() == 0, "".join(host.err)
    finally:
        host.stop()
    record = stored(run)
    assert outcome == shown_outcome(record.returns, 0)
    assert len(clicked) >= 2 and all(r.startswith("chip:") for r in clicked)
    assert seen["pot"] >= 2 and seen["moves"] >= 2 and seen["board"] == 1, seen  # chips, the board card
    assert any(line.startswith("round 1: ") for line in log) and any(line.startswith("board: ") for line in log)
    assert not [line for line in log if line.startswith("You are player")]  # events, not repeated views
    assert not errors, errors
    assert (ARTIFACTS / "host_table_leduc.png").stat().st_size > 10_000


def test_a_werewolf_day_by_clicking_seats(tmp_path, subprocess_env):
    from playwright.sync_api import sync_playwright

    run = tmp_path / "ww"
    seats = ["human"] + ["werewolf_scripted"] * 6
    host = HostProcess(
        ["--game", "werewolf(max_days=1)", "--seats", *seats, "--seed", "4", "--out", str(run)], 7, subprocess_env
    )
    clicked: list[tuple[str, str]] = []
    errors: list[str] = []
    try:
        with sync_playwright() as pw:
            browser, page = open_page(pw, host, 0, 1000, 900, errors)
            try:
                while True:
                    page.wait_for_selector(READY, timeout=60_000)
                    if page.is_visible("#result"):
                        break
                    assert page.locator("#table-view .seat:visible").count() == 7
                    ref, label = best(actionable(page), ["vote ", "accuse ", "kill ", "inspect ", "protect "])
                    click_move(page, ref, label)
                    clicked.append((ref, label))
                    if len(clicked) == 1:
                        page.screenshot(path=str(ARTIFACTS / "host_table_werewolf.png"), full_page=True)
                dead = page.locator("#table-view .seat.dead:visible").count()
                roles = page.locator("#table-view .seat .tag.wolf:visible").count()
                outcome = page.inner_text("#outcome")
            finally:
                browser.close()
        assert host.wait() == 0, "".join(host.err)
    finally:
        host.stop()
    record = stored(run)
    assert outcome == shown_outcome(record.returns, 0)
    assert all(ref.startswith("seat:") for ref, _ in clicked)
    assert any(label.startswith("vote ") for _, label in clicked), clicked  # a day's vote, cast on a seat
    assert any(label.startswith("accuse ") for _, label in clicked), clicked  # and its discussion
    assert dead >= 1 and roles >= 1  # the night's victim; every role shown at the end
    assert not errors, errors
    assert (ARTIFACTS / "host_table_werewolf.png").stat().st_size > 10_000
