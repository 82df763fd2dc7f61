"""Charts and class tables in a real Chromium (Debian's /usr/bin/chromium) at 1,400 and 400 px, over the
small site test_browser_layout serves: no page wider than its window, every series stroked, nothing but
lines inside a chart's plot (legends and mark labels outside it, by bounding boxes, and apart from each
other), chart text readable at phone width, no line chart for a pair that does not fit, the model page's
tables by class with their best row named, and the economics page's five figures with the lecture named.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.web.test_browser import CHROMIUM
from tests.web.test_browser_layout import PAGES, WIDTHS, browser, server

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent"),
]
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

__all__ = ["browser", "server"]  # the fixtures, shared with test_browser_layout

CHART_PAGES = {
    **{k: PAGES[k] for k in ("pair", "pair-nofit", "system", "catalog-pair", "economics", "derivation")},
    "model": "/models/qwen3-30b-a3b",
    "hardware-index": "/hardware?model=qwen3-30b-a3b",
    "validation": PAGES["validation"],
}
#: The smallest chart text, in CSS pixels as drawn, at either width.
MIN_TEXT_PX = 9.0

#: Per chart with a plot rectangle: the boxes of its legend entries and mark labels that meet the plot
#: or each other or leave the chart, the smallest text as drawn, and series without a stroke.
CHARTS = """() => {
  const box = el => el.getBoundingClientRect();
  const meets = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const out = [];
  for (const svg of document.querySelectorAll('svg.chart, svg.strip')) {
    const plotEl = svg.querySelector('rect.plot');
    const frame = box(svg);
    const scale = frame.width / svg.viewBox.baseVal.width;
    const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim());
    const smallest = Math.min(...texts.map(t => parseFloat(getComputedStyle(t).fontSize) * scale));
    const blank = [...svg.querySelectorAll('.series')].filter(s => {
      const cs = getComputedStyle(s);
      return cs.stroke === 'none' || parseFloat(cs.strokeWidth) <= 0 || cs.visibility === 'hidden';
    }).map(s => s.getAttribute('class'));
    const labels = [...svg.querySelectorAll('g.legend, g.mark text')].map(el => [el.textContent, box(el)]);
    const inside = [], clash = [], outside = [];
    if (plotEl) {
      const plot = box(plotEl);
      for (const [name, b] of labels) if (meets(b, plot)) inside.push(name);
    }
    for (let i = 0; i < labels.length; i++) {
      const b = labels[i][1];
      if (b.left < frame.left - 0.5 || b.right > frame.right + 0.5 || b.bottom > frame.bottom + 0.5) outside.push(labels[i][0]);
      for (let j = i + 1; j < labels.length; j++) if (meets(b, labels[j][1])) clash.push(labels[i][0] + ' / ' + labels[j][0]);
    }
    out.push({id: svg.id, plot: !!plotEl, labels: labels.length, inside, clash, outside, smallest, blank,
              series: svg.querySelectorAll('polyline.series').length});
  }
  return {window: document.documentElement.clientWidth, page: document.documentElement.scrollWidth, charts: out};
}"""


@pytest.mark.parametrize("width", WIDTHS)
def test_chart_labels_stay_outside_the_data_and_readable(browser: Any, server: str, width: int) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    plotted = 0
    for name, path in CHART_PAGES.items():
        response = page.goto(server + path)
        assert response is not None and response.status == 200, (name, path)
        got = page.evaluate(CHARTS)
        assert got["page"] <= got["window"], f"{name} is {got['page']} px wide in a {width} px window"
        for chart in got["charts"]:
            where = f"{name} #{chart['id']} at {width} px"
            assert not chart["blank"], f"{where}: series without a stroke {chart['blank']}"
            assert not chart["inside"], f"{where}: labels over the plot {chart['inside']}"
            assert not chart["clash"], f"{where}: labels over each other {chart['clash']}"
            assert not chart["outside"], f"{where}: labels cut off {chart['outside']}"
            assert chart["smallest"] >= MIN_TEXT_PX, f"{where}: text {chart['smallest']:.1f} px"
            plotted += chart["plot"]
    assert plotted >= 15  # the pair, system, economics and derivation charts were measured
    page.close()


def test_no_line_chart_where_the_weights_do_not_fit(browser: Any, server: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(server + PAGES["pair-nofit"])
    assert page.locator("svg.chart rect.plot").count() == 0
    assert page.locator("svg.chart polyline.series").count() == 0
    assert "nothing fits" in page.inner_text("main")
    page.close()


def test_model_page_tables_by_class_with_the_best_row_named(browser: Any, server: str) -> None:
    page = browser.new_page(viewport={"width": 400, "height": 900})
    page.goto(server + CHART_PAGES["model"])
    best = page.inner_text("#best")
    for heading in ("Consumer GPUs", "Apple silicon", "Datacenter, one device", "Multi-device systems"):
        assert heading in best
        assert page.locator(f"h3:text-is('{heading}')").count() == 1
    first = page.locator("#best li", has_text="Datacenter, one device").locator("a").first
    assert first.get_attribute("href").startswith("/pair/")  # the class's best row, linked
    table = page.locator("#class-systems + p + div.scroll table")
    headers = table.locator("thead th").all_text_contents()
    assert "Aggregate per device" in headers and "USD per million output tokens" in headers
    assert table.locator("tbody tr").count() >= 1
    page.close()


def test_economics_names_the_lecture_and_draws_its_figures(browser: Any, server: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(server + PAGES["economics"])
    credit = page.locator("p.credit a").first
    assert credit.get_attribute("href") == "https://www.dwarkesh.com/p/reiner-pope"
    assert "The math behind how LLMs are trained and served" in page.inner_text("p.credit")
    for fig in ("econ-step", "econ-cost-batch", "econ-trains", "econ-context", "econ-tiers"):
        assert page.locator(f"svg#{fig}").count() == 1, fig
    # numbers in words people read: no exponent notation outside the example API queries (code)
    text = page.evaluate(
        "() => { const m = document.querySelector('main').cloneNode(true);"
        " m.querySelectorAll('code').forEach(c => c.remove()); return m.innerText; }"
    )
    assert not re.search(r"\de[+-]?\d", text), re.findall(r".{30}\de[+-]?\d.{10}", text)
    page.close()
