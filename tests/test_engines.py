"""Issue 22: the engine table (allocation, overhead convention, cache dtypes, formats per device) and
every result's format_support."""

from __future__ import annotations

import json

import pytest

from servebound import api
from servebound.api import make_workload
from servebound.catalog.engines import ENGINE_IDS, FormatSupport, engines, format_support
from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import get_model
from servebound.cli import main
from servebound.core.decode import decode
from servebound.core.units import GB
from servebound.core.workload import NOT_CHECKED, KVAllocation
from servebound.errors import InputError
from tests.conftest import resolved


def test_the_table_has_every_engine_with_sources() -> None:
    table = engines()
    assert tuple(table) == ENGINE_IDS
    for engine in table.values():
        for source in (engine.kv_allocation_source, engine.overhead_source, engine.kv_dtypes_source):
            assert "https://" in source or "github:" in source, engine.id
        assert engine.kv_allocation in ("reserved", "paged")
    assert set(table["vllm"].kv_dtypes) == {"auto", "fp8", "fp8_e4m3", "fp8_e5m2"}
    assert {"f16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"} <= set(table["llama.cpp"].kv_dtypes)


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trt-llm"])
def test_datacenter_engines_page_their_cache(engine: str) -> None:
    assert make_workload(engine=engine).stated.kv_allocation is KVAllocation.PAGED
    assert make_workload(engine="llama.cpp").stated.kv_allocation is KVAllocation.RESERVED
    with pytest.raises(InputError) as err:
        make_workload(engine=engine, kv_allocation="reserved")
    assert err.value.field == "kv_allocation" and engine in err.value.problem
    with pytest.raises(InputError) as err:
        make_workload(engine="vlm")
    assert err.value.field == "engine"


def test_engine_overhead_conventions() -> None:
    hw, model = get_hardware("nvidia-h100-sxm").hardware, get_model("llama-3.1-8b-instruct").adapter
    vllm = decode(hw, model, resolved(hw, model, engine="vllm")).workload
    assert vllm.overhead_bytes == pytest.approx(0.1 * hw.memory_bytes)
    assert "gpu-memory-utilization" in (vllm.overhead_source or "")
    trt = decode(hw, model, resolved(hw, model, engine="trt-llm")).workload
    assert trt.overhead_bytes == pytest.approx(0.1 * (hw.memory_bytes - model.weights.resident))
    given = decode(hw, model, resolved(hw, model, engine="vllm", overhead_gb=2)).workload
    assert given.overhead_bytes == 2 * GB


def test_format_support() -> None:
    ada, blackwell = "nvidia-rtx-4090", "nvidia-rtx-5090"
    assert format_support(ada, "nvfp4")[0] is FormatSupport.DEQUANTIZED  # not native: no FP4 on Ada
    assert format_support(blackwell, "nvfp4")[0] is FormatSupport.NATIVE
    assert format_support(ada, "mlx_4bit")[0] is FormatSupport.UNSUPPORTED
    assert format_support("apple-m4-max-128gb", "mlx_4bit")[0] is not FormatSupport.UNSUPPORTED
    assert format_support("nvidia-rtx-3090", "fp8")[0] is FormatSupport.DEQUANTIZED
    assert format_support(ada, "q4_k_m", "vllm")[0] is FormatSupport.UNSUPPORTED
    assert format_support(ada, "q4_k_m", "llama.cpp")[0] is FormatSupport.DEQUANTIZED
    support, why = format_support("apple-m4-max-128gb", "nvfp4")
    assert support is FormatSupport.UNSUPPORTED and "apple" in why


def test_every_result_carries_format_support(capsys: pytest.CaptureFixture[str]) -> None:
    hw, model = get_hardware("nvidia-rtx-4090").hardware, get_model("phi-4-nvfp4").adapter
    d, p = api.decode(hw, model), api.prefill(hw, model, 1024)  # the scenario reads the engine table
    assert d.format_support is p.format_support is FormatSupport.DEQUANTIZED
    assert decode(hw, model).format_support_why == NOT_CHECKED[1]  # the core alone checks nothing
    assert "Marlin" in d.format_support_why
    assert main(["prefill", "-H", "nvidia-rtx-4090", "-m", "phi-4-nvfp4", "--prompt", "512", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["format_support"] == "dequantized" and data["format_support_why"]


def test_rank_lists_only_what_the_device_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rank", "--hardware", "nvidia-rtx-4090", "--all-formats", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rows and all(r["format_support"] != "unsupported" for r in rows)
    assert not any(r["model"]["id"].endswith(("mlx-4bit", "mlx-8bit", "mlx-6bit")) for r in rows)
    assert main(["rank", "--hardware", "nvidia-rtx-4090", "--all-formats", "--unsupported", "--json"]) == 0
    everything = json.loads(capsys.readouterr().out)["rows"]
    assert len(everything) > len(rows)
    assert {r["format_support"] for r in everything} == {"native", "dequantized", "unsupported"}


def test_the_docs_hold_the_generated_engine_table() -> None:
    from pathlib import Path

    from servebound.catalog.engines import markdown_table

    engines_md = (Path(__file__).resolve().parents[1] / "docs" / "engines.md").read_text()
    assert markdown_table() in engines_md, (
        "regenerate docs/engines.md's table from core.engines.markdown_table"
    )
