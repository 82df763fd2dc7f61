"""The static copy in a real Chromium (Debian's /usr/bin/chromium): opened from file:// it is styled,
its script runs and its links name files that exist; its calculator page answers a pair that has no
page of its own, in the browser, with the served API's numbers; without script it says where the
answer is."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
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
pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")

from servebound.views.report import fmt_rate  # noqa: E402
from servebound.web.export.build import build_site  # noqa: E402
from servebound.web.pages.site import SiteData  # noqa: E402
from tests.web.conftest import file_server, site_lists  # noqa: E402
from tests.web.test_browser import browser as browser  # noqa: E402 (the fixture, re-exported)
from tests.web.test_browser import numbers  # noqa: E402

#: A pair of the small site without a page: no engine runs NVFP4 on Apple devices, so the export
#: leaves it to the calculator (as it leaves every pair of the catalog but the native ones that fit).
NO_PAGE = ("apple-m3-ultra-512gb", "laguna-s-2.1-nvfp4-example")


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    hardware, models = site_lists()
    out = tmp_path_factory.mktemp("static-copy")
    build_site(out, site=SiteData(hardware, models), base_url="https://example.org")
    return out


@pytest.fixture(scope="module")
def served(export: Path) -> Iterator[str]:
    with file_server(export) as url:
        yield url


STYLE = """() => ({
  sheets: document.styleSheets.length,
  font: getComputedStyle(document.body).fontFamily,
  header: getComputedStyle(document.querySelector('header.top')).display,
  main: getComputedStyle(document.querySelector('main')).maxWidth,
  links: Array.from(document.querySelectorAll('a[href], link[href], script[src]'))
    .map(e => e.href || e.src),
  script: typeof window.servebound === 'object',
})"""


@pytest.mark.parametrize(
    "rel",
    [
        "index.html",
        "hardware/index.html",
        "hardware/nvidia-b200/index.html",
        "models/hostile/index.html",
        "pair/nvidia-b200/qwen3.6-35b-a3b-example/index.html",
        "derivation/index.html",
        "pair/index.html",
    ],
)
def test_a_page_opened_from_file_is_styled_and_its_links_resolve(
    browser: Any, export: Path, rel: str
) -> None:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((export / rel).as_uri())
    found = page.evaluate(STYLE)
    # site.css applied (a file:// page may not read a sheet's rules; its computed styles show them)
    assert found["sheets"] >= 1 and found["header"] == "flex" and found["main"] == "1200px", found
    assert "system-ui" in found["font"]
    local = [u for u in found["links"] if u.startswith("file:")]
    assert len(local) > 10
    missing = []
    for url in local:
        path = Path(urllib.parse.unquote(urllib.parse.urlsplit(url).path))
        if not path.is_file():
            missing.append(url)
    assert not missing, missing[:10]
    if rel.startswith("pair/nvidia-b200"):
        assert found["script"]  # site.js ran from file:// too
    assert not errors, errors
    # a link followed by a click opens the page it names, styled
    page.click("header nav a:text('Hardware')")
    page.wait_for_load_state("load")  # the click returns once the navigation commits, before the sheet
    assert page.url == (export / "hardware" / "index.html").as_uri()
    assert page.evaluate(STYLE)["header"] == "flex"
    page.close()


def test_the_calculator_answers_a_pair_without_a_page(browser: Any, served: str) -> None:
    from fastapi.testclient import TestClient

    from servebound.web.app.server import create_app

    hw, model = NO_PAGE
    hardware, models = site_lists()
    api = TestClient(create_app(hardware=hardware, models=models))
    expected = api.get("/api/decode", params={"hardware": hw, "model": model}).json()
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    missing = page.goto(f"{served}/pair/{hw}/{model}/")
    assert missing is not None and missing.status == 404
    page.goto(f"{served}/pair/?hardware={hw}&model={model}")
    page.wait_for_function("document.body.dataset.computed === 'browser'")
    assert page.is_visible("#calc-host") and not page.is_visible("#calc-fallback")
    shown = numbers(page)
    assert shown["single_session_tok_s"] == fmt_rate(expected["single_session_tok_s"])
    assert shown["aggregate_tok_s"] == fmt_rate(expected["aggregate_tok_s"])
    assert shown["batch_mem"] == f"{expected['batch_mem']:,}"
    heading = page.text_content("#calc-host h1") or ""
    assert heading.startswith("Laguna") and "M3 Ultra" in heading
    # what the script cannot redo for another pair is hidden, not shown for the reference pair
    assert not page.is_visible("#measured") and not page.is_visible("#cost")
    # the address keeps the pair and the workload
    assert f"hardware={hw}" in page.url and f"model={model}" in page.url
    # a pair with a page of its own opens it
    page.goto(f"{served}/pair/?hardware=nvidia-b200&model=hostile")
    page.wait_for_url("**/pair/nvidia-b200/hostile/**")
    # an unknown id is named
    page.goto(f"{served}/pair/?hardware=no-such-device&model=hostile")
    page.wait_for_selector("#calc-error")
    assert "no-such-device" in (page.text_content("#calc-error") or "")
    assert not errors, errors
    page.close()


def test_the_calculator_without_javascript_says_where_the_answer_is(browser: Any, served: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    hw, model = NO_PAGE
    page.goto(f"{served}/pair/?hardware={hw}&model={model}")
    text = page.text_content("#calc-fallback") or ""
    assert "servebound decode --hardware HARDWARE --model MODEL" in text
    assert ".md" in text
    assert not page.is_visible("#calc-host")  # no numbers of another pair in its place
    assert page.is_visible("#calc-pick")
    context.close()
