"""Issue 22: --kv-allocation reserved|paged. A paged cache grows on demand, so a session holds what it
has read: b_mem = floor(margin / K(L_read)); prefill's gate holds the prompt's own cache."""

from __future__ import annotations

import json
import math

import pytest
from fastapi.testclient import TestClient

from servebound.api import make_workload
from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import get_model
from servebound.cli import main
from servebound.core.decode import decode
from servebound.core.prefill import prefill
from servebound.core.workload import KVAllocation
from servebound.errors import InputError
from tests.conftest import resolved

HW, MODEL = "nvidia-h100-sxm", "llama-3.1-8b-instruct"


def test_paged_batch_mem_is_margin_over_the_read_cache() -> None:
    hw, model = get_hardware(HW).hardware, get_model(MODEL).adapter
    reserved = decode(hw, model, resolved(hw, model))
    paged = decode(hw, model, resolved(hw, model, kv_allocation="paged"))
    w = paged.workload
    assert w.kv_allocation is KVAllocation.PAGED and w.held_context_tokens == w.read_context_tokens
    k_read = model.kv_alloc.bytes_at(w.read_context_tokens)
    assert paged.kv_alloc_bytes == k_read
    assert paged.batch_mem == math.floor(paged.resident_margin_bytes / k_read)
    assert reserved.batch_mem == math.floor(
        reserved.resident_margin_bytes / model.kv_alloc.bytes_at(w.alloc_context_tokens)
    )
    assert paged.batch_mem is not None and reserved.batch_mem is not None
    assert paged.batch_mem > reserved.batch_mem
    # The floor test runs on the same batches: the aggregate can only rise with more admissible sessions.
    assert (paged.aggregate_tok_s or 0) >= (reserved.aggregate_tok_s or 0)


def test_paged_prefill_holds_the_prompts_cache() -> None:
    hw, model = get_hardware(HW).hardware, get_model(MODEL).adapter
    r = prefill(hw, model, 4096, workload=resolved(hw, model, kv_allocation="paged"), batch="max")
    assert r.kv_alloc_bytes == model.kv_alloc.bytes_at(4096)
    assert r.batch_mem == math.floor(r.resident_margin_bytes / r.kv_alloc_bytes)


def test_a_bad_allocation_names_the_field() -> None:
    with pytest.raises(InputError) as err:
        make_workload(kv_allocation="pages")
    assert err.value.field == "kv_allocation"


def test_cli_and_api_state_the_allocation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", "-H", HW, "-m", MODEL, "--kv-allocation", "paged", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["assumptions"]["kv_allocation"] == "paged"
    assert main(["decode", "-H", HW, "-m", MODEL, "--kv-allocation", "nope"]) == 2
    assert "kv_allocation" in capsys.readouterr().err
    from servebound.web.app.server import create_app

    client = TestClient(create_app())
    body = client.get("/api/decode", params={"hardware": HW, "model": MODEL, "kv_allocation": "paged"}).json()
    assert body["assumptions"]["kv_allocation"] == "paged" and body["batch_mem"] == data["batch_mem"]
    bad = client.get("/api/decode", params={"hardware": HW, "model": MODEL, "kv_allocation": "nope"})
    assert bad.status_code in (400, 422) and "kv_allocation" in bad.text


def test_paged_caches_do_not_cap_the_prompt_at_a_reservation(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 36: `prefill -H nvidia-dgx-spark -m llama-3.1-8b --prompt 131072 --kv-allocation paged`
    answers (the prompt is within the model's limit; a paged cache holds K_store(L), not K_alloc);
    a reserved cache still refuses a prompt past its reservation, and the model's limit still binds."""
    args = ["prefill", "-H", "nvidia-dgx-spark", "-m", "llama-3.1-8b", "--prompt", "131072"]
    assert main([*args, "--kv-allocation", "paged", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    model = get_model("llama-3.1-8b").adapter
    assert data["prompt_tokens"] == 131072 and data["verdict"] == "fits"
    assert data["kv_alloc_bytes"] == pytest.approx(model.kv_alloc.bytes_at(131072))
    assert main([*args, "--kv-allocation", "reserved"]) == 2
    assert "--alloc-context 131,072" in capsys.readouterr().err
    over = ["prefill", "-H", "nvidia-dgx-spark", "-m", "llama-3.1-8b", "--prompt", "131073"]
    assert main([*over, "--kv-allocation", "paged"]) == 2
    assert "context limit" in capsys.readouterr().err
