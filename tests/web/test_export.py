"""The static export: every page, mirror, asset and machine file, served by a plain file server."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from servebound.web.export.build import build_site
from servebound.web.pages.manual import documents
from servebound.web.pages.registry import fixed_pages
from servebound.web.pages.site import SiteData
from tests.web.conftest import HOSTILE, dead_links, file_server, site_lists


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object, list[tuple[int, int, str]]]:
    hardware, models = site_lists()
    out = tmp_path_factory.mktemp("site")
    calls: list[tuple[int, int, str]] = []
    report = build_site(
        out,
        lambda done, total, path: calls.append((done, total, path)),
        site=SiteData(hardware, models),
        base_url="https://example.org",
    )
    return out, report, calls


@pytest.fixture(scope="module")
def served(exported: tuple[Path, object, object]) -> Iterator[str]:
    with file_server(exported[0]) as url:
        yield url


def fetch(url: str) -> str:
    with urllib.request.urlopen(url) as r:
        body: bytes = r.read()
    return body.decode("utf-8")


def test_report_and_progress(exported: tuple[Path, object, list[tuple[int, int, str]]]) -> None:
    out, report, calls = exported
    # the registry's fixed pages (home, methodology, derivation, license, validation, economics, the two
    # indexes, the manual's index) + each document of the manual (docs/)
    # + 5 hardware
    # + 3 models + 5 x 3 pairs (the example files are native profiles; no reported run names them)
    # 5 machines x 3 native models, less the 71.9 GB Laguna on the 24 GB RTX 4090 (its weights do not
    # fit) and on the M3 Ultra (no engine runs NVFP4 on Apple devices): those pairs are answered by the
    # calculator page, /pair/, from data/hardware and data/models
    assert report.pages == len(fixed_pages()) + len(documents()) + 5 + 3 + 13  # type: ignore[attr-defined]
    assert report.pairs == 13  # type: ignore[attr-defined]
    assert [c[0] for c in calls] == list(range(1, report.pages + 1))  # type: ignore[attr-defined]
    assert all(c[1] == report.pages for c in calls)  # type: ignore[attr-defined]
    for rel in (
        "index.html",
        "index.md",
        "hardware/index.html",
        "hardware.md",
        "models/hostile/index.html",
        "models/hostile.md",
        "pair/nvidia-b200/hostile/index.html",
        "pair/nvidia-b200/hostile.md",
        "methodology/index.html",
        "license.md",
        "validation/index.html",
        "validation.md",
        "llms.txt",
        "llms-full.txt",
        "robots.txt",
        "sitemap.xml",
        "static/calc.js",
        "static/chart_axes.js",
        "static/pair_figures.js",
        "static/site.js",
        "static/chart_markup.js",
        "static/derivation.js",
        "static/site.css",
        "data/models/hostile.json",
        "data/hardware/nvidia-rtx-4090.json",
        "pair/index.html",
    ):
        assert (out / rel).is_file(), rel


def test_http_server_serves_the_whole_site(served: str) -> None:
    home = fetch(served + "/")
    assert 'data-mode="static"' in home
    pair = fetch(served + "/pair/nvidia-b200/hostile")  # redirected to the folder's index.html
    assert 'id="fig-aggregate"' in pair and "<math" in pair and HOSTILE not in pair
    assert fetch(served + "/pair/nvidia-b200/hostile.md").startswith("---\ntitle: ")
    assert fetch(served + "/robots.txt").startswith("# Machine-readable content")
    assert "https://example.org/sitemap.xml" in fetch(served + "/robots.txt")
    llms = fetch(served + "/llms.txt")
    assert "(https://example.org/hardware/nvidia-b200.md)" in llms
    assert "https://example.org/pair/<hardware id>/<model id>.md" in llms  # pairs by pattern
    assert "<loc>https://example.org/models/hostile.md</loc>" in fetch(served + "/sitemap.xml")
    full = fetch(served + "/llms-full.txt")
    held = len(full.split("\n=====  =====  =====\n")) - 1
    assert full.startswith(f"# servebound: {held} documents as text\n\nThis file holds {held} documents: ")
    assert "\nLicense: CC BY 4.0" in full.split("=====")[0]


def test_every_internal_link_resolves(exported: tuple[Path, object, object]) -> None:
    missing = dead_links(exported[0])
    assert not missing, missing[:10]
