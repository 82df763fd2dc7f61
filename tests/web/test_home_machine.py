"""The served home page answers "what fits this machine" first, from the same record `servebound fit`
computes there; where detection finds nothing it says so and points to choosing a machine; the static
export's home page has no such section. Real `servebound serve` processes, each with its own PATH (a
vendor tool printing a recorded output, or no tool at all), read in a real Chromium at a desktop and a
phone width."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from servebound.web.pages.renderer import Renderer
from servebound.web.pages.site import default_site_data
from tests.conftest import process_json
from tests.web.test_browser import ARGS, CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent"),
]
playwright_sync = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

TOOLS = Path(__file__).parents[1] / "data" / "device_tools"
WIDTHS = (1400, 400)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(tmp_path: Path, name: str, tool: str | None) -> Iterator[str]:
    folder = tmp_path / name
    folder.mkdir()
    if tool is not None:
        script = folder / "nvidia-smi"
        script.write_text(f"#!/bin/sh\nexec /bin/cat '{TOOLS / tool}'\n")
        script.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{folder}{os.pathsep}{Path(sys.executable).parent}",
    }
    port = _free_port()
    argv = [sys.executable, "-m", "servebound", "serve", "--port", str(port)]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"{base}/api/hardware", timeout=2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def detected(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _serve(tmp_path_factory.mktemp("home"), "rtx4090", "nvidia-smi-rtx4090.csv")


@pytest.fixture(scope="module")
def undetected(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _serve(tmp_path_factory.mktemp("home"), "none", None)


def _fit_record() -> dict:
    fitted: dict = process_json("fit", "--hardware", "nvidia-rtx-4090")
    return fitted


def _read(base: str, width: int) -> dict:
    with playwright_sync.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(f"{base}/", wait_until="load")
        first = page.eval_on_selector("main h2", "e => e.textContent")
        section = page.eval_on_selector("section.this-machine", "e => e.innerText")
        links = page.eval_on_selector_all("section.this-machine tbody a", "es => es.map(e => e.textContent)")
        hrefs = page.eval_on_selector_all(
            "section.this-machine a", "es => es.map(e => e.getAttribute('href'))"
        )
        wide = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        browser.close()
    return {"first": first, "section": section, "links": links, "hrefs": hrefs, "wide": wide}


@pytest.mark.parametrize("width", WIDTHS)
def test_detected_machine_is_the_first_answer(detected: str, width: int) -> None:
    record = _fit_record()
    seen = _read(detected, width)
    assert seen["first"] == "What fits this machine"
    assert "nvidia-rtx-4090" in seen["section"]
    assert (
        f"serves {len(record['models'])} of {record['models_considered']} catalog models" in seen["section"]
    )
    # The rows are fit's rows, in fit's order (the home page shows the first twelve).
    names = [row["model"]["name"] for row in record["models"][:12]]
    assert seen["links"] == names
    assert not seen["wide"]


def test_pair_links_of_the_fit_rows_answer(detected: str) -> None:
    seen = _read(detected, 1400)
    pairs = [href for href in seen["hrefs"] if href.startswith("/pair/")]
    assert pairs
    for href in pairs[:3]:
        with urllib.request.urlopen(f"{detected}{href}", timeout=30) as reply:
            assert reply.status == 200


@pytest.mark.parametrize("width", WIDTHS)
def test_nothing_detected_says_so_and_links_to_choosing(undetected: str, width: int) -> None:
    seen = _read(undetected, width)
    assert seen["first"] == "This machine was not detected"
    assert "found no GPU" in seen["section"] and "servebound measure" in seen["section"]
    assert "#pick" in seen["hrefs"] and "/hardware" in seen["hrefs"]
    assert not seen["wide"]


def test_markdown_mirror_carries_the_same_answer(detected: str) -> None:
    with urllib.request.urlopen(f"{detected}/index.md", timeout=30) as reply:
        text = reply.read().decode()
    assert "## What fits this machine" in text and "(`nvidia-rtx-4090`)" in text


def test_static_export_home_has_no_machine_section() -> None:
    site = default_site_data()
    page = Renderer(site, mode="static").home()
    assert "this-machine" not in page.html and "What fits this machine" not in page.markdown
    served = Renderer(site, mode="server").home()
    assert "this-machine" in served.html
