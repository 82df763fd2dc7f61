"""The browse tables give the pair page's answer: the hardware and model pages' rank tables and
``/models?fits=`` show the verdict and numbers of the pair page, ``/api/decode``, the CLI and rank, all at
the default workload (the hardware row's overhead, contexts capped at the model's limit)."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from servebound.cli import main
from servebound.views.report import fmt_int, fmt_rate
from servebound.web.app.server import create_app
from tests.web.surfaces import Shown, fits_row, pair_page, rank_row

#: The issue's pairs (hardware, model) and what the pair page says of each.
REPRODUCERS = [
    # the tables read "does not fit"; the pair page fits one session at 199 tok/s
    ("nvidia-rtx-4090", "qwen3-30b-a3b-q4_k_m", Shown("floor_fit", "199 tok/s", "199 tok/s", "1")),
    # the tables read "no session fits"; it fits 3 at 403 tok/s
    ("nvidia-rtx-5090", "qwen3-30b-a3b-q4_k_m", Shown("floor_fit", "354 tok/s", "403 tok/s", "3")),
    # the tables read b* 231; the pair page 511 (as one pooled device: now 510 at the best layout,
    # tp=4,ep=8 over NVLink)
    ("8x-nvidia-b300", "qwen3-30b-a3b-q4_k_m", Shown("floor_fit", "10,870 tok/s", "20,104 tok/s", "510")),
    # the tables read b* 2 / 505 tok/s; the pair page 8 / 744 (now 7 / 650: the NVFP4 profile keeps the
    # tied embedding and head in BF16, as NVIDIA's NVFP4 release excludes lm_head; now 15 / 1,048 with
    # the FP8 cache NVIDIA's NVFP4 checkpoints state)
    ("nvidia-rtx-4090", "gemma-4-26b-a4b-nvfp4", Shown("floor_fit", "288 tok/s", "1,048 tok/s", "15")),
]


@pytest.fixture(scope="module")
def catalog_client() -> TestClient:
    return TestClient(create_app())


@pytest.mark.parametrize(("hw_id", "model_id", "expected"), REPRODUCERS)
def test_browse_tables_agree_with_the_pair_page(
    catalog_client: TestClient, capsys: pytest.CaptureFixture[str], hw_id: str, model_id: str, expected: Shown
) -> None:
    assert main(["decode", "-H", hw_id, "-m", model_id, "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    from_cli = Shown(
        cli["verdict"],
        fmt_rate(cli["single_session_tok_s"]),
        fmt_rate(cli["aggregate_tok_s"]),
        fmt_int(cli["batch_star"]),
    )
    assert from_cli == expected
    api = catalog_client.get("/api/decode", params={"hardware": hw_id, "model": model_id}).json()
    assert api == cli
    assert pair_page(catalog_client, hw_id, model_id) == expected
    assert rank_row(catalog_client, f"/hardware/{hw_id}", hw_id, model_id) == expected
    assert rank_row(catalog_client, f"/models/{model_id}", hw_id, model_id) == expected
    assert fits_row(catalog_client, hw_id, model_id) == Shown("fits", expected.single, expected.aggregate)
    assert main(["rank", "-H", hw_id, "--all-formats", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    (row,) = [r for r in rows if r["model"]["id"] == model_id]
    assert {k: row[k] for k in ("verdict", "aggregate_tok_s", "batch_star", "single_session_tok_s")} == {
        k: cli[k] for k in ("verdict", "aggregate_tok_s", "batch_star", "single_session_tok_s")
    }


def test_the_shown_work_uses_the_contexts_decode_used(catalog_client: TestClient) -> None:
    """The default contexts are capped at the model's 40,960 tokens: the b_mem formula says K_alloc(40,960)
    beside the K_alloc it divides by (it said K_alloc(100,000) next to the 40,960-token figure)."""
    text = catalog_client.get("/pair/nvidia-rtx-4090/qwen3-8b.md").text
    (line,) = [line for line in text.splitlines() if line.startswith("$$ b_{\\mathrm{mem}}")]
    assert "K_{\\mathrm{alloc}}(40{,}960)" in line and "100{,}000" not in line
    api = catalog_client.get(
        "/api/decode", params={"hardware": "nvidia-rtx-4090", "model": "qwen3-8b"}
    ).json()
    assert api["assumptions"]["alloc_context_tokens"] == 40960
    assert f"{api['kv_alloc_bytes'] / 1e9:,.2f}" in line.replace("\\ \\mathrm{GB}", "")
