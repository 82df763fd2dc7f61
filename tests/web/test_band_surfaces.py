"""One band per answered question, the same on every surface: `decode`/`prefill --json`, Python's
``to_dict()`` and /api give the same ``expected``, ``expected_aggregate`` and ``expected_from``; rank and
fit rows carry the band of their own decode record; and a pair page with published runs answers its
control moves (the answer fragment renders the run cards' macros)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

import servebound
from servebound.web.app.server import create_app
from tests.conftest import process_json

KEYS = ("expected", "expected_aggregate", "expected_from")

#: (command, hardware, model, extra CLI flags, the same as API query parameters)
CASES: list[tuple[str, str, str, list[str], dict[str, str]]] = [
    ("decode", "nvidia-rtx-4090", "llama-2-7b-q4_0", [], {}),  # llama.cpp assumed
    ("decode", "apple-m3-max-128gb", "llama-2-7b-q4_0", ["--engine", "mlx"], {"engine": "mlx"}),  # none
    ("decode", "nvidia-h100-sxm", "qwen3-8b", ["--batch", "16"], {"batch": "16"}),  # vLLM assumed, forced
    ("decode", "nvidia-rtx-4090", "qwen3-8b", [], {}),  # vLLM assumed: no runs on consumer GPUs
    ("prefill", "apple-m3-max-128gb", "llama-2-7b-q4_0", ["--prompt", "512"], {"prompt": "512"}),
]


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


@pytest.mark.parametrize(("command", "hw", "model", "flags", "query"), CASES)
def test_cli_python_and_api_give_one_band(
    client: TestClient, command: str, hw: str, model: str, flags: list[str], query: dict[str, str]
) -> None:
    from_cli = process_json(command, "--hardware", hw, "--model", model, *flags)
    if command == "decode":
        kwargs: dict[str, Any] = {"engine": query["engine"]} if "engine" in query else {}
        if "batch" in query:
            kwargs["batch"] = int(query["batch"])
        result = servebound.decode(hw, model, **kwargs)
    else:
        result = servebound.prefill(hw, model, int(query["prompt"]))
    from_python = result.to_dict()
    from_api = client.get(f"/api/{command}", params={"hardware": hw, "model": model, **query}).json()
    keys = KEYS if command == "decode" else KEYS[::2]
    for key in keys:
        assert from_cli[key] == from_python[key] == from_api[key], key
    basis = from_cli["expected_from"]
    assert basis is not None and basis["engine_assumed"] == ("--engine" not in flags)
    band = from_cli["expected"]
    if band is None:
        assert basis["runs"] < basis["min_runs"]
    else:
        assert band["engine"] == basis["engine"] and band["runs"] == basis["runs"] >= basis["min_runs"]
        assert band["p90_tok_s"] <= band["ceiling_tok_s"]


def test_rank_and_fit_rows_carry_their_decode_records_band(client: TestClient) -> None:
    decoded = process_json("decode", "--hardware", "nvidia-rtx-4090", "--model", "llama-2-7b-q4_0")
    ranked = process_json("rank", "--model", "llama-2-7b-q4_0")
    row = next(r for r in ranked["rows"] if r["hardware"]["id"] == "nvidia-rtx-4090")
    api = client.get("/api/rank", params={"model": "llama-2-7b-q4_0"}).json()
    api_row = next(r for r in api["rows"] if r["hardware"]["id"] == "nvidia-rtx-4090")
    for key in KEYS:
        assert row[key] == api_row[key] == decoded[key], key
    fitted = process_json("fit", "--hardware", "nvidia-rtx-4090")
    for fit_row in fitted["models"][:5]:
        alone = process_json("decode", "--hardware", "nvidia-rtx-4090", "--model", fit_row["profile"])
        assert fit_row["engine"] == alone["expected_from"]["engine"]
        assert fit_row["expected"] == alone["expected"] and fit_row["expected_from"] == alone["expected_from"]


def test_a_pair_page_with_runs_answers_its_control_moves(client: TestClient) -> None:
    moved = client.get(
        "/pair/nvidia-rtx-4090/llama-2-7b-q4_0", params={"section": "answer", "read_context": "1000"}
    )
    assert moved.status_code == 200 and 'class="run-card' in moved.text
    assert 'id="expected-band"' in moved.text
