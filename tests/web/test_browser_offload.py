"""A real Chromium on the pair page's engine and offload controls (issue 22): the form sets the URL and
the answer, served (numbers from the JSON API) and static (engines computed in the browser; offload
said plainly to come from the server). Screenshots of the page with offload set at 1400 and 400 px go
to SCREENSHOT_DIR for a person to look at."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from servebound.views.report import fmt_gb, fmt_rate
from tests.web.test_browser import SCREENSHOT_DIR, numbers
from tests.web.test_browser import browser as browser  # the fixtures, re-exported
from tests.web.test_browser import server as server
from tests.web.test_browser import static_site as static_site

pytestmark = [pytest.mark.browser]

#: The 71 GB Laguna does not fit a 24 GB card; with every routed expert in host RAM it does.
HW, MODEL = "nvidia-rtx-4090", "laguna-s-2.1-nvfp4-example"
PAIR = f"/pair/{HW}/{MODEL}"
HOST = "desktop-ddr5-6000-2ch"


def api(server: str, name: str, hardware: str = HW, **params: Any) -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(
        f"{server}/api/{name}", params={"hardware": hardware, "model": MODEL, **params}
    ).json()
    return found


def test_the_offload_controls_set_the_url_and_the_answer(browser: Any, server: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + PAIR)
    assert "no_resident_fit" in (page.get_attribute("#results .verdict", "class") or "")
    assert page.locator("#offload-answer").is_hidden()
    page.click("summary")
    page.check("#cpu_moe")  # without the host's memory: the API's one-line error, named
    page.wait_for_function(
        "document.getElementById('calc-status').textContent.indexOf('host_memory_gb') === 0"
    )
    page.select_option("#host", HOST)
    page.wait_for_function("document.body.dataset.computed === 'api'")
    assert "cpu_moe=true" in page.url and f"host={HOST}" in page.url
    assert "overhead_gb" not in page.url  # O stays the row's default until its slider moves
    want = api(server, "decode", cpu_moe="true", host=HOST)
    shown = numbers(page)
    assert want["verdict"] == "floor_fit"
    assert shown["single_session_tok_s"] == fmt_rate(want["single_session_tok_s"])
    assert shown["aggregate_tok_s"] == fmt_rate(want["aggregate_tok_s"])
    assert page.locator("#offload-answer").is_visible()
    for key in (
        "device_resident_bytes",
        "host_resident_bytes",
        "device_bytes_per_token",
        "host_bytes_per_token",
    ):
        assert shown[f"offload.{key}"] == fmt_gb(want["offload"][key]), key
    prompt = page.input_value('input[name="prompt"]')
    pre = api(server, "prefill", cpu_moe="true", host=HOST, prompt=prompt)
    assert shown["prefill.time_s"] != "nothing fits" and pre["offload"] is not None
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    page.goto(page.url)  # the served page for the URL the form set: its figures drawn for it
    assert numbers(page)["offload.host_bytes_per_token"] == fmt_gb(want["offload"]["host_bytes_per_token"])
    page.click("summary")
    page.screenshot(path=str(SCREENSHOT_DIR / "pair-offload-1400.png"), full_page=True)
    url = page.url
    page.close()
    page = browser.new_page(viewport={"width": 400, "height": 900})
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.click("summary")
    page.screenshot(path=str(SCREENSHOT_DIR / "pair-offload-400.png"), full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 400, (width, url)  # nothing wider than a phone's screen
    assert not errors, errors
    page.close()


def test_the_engine_sets_the_allocation_and_the_overhead(browser: Any, server: str, static_site: str) -> None:
    want = api(server, "decode", "dgx-spark-example", engine="vllm")
    assert want["assumptions"]["kv_allocation"] == "paged" and want["batch_mem"]
    for base, mode in ((server, "api"), (static_site, "browser")):
        page = browser.new_page(viewport={"width": 1100, "height": 1400})
        errors: list[str] = []
        page.on("pageerror", lambda e, seen=errors: seen.append(str(e)))
        page.goto(base + f"/pair/dgx-spark-example/{MODEL}" + ("/" if mode == "browser" else ""))
        page.click("summary")
        page.select_option("#kv_allocation", "reserved")
        page.wait_for_function(f"document.body.dataset.computed === '{mode}'")
        page.evaluate("document.body.dataset.computed = ''")
        page.select_option("#engine", "vllm")
        page.wait_for_function(f"document.body.dataset.computed === '{mode}'")
        assert page.input_value("#kv_allocation") == ""  # the engine's allocation, not a conflicting one
        assert "engine=vllm" in page.url and "overhead_gb" not in page.url, page.url
        shown = numbers(page)
        for key in ("batch_mem", "batch_star"):
            assert shown[key] == f"{want[key]:,}", (mode, key)
        assert shown["format_support"] == want["format_support"], mode
        # the slider snaps to its step; its readout states the engine's O (vLLM's 10 % of capacity)
        overhead = page.text_content('input[name="overhead_gb"] + output') or ""
        assert float(overhead.replace(",", "")) == pytest.approx(want["assumptions"]["overhead_gb"], rel=1e-3)
        assert not errors, (mode, errors)
        page.close()


def test_the_static_copy_says_offload_comes_from_the_server(browser: Any, static_site: str) -> None:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(static_site + "/pair/dgx-spark-example/" + MODEL + f"/?cpu_moe=true&host={HOST}")
    page.wait_for_function("document.body.dataset.computed === 'none'")
    assert page.locator("#offload-static").is_visible()
    assert "computed by the server" in (page.text_content("#results .verdict") or "")
    assert numbers(page)["aggregate_tok_s"] == "n/a"
    assert not errors, errors
    page.close()
