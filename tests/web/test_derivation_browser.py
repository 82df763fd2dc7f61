"""The side-by-side boards in motion, in a real Chromium (Playwright, Debian's /usr/bin/chromium) against a
real uvicorn server: through an iteration each board's charged cells light one by one, the board resets
when the iteration completes and its token counter adds the batch, the left board (weights only) racing
ahead of the right; the server's SVG stays exactly as drawn underneath; a redraw restarts the motion
with the new numbers; under prefers-reduced-motion nothing moves (and motion that was running stops)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.test_browser import CHROMIUM, browser, server  # noqa: F401 (the module's fixtures)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)"
    ),
]
from servebound.web.pages import derivation_toy as dv  # noqa: E402
from tests.web.figure_compare import same_figure  # noqa: E402

STAGE = "document.querySelector('.boards-stage')"
STATE = f"(() => {{ const s = {STAGE}; return s ? Object.assign({{}}, s.dataset) : null; }})()"
BOARDS = "() => document.getElementById('fig-boards').outerHTML"


def _lit_cells(page: Any) -> int:
    n: int = page.evaluate(
        "() => Array.from(document.querySelectorAll('#fig-boards rect.cell.lit')).filter(r => r.parentNode.tagName !== 'g').length"
    )
    return n


def test_boards_animate_an_iteration_at_a_time(browser: Any, server: str) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    nojs = browser.new_context(java_script_enabled=False).new_page()
    nojs.goto(server + "/derivation")
    served = nojs.evaluate(BOARDS)
    page.goto(server + "/derivation")
    page.wait_for_function("document.body.dataset.toyReady === '1'")
    page.wait_for_function(f"{STAGE} && {STAGE}.dataset.anim === 'running'")
    b = dv.boards(dv.Toy())
    # one cover per charged cell, above the server's board
    assert page.evaluate("document.querySelectorAll('.boards-overlay rect').length") == _lit_cells(page)
    # cells light one by one through an iteration ...
    page.wait_for_function(f"+{STAGE}.dataset.leftLit > 0")
    first = page.evaluate(STATE)
    page.wait_for_function(
        f"{STAGE}.dataset.leftLit !== '{first['leftLit']}' || {STAGE}.dataset.leftIterations !== '{first['leftIterations']}'"
    )
    # ... the board resets when the iteration completes, and the counter adds the batch
    page.wait_for_function(f"+{STAGE}.dataset.leftIterations >= 3")
    state = page.evaluate(STATE)
    left_tokens = page.text_content('.boards-overlay [data-k="left_tokens"]')
    assert left_tokens is not None and left_tokens.endswith(" tokens")
    shown = int(left_tokens.split()[0].replace(",", ""))
    assert shown % b.batch == 0 and shown >= 3 * b.batch
    # the left board (weights only) races ahead: the right iteration moves 111.6 GB against 18 GB
    assert b.right_bytes > 6 * b.left_bytes
    assert int(state["leftIterations"]) > int(state["rightIterations"])
    page.wait_for_function(f"+{STAGE}.dataset.rightIterations >= 1")
    right_tokens = page.text_content('.boards-overlay [data-k="right_tokens"]')
    assert right_tokens is not None and int(right_tokens.split()[0].replace(",", "")) % b.batch == 0
    clock = page.text_content(".boards-clock")
    assert clock is not None and clock.startswith("Slow motion: one second here is ")
    # the server's SVG is untouched while it moves
    same_figure(page.evaluate(BOARDS), served)
    # a redraw restarts the motion with the new board
    page.locator('input[name="reserved"]').fill("20000")
    page.wait_for_function("(document.body.dataset.toyDrawn || '').includes('reserved=20000')")
    page.wait_for_function(f"{STAGE}.dataset.anim === 'running'")
    assert page.evaluate("document.querySelectorAll('.boards-overlay rect').length") == _lit_cells(page)
    assert page.evaluate("document.querySelectorAll('.boards-overlay').length") == 1
    # pausing holds it; reduced motion, switched on while it runs, stops it and removes the overlay
    page.click(".boards-pause")
    assert page.evaluate(STATE)["anim"] == "paused"
    page.click(".boards-pause")
    page.emulate_media(reduced_motion="reduce")
    page.wait_for_function(f"{STAGE}.dataset.anim === 'off'")
    assert page.evaluate("document.querySelectorAll('.boards-overlay').length") == 0
    assert page.is_hidden(".boards-pause")
    assert not errors, errors
    page.close()


def test_reduced_motion_keeps_the_boards_still(browser: Any, server: str) -> None:  # noqa: F811
    ctx = browser.new_context(reduced_motion="reduce", viewport={"width": 400, "height": 900})
    page = ctx.new_page()
    page.goto(server + "/derivation")
    page.wait_for_function("document.body.dataset.toyReady === '1'")
    assert page.evaluate(STATE)["anim"] == "off"
    assert page.evaluate("document.querySelectorAll('.boards-overlay').length") == 0
    clock = page.text_content(".boards-clock")
    assert clock is not None and clock.startswith("Reduced motion")
    nojs = browser.new_context(java_script_enabled=False).new_page()
    nojs.goto(server + "/derivation")
    same_figure(page.evaluate(BOARDS), nojs.evaluate(BOARDS))
    # and motion starts once the reader allows it
    page.emulate_media(reduced_motion="no-preference")
    page.wait_for_function(f"{STAGE}.dataset.anim === 'running'")
    ctx.close()
