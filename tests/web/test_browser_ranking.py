"""The hardware and model pages' ranking tables in a real Chromium (issue 35), on the served site and
the static copy: the verdict boxes change the rows shown and the count, the one search narrows every
row, each "n/a" points to the note that says why, and a long ranking lists its first rows until asked
for all, keeping the page under 30,000 px at 1400 px; and a static pair page shows its other formats'
answers until the browser recomputes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.web.conftest import live_server
from tests.web.test_browser import CHROMIUM, browser, server, static_site

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent"),
]
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

__all__ = ["browser", "server", "static_site"]  # the fixtures, shared with test_browser


def shown(page: Any, holder: str) -> list[str]:
    """The verdict filter keys of the rows a reader sees under ``holder``."""
    found: list[str] = page.eval_on_selector_all(
        f"#{holder} tbody tr[data-verdict]",
        "rows => rows.filter(r => r.offsetParent !== null).map(r => r.dataset.verdict)",
    )
    return found


def count(page: Any) -> str:
    return (page.text_content(".row-filter .row-count") or "").strip()


@pytest.fixture(params=["served", "static"])
def site(request: pytest.FixtureRequest, server: str, static_site: str) -> str:
    return server if request.param == "served" else static_site


def test_verdict_boxes_and_search_change_the_rows_and_the_count(browser: Any, site: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(site + "/hardware/nvidia-rtx-4090/")
    assert page.is_visible(".row-filter") and page.locator("input.table-filter").count() == 0
    everything = shown(page, "models-table")
    assert len(everything) == 3 and {"serves", "nofit"} <= set(everything)
    assert count(page) == "3 of 3 models match"
    assert page.is_visible("#models-table ol.why-notes")
    page.uncheck(".row-filter input[value=nofit]")
    assert shown(page, "models-table") == [v for v in everything if v != "nofit"]
    assert count(page) == f"{len(everything) - everything.count('nofit')} of 3 models match"
    # a note stays while a row in view points to it: the row that does not fit is gone, and its notes
    notes = page.locator("#models-table ol.why-notes li:not([hidden])").all_text_contents()
    assert notes and not [n for n in notes if "nothing fits" in n], notes
    page.check(".row-filter input[value=nofit]")
    assert shown(page, "models-table") == everything
    page.fill(".row-search", "qwen 35b")  # words in any order, as people type a name
    rows = page.locator("#models-table tbody tr[data-verdict]:not([hidden])")
    assert rows.count() == 1 and "Qwen" in (rows.first.text_content() or "")
    assert count(page) == "1 of 3 models match"
    page.fill(".row-search", "no such model")
    assert shown(page, "models-table") == [] and count(page) == "0 of 3 models match"
    page.fill(".row-search", "")
    # the row that does not fit: each n/a points to the note that says why, in words
    cells = page.locator("#models-table td.na")
    assert cells.count() >= 3
    for i in range(cells.count()):
        link = cells.nth(i).locator("sup a")
        target = link.get_attribute("href") or ""
        note = page.text_content(target) or ""
        assert note.startswith("n/a: ") and len(note) > 20, (target, note)
    cells.first.locator("sup a").click()
    assert page.url.endswith(cells.first.locator("sup a").get_attribute("href") or "?")
    assert not errors, errors
    page.close()


def test_a_model_pages_class_tables_share_one_filter(browser: Any, site: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(site + "/models/laguna-s-2.1-nvfp4-example/")
    everything = shown(page, "hardware-tables")
    groups = page.locator("#hardware-tables section.rank-group")
    assert "nofit" in everything and groups.count() >= 2
    assert page.locator("#hardware-tables input.table-filter").count() == 0  # no box of its own per table
    page.uncheck(".row-filter input[value=serves]")
    assert set(shown(page, "hardware-tables")) == {"nofit"}
    assert count(page) == f"{everything.count('nofit')} of {len(everything)} machines match"
    # a class with no row left is hidden whole, its heading too
    hidden = page.eval_on_selector_all(
        "#hardware-tables section.rank-group", "gs => gs.filter(g => g.hidden).length"
    )
    assert 0 < hidden < groups.count()
    page.close()


@pytest.fixture(scope="module")
def catalog_server() -> Iterator[str]:
    """The whole packaged catalog, served: rankings of hundreds of rows."""
    from servebound.web.app.server import create_app

    with live_server(create_app()) as url:
        yield url


def test_a_long_ranking_lists_its_first_rows_and_searches_them_all(browser: Any, catalog_server: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(catalog_server + "/hardware/nvidia-rtx-4090")
    total = page.locator("#models-table tbody tr[data-verdict]").count()
    assert total > 200 and len(shown(page, "models-table")) == 40
    assert re.fullmatch(rf"{total:,} of {total:,} models match \(the first 40 listed\)", count(page))
    assert page.evaluate("document.documentElement.scrollHeight") < 30_000
    # the search looks past the rows listed: a model far down the ranking is found
    last = (
        page.locator("#models-table tbody tr[data-verdict] td:first-child").nth(total - 1).text_content()
        or ""
    )
    page.fill(".row-search", last)
    assert last in (
        page.locator("#models-table tbody tr[data-verdict]:not([hidden])").first.text_content() or ""
    )
    page.fill(".row-search", "")
    nofit = page.locator("#models-table tbody tr[data-verdict=nofit]").count()
    page.uncheck(".row-filter input[value=nofit]")
    assert count(page).startswith(f"{total - nofit:,} of {total:,} models match")
    assert "nofit" not in shown(page, "models-table")
    page.click("button.show-all")
    assert len(shown(page, "models-table")) == total - nofit and page.is_hidden("button.show-all")
    page.close()
    # without script every row is listed, one line each, and the page still fits under 30,000 px
    plain = browser.new_context(java_script_enabled=False, viewport={"width": 1400, "height": 900})
    page = plain.new_page()
    page.goto(catalog_server + "/hardware/nvidia-rtx-4090")
    assert page.locator("#models-table tbody tr[data-verdict]").count() == total
    assert page.evaluate("document.documentElement.scrollHeight") < 30_000
    plain.close()


@pytest.fixture(scope="module")
def formats_copy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A static copy of two machines and three formats of one model (catalog rows), over HTTP."""
    from servebound.catalog.hardware import get_hardware
    from servebound.catalog.models import list_models
    from servebound.web.export.build import build_site
    from servebound.web.pages.site import SiteData
    from tests.web.conftest import file_server

    wanted = {"llama-3.1-70b-fp8", "llama-3.1-70b-q4_k_m", "llama-3.1-70b"}
    models = [m for m in list_models() if m.id in wanted]
    out = tmp_path_factory.mktemp("formats-copy")
    hardware = [get_hardware("nvidia-h100-sxm"), get_hardware("nvidia-b200")]  # the economics page needs FP4
    build_site(out, site=SiteData(hardware, models), base_url="https://example.org")
    with file_server(out) as url:
        yield url


def test_the_static_copy_shows_other_formats_until_the_browser_recomputes(
    browser: Any, formats_copy: str
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # the copy has a page for a model's native format where it fits (BF16 on a B200); its other formats
    # are answered on it and link to the calculator
    page.goto(formats_copy + "/pair/nvidia-b200/llama-3.1-70b/")
    rows = page.locator("#other-formats tbody tr")
    assert rows.count() == 2 and page.is_visible("#other-formats")
    words = rows.all_text_contents()
    assert all("Serves" in w and "tok/s" in w for w in words), words
    # once the browser recomputes, the server's answers for the built workload are hidden, and said so
    if not page.is_visible('input[name="read_context"]'):
        page.click("#advanced summary")
    page.locator('input[name="read_context"]').fill("4000")
    page.wait_for_function("document.body.dataset.computed === 'browser'")
    assert page.is_hidden("#other-formats") and page.is_visible("#static-note")
    assert "other formats" in (page.text_content("#static-note") or "")
    assert not errors, errors
    page.close()
