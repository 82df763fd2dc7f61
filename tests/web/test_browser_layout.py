"""Pages people read, in a real Chromium (Debian's /usr/bin/chromium) at a desktop and a phone width.

Against a real uvicorn server over a small site (the example files, a few catalog devices and one
multi-device system): no page is wider than its window, every chart series draws a visible line, and
no internal name, repr or command-line flag reaches the rendered text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import get_model
from servebound.web.app.server import create_app
from tests.web.conftest import live_server, site_lists
from tests.web.test_browser import CHROMIUM
from tests.web.test_browser import browser as browser  # the fixture, re-exported

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent"),
]
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

SYSTEM = "8x-nvidia-h100-sxm"
#: Catalog models with a layer shape (the system page's layouts) and imported facts (the model page).
CATALOG_MODELS = ("qwen3-30b-a3b", "llama-3.1-70b")
PAGES = {
    "pair": "/pair/dgx-spark-example/laguna-s-2.1-nvfp4-example",
    "pair-nofit": "/pair/nvidia-rtx-4090/laguna-s-2.1-nvfp4-example",
    "hardware": "/hardware/nvidia-h100-sxm",
    "system": f"/hardware/{SYSTEM}",
    "models": "/models",
    "models-fits": "/models?fits=nvidia-h100-sxm",
    "model": "/models/qwen3.6-35b-a3b-example",
    "catalog-model": "/models/qwen3-30b-a3b",
    "catalog-pair": "/pair/nvidia-h100-sxm/llama-3.1-70b",
    "validation": "/validation",
    "economics": "/economics",
    "derivation": "/derivation",
}
WIDTHS = (1400, 400)

#: Text that is an internal name, a Python repr or a command-line instruction, never words for people.
INTERNAL = (
    "floor_fit",
    "no_floor",
    "no_session_fit",
    "no_resident_fit",
    "notes ()",
    "multimodal False",
    "': ",
    "e+0",
    "e+1",
    "--alloc-context",
    "--overhead-gb",
    " 1 sessions",
    "= 1 sessions",
    "a 8,",
    "wait: none",
)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    hardware, models = site_lists()
    hardware.append(get_hardware(SYSTEM))
    models += [get_model(ref) for ref in CATALOG_MODELS]
    with live_server(create_app(hardware=hardware, models=models)) as url:
        yield url


MEASURE = """() => {
  const W = document.documentElement.clientWidth;
  const blank = [];
  for (const s of document.querySelectorAll('svg .series')) {
    const cs = getComputedStyle(s);
    if (cs.stroke === 'none' || parseFloat(cs.strokeWidth) <= 0 || parseFloat(cs.strokeOpacity) === 0
        || cs.visibility === 'hidden') blank.push(s.getAttribute('class'));
  }
  return {window: W, page: document.documentElement.scrollWidth, blank: blank,
          series: document.querySelectorAll('svg .series').length, text: document.body.innerText};
}"""


@pytest.mark.parametrize("width", WIDTHS)
def test_pages_fit_their_window_and_draw_every_series(browser: Any, server: str, width: int) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    drawn = 0
    for name, path in PAGES.items():
        response = page.goto(server + path)
        assert response is not None and response.status == 200, (name, path)
        got = page.evaluate(MEASURE)
        assert got["page"] <= got["window"], f"{name} is {got['page']} px wide in a {width} px window"
        assert not got["blank"], f"{name}: series without a visible stroke: {got['blank']}"
        drawn += got["series"]
        shown = [s for s in INTERNAL if s in got["text"]]
        assert not shown, f"{name} shows internal text {shown}"
    assert drawn > 20  # the pages did draw charts (pair, system layouts, economics)
    assert not errors, errors
    page.close()


def test_system_page_draws_its_layout_charts(browser: Any, server: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(server + PAGES["system"])
    for chart in ("#layout-memory", "#layout-step"):
        lines = page.locator(f"{chart} polyline.series")
        assert lines.count() >= 2, chart
        for i in range(lines.count()):
            stroke = lines.nth(i).evaluate("n => getComputedStyle(n).stroke")
            assert stroke not in ("none", "rgba(0, 0, 0, 0)"), (chart, i)
    page.close()


#: The scroll boxes of a page whose table is wider than the box (each: its table's class and the overflow).
SCROLLED = """() => [...document.querySelectorAll('.scroll')]
  .filter(d => d.scrollWidth > d.clientWidth + 1)
  .map(d => [d.querySelector('table') ? d.querySelector('table').className : '', d.scrollWidth - d.clientWidth])"""


def test_desktop_tables_fit_their_boxes(browser: Any, server: str) -> None:
    """At 1400 px a system's layouts table, a hardware page's model table (with its cost column) and a
    model page's class tables show every column without scrolling inside their boxes."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    for name in ("system", "hardware", "catalog-model"):
        page.goto(server + PAGES[name])
        assert page.locator("table").count() >= 2, name
        assert page.evaluate(SCROLLED) == [], name
    page.close()


def test_no_chart_where_nothing_fits_and_log_axes_have_labels(browser: Any, server: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(server + PAGES["pair-nofit"])
    assert page.locator("#fig-aggregate, #fig-per-session, #fig-prefill-rate").count() == 0
    assert "nothing fits in memory at this workload" in page.inner_text("main")
    page.goto(server + PAGES["pair"])
    for chart in ("#fig-aggregate", "#fig-per-session", "#fig-prefill-rate"):
        ticks = page.locator(f"{chart} text.tick").all_text_contents()
        assert len(ticks) >= 6, (chart, ticks)  # both axes labelled, several ticks each
    # the batch axis: whole batches only (no 2.5 or 7.5)
    batch = page.eval_on_selector_all(
        "#fig-aggregate text.tick[text-anchor=middle]", "nodes => nodes.map(n => n.textContent)"
    )
    assert len(batch) >= 3 and all("." not in t for t in batch), batch
    page.goto(server + PAGES["system"])
    step = page.locator("#layout-step text.tick").all_text_contents()
    assert len(step) >= 6, step
    page.close()


def test_tables_sort_and_filter_with_script_and_stay_complete_without(browser: Any, server: str) -> None:
    nojs = browser.new_context(java_script_enabled=False)
    plain = nojs.new_page()
    plain.goto(server + "/models")
    served_rows = plain.locator("table.sortable tbody tr").count()
    assert served_rows >= 5 and plain.locator("input.table-filter").count() == 0
    nojs.close()
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(server + "/models")
    assert page.locator("table.sortable tbody tr").count() == served_rows
    weights = "table.sortable thead th:nth-child(5)"
    page.click(weights)
    cells = page.locator("table.sortable tbody td:nth-child(5)").all_text_contents()
    gb = [float(c.split()[0].replace(",", "")) for c in cells]
    assert gb == sorted(gb) and page.get_attribute(weights, "aria-sort") == "ascending"
    page.click(weights)
    cells = page.locator("table.sortable tbody td:nth-child(5)").all_text_contents()
    assert [float(c.split()[0].replace(",", "")) for c in cells] == sorted(gb, reverse=True)
    page.fill("input.table-filter", "laguna")
    visible = page.locator("table.sortable tbody tr:not([hidden])")
    assert 1 <= visible.count() < served_rows
    assert all("laguna" in t.lower() for t in visible.all_text_contents())
    page.close()
