"""The pickers and the search in a real Chromium, on a served site and on a static copy: names typed as
people type them (an Ollama tag, loose words, a GPU number) land on the right pair with the workload
kept; "my machine" is offered first after a reload; the search page finds ``llama3.3:70b``; and the
static copy's search over data/names.json ranks as ``catalog.search`` does. Screenshots of the pair
page's picker open and of the search page, at 1400 and 400 px, go to SCREENSHOT_DIR."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.web.test_browser import SCREENSHOT_DIR
from tests.web.test_browser import browser as browser  # the fixture, re-exported

pytestmark = [pytest.mark.browser]

from servebound.catalog.hardware import get_hardware  # noqa: E402
from servebound.catalog.models import get_model  # noqa: E402
from servebound.catalog.search import search  # noqa: E402
from servebound.web.app.server import create_app  # noqa: E402
from servebound.web.export.build import build_site  # noqa: E402
from servebound.web.pages.site import SiteData, site_model  # noqa: E402
from tests.web.conftest import file_server, live_server  # noqa: E402

HARDWARE = (
    "nvidia-rtx-4090",
    "nvidia-dgx-spark",
    "nvidia-h100-sxm",
    "nvidia-b200",
)  # B200: the economics page
MODELS = (
    "llama-3.3-70b-instruct",
    "llama-3.3-70b-instruct-q4_k_m",
    "gemma-3-27b-it",
    "gemma-3-27b-it-q4_k_m",
    "qwen3-30b-a3b",
    "qwen3-30b-a3b-q4_k_m",
)
START = "/pair/nvidia-h100-sxm/gemma-3-27b-it"
WORKLOAD = "alloc_context=8000&read_context=4000"


def models() -> list[Any]:
    return [site_model(get_model(pid)) for pid in MODELS]


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """The packaged hardware catalog (its names resolve on the server) with a few model profiles."""
    with live_server(create_app(models=models())) as url:
        yield url


@pytest.fixture(scope="module")
def static(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    out = tmp_path_factory.mktemp("pickers-copy")
    site = SiteData([get_hardware(h) for h in HARDWARE], models())
    build_site(out, site=site, base_url="https://example.org")
    with file_server(out) as url:
        yield url


@pytest.fixture(params=["served", "static"])
def site(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param, request.getfixturevalue(request.param)


def page_at(browser: Any, url: str, width: int = 1400) -> Any:
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    page.goto(url)
    return page


def pair_url(kind: str, base: str, hw: str, model: str, query: str = WORKLOAD) -> str:
    if kind == "served":
        return f"{base}/pair/{hw}/{model}?{query}"
    return f"{base}/pair/?hardware={hw}&model={model}&{query}"


def landed(page: Any, hw: str, model: str, alloc: str | None = "8000") -> None:
    """The page shows the pair (served: its own address; static: its page or the calculator) with the
    workload of the address it came from."""
    page.wait_for_function(
        "([hw, m]) => { const u = new URL(location.href);"
        " return u.pathname.replace(/index[.]html$/, '').replace(/[/]$/, '').endsWith('/pair/' + hw + '/' + m)"
        " || (u.searchParams.get('hardware') === hw && u.searchParams.get('model') === m); }",
        arg=[hw, model],
        timeout=20_000,
    )
    page.wait_for_load_state()
    if page.locator("#calc-host").count():
        page.wait_for_selector("#calc-host:not([hidden])", state="attached", timeout=20_000)
    if alloc is not None:
        assert page.evaluate("new URL(location.href).searchParams.get('alloc_context')") == alloc, page.url
        assert page.input_value('input[name="alloc_context"]') == alloc
    page.wait_for_function("m => document.title.includes(m)", arg=get_model(model).adapter.name)


def type_and_choose(page: Any, field: str, text: str, expect: str, form: str = "form[data-picker]") -> None:
    """Type ``text`` in a picker, see ``expect`` among the offered ids, and choose it."""
    box = page.locator(f'{form} input[name="{field}"]').first
    box.click()
    box.fill(text)
    option = page.locator(f'{form} ul.picker-list li[data-id="{expect}"]').first
    option.wait_for(state="visible", timeout=10_000)
    option.dispatch_event("mousedown")


def test_names_typed_in_the_pair_picker_land_on_the_pair(browser: Any, site: tuple[str, str]) -> None:
    kind, base = site
    page = page_at(browser, pair_url(kind, base, "nvidia-h100-sxm", "gemma-3-27b-it"))
    page.wait_for_selector("form.pair-picker input[data-pick][role=combobox]", state="attached")
    type_and_choose(
        page, "model", "llama3.3:70b", "llama-3.3-70b-instruct-q4_k_m", "form:visible[data-picker]"
    )
    landed(page, "nvidia-h100-sxm", "llama-3.3-70b-instruct-q4_k_m")
    form = "form:visible[data-picker]"
    page.wait_for_selector(f"{form} input[data-pick][role=combobox]", state="attached")
    type_and_choose(page, "hardware", "dgx spark", "nvidia-dgx-spark", form)
    landed(page, "nvidia-dgx-spark", "llama-3.3-70b-instruct-q4_k_m")
    # The fields show the pair's names, never its ids; the list offers names and words.
    page.wait_for_selector(f"{form} input[data-pick][role=combobox]", state="attached")
    assert page.input_value(f'{form} input[name="hardware"]') == get_hardware("nvidia-dgx-spark").name
    assert page.input_value(f'{form} input[name="model"]') == get_model("llama-3.3-70b-instruct-q4_k_m").name
    page.fill(f'{form} input[name="model"]', "gemma 3 27b q4")
    page.wait_for_selector(f'{form} ul.picker-list li[data-id="gemma-3-27b-it-q4_k_m"]')
    offered = page.text_content(f'{form} ul.picker-list li[data-id="gemma-3-27b-it-q4_k_m"]') or ""
    offered_model = get_model("gemma-3-27b-it-q4_k_m")
    assert offered.startswith(offered_model.name) and f"{offered_model.family_name}, " in offered
    assert "weights in" not in offered, offered
    assert "gemma-3-27b-it-q4_k_m" not in offered and "q4_k_m" not in offered, offered
    page.press(f'{form} input[name="model"]', "Escape")
    # Typed and not chosen: Enter resolves the names (the server's resolver, or the copy's table).
    page.wait_for_selector(f"{form} input[data-pick][role=combobox]", state="attached")
    page.fill(f'{form} input[name="hardware"]', "4090")
    page.fill(f'{form} input[name="model"]', "gemma 3 27b q4")
    page.press(f'{form} input[name="model"]', "Escape")
    page.press(f'{form} input[name="model"]', "Enter")
    landed(page, "nvidia-rtx-4090", "gemma-3-27b-it-q4_k_m")
    assert page.errors == []


def test_my_machine_is_offered_first_after_a_reload(browser: Any, site: tuple[str, str]) -> None:
    kind, base = site
    page = page_at(browser, pair_url(kind, base, "nvidia-h100-sxm", "qwen3-30b-a3b"))
    form = "form:visible[data-picker]"
    page.wait_for_selector(f"{form} input[data-pick][role=combobox]", state="attached")
    type_and_choose(page, "hardware", "4090", "nvidia-rtx-4090", form)
    landed(page, "nvidia-rtx-4090", "qwen3-30b-a3b")
    page.goto(pair_url(kind, base, "nvidia-h100-sxm", "gemma-3-27b-it"))
    page.reload()
    page.wait_for_selector(f"{form} input[data-pick][role=combobox]", state="attached")
    page.click(f'{form} input[name="hardware"]')
    first = page.locator(f"{form} ul.picker-list li").first
    first.wait_for(state="visible")
    assert first.get_attribute("data-id") == "nvidia-rtx-4090"
    assert "My machine" in (first.text_content() or "")
    page.fill(f'{form} input[name="hardware"]', "h100")
    page.wait_for_selector(f'{form} ul.picker-list li[data-id="nvidia-h100-sxm"]')
    assert page.locator(f"{form} ul.picker-list li").first.get_attribute("data-id") == "nvidia-rtx-4090"
    # Another model on another machine's page leaves my machine as it was.
    page.goto(pair_url(kind, base, "nvidia-h100-sxm", "gemma-3-27b-it"))
    page.wait_for_selector(f"{form} input[data-pick][role=combobox]", state="attached")
    type_and_choose(page, "model", "qwen3 30b a3b q4", "qwen3-30b-a3b-q4_k_m", form)
    landed(page, "nvidia-h100-sxm", "qwen3-30b-a3b-q4_k_m")
    kept = page.evaluate("JSON.parse(localStorage.getItem('servebound.machine')).id")
    assert kept == "nvidia-rtx-4090"
    page.goto(base + "/" + ("" if kind == "served" else "index.html"))
    page.wait_for_selector("#pick input[data-pick][role=combobox]", state="attached")
    assert page.input_value('#pick input[name="hardware"]') == get_hardware("nvidia-rtx-4090").name
    assert page.locator("#pick-machine").is_visible()
    # The search page offers each model on my machine.
    page.goto(search_url(kind, base, "gemma 3 27b"))
    mine = page.locator("#search-hits a.on-mine").first
    mine.wait_for(state="visible", timeout=10_000)
    assert "RTX 4090" in (mine.text_content() or "")
    mine.click()
    landed(page, "nvidia-rtx-4090", "gemma-3-27b-it", alloc=None)
    page.context.close()


def test_the_static_calculator_resolves_names_in_its_address(browser: Any, static: str) -> None:
    """A link or a no-script form with names (4090, llama3.3:70b) opens the pair they name."""
    page = page_at(browser, f"{static}/pair/?hardware=4090&model=llama3.3%3A70b&{WORKLOAD}")
    landed(page, "nvidia-rtx-4090", "llama-3.3-70b-instruct-q4_k_m")
    assert page.errors == []
    page.context.close()


def search_url(kind: str, base: str, q: str) -> str:
    return f"{base}/search?q={q}" if kind == "served" else f"{base}/search/?q={q}"


def test_the_search_page_finds_an_ollama_tag(browser: Any, site: tuple[str, str]) -> None:
    kind, base = site
    page = page_at(browser, base + ("/" if kind == "served" else "/index.html"))
    page.click("header nav a:text('Search')")
    page.fill('#search input[name="q"]', "llama3.3:70b")
    page.press('#search input[name="q"]', "Enter")
    first = page.locator("#search-hits li a").first
    first.wait_for(state="visible", timeout=10_000)
    href = first.get_attribute("href") or ""
    assert "models/llama-3.3-70b-instruct-q4_k_m" in href, href
    assert "match" in (page.text_content("#search-count") or "")
    first.click()
    page.wait_for_url("**/models/llama-3.3-70b-instruct-q4_k_m**")
    page.context.close()


QUERIES = [
    "llama3.3:70b",
    "gemma3:27b",
    "meta-llama/Llama-3.3-70B-Instruct",
    "Qwen/Qwen3-30B-A3B",
    "gemma 3 27b",
    "qwen3 30b a3b q4",
    "gemma 3 27b q4_k_m",
    "4090",
    "rtx 4090",
    "dgx spark",
    "llama 70b",
    "h100",
    "qwen3",
    "nvidia",
]


def test_the_static_search_ranks_as_the_catalog_search(browser: Any, static: str) -> None:
    page = page_at(browser, static + "/search/")
    shown = {*HARDWARE, *MODELS}
    for q in QUERIES:
        found = page.evaluate(
            "q => window.servebound_pickers.search(q, null, 50).then(h => h.map(x => [x.id, x.name, x.detail]))",
            q,
        )
        # The same hits in the same order, each with the same name and detail (its words, not the format).
        want = [[h.id, h.name, h.detail] for h in search(q, limit=500) if h.id in shown]
        assert want and found == want, q
    page.context.close()


@pytest.mark.parametrize("width", [1400, 400])
def test_screenshots_of_the_picker_and_the_search(browser: Any, served: str, width: int) -> None:
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    page = page_at(browser, f"{served}{START}?{WORKLOAD}", width)
    page.evaluate(
        "localStorage.setItem('servebound.machine', JSON.stringify({id: 'nvidia-rtx-4090', name: 'NVIDIA GeForce RTX 4090'}))"
    )
    page.reload()
    form = "form.pair-picker"
    page.wait_for_selector(f"{form} input[data-pick][role=combobox]", state="attached")
    page.click(f'{form} input[name="hardware"]')
    page.fill(f'{form} input[name="hardware"]', "rtx")
    page.wait_for_selector(f"{form} ul.picker-list li >> nth=2")
    page.screenshot(path=str(SCREENSHOT_DIR / f"pickers-hardware-open-{width}.png"))
    page.press(f'{form} input[name="hardware"]', "Escape")  # the list covers the next field at 400 px
    page.click(f'{form} input[name="model"]')
    page.fill(f'{form} input[name="model"]', "llama3.3:70b")
    page.wait_for_selector(f'{form} ul.picker-list li[data-id="llama-3.3-70b-instruct-q4_k_m"]')
    page.screenshot(path=str(SCREENSHOT_DIR / f"pickers-model-open-{width}.png"))
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.goto(f"{served}/search?q=llama%2070b")
    page.screenshot(path=str(SCREENSHOT_DIR / f"search-{width}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.errors == []
    page.context.close()
