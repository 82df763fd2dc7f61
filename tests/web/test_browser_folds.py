"""A computed pair page's folded sections in a real Chromium: opening one fetches its fragment, the
charts it brings answer the pointer and follow the sliders, and the page reads well at 1400 and 400 px."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from tests.web.test_browser import CHROMIUM, SCREENSHOT_DIR, browser, numbers, server

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent"),
]
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

__all__ = ["browser", "server"]  # the fixtures, shared with test_browser

PAIR = "/pair/nvidia-h100-sxm/laguna-s-2.1-nvfp4-example?read_context=8000"


def points(text: str, figure: str) -> list[str]:
    """The drawn series of one chart in a page or fragment's HTML."""
    svg = re.search(rf'<svg class="chart" id="{figure}".*?</svg>', text, flags=re.S)
    assert svg is not None, figure
    return re.findall(r'<polyline class="series[^"]*" points="([^"]+)"', svg.group(0))


def drawn(page: Any, figure: str) -> list[str]:
    found: list[str] = page.eval_on_selector_all(
        f"#{figure} polyline.series", "nodes => nodes.map(n => n.getAttribute('points'))"
    )
    return found


@pytest.mark.parametrize("width", [1400, 400])
def test_opening_a_folded_section_draws_the_servers_fragment(browser: Any, server: str, width: int) -> None:
    page = browser.new_page(viewport={"width": width, "height": 1200})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + PAIR)
    assert page.locator("#fig-aggregate").count() == 0 and page.locator("#fig-memory").is_visible()
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / f"pair-folded-{width}.png"), full_page=True)
    charts = httpx.get(server + PAIR + "&section=charts").text
    cost = httpx.get(server + PAIR + "&section=cost").text
    page.click("#fold-charts summary")
    page.wait_for_selector("#fig-aggregate polyline.series")
    for figure in ("fig-context", "fig-aggregate", "fig-per-session", "fig-prefill-rate", "fig-prefill-time"):
        assert drawn(page, figure) == points(charts, figure), figure
    page.click("#fold-cost summary")
    page.wait_for_selector("#fig-step-time polyline.series")
    for figure in ("fig-step-time", "fig-cost-batch", "fig-cost-context"):
        assert drawn(page, figure) == points(cost, figure), figure
    rows = page.locator("#fold-cost table.stats tbody tr").count()
    assert rows == cost.count("<tr><td") > 0
    # the fetched charts answer the pointer like the page's own
    page.locator("#fig-aggregate").scroll_into_view_if_needed()
    box = page.locator("#fig-aggregate").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
    assert "aggregate T(b)" in (page.text_content("#fig-aggregate text.readout") or "")
    page.screenshot(path=str(SCREENSHOT_DIR / f"pair-unfolded-{width}.png"), full_page=True)
    assert not errors, errors
    page.close()


def test_charts_opened_after_the_sliders_moved_are_the_new_workload_s(browser: Any, server: str) -> None:
    page = browser.new_page(viewport={"width": 1100, "height": 1400})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + PAIR)
    before = numbers(page)
    assert page.locator("#advanced").get_attribute("open") is not None  # open on a computed page
    page.locator('input[name="read_context"]').fill("2000")
    page.wait_for_function("document.body.dataset.computed === 'api'")
    assert numbers(page)["single_session_tok_s"] != before["single_session_tok_s"]
    page.click("#fold-charts summary")
    page.wait_for_selector("#fig-per-session polyline.series")
    # the fold came with the answer region for read_context 2000: the server's charts for the form's
    # workload, not the loaded page's 8000
    moved = httpx.get(server + PAIR.replace("8000", "2000") + "&section=charts").text
    loaded = httpx.get(server + PAIR + "&section=charts").text
    assert drawn(page, "fig-aggregate") == points(moved, "fig-aggregate") != points(loaded, "fig-aggregate")
    assert drawn(page, "fig-context") == points(moved, "fig-context")
    assert not errors, errors
    page.close()


def test_a_fragment_that_fails_says_so(browser: Any, server: str) -> None:
    page = browser.new_page()
    page.goto(server + PAIR)
    page.evaluate(
        "document.getElementById('fold-cost').dataset.fragment = '/pair/nvidia-h100-sxm/laguna-s-2.1-nvfp4-example?section=nope'"
    )
    page.click("#fold-cost summary")
    page.wait_for_selector("#fold-cost .fold-body p.note:nth-of-type(2)")
    assert "did not load (400)" in page.text_content("#fold-cost .fold-body") or ""
    assert page.locator("#fold-cost .fold-body a").count() == 1  # the link stays
    page.close()
