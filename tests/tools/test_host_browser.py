"""The web client in headless Chromium (Playwright): join by link, play a Kuhn hand by clicking,
check the outcome shown against the run store; a screenshot is kept in test-artifacts/.

Needs Debian's Chromium (``apt-get install -y chromium chromium-driver``) and the ``playwright``
Python package (its own browser download is never used: ``playwright install`` is not needed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.evaluation.store import RunStore
from support import REPO
from support.host import HostProcess

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def shown_outcome(returns: list[float], p: int) -> str:
    """What the page must say for seat ``p`` given the stored returns."""
    mine, best, worst = returns[p], max(returns), min(returns)
    word = "lost" if mine < best else "won" if worst < best else "drew"
    return f"You {word} ({'+' if mine > 0 else ''}{mine:g})."


@pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="headless browser test needs /usr/bin/chromium (apt-get install -y chromium chromium-driver)",
)
def test_browser_plays_a_kuhn_hand_by_clicking(tmp_path, subprocess_env):
    from playwright.sync_api import sync_playwright

    run = tmp_path / "run"
    host = HostProcess(
        ["--game", "kuhn_poker", "--seats", "human", "cfr:algo=cfr+,iterations=50", "--seed", "7", "--out", str(run)],
        2,
        subprocess_env,
    )
    shot = REPO / "test-artifacts" / "host_browser_kuhn.png"
    shot.parent.mkdir(exist_ok=True)
    clicked, errors = [], []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            try:
                page = browser.new_page(viewport={"width": 1200, "height": 800})
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                page.goto(f"{host.url}/#token={host.tokens[0]}")
                page.wait_for_selector("#game:has-text('you are player 0')", timeout=30_000)
                assert page.is_hidden("#speech")  # Kuhn has no text decisions
                while True:
                    page.wait_for_selector("#buttons button:enabled, #result:not([hidden])", timeout=30_000)
                    if page.is_visible("#result"):
                        break
                    assert "You hold the" in page.text_content("#view")
                    labels = page.locator("#buttons button").all_inner_texts()
                    want = "bet" if "bet" in labels else "call" if "call" in labels else labels[0]
                    page.get_by_role("button", name=want, exact=True).click()
                    clicked.append(want)
                    page.wait_for_selector(f"#lines li:has-text('You: {want}')", timeout=30_000)
                outcome = page.inner_text("#outcome")
                page.wait_for_selector("#status:has-text('Match over')", timeout=30_000)
                log = page.locator("#lines li").all_inner_texts()
                page.screenshot(path=str(shot), full_page=True)
            finally:
                browser.close()
        assert host.wait() == 0, host.stderr
    finally:
        host.stop()
    with RunStore.open_existing(run) as store:
        (record,) = store.matches()
    assert outcome == shown_outcome(record.returns, 0)
    assert clicked and clicked[0] == "bet" and f"You: {clicked[0]}" in log
    assert record.transcript and (run / record.transcript).read_text().startswith("player 0 (human): bet")
    assert not errors, errors
    assert shot.stat().st_size > 10_000


@pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="headless browser test needs /usr/bin/chromium (apt-get install -y chromium chromium-driver)",
)
def test_browser_plays_werewolf_with_speech_beside_agents_and_another_person(tmp_path, subprocess_env):
    import threading

    from playwright.sync_api import sync_playwright

    from support.host import play_seat

    run = tmp_path / "ww"
    seats = ["human:name=web"] + ["werewolf_scripted"] * 5 + ["human:name=net"]
    host = HostProcess(
        ["--game", "werewolf(talk=text)", "--seats", *seats, "--seed", "21", "--out", str(run)], 7, subprocess_env
    )
    other = threading.Thread(
        target=play_seat,
        args=(
            host.client(6),
            lambda ev: (
                {"text": "I defend player_6."} if ev["decision"] == "text" else {"action": ev["actions"][0]["action"]}
            ),
        ),
        daemon=True,
    )
    other.start()
    said = 0
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            try:
                page = browser.new_page(viewport={"width": 1200, "height": 900})
                page.goto(f"{host.url}/#token={host.tokens[0]}")
                page.wait_for_selector("#game:has-text('werewolf')", timeout=30_000)
                assert page.is_visible("#speech")  # talk=text: the speech box is offered
                ready = "#buttons button:enabled, #say-button:enabled, #result:not([hidden])"
                while True:
                    page.wait_for_selector(ready, timeout=60_000)
                    if page.is_visible("#result"):
                        break
                    if page.is_enabled("#say-button"):
                        page.fill("#say", f"I accuse player_{1 + said % 5}.")
                        page.click("#say-button")
                        said += 1
                    else:
                        page.locator("#buttons button").first.click()  # sending disables the controls
                view = page.text_content("#view")
                log = page.locator("#lines li").all_inner_texts()
                outcome = page.inner_text("#outcome")
                page.screenshot(path=str(REPO / "test-artifacts" / "host_browser_werewolf.png"), full_page=True)
            finally:
                browser.close()
        other.join(60)
        assert host.wait() == 0, host.stderr
    finally:
        host.stop()
    with RunStore.open_existing(run) as store:
        (record,) = store.matches()
    assert f"You are player_0, a {record.info['roles'][0]}." in view or "Game over. Roles:" in view
    assert outcome == shown_outcome(record.returns, 0)  # a winning team's members each "won"
    assert said and any(line.startswith("You: I accuse player_") for line in log)
    assert "player 0 (web): I accuse player_1." in (run / record.transcript).read_text()
