"""A real Chromium reads the expected band where the ceilings are: beside a pair page's cards and in the
hardware and model pages' ranking tables, each the same record /api/decode and /api/rank give, and the
pair page's band moves with its controls (the answer region comes back from the server on each move,
and equals a fresh load of the URL the page then shows). Screenshots at 1400 and 400 px go to
SCREENSHOT_DIR / "band" for a person to look at."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import get_model
from servebound.views.report import fmt_rate
from servebound.web.app.server import create_app
from tests.web.conftest import live_server
from tests.web.test_browser import SCREENSHOT_DIR
from tests.web.test_browser import browser as browser  # the fixture, re-exported
from tests.web.test_browser_answer import settle

pytestmark = [pytest.mark.browser]

HARDWARE = ("nvidia-rtx-4090", "apple-m3-max-128gb", "nvidia-h100-sxm")
MODELS = ("llama-2-7b-q4_0", "llama-2-7b-q8_0", "qwen3-8b")
PAIR = ("nvidia-rtx-4090", "llama-2-7b-q4_0")


@pytest.fixture(scope="module")
def catalog_server() -> Iterator[str]:
    """A served site over a few catalog rows and profiles that have bands (llama.cpp's runs on consumer
    GPUs and on Apple silicon) and one that has none (vLLM on a consumer GPU)."""
    app = create_app(hardware=[get_hardware(h) for h in HARDWARE], models=[get_model(m) for m in MODELS])
    with live_server(app) as url:
        yield url


def span(band: dict[str, Any]) -> str:
    """p10-p90 as the pages write it (``views.band_view.band_range``)."""
    return f"{fmt_rate(band['p10_tok_s'], '')}-{fmt_rate(band['p90_tok_s'], '')}"


def band_text(page: Any) -> str:
    return " ".join((page.text_content("#expected-band") or "").split())


def api_decode(server: str, hw: str, model: str, query: str = "") -> dict[str, Any]:
    url = f"{server}/api/decode?hardware={hw}&model={model}" + (f"&{query}" if query else "")
    answer: dict[str, Any] = httpx.get(url, timeout=30).json()
    return answer


def test_the_band_is_beside_the_pair_pages_cards(browser: Any, catalog_server: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{catalog_server}/pair/{PAIR[0]}/{PAIR[1]}")
    assert page.locator("#expected-band").is_visible()
    # beside the cards: the section right after the four answers, inside the re-rendered region
    assert page.evaluate("document.querySelector('section.answers').nextElementSibling.id") == "expected-band"
    assert page.locator('[data-region="top"] #expected-band').count() == 1
    api = api_decode(catalog_server, *PAIR)
    band, basis = api["expected"], api["expected_from"]
    text = band_text(page)
    label = f"an estimate from {band['runs']} published runs of llama.cpp on consumer GPUs"
    assert f"expected with llama.cpp: {span(band)} tok/s, {label}" in text, text
    assert band["label"] == label and basis["engine_assumed"] is True
    assert "llama.cpp assumed: the engine usually run on consumer GPUs" in text
    assert f"Across the b* = {api['batch_star']} sessions: {span(api['expected_aggregate'])} tok/s" in text
    page.close()


def _move_batch(page: Any) -> None:
    page.uncheck("#maximize")
    page.locator("#batch").fill("4")


def _move_context(page: Any) -> None:
    page.locator('input[name="read_context"]').fill("1000")


def _move_engine(page: Any) -> None:
    page.select_option('select[name="engine"]', "vllm")


def test_the_band_moves_with_the_controls(browser: Any, catalog_server: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    fresh = browser.new_page(viewport={"width": 1400, "height": 1400})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{catalog_server}/pair/{PAIR[0]}/{PAIR[1]}")
    page.click("#advanced summary")
    seen = [band_text(page)]
    for move in (_move_context, _move_batch, _move_engine):
        page.evaluate("document.body.dataset.computed = 'moving'")
        move(page)
        settle(page)
        assert page.evaluate("document.body.dataset.computed") == "api"  # answered by the server
        now = band_text(page)
        assert now != seen[-1], (move.__name__, now)  # the band moved with the control
        fresh.goto(page.url)
        assert band_text(fresh) == now, (move.__name__, page.url)  # what a fresh load of the URL shows
        query = "&".join(  # the page's workload as /api/decode takes it (the prompt is prefill's)
            kv for kv in page.url.split("?", 1)[1].split("&") if not kv.startswith("prompt=")
        )
        api = api_decode(catalog_server, *PAIR, query)
        assert "expected" in api, (query, api)
        if move is _move_engine:  # vLLM has no runs on consumer GPUs: said, and no band given
            assert api["expected"] is None and api["expected_from"]["runs"] < 5
            assert "expected with vLLM: no band, no published runs of vLLM on consumer GPUs" in now
        else:
            assert f"expected with llama.cpp: {span(api['expected'])} tok/s" in now, (query, now)
        if move is _move_batch:
            assert "per session at batch 4" in now and api["expected"]["scope"] == "per session at batch 4"
        seen.append(now)
    assert not errors, errors
    page.close()
    fresh.close()


def table_cells(page: Any) -> list[tuple[str, str, str]]:
    """Each ranking row's pair link, its "Expected tok/s" cell and that cell's title."""
    headers = page.eval_on_selector_all("table.classes thead th", "ns => ns.map(n => n.textContent)")
    assert "Expected tok/s" in headers
    column = headers.index("Expected tok/s")
    cells: list[tuple[str, str, str]] = page.eval_on_selector_all(
        "table.classes tbody tr",
        f"rows => rows.map(r => [r.querySelector('a').getAttribute('href'), r.cells[{column}].textContent,"
        f" r.cells[{column}].title])",
    )
    return cells


def test_the_band_is_in_the_hardware_and_model_tables(browser: Any, catalog_server: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    banded = 0
    for url in (f"/hardware/{PAIR[0]}", f"/models/{PAIR[1]}"):
        page.goto(catalog_server + url)
        cells = table_cells(page)
        assert cells, url
        for href, cell, title in cells:
            _, _, hw, model = href.split("?")[0].split("/")
            api = api_decode(catalog_server, hw, model)  # the table's row is the pair's default answer
            band = api["expected"]
            assert cell == ("-" if band is None else span(band)), (url, href)
            if band is not None:
                banded += 1
                assert title.startswith(f"expected with {band['engine']}: {cell} tok/s, an estimate from")
    assert banded >= 3
    page.close()


def test_screenshots_of_the_band(browser: Any, catalog_server: str) -> None:
    out = SCREENSHOT_DIR / "band"
    out.mkdir(parents=True, exist_ok=True)
    for width in (1400, 400):
        page = browser.new_page(viewport={"width": width, "height": 1000})
        page.goto(f"{catalog_server}/pair/{PAIR[0]}/{PAIR[1]}")
        page.evaluate("document.querySelector('section.answers').scrollIntoView()")
        page.screenshot(path=str(out / f"pair-{width}.png"), full_page=False)
        page.screenshot(path=str(out / f"pair-full-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.goto(f"{catalog_server}/hardware/{PAIR[0]}")
        page.evaluate("document.getElementById('expected-column').scrollIntoView()")
        page.screenshot(path=str(out / f"hardware-{width}.png"), full_page=False)
        # the column sits at the table's right end: scroll the table there, as a reader on a phone would
        page.eval_on_selector("div.scroll:has(table.classes)", "e => { e.scrollLeft = e.scrollWidth; }")
        page.screenshot(path=str(out / f"hardware-right-{width}.png"), full_page=False)
        page.screenshot(path=str(out / f"hardware-full-{width}.png"), full_page=True)
        page.close()
