"""Cost and economics on the site: the /economics page and its mirror, the pair pages' cost section
with server-rendered figures, /api/cost and /api/economics/* against the CLI's JSON."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient

from servebound.cli import main
from tests.web.conftest import LAGUNA_FILE

LAGUNA = "laguna-s-2.1-nvfp4-example"


def _cli_json(capsys: Any, *args: str) -> Any:
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_economics_page_and_mirror(client: TestClient) -> None:
    page = client.get("/economics")
    assert page.status_code == 200
    html = page.text
    assert "<math" in html and "288 GB / 20 TB/s = 14.4 ms" in html and "128,000" in html
    assert 'href="/api/economics/lecture"' in html
    mirror = client.get("/economics.md").text
    assert "288 GB / 20 TB/s = 14.4 ms" in mirror and "259.2 trillion" in mirror and "$$ t(b) = " in mirror
    assert "/economics.md" in client.get("/llms.txt").text


def test_pair_page_cost_section(client: TestClient) -> None:
    html = client.get(f"/pair/nvidia-b200/{LAGUNA}").text
    section = html[html.index('<section class="cost"') :]
    section = section[: section.index("</section>")]
    for fig in ("fig-step-time", "fig-cost-batch", "fig-cost-context"):
        assert f'id="{fig}"' in section
    assert "USD/h" in section and "lambda" in section.lower()
    mirror = client.get(f"/pair/nvidia-b200/{LAGUNA}.md").text
    assert "## Cost per token" in mirror and "| batch | step time |" in mirror
    # A user file carries no price: the section says so and points at usd_per_hour.
    no_price = client.get(f"/pair/dgx-spark-example/{LAGUNA}").text
    assert "No price for this row" in no_price and "usd_per_hour" in no_price


def test_api_cost_is_the_cli_json(client: TestClient, capsys: Any) -> None:
    api = client.get("/api/cost", params={"hardware": "nvidia-b200", "model": LAGUNA, "read_context": 2000})
    assert api.status_code == 200
    cli = _cli_json(
        capsys, "cost", "-H", "nvidia-b200", "-m", str(LAGUNA_FILE), "--read-context", "2000", "--json"
    )
    data = api.json()
    for key in (
        "points",
        "balance_batch",
        "usd_per_hour",
        "price_source",
        "usd_per_mtok_input",
        "trade",
        "cost_floor",
    ):
        assert data[key] == cli[key], key
    bad = client.get("/api/cost", params={"hardware": "dgx-spark-example", "model": LAGUNA})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "usd_per_hour"
    priced = client.get(
        "/api/cost",
        params={"hardware": "dgx-spark-example", "model": LAGUNA, "usd_per_hour": 3, "batches": "1,2"},
    )
    assert [p["batch"] for p in priced.json()["points"]] == [1, 2]


def test_api_economics_is_the_cli_json(client: TestClient, capsys: Any) -> None:
    pairs = [
        ("/api/economics/drain?capacity_gb=288&bandwidth_gb_per_s=20000",
         ("economics", "drain", "--capacity-gb", "288", "--bandwidth-gb-per-s", "20000")),
        ("/api/economics/trains?batch=2000&steps_per_s=64", ("economics", "trains", "--batch", "2000", "--steps-per-s", "64")),
        ("/api/economics/training?traffic_tok_s=5e7&life_days=60&active_params=1e11",
         ("economics", "training", "--traffic-tok-s", "5e7", "--life-days", "60", "--active-params", "1e11")),
        ("/api/economics/cache-tier?hold_s=300", ("economics", "cache-tier", "--hold-s", "300")),
        ("/api/economics/price-ratio?output_usd=15&input_usd=3",
         ("economics", "price-ratio", "--output-usd", "15", "--input-usd", "3")),
        ("/api/economics/balance?hardware=nvidia-b200", ("economics", "balance", "-H", "nvidia-b200")),
        ("/api/economics/lecture", ("economics", "lecture")),
    ]  # fmt: skip
    for url, args in pairs:
        r = client.get(url)
        assert r.status_code == 200, url
        assert r.json() == _cli_json(capsys, *args, "--json"), url
    r = client.get("/api/economics/trains?batch=2000")
    assert r.status_code == 400 and r.json()["error"]["field"] == "steps_per_s"
