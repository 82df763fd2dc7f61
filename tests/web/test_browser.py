"""A real Chromium (Playwright, Debian's /usr/bin/chromium) against a real uvicorn server and a static copy.

Moves a slider and sees the numbers and the figure change; checks the page without JavaScript still
shows every number and figure; checks the in-browser port of the closed forms equals the API.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium)"
    ),
]
playwright_sync = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)

from servebound.views.report import fmt_rate  # noqa: E402
from servebound.web.app.server import create_app  # noqa: E402
from servebound.web.export.build import build_site  # noqa: E402
from servebound.web.pages.site import SiteData  # noqa: E402
from tests.conftest import same_number  # noqa: E402
from tests.web.conftest import file_server, live_server, site_lists  # noqa: E402
from tests.web.figure_compare import same_figure  # noqa: E402

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PAIR = "/pair/dgx-spark-example/laguna-s-2.1-nvfp4-example"
SCREENSHOT_DIR = Path("/tmp/servebound-browser")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    hardware, models = site_lists()
    with live_server(create_app(hardware=hardware, models=models)) as url:
        yield url


@pytest.fixture(scope="module")
def static_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    hardware, models = site_lists()
    out = tmp_path_factory.mktemp("static")
    build_site(out, site=SiteData(hardware, models))
    with file_server(out) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_sync.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def numbers(page: Any) -> dict[str, str]:
    found: dict[str, str] = page.eval_on_selector_all(
        "#results [data-k]", "nodes => Object.fromEntries(nodes.map(n => [n.dataset.k, n.textContent]))"
    )
    return found


def test_slider_recomputes_through_the_api(browser: Any, server: str) -> None:
    import httpx

    page = browser.new_page(viewport={"width": 1100, "height": 1400})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + PAIR)
    before = numbers(page)
    points_before = page.get_attribute("#fig-per-session polyline.series", "points")
    page.click("summary")
    page.locator('input[name="read_context"]').fill("8000")
    page.wait_for_function("document.body.dataset.computed === 'api'")
    after = numbers(page)
    assert after["single_session_tok_s"] != before["single_session_tok_s"]
    assert after["aggregate_tok_s"] != before["aggregate_tok_s"]
    # the page is now computed for its workload: its charts are folded, drawn by the server when opened
    page.click("#fold-charts summary")
    page.wait_for_selector("#fig-per-session polyline.series")
    assert page.get_attribute("#fig-per-session polyline.series", "points") != points_before
    api = httpx.get(
        f"{server}/api/decode",
        params={"hardware": "dgx-spark-example", "model": "laguna-s-2.1-nvfp4-example", "read_context": 8000},
    ).json()
    assert after["single_session_tok_s"] == fmt_rate(api["single_session_tok_s"])
    assert after["aggregate_tok_s"] == fmt_rate(api["aggregate_tok_s"])
    assert "read_context=8000" in page.url
    # hover: the readout states the values under the pointer
    page.locator("#fig-aggregate").scroll_into_view_if_needed()
    box = page.locator("#fig-aggregate").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
    assert "aggregate T(b)" in (page.text_content("#fig-aggregate text.readout") or "")
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / "pair-served.png"), full_page=True)
    assert not errors, errors
    page.close()


def test_page_without_javascript_shows_every_number_and_figure(browser: Any, server: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(server + PAIR)
    shown = numbers(page)
    for key in (
        "single_session_tok_s",
        "aggregate_tok_s",
        "per_session_tok_s",
        "batch_star",
        "prefill.time_s",
    ):
        assert shown[key] not in ("", "n/a"), key
    for fig in ("fig-memory", "fig-aggregate", "fig-per-session", "fig-prefill-rate", "fig-prefill-time"):
        assert page.locator(f"svg#{fig}").is_visible(), fig
    assert page.locator("math").count() >= 6
    page.screenshot(path=str(SCREENSHOT_DIR / "pair-nojs.png"), full_page=True)
    context.close()


def test_cost_figures_and_economics_without_javascript(browser: Any, server: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(server + "/pair/nvidia-h100-sxm/hostile?read_context=100&alloc_context=200&floor=1")
    # a computed page folds its cost section: without script, its link opens the page with it drawn
    page.click("#fold-cost summary")
    page.click("#fold-cost .fold-body a")
    assert page.url.endswith("&section=all#cost")
    for fig in ("fig-step-time", "fig-cost-batch", "fig-cost-context"):
        assert page.locator(f"svg#{fig}").is_visible(), fig
    assert page.locator("svg#fig-step-time g.mark.cross").count() == 1  # the balance batch is marked
    page.goto(server + "/economics")
    assert page.locator("math").count() >= 4
    assert "14.4 ms" in page.locator("main").inner_text()
    context.close()


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"read_context": 8000, "alloc_context": 32000, "floor": 10, "overhead_gb": 4},
        {"batch": 64, "expert_traffic": "minimum"},
        {"floor": 80},
        {"alloc_context": 1000000, "read_context": 1000000},
        {"alloc_context": 200, "read_context": 100, "floor": 1},  # the compute roof binds (hostile)
        {
            "alloc_context": 200,
            "read_context": 100,
            "floor": 1,
            "memory_only": True,
            "kv_allocation": "paged",
        },
    ],
)
@pytest.mark.parametrize("model", ["qwen3.6-35b-a3b-example", "laguna-s-2.1-nvfp4-example", "hostile"])
def test_the_browser_port_equals_the_api(
    browser: Any, server: str, model: str, query: dict[str, Any]
) -> None:
    import httpx

    page = browser.new_page()
    page.goto(f"{server}/pair/nvidia-h100-sxm/{model}")
    # the row's runtime overhead (10 % of the H100's memory), which the API applies when none is given
    row_overhead = page.evaluate(
        "JSON.parse(document.getElementById('pair-data').textContent).query.overhead_gb"
    )
    assert row_overhead == pytest.approx(8.6)
    q = {
        "alloc_context": 100000,
        "read_context": 32000,
        "floor": 20.0,
        "overhead_gb": row_overhead,
        "batch": None,
        "prompt": 4096,
        "expert_traffic": "expected",
        **query,
    }
    js = page.evaluate(
        "q => { const d = JSON.parse(document.getElementById('pair-data').textContent);"
        " return {d: servebound.decode(d.hardware, d.model, q), p: servebound.prefill(d.hardware, d.model, q)}; }",
        q,
    )
    params = {"hardware": "nvidia-h100-sxm", "model": model, **{k: v for k, v in query.items()}}
    api = httpx.get(f"{server}/api/decode", params=params).json()
    for key in (
        "verdict",
        "batch_mem",
        "batch_star",
        "batch_limited_by",
        "batch_rate",
        "balance_batch",
        "bound_by",
    ):
        assert js["d"][key] == api[key], key
    for key in (
        "single_session_tok_s",
        "aggregate_tok_s",
        "per_session_tok_s",
        "memory_power_tok_s",
        "kv_alloc_bytes",
        "kv_read_bytes",
        "resident_margin_bytes",
        "bytes_per_token_at_star",
        "step_time_s",
        "compute_tok_s_at_star",
    ):
        assert same_number(js["d"][key], api[key]), key
    if api["forced"]:
        assert js["d"]["forced"]["aggregate_tok_s"] == pytest.approx(
            api["forced"]["aggregate_tok_s"], rel=1e-12
        )
        assert js["d"]["forced"]["clears_floor"] == api["forced"]["clears_floor"]
    if js["p"] is not None and q["prompt"] <= q["alloc_context"]:
        pre = {
            k: v
            for k, v in params.items()
            if k in ("hardware", "model", "alloc_context", "overhead_gb", "expert_traffic")
        }
        api_p = httpx.get(
            f"{server}/api/prefill", params={**pre, "prompt": q["prompt"], "range": "true"}
        ).json()
        for key in (
            "time_s",
            "tok_s",
            "memory_tok_s",
            "compute_tok_s",
            "bytes_per_token",
            "flops_per_token",
            "crossover_tokens",
        ):
            assert same_number(js["p"][key], api_p[key]), key
        assert js["p"]["bound_by"] == api_p["bound_by"]
        for key in ("lo_prompt_tokens", "hi_prompt_tokens", "max_prompt_tokens", "limited_by"):
            assert js["p"]["range"][key] == api_p["range"][key], key
        assert same_number(js["p"]["range"]["hi_tok_s"], api_p["range"]["hi_tok_s"])
    page.close()


def test_static_copy_computes_in_the_browser(browser: Any, static_site: str, server: str) -> None:
    import httpx

    page = browser.new_page(viewport={"width": 420, "height": 900})  # a phone-sized window
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(static_site + PAIR)
    assert page.get_attribute("body", "data-mode") == "static"
    page.click("summary")
    page.locator('input[name="floor"]').fill("5")
    page.wait_for_function("document.body.dataset.computed === 'browser'")
    api = httpx.get(
        f"{server}/api/decode",
        params={"hardware": "dgx-spark-example", "model": "laguna-s-2.1-nvfp4-example", "floor": 5},
    ).json()
    shown = numbers(page)
    assert shown["aggregate_tok_s"] == fmt_rate(api["aggregate_tok_s"])
    assert shown["batch_star"] == f"{api['batch_star']:,}"
    page.screenshot(path=str(SCREENSHOT_DIR / "pair-static-phone.png"), full_page=False)
    # the home form's target resolves the pair in the browser
    page.goto(static_site + "/pair/?hardware=nvidia-b200&model=hostile")
    page.wait_for_url("**/pair/nvidia-b200/hostile/**")
    assert not errors, errors
    page.close()


FRAME_CHECK = """() => {
  const out = [];
  document.querySelectorAll('svg.chart').forEach(svg => {
    const frame = svg.getBoundingClientRect();
    svg.querySelectorAll('g.legend, text').forEach(node => {
      const r = node.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) return;
      if (r.left < frame.left - 0.5 || r.right > frame.right + 0.5 || r.top < frame.top - 0.5 || r.bottom > frame.bottom + 0.5)
        out.push(svg.id + ': ' + (node.textContent || '').slice(0, 60));
    });
  });
  return out;
}"""


def test_every_legend_inside_its_frame_at_1300px(browser: Any, server: str, static_site: str) -> None:
    """Each figure's legend and labels stay inside the figure's frame (the memory bar's "free" label
    used to be cut off), on a pair page (served and static, redrawn by the script) and /derivation."""
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    for url in (server + PAIR, server + "/derivation", server + "/derivation?reserved=1000&batch=150"):
        page.goto(url)
        charts = page.eval_on_selector_all("svg.chart", "nodes => nodes.length")
        assert charts >= 4, url
        assert page.evaluate(FRAME_CHECK) == [], url
    page.goto(static_site + PAIR)
    page.click("summary")
    page.locator('input[name="overhead_gb"]').fill("2")
    page.wait_for_function("document.body.dataset.computed === 'browser'")
    assert page.locator("#fig-memory g.legend").count() == 4
    assert page.evaluate(FRAME_CHECK) == []
    page.screenshot(path=str(SCREENSHOT_DIR / "pair-1300.png"), full_page=True)
    assert not errors, errors
    page.close()


def test_static_copy_computes_speculation_and_the_context_figure(
    browser: Any, static_site: str, server: str
) -> None:
    import httpx

    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(static_site + PAIR)
    context_before = page.get_attribute("#fig-context polyline.series", "points")
    page.click("summary")
    page.locator('input[name="draft"]').fill("qwen3.6-35b-a3b-example")
    page.locator('input[name="draft_tokens"]').fill("3")
    page.locator('input[name="acceptance"]').fill("0.8")
    page.locator('input[name="floor"]').fill("5")
    api = httpx.get(
        f"{server}/api/decode",
        params={
            "hardware": "dgx-spark-example",
            "model": "laguna-s-2.1-nvfp4-example",
            "floor": 5,
            "draft": "qwen3.6-35b-a3b-example",
            "draft_tokens": 3,
            "acceptance": 0.8,
        },
    ).json()
    expected = {k: fmt_rate(api[k]) for k in ("single_session_tok_s", "aggregate_tok_s")}
    # the calculator recomputes after the last input event: wait until the cards show this workload's answer
    page.wait_for_function(
        """expected => document.body.dataset.computed === 'browser' && Object.entries(expected).every(
            ([k, v]) => document.querySelector(`#results [data-k="${k}"]`)?.textContent === v)""",
        arg=expected,
    )
    shown = numbers(page)
    assert shown["single_session_tok_s"] == fmt_rate(api["single_session_tok_s"])
    assert shown["aggregate_tok_s"] == fmt_rate(api["aggregate_tok_s"])
    assert page.get_attribute("#fig-context polyline.series", "points") != context_before
    assert not errors, errors
    page.close()


FIGURES = ("fig-feasibility", "fig-boards", "fig-read-context", "fig-model-size", "fig-containers")
SVGS = "ids => ids.map(id => document.getElementById(id).outerHTML)"


def test_derivation_controls_redraw_in_place(browser: Any, server: str, static_site: str) -> None:
    """On the served site and on the static export, moving the toy's controls redraws every figure in
    the browser (calc.js), with the same SVG the server draws for the same query parameters and the
    numbers the core computes; the legends stay in their frames at a 1,300-pixel window; the static
    copy draws a query it is opened with."""
    from servebound.web.pages import derivation_toy as dv

    nojs = browser.new_context(java_script_enabled=False, viewport={"width": 1300, "height": 1000})
    served = nojs.new_page()
    for base in (server, static_site):
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
        page.goto(base + "/derivation")
        page.wait_for_function("document.body.dataset.toyReady === '1'")
        before = page.text_content('#fig-boards [data-k="right_tok_s"]')
        assert before == f"{dv.boards(dv.Toy()).right_tok_s:,.0f} tok/s"
        # a real keypress moves the batch slider (and leaves maximize), the boxes take typed values
        batch = page.locator('input.toy-slider[data-name="batch"]')
        batch.focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        page.locator('input[name="weights_gb"]').fill("24")
        page.locator('input[name="overhead_gb"]').fill("4.5")
        page.locator('input[name="kv_gb_per_1k"]').fill("0.13")
        page.locator('input[name="reserved"]').fill("20000")
        page.locator('input[name="fraction"]').fill("0.5")
        page.locator('input[name="unread_cap"]').fill("6000")
        page.locator('input[name="capacity_gb"]').fill("96")
        page.locator('input[name="bandwidth_gb_per_s"]').fill("546")
        page.wait_for_function("(document.body.dataset.toyDrawn || '').includes('bandwidth_gb_per_s=546')")
        query = page.get_attribute("body", "data-toy-drawn")
        assert query is not None and "batch=" in query
        assert page.url.endswith("?" + query)
        toy = dv.toy_from_query(dict(urllib.parse.parse_qsl(query)))
        assert toy.batch is not None and toy.batch > 1 and toy.unread_cap == 6000
        b = dv.boards(toy)
        shown = page.text_content('#fig-boards [data-k="right_tok_s"]')
        assert shown == f"{b.right_tok_s:,.0f} tok/s" and shown != before
        assert page.text_content('#fig-boards [data-k="left_tok_s"]') == f"{b.left_tok_s:,.0f} tok/s"
        drawn = page.evaluate(SVGS, list(FIGURES))
        served.goto(server + "/derivation?" + query)
        for mine, theirs in zip(drawn, served.evaluate(SVGS, list(FIGURES)), strict=True):
            same_figure(mine, theirs)
        assert page.evaluate(FRAME_CHECK) == []
        # maximize fills memory as the text defines it: b_mem sessions, the memory-power bound
        page.locator('input[name="maximize"]').check()
        page.wait_for_function("!(document.body.dataset.toyDrawn || '').includes('batch=')")
        full = dv.boards(replace(toy, batch=None))
        assert page.text_content('#fig-boards [data-k="memory_power_tok_s"]') == (
            f"memory-power bound (maximize batch, b_mem = {full.batch_mem:,}): "
            f"{full.memory_power_tok_s:,.0f} tok/s"
        )
        # a bad value names its field and keeps the last figure
        page.locator('input[name="fraction"]').fill("2")
        assert page.text_content("#toy-status").startswith("fraction: must be between 0 and 1")
        if base == static_site:  # the static host ignores the query: the script draws it
            page.goto(static_site + "/derivation?" + query)
            page.wait_for_function("document.body.dataset.toyReady === '1'")
            for mine, theirs in zip(
                page.evaluate(SVGS, list(FIGURES)), served.evaluate(SVGS, list(FIGURES)), strict=True
            ):
                same_figure(mine, theirs)
            page.screenshot(path=str(SCREENSHOT_DIR / "derivation-static-1300.png"), full_page=False)
        assert not errors, errors
        page.close()
    nojs.close()


def test_static_copy_reads_the_workload_from_its_url(browser: Any, static_site: str, server: str) -> None:
    """Issue 14: a shared static link showed other numbers than its URL names, and the floor label
    stayed at the old floor after the slider moved."""
    import httpx

    page = browser.new_page(viewport={"width": 1100, "height": 1400})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(static_site + PAIR + "/?floor=5&alloc_context=32000&read_context=8000")
    page.wait_for_function("document.body.dataset.computed === 'browser'")
    params = {"hardware": "dgx-spark-example", "model": "laguna-s-2.1-nvfp4-example"}
    api = httpx.get(
        f"{server}/api/decode", params={**params, "floor": 5, "alloc_context": 32000, "read_context": 8000}
    ).json()
    shown = numbers(page)
    assert shown["aggregate_tok_s"] == fmt_rate(api["aggregate_tok_s"])
    assert shown["batch_star"] == f"{api['batch_star']:,}"
    assert shown["floor_tok_s"] == "5"
    assert page.input_value('input[name="alloc_context"]') == "32000"
    page.click("summary")
    page.locator('input[name="floor"]').fill("12")
    page.wait_for_function("document.querySelector('[data-k=floor_tok_s]').textContent === '12'")
    assert "floor=12" in page.url
    assert not errors, errors
    page.close()


def test_no_first_token_wait_where_nothing_fits(browser: Any, static_site: str, server: str) -> None:
    """The 71 GB Laguna on a 24 GB card: no wait beside "does not fit", served or static, and the
    browser's port agrees with prefill --json (time_s null)."""
    import httpx

    path = "/pair/nvidia-rtx-4090/laguna-s-2.1-nvfp4-example"
    api = httpx.get(
        f"{server}/api/prefill",
        params={"hardware": "nvidia-rtx-4090", "model": "laguna-s-2.1-nvfp4-example", "prompt": 4096},
    ).json()
    assert api["verdict"] == "no_resident_fit" and api["time_s"] is None
    page = browser.new_page()
    page.goto(server + path)
    assert page.text_content('[data-k="prefill.time_s"]') == "nothing fits"
    assert "there is no wait to report" in (page.text_content("#results") or "")
    page.close()
    # The static copy writes no page for a pair whose native weights do not fit: its calculator page,
    # /pair/, computes it in the browser, and its link from the rank tables goes there.
    assert httpx.get(static_site + path + "/").status_code == 404
    page = browser.new_page()
    page.goto(static_site + "/pair/?hardware=nvidia-rtx-4090&model=laguna-s-2.1-nvfp4-example")
    page.wait_for_function("document.body.dataset.computed === 'browser'")
    assert page.text_content('[data-k="prefill.time_s"]') == "nothing fits"
    assert "Does not fit" in (page.text_content("#results .verdict") or "")
    page.close()


def test_the_calculator_recomputes_below_32k_reserved_tokens(browser: Any, server: str) -> None:
    """site.js asked /api/prefill without read_context; the API assumed 32,000 and answered 400 below
    32k reserved tokens, and the cards froze in a mixed state."""
    import httpx

    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + PAIR)
    page.click("summary")
    page.locator('input[name="alloc_context"]').fill("16000")
    page.wait_for_function("document.body.dataset.computed === 'api'")
    assert page.text_content("#calc-status") == "Answer from the server for this workload."
    ids = {"hardware": "dgx-spark-example", "model": "laguna-s-2.1-nvfp4-example"}
    decode = httpx.get(f"{server}/api/decode", params={**ids, "alloc_context": 16000}).json()
    prompt = page.input_value('input[name="prompt"]')
    prefill = httpx.get(
        f"{server}/api/prefill", params={**ids, "alloc_context": 16000, "prompt": prompt}
    ).json()
    shown = numbers(page)
    assert decode["assumptions"]["read_context_tokens"] == 16000  # L_read follows a shorter L_alloc
    assert shown["aggregate_tok_s"] == fmt_rate(decode["aggregate_tok_s"])
    assert shown["prefill.tok_s"] == fmt_rate(prefill["tok_s"])
    assert "alloc_context=16000" in page.url and not errors, errors
    page.close()


def test_a_misspelt_workload_field_is_named_on_the_page(browser: Any, server: str) -> None:
    page = browser.new_page()
    page.goto(server + PAIR + "?flor=5&utm_source=newsletter")
    note = page.text_content("#ignored-params") or ""
    assert "flor (did you mean floor?)" in note and "utm_source" not in note
    page.goto(server + PAIR + "?utm_source=newsletter")
    assert page.locator("#ignored-params").count() == 0
    page.close()


def test_the_static_copy_names_a_misspelt_workload_field(browser: Any, static_site: str) -> None:
    page = browser.new_page()
    page.goto(static_site + PAIR + "/?flor=5&floor=7&utm_source=newsletter")
    page.wait_for_selector("#ignored-params")
    note = page.text_content("#ignored-params") or ""
    assert "Not used: flor:" in note and "utm_source" not in note
    page.goto(static_site + PAIR + "/?floor=7&utm_source=newsletter")
    page.wait_for_function("document.body.dataset.computed === 'browser'")
    assert page.locator("#ignored-params").count() == 0
    page.close()
