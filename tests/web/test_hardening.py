"""Issue 14's reproducers on the site: long ids refused before any work and never echoed whole,
llms-full.txt encoded once and served gzip, a static copy under a base path, no wait where nothing fits."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from servebound.errors import MAX_ID_CHARS
from servebound.web.export.build import build_site
from servebound.web.pages.site import SiteData
from tests.web.conftest import site_lists

#: httpx refuses URLs past 64 kB; the raw-socket load test in bench/ sends 100 kB ids.
LONG = "a" * 60_000


@pytest.mark.parametrize(
    "path",
    [
        f"/pair/nvidia-h100-sxm/{LONG}",
        f"/pair/{LONG}/hostile",
        f"/pair/nvidia-h100-sxm/{LONG}.md",
        f"/hardware/{LONG}",
        f"/models/{LONG}",
        f"/api/decode?hardware=nvidia-h100-sxm&model={LONG}",
        f"/api/prefill?hardware={LONG}&model=hostile&prompt=100",
        f"/api/rank?hardware={LONG}",
        f"/no/such/page/{LONG}",
    ],
)
def test_a_long_id_is_refused_without_echoing_it(client: TestClient, path: str) -> None:
    """A 100 kB id cost 3 s of fuzzy matching and came back as 200 kB; now a 404 of a few kB."""
    response = client.get(path)
    assert response.status_code == 404
    assert len(response.content) < 4_000 and LONG not in response.text
    assert re.search(r"60,0\d\d characters", response.text)
    if path.startswith("/api/"):
        error = response.json()["error"]
        assert error["status"] == 404 and error["field"] in ("hardware", "model")
        assert f"({MAX_ID_CHARS} characters at most)" in error["message"]


def test_a_long_query_value_is_not_echoed_whole(client: TestClient) -> None:
    response = client.get(f"/api/decode?hardware=nvidia-h100-sxm&model=hostile&floor={'9' * 50_000}x")
    assert response.status_code == 400 and len(response.content) < 4_000


def test_llms_full_is_encoded_once_and_served_gzip(app: FastAPI) -> None:
    client = TestClient(app)
    # The first request may stream the file while it is built; once built it is encoded and stored once.
    streamed = client.get("/llms-full.txt", headers={"Accept-Encoding": "identity"})
    assert streamed.status_code == 200 and app.state.web.full.body() is not None
    plain = client.get("/llms-full.txt", headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200 and "content-encoding" not in plain.headers
    assert plain.content == streamed.content
    assert "Accept-Encoding" in [v.strip() for v in plain.headers["vary"].split(",")]  # and Origin (CORS)
    stored = app.state.web.full_text
    ((raw, packed),) = stored.values()
    packed_response = client.get("/llms-full.txt", headers={"Accept-Encoding": "gzip, deflate"})
    assert packed_response.headers["content-encoding"] == "gzip"
    assert packed_response.content == plain.content == raw == gzip.decompress(packed)
    assert len(packed) < len(raw) / 3
    # the same bytes objects serve every later request: nothing is encoded again
    client.get("/llms-full.txt")
    assert next(iter(stored.values()))[0] is raw and next(iter(stored.values()))[1] is packed
    no_gzip = client.get("/llms-full.txt", headers={"Accept-Encoding": "gzip;q=0, br"})
    assert "content-encoding" not in no_gzip.headers


def test_build_site_under_a_base_path(tmp_path: Path) -> None:
    """`--base-url https://example.org/sub` linked /static/ and / at the domain root: every link of the
    copy is relative now, so it works below any path (and from file://); only the absolute URLs of the
    machine files and the canonical links carry the base, and 404.html (which a host serves at any
    depth) links under the base path."""
    hardware, models = site_lists()
    build_site(tmp_path, site=SiteData(hardware, models), base_url="https://example.org/sub", max_pairs=2)
    pages = [p for p in tmp_path.rglob("*.html") if p.name != "404.html"]
    assert len(pages) > 10
    root_link = re.compile(r'\s(?:href|src|action)="/(?!/)')
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not root_link.search(text), (page, root_link.search(text))
        depth = len(page.relative_to(tmp_path).parts) - 1
        assert f'<html lang="en" data-base="{"/".join([".."] * depth) or "."}">' in text, page
    home = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert 'href="static/site.css"' in home and 'href="index.html"' in home
    assert '<link rel="canonical" href="https://example.org/sub/">' in home
    pair = (tmp_path / "pair" / "nvidia-b200" / "qwen3.6-35b-a3b-example" / "index.html").read_text("utf-8")
    assert (
        'href="../../../static/site.css"' in pair
        and 'href="../../../hardware/nvidia-b200/index.html"' in pair
    )
    missing = (tmp_path / "404.html").read_text(encoding="utf-8")
    assert 'href="/sub/static/site.css"' in missing and not re.search(r'\s(?:href|src)="/(?!sub/)', missing)
    mirror = (tmp_path / "index.md").read_text(encoding="utf-8")
    assert "](/hardware" not in mirror and "](hardware" in mirror
    llms = (tmp_path / "llms.txt").read_text(encoding="utf-8")
    assert "https://example.org/sub/" in llms


def test_pair_where_nothing_fits_has_no_wait(client: TestClient) -> None:
    """The RTX 4090 + a 71 GB model said "does not fit" beside a first-token wait."""
    path = "/pair/nvidia-rtx-4090/laguna-s-2.1-nvfp4-example"
    html = client.get(path).text
    assert 'data-k="prefill.time_s" data-f="wait">nothing fits<' in html
    markdown = client.get(path + ".md").text
    assert "- First-token wait: nothing fits in memory (no_resident_fit)" in markdown
    assert re.search(r"First-token wait: [\d.]+ (ms|s)", markdown) is None
    data = client.get(
        "/api/prefill",
        params={"hardware": "nvidia-rtx-4090", "model": "laguna-s-2.1-nvfp4-example", "prompt": 4096},
    ).json()
    assert data["verdict"] == "no_resident_fit" and data["time_s"] is None and data["tok_s"] is None


def test_the_site_default_overhead_is_the_rows(client: TestClient) -> None:
    """The pair page and the API take the hardware row's runtime overhead, as the CLI does."""
    api = client.get("/api/decode", params={"hardware": "nvidia-rtx-4090", "model": "hostile"}).json()
    assert api["assumptions"]["overhead_gb"] == 1.0
    assert api["assumptions"]["overhead_source"].startswith("hardware row: 1 GB")
    spark = client.get("/api/decode", params={"hardware": "dgx-spark-example", "model": "hostile"}).json()
    assert spark["assumptions"]["overhead_gb"] == 8.0
    given = client.get(
        "/api/decode", params={"hardware": "nvidia-rtx-4090", "model": "hostile", "overhead_gb": 3}
    ).json()
    assert given["assumptions"]["overhead_gb"] == 3.0
    html = client.get("/pair/nvidia-rtx-4090/hostile").text
    assert 'name="overhead_gb" min="0" max="64" step="any" value="1.0"' in html


def test_markdown_mirrors_escape_terminal_control_characters() -> None:
    """A model named with escape sequences reaches no terminal raw through `curl .../x.md`."""
    from dataclasses import replace

    from servebound.web.app.server import create_app
    from tests.web.conftest import hostile_model

    hardware, _ = site_lists()
    evil = replace(hostile_model(), id="evil", name="evil\x1b[2J\x1b]0;owned\x07")
    client = TestClient(create_app(hardware=hardware, models=[evil]))
    for path in ("/models/evil.md", "/pair/nvidia-h100-sxm/evil.md", "/models/evil", "/llms-full.txt"):
        text = client.get(path).text
        # (llms-full.txt holds the models table, where the name is a link text with [ escaped)
        assert any(f"evil\\{e}" in text for e in ("x1b[2J", "u001b[2J", "x1b\\[2J")), path
        assert "\x1b" not in text and "\x07" not in text, path


def test_a_remedy_on_the_web_names_the_query_parameter_not_the_flag(client: TestClient) -> None:
    """Experts in host RAM without the host's memory: the CLI says `--host-memory-gb G or --host HOST`;
    a page and the JSON API say the parameters they take, and an engine's own flag stays as written."""
    query = "cpu_moe=true&engine=llama.cpp"
    page = client.get(f"/pair/nvidia-rtx-4090/qwen3.6-35b-a3b-example?{query}")
    api = client.get(f"/api/decode?hardware=nvidia-rtx-4090&model=qwen3.6-35b-a3b-example&{query}")
    assert page.status_code == api.status_code == 400
    message = api.json()["error"]["message"]
    assert "host_memory_gb=G or host=HOST" in message and "--" not in message
    assert "host_memory_gb=G or host=HOST" in page.text and "--host" not in page.text
