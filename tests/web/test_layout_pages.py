"""A system's page shows its links and layouts; /api/layout and /api/plan answer as the CLI does."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import get_model
from servebound.cli import main
from servebound.web.app.server import create_app


@pytest.fixture(scope="module")
def client() -> TestClient:
    hardware = [get_hardware(ref) for ref in ("2x-nvidia-rtx-3090", "8x-nvidia-h100-sxm", "nvidia-h100-sxm")]
    models = [get_model(ref) for ref in ("llama-3.1-70b", "llama-3.1-70b-q4_k_m", "qwen3-30b-a3b")]
    return TestClient(create_app(hardware=hardware, models=models))


def test_system_page_shows_links_layouts_and_figures(client: TestClient) -> None:
    page = client.get("/hardware/8x-nvidia-h100-sxm?model=llama-3.1-70b")
    assert page.status_code == 200
    html = page.text
    assert 'id="layouts"' in html
    assert "450.0 GB/s (NVLink 4" in html and "petronellatech.com" in html
    assert "<code>tp=8,ep=1,pp=1,dp=1</code>" in html
    assert 'id="layout-memory"' in html and 'id="layout-step"' in html
    mirror = client.get("/hardware/8x-nvidia-h100-sxm.md?model=llama-3.1-70b").text
    assert "## Links and parallel layouts" in mirror and "`tp=8,ep=1,pp=1,dp=1`" in mirror


def test_single_device_page_has_no_layouts(client: TestClient) -> None:
    page = client.get("/hardware/nvidia-h100-sxm")
    assert page.status_code == 200 and "H100" in page.text
    assert 'id="layouts"' not in page.text


def test_api_layout_matches_the_cli(client: TestClient, capsys: pytest.CaptureFixture[str]) -> None:
    setting = {"overhead_gb": 1, "alloc_context": 8000, "read_context": 4000}
    params = {"hardware": "2x-nvidia-rtx-3090", "model": "llama-3.1-70b-q4_k_m", **setting}
    api = client.get("/api/layout", params=params)
    assert api.status_code == 200
    flags = ["--overhead-gb", "1", "--alloc-context", "8000", "--read-context", "4000"]
    assert main(["layout", "-H", "2x-nvidia-rtx-3090", "-m", "llama-3.1-70b-q4_k_m", *flags, "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert api.json()["layouts"] == cli["layouts"]
    assert api.json()["layouts"][0]["verdict"] == "floor_fit"
    one = client.get("/api/layout", params={**params, "layout": "tp=2"}).json()
    assert one["layout"]["label"] == "tp=2,ep=1,pp=1,dp=1" and one["communication_time_s"] > 0


def test_api_layout_errors_have_the_error_shape(client: TestClient) -> None:
    bad = client.get(
        "/api/layout", params={"hardware": "2x-nvidia-rtx-3090", "model": "llama-3.1-70b", "layout": "ep=2"}
    )
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "layout" and "routed experts" in bad.json()["error"]["message"]


def test_api_plan_shows_its_steps(client: TestClient) -> None:
    params = {
        "hardware": "8x-nvidia-h100-sxm",
        "model": "llama-3.1-70b",
        "prompt": 2000,
        "output_tokens": 500,
        "requests_per_s": 10,
    }
    plan = client.get("/api/plan", params=params)
    assert plan.status_code == 200
    body = plan.json()
    assert body["pools"]["shared"]["systems"] >= 1
    assert [s["name"] for s in body["steps"]][:2] == ["request_rate_per_s", "concurrent_sessions"]
    both = client.get("/api/plan", params={**params, "users": 5})
    assert both.status_code == 400 and both.json()["error"]["field"] == "users"


def test_counting_axes_label_whole_numbers(client: TestClient) -> None:
    """Stages and sessions are whole: a two-device system's charts label 1 and 2, never 1.2 or 1.5."""
    import re

    html = client.get("/hardware/2x-nvidia-rtx-3090?model=llama-3.1-70b-q4_k_m").text
    for chart in ("layout-memory",):  # (no layout of this pair fits a session: no step chart)
        svg = re.search(rf'id="{chart}".*?</svg>', html, flags=re.S)
        assert svg is not None, chart
        ticks = re.findall(r'class="tick"[^>]*text-anchor="middle">([^<]+)<', svg.group(0))
        assert len(ticks) >= 2 and all(t.isdigit() for t in ticks), (chart, ticks)


def test_the_layout_count_is_the_rows_listed_and_the_chart_draws_capacity(client: TestClient) -> None:
    """'N valid layouts' counts the rows the page lists (the table and the folded rest); the memory chart
    draws each pure pipeline at its own sessions with the device's capacity, and no fitting layout's
    weights and cache exceed it (it drew 524 GB of cache per 85.5 GB device at a fixed micro-batch)."""
    import re

    from servebound.core.decode import Verdict
    from servebound.core.layout import Layout, evaluate_layout
    from servebound.inputs.layout import compute_seconds_per_session_step, resolve_system
    from servebound.web.pages.site import default_site_data

    html = client.get("/hardware/8x-nvidia-h100-sxm?model=llama-3.1-70b").text
    section = html[html.index('id="layouts"') :]
    count = int(
        re.search(r"<p>([\d,]+) valid layouts? \(tp, ep, pp, dp\)", section).group(1).replace(",", "")
    )
    rows = re.findall(r"<tr><td><code>[^<]+</code></td><td>", section.split('id="layout-memory"')[0])
    assert len(rows) == count
    chart = re.search(r'id="layout-memory".*?</svg>', html, flags=re.S)
    assert chart is not None and "device capacity" in chart.group(0)
    site = default_site_data()
    hw = next(h for h in site.hardware if h.id == "8x-nvidia-h100-sxm")
    model = next(m for m in site.models if m.id == "llama-3.1-70b")
    resolved = resolve_system(hw)
    from servebound.inputs.scenario import default_workload, resolve_on_system

    work = resolve_on_system(default_workload(), resolved.system, model.adapter)
    system = resolved.system
    c = compute_seconds_per_session_step(system.device, model.adapter, work)
    for pp in range(1, 9):
        r = evaluate_layout(system, model.adapter, Layout(pp=pp), work, compute_s_per_session_step=c)
        d = r.per_device
        if r.verdict == Verdict.FLOOR_FIT:
            assert d.weight_bytes + d.kv_bytes + d.overhead_bytes <= d.capacity_bytes * (1 + 1e-9), pp
