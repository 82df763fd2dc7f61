"""Reported runs on the site: measured next to the ceiling on pair and hardware pages, the validation
page and its API, the machine files, and llms-full.txt built once (in the background when served)."""

from __future__ import annotations

import html as html_lib
import json
import re
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from servebound.catalog.architectures import architecture_name
from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import get_model
from servebound.cli import main
from servebound.runs.validation import reported_runs_for, validation_summary
from servebound.web.app.server import create_app
from servebound.web.export.build import build_site
from servebound.web.pages.machine_files import absolute_canonicals
from servebound.web.pages.manual import documents
from servebound.web.pages.registry import fixed_pages, in_full_text
from servebound.web.pages.site import SiteData
from servebound.web.pages.text import md
from tests.web.conftest import dead_links, hostile_model, site_lists

#: Catalog rows and profiles with reported runs: the derivation's DGX Spark + Gemma run (a catalog
#: pair), RTX 3060 runs on a profile this site leaves out (llama-2-7b-q4_0), the DGX Spark prefill run that sat above
#: its ceiling until the row's int8 rate was derived, and the RTX 4080 + Qwen runs.
RUN_HW = ("nvidia-dgx-spark", "nvidia-rtx-3060-12gb", "nvidia-rtx-4080")
RUN_MODELS = ("gemma-4-26b-a4b-nvfp4", "qwen2.5-7b-q4_k_m")
GEMMA_RUN = "derivation-dgx-spark-gemma-4-26b-a4b-nvfp4-c16"
ABOVE = "llamacpp-d15013-nvidia-dgx-spark-llama-2-7b-q4_0-pp512"


def run_site_lists() -> tuple[list[object], list[object]]:
    return [get_hardware(h) for h in RUN_HW], [*(get_model(m) for m in RUN_MODELS), hostile_model()]


@pytest.fixture(scope="module")
def rc() -> TestClient:
    hardware, models = run_site_lists()
    return TestClient(create_app(hardware=hardware, models=models, base_url="http://testserver"))


@pytest.fixture(scope="module")
def cli_validation() -> dict[str, Any]:
    """`servebound validate --json`, run in-process."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["validate", "--json"])
    assert status == 0
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def text_of(html: str) -> str:
    """The page's text with tags dropped and entities decoded (for phrases that span elements)."""
    return html_lib.unescape(re.sub(r"<[^>]+>", "", html))


# --- pair pages ----------------------------------------------------------------------------------------


def test_pair_page_shows_its_runs_next_to_the_ceiling(rc: TestClient) -> None:
    runs = reported_runs_for("nvidia-dgx-spark", "gemma-4-26b-a4b-nvfp4")
    assert [r.entry.id for r in runs] == [GEMMA_RUN]
    run = runs[0]
    # The derivation's run: 18 tok/s per session at concurrency 16, 32,000 read tokens, against the
    # ceiling for that setting, 18.21 tok/s per session (the NVFP4 profile keeps the tied embedding and
    # head in BF16, as quantizers leave it): 18.0 / 18.21 = 0.989, shown as 98.9 %.
    assert run.check.measured_tok_s == 18.0
    assert run.check.ceiling_tok_s == pytest.approx(18.21, abs=0.01)
    page = rc.get("/pair/nvidia-dgx-spark/gemma-4-26b-a4b-nvfp4")
    assert page.status_code == 200
    html = page.text
    section = html.split('<section class="runs" id="measured">')[1].split("</section>")[0]
    assert "<h2>Measured next to the ceiling</h2>" in section
    assert f'id="run-{GEMMA_RUN}"' in section
    text = text_of(section)
    for phrase in (
        "unspecified serving engine: not reported",  # engine and version
        "NVFP4 weights and an fp8 KV cache",  # quantization
        "16 sessions; reads 32,000 tokens per step of 100,000 reserved",  # concurrency and context
        "per_session_tok_s: tokens per second per session while 16 sessions decode together",  # metric
        "18.0 tok/s per session",  # measured
        "18.2 tok/s per session",  # ceiling for the same setting
        "98.9 %",  # efficiency
        "doc:roofline-derivation",  # the source (not a link: the project's own document)
        "roughly 16 to 18 tok/s/session",  # the quoted figure
    ):
        assert phrase in text, phrase
    assert "above the ceiling" not in text
    mirror = rc.get("/pair/nvidia-dgx-spark/gemma-4-26b-a4b-nvfp4.md").text
    part = mirror.split("## Measured next to the ceiling\n")[1].split("\n## ")[0]
    assert "18.0 tok/s per session; ceiling for the same setting: 18.2 tok/s per session" in part
    assert "efficiency **98.9 %**" in part
    assert f"Run id: `{GEMMA_RUN}`" in part
    assert "Setting: 16 sessions; reads 32,000 tokens per step of 100,000 reserved" in part


def test_a_pair_checks_its_own_runs_as_the_whole_set_does() -> None:
    """Before the site has checked every run (``validation()``), a pair page checks only its own: the
    same records, and nothing else checked."""
    whole = validation_summary().runs
    hardware, models = run_site_lists()
    site = SiteData(hardware, models)
    pairs = {(r.entry.hardware, r.entry.model) for r in whole}
    assert (RUN_HW[0], RUN_MODELS[0]) in pairs and len(pairs) > 1
    for hw, model in sorted(pairs):
        assert site.runs_for_pair(hw, model) == list(reported_runs_for(hw, model, whole))
    assert site.runs_for_pair(RUN_HW[0], "no-such-model") == []
    assert site._validation is None  # no pair page checked every run
    site.validation()
    assert site.runs_for_pair(RUN_HW[0], RUN_MODELS[0]) == list(
        reported_runs_for(RUN_HW[0], RUN_MODELS[0], whole)
    )


def test_every_pair_with_runs_shows_each_of_them(rc: TestClient) -> None:
    site: SiteData = rc.app.state.site
    shown = 0
    for hw in site.hardware:
        for m in site.models:
            runs = reported_runs_for(hw.id, m.id)
            if not runs:
                continue
            html = rc.get(f"/pair/{hw.id}/{m.id}").text
            mirror = rc.get(f"/pair/{hw.id}/{m.id}.md").text
            for run in runs:
                assert f'id="run-{run.entry.id}"' in html
                assert pct(run.efficiency) in html
                assert f"Run id: `{run.entry.id}`" in mirror
                if run.entry.source_url.startswith("https://"):
                    assert f'href="{run.entry.source_url}"' in html
                shown += 1
    # Gemma on the DGX Spark, and the RTX 4080 + Qwen2.5 7B decode and prefill runs
    assert shown == 3


def test_pair_without_runs_says_so_in_one_line(rc: TestClient) -> None:
    html = rc.get("/pair/nvidia-dgx-spark/qwen2.5-7b-q4_k_m").text
    assert "No published runs for this pair yet" in html
    mirror = rc.get("/pair/nvidia-dgx-spark/qwen2.5-7b-q4_k_m.md").text
    section = mirror.split("## Measured next to the ceiling\n")[1].split("\n## ")[0]
    assert section.strip() == "No published runs for this pair yet ([every run](/validation.md))."


# --- hardware pages: runs on models the site has no page for --------------------------------------------------


def test_runs_on_models_without_a_page_appear_on_the_hardware_page(rc: TestClient) -> None:
    summary = validation_summary()
    runs = [r for r in summary.runs if r.entry.hardware == "nvidia-rtx-3060-12gb"]
    assert {r.entry.model for r in runs} == {"llama-2-7b-q4_0"}  # a catalog profile this site leaves out
    html = rc.get("/hardware/nvidia-rtx-3060-12gb").text
    assert '<h2 id="runs">Published runs on this hardware</h2>' in html
    mirror = rc.get("/hardware/nvidia-rtx-3060-12gb.md").text
    assert "## Published runs on this hardware" in mirror
    for run in runs:
        assert f'href="/validation#run-{run.entry.id}"' in html
        assert f"| `{run.entry.id}` |" in mirror
        assert pct(run.efficiency) in html and pct(run.efficiency) in mirror
    assert "llama-2-7b-q4_0 (no page on this site)" in html


def test_the_formerly_above_run_sits_below_its_ceiling_on_every_page(rc: TestClient) -> None:
    run = next(r for r in validation_summary().runs if r.entry.id == ABOVE)
    # 3,062 tok/s: 129 % of the fp32-charged ceiling before GB10's derived int8 rate; at or below it now.
    assert run.check.measured_tok_s == 3062
    assert run.at_or_below and run.entry.explanation is None
    for path in ("/hardware/nvidia-dgx-spark", "/validation"):
        html = rc.get(path).text
        assert f"run-{ABOVE}" in html, path
        assert re.search(rf'<tr[^>]*id="run-{re.escape(ABOVE)}"[^>]*class="above"', html) is None, path
        assert not re.search(
            rf'<tr class="above"[^>]*>\s*<td><a href="/validation#run-{re.escape(ABOVE)}"', html
        )


def test_no_run_is_invisible_on_the_packaged_site(cli_validation: dict[str, Any]) -> None:
    """Every shipped run is on its pair page (a catalog pair) or else on its hardware page."""
    app = create_app()
    client = TestClient(app)
    site: SiteData = app.state.site
    pages: dict[str, str] = {}
    for run in cli_validation["runs"]:
        hw, model = run["hardware"], run["model"]
        assert hw in site.hardware_by_id, run["id"]
        if model in site.models_by_id:
            path = f"/pair/{hw}/{model}"
            marker = f'id="run-{run["id"]}"'
        else:
            path = f"/hardware/{hw}"
            marker = f'href="/validation#run-{run["id"]}"'
        if path not in pages:
            pages[path] = client.get(path).text
        assert marker in pages[path], (run["id"], path)
    validation = client.get("/validation").text
    assert all(f'id="run-{run["id"]}"' in validation for run in cli_validation["runs"])


# --- the validation page and its API -----------------------------------------------------------------


def test_api_validation_equals_the_cli(rc: TestClient, cli_validation: dict[str, Any]) -> None:
    api = rc.get("/api/validation")
    assert api.status_code == 200
    assert api.json() == cli_validation


def test_validation_page_numbers_equal_the_cli(rc: TestClient, cli_validation: dict[str, Any]) -> None:
    data = cli_validation
    assert data["total"] == len(data["runs"]) and data["at_or_below"] <= data["total"]
    html = rc.get("/validation").text
    assert f'<span data-k="total">{data["total"]}</span> published runs' in html
    assert f'<span data-k="at_or_below">{data["at_or_below"]}</span> sit at or below' in html
    mirror = rc.get("/validation.md").text
    assert (
        f"{data['total']} published runs; **{data['at_or_below']} sit at or below their ceiling**" in mirror
    )

    def cells(stats: dict[str, Any]) -> str:
        numbers = " | ".join(pct(stats[k]) for k in ("min", "p25", "median", "p75", "max"))
        return f"| {stats['count']} | {stats['at_or_below']} | {numbers} |"

    rows = [("All runs", data["efficiency"])]
    for key, label in (
        ("by_engine", "Engine"),
        ("by_hardware_family", "Hardware family"),
        ("by_phase", "Phase"),
        ("by_model_family", "Model family"),
    ):
        # A model family is the config's model_type in the JSON, its name on the page.
        named = architecture_name if key == "by_model_family" else str
        rows += [(f"{label}: {named(name)}", stats) for name, stats in data[key].items()]
    for label, stats in rows:
        assert f"| {md(label)} {cells(stats)}" in mirror, label
        html_row = (
            f'<tr><td>{html_lib.escape(label)}</td><td class="n">{stats["count"]}</td>'
            f'<td class="n">{stats["at_or_below"]}</td>'
            + "".join(f'<td class="n">{pct(stats[k])}</td>' for k in ("min", "p25", "median", "p75", "max"))
            + "</tr>"
        )
        assert html_row in html, label
    text = text_of(html)
    for run in data["runs"]:
        row = html.split(f'id="run-{run["id"]}"')[1].split("</tr>")[0]
        assert pct(run["efficiency"]) in row, run["id"]
        if run["source_url"].startswith("https://"):
            assert f'href="{html_lib.escape(run["source_url"])}"' in row
        assert f"| `{run['id']}` |" in mirror
    # the pair link of the one run whose pair this site lists, and its hardware link
    assert 'href="/pair/nvidia-dgx-spark/gemma-4-26b-a4b-nvfp4"' in html
    assert 'href="/hardware/nvidia-rtx-3060-12gb"' in html
    assert "(no page on this site)" in text


def test_validation_figure_draws_every_run(rc: TestClient, cli_validation: dict[str, Any]) -> None:
    html = rc.get("/validation").text
    above = sum(not r["at_or_below"] for r in cli_validation["runs"])
    for fig in ("fig-validation-phase", "fig-validation-family"):
        svg = html.split(f'<svg class="strip" id="{fig}"')[1].split("</svg>")[0]
        dots = re.findall(r'<a href="#(run-[^"]+)"><circle class="(run(?: above)?)"', svg)
        assert len(dots) == cli_validation["total"]
        assert sum(css == "run above" for _, css in dots) == above
        assert all(f'id="{anchor}"' in html for anchor, _ in dots)
        assert "ceiling (100 %)" in svg
        # the axis reaches the largest efficiency: its last tick is at or past max
        ticks = [int(t) for t in re.findall(r'class="tick"[^>]*>(\d+) %<', svg)]
        assert ticks[0] == 0 and ticks[-1] >= 100 * cli_validation["efficiency"]["max"]


def test_validation_is_in_the_nav_mirrors_and_machine_files(client: TestClient) -> None:
    assert '<a href="/validation">Validation</a>' in client.get("/").text
    md_page = client.get("/validation.md")
    assert md_page.status_code == 200 and md_page.headers["content-type"].startswith("text/markdown")
    assert md_page.text.startswith('---\ntitle: "Validation: published runs against their ceilings"')
    assert "(http://testserver/validation.md)" in client.get("/llms.txt").text
    sitemap = client.get("/sitemap.xml").text
    assert "<loc>http://testserver/validation</loc>" in sitemap
    assert "<loc>http://testserver/validation.md</loc>" in sitemap
    full = client.get("/llms-full.txt").text
    assert '\ntitle: "Validation: published runs against their ceilings"\nurl: "/validation"' in full
    assert (
        "[Validation: published runs against their ceilings](/validation.md)" in client.get("/index.md").text
    )


def test_openapi_lists_the_validation_route_with_the_error_shape(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    route = doc["paths"]["/api/validation"]["get"]
    assert route["tags"] == ["validation"]
    assert route["responses"]["400"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")
    r = client.post("/api/validation")
    assert r.status_code == 405
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"status", "field", "message"}
    assert body["error"]["status"] == 405 and body["error"]["field"] == "method"
    assert "POST" in body["error"]["message"] and "GET" in body["error"]["message"]


# --- llms-full.txt: the cheap path and the background build --------------------------------------------


def test_llms_full_is_every_mirror_in_index_order(client: TestClient) -> None:
    """llms-full.txt (pair pages through the markdown-only path) holds each page's mirror verbatim."""
    llms = client.get("/llms.txt").text
    links = re.findall(r"\]\(http://testserver(/[^)]+\.md(?:\?[^)]*)?)\)", llms)
    # the documents and the catalog's tables; each hardware, model and pair page is one .md away
    links = [link for link in links if in_full_text(link.removesuffix(".md"))]
    assert "/derivation.md" in links and "/hardware.md" in links and "/models.md" in links
    assert not any(link.startswith(("/hardware/", "/models/", "/pair/")) for link in links)
    full = client.get("/llms-full.txt").text
    docs = full.split("\n\n=====  =====  =====\n\n")[1:]
    assert len(docs) == len(links)
    for link, doc in zip(links, docs, strict=True):
        mirror = client.get(urllib.parse.unquote(link)).text
        # llms-full.txt names each document's canonical URL absolutely (its header's base URL); a mirror
        # served without a configured base URL carries the path.
        assert doc == absolute_canonicals(mirror.rstrip() + "\n", "http://testserver"), link


def test_llms_full_streams_while_the_background_build_runs() -> None:
    """A request during the build is answered at once (no 503): the header, then each document as the
    build finishes it; the text, plain or gzip, is the finished file's, byte for byte."""
    hardware, models = site_lists()
    app = create_app(hardware=hardware, models=models, base_url="http://testserver")
    gate = threading.Event()
    thread = app.state.llms_full.start(gate)
    assert thread is not None and app.state.llms_full.start() is thread  # started once
    results: dict[str, Any] = {}

    def fetch(name: str, encoding: str) -> None:
        with TestClient(app) as client:
            results[name] = client.get("/llms-full.txt", headers={"Accept-Encoding": encoding})

    readers = [
        threading.Thread(target=fetch, args=(n, e)) for n, e in (("plain", "identity"), ("gzip", "gzip"))
    ]
    for reader in readers:
        reader.start()
    while app.state.llms_full.streams < len(readers):  # both answered from the build, which waits
        assert all(reader.is_alive() for reader in readers)
        time.sleep(0.01)
    assert app.state.llms_full.building and app.state.llms_full.body() is None
    gate.set()
    for reader in readers:
        reader.join()
    thread.join()
    assert not app.state.llms_full.building and app.state.llms_full.start() is None
    streamed, packed = results["plain"], results["gzip"]
    assert streamed.status_code == packed.status_code == 200
    assert packed.headers["content-encoding"] == "gzip" and "content-length" not in streamed.headers
    ready = TestClient(app).get("/llms-full.txt")  # built: the stored copy, with its length
    assert ready.status_code == 200 and "content-length" in ready.headers
    assert streamed.text == packed.text == ready.text
    # the same file a first request builds on another app over the same lists
    other = TestClient(create_app(hardware=hardware, models=models, base_url="http://testserver")).get(
        "/llms-full.txt"
    )
    assert ready.text == other.text
    assert ready.text.count("\n=====  =====  =====\n") == app.state.llms_full.done


# --- the static export ---------------------------------------------------------------------------------


def test_static_export_writes_the_pairs_with_runs_and_the_validation_page(tmp_path: Path) -> None:
    hardware, models = run_site_lists()
    report = build_site(tmp_path, site=SiteData(hardware, models[:2]), base_url="https://example.org")
    # Neither profile is a native format, so the only pair pages are the ones with reported runs:
    # DGX Spark + Gemma, and RTX 4080 + Qwen2.5 7B. The registry's fixed pages + the manual + 3 hardware + 2 models + 2 pairs.
    assert report.pairs == 2
    assert report.pages == len(fixed_pages()) + len(documents()) + 3 + 2 + 2
    pair = (tmp_path / "pair/nvidia-dgx-spark/gemma-4-26b-a4b-nvfp4/index.html").read_text("utf-8")
    assert f'id="run-{GEMMA_RUN}"' in pair
    validation = (tmp_path / "validation/index.html").read_text("utf-8")
    assert 'href="/api/validation"' not in validation  # a static copy has no API
    assert (tmp_path / "validation.md").is_file()
    assert "(https://example.org/validation.md)" in (tmp_path / "llms.txt").read_text("utf-8")
    missing = dead_links(tmp_path)
    assert not missing, missing[:10]
