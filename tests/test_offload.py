"""Issue 22: weights in host RAM. One decode step reads each tier's bytes at that tier's bandwidth,
t = B_dev / R_dev + B_host / R_host; prefill moves the host tier's weights per chunk."""

from __future__ import annotations

import json

import pytest

from servebound.api import make_workload
from servebound.catalog.hardware import get_hardware
from servebound.catalog.hosts import cpu_rows, get_cpu, get_host, host_rows
from servebound.catalog.models import get_model
from servebound.cli import main
from servebound.core.decode import decode
from servebound.core.offload import HOST_COMPUTE_BELOW
from servebound.core.prefill import prefill, prefill_curve
from servebound.errors import InputError
from tests.conftest import resolved


def test_gpt_oss_120b_mxfp4_on_a_4090_with_80_gb_s_of_host_bandwidth_by_hand() -> None:
    """--cpu-moe: the 128 routed experts in host RAM, attention and the dense trunk on the card.

    One session at L_read = 32,000: the card reads the always-on weights and the cache at 1,008 GB/s,
    host RAM reads the k = 4 experts the token routes to at 80 GB/s; the two add.
    """
    hw = get_hardware("nvidia-rtx-4090").hardware
    model = get_model("gpt-oss-120b").adapter  # MXFP4 routed experts, BF16 trunk
    w = model.weights
    assert w.experts is not None and (w.experts.routed, w.experts.per_token) == (128, 4)
    workload = resolved(hw, model, cpu_moe=True, host_memory_gb=96, host_bandwidth_gb_per_s=80)
    r = decode(hw, model, workload)
    r_dev, r_host = hw.bandwidth_bytes_per_s, 80e9
    kv_read = float(model.kv_read.bytes_at(32_000))
    t_dev = (w.always_on_bytes + kv_read) / r_dev
    t_host = 4 * w.expert_bytes / r_host  # m(1) = k exactly
    assert r.single_session_tok_s == pytest.approx(1.0 / (t_dev + t_host), rel=1e-12)
    off = r.offload
    assert off is not None and off.host_fits
    assert off.device_resident_bytes == pytest.approx(w.always_on_bytes)
    assert off.host_resident_bytes == pytest.approx(w.embedding_bytes + 128 * w.expert_bytes)
    # Without offload the 65 GB model does not fit a 24 GB card at all.
    assert decode(hw, model).verdict.value == "no_resident_fit"


def test_n_cpu_moe_and_gpu_layers_split_by_layer() -> None:
    hw = get_hardware("nvidia-rtx-4090").hardware
    model = get_model("gpt-oss-120b").adapter
    assert model.shape is not None and model.shape.moe_layers == 36
    w = model.weights
    half = decode(hw, model, resolved(hw, model, n_cpu_moe=18, host_memory_gb=96, host_bandwidth_gb_per_s=80))
    assert half.offload is not None
    assert half.offload.host_resident_bytes == pytest.approx(w.embedding_bytes + 64 * w.expert_bytes)
    dense = get_model("llama-3.1-8b-instruct").adapter
    assert dense.shape is not None
    layers = dense.shape.layers
    r = decode(
        hw, dense, resolved(hw, dense, gpu_layers=layers // 2, host_memory_gb=64, host_bandwidth_gb_per_s=80)
    )
    assert r.offload is not None
    share = (layers - layers // 2) / layers
    assert r.offload.host_resident_bytes == pytest.approx(
        dense.weights.embedding_bytes + share * dense.weights.always_on_bytes
    )
    short = {"alloc_context": 8192, "read_context": 4096}
    full = decode(
        hw,
        dense,
        resolved(hw, dense, gpu_layers=layers, host_memory_gb=64, host_bandwidth_gb_per_s=80, **short),  # type: ignore[arg-type]
    )
    plain = decode(hw, dense, resolved(hw, dense, **short))  # type: ignore[arg-type]
    assert plain.single_session_tok_s is not None
    # Every layer on the card: only the (unswept) input embedding sits in host RAM; the speed is the same.
    assert full.single_session_tok_s == pytest.approx(plain.single_session_tok_s, rel=1e-12)


def test_prefill_moves_the_host_weights_per_chunk() -> None:
    hw = get_hardware("nvidia-rtx-4090").hardware
    model = get_model("gpt-oss-120b").adapter
    w = model.weights
    workload = resolved(hw, model, cpu_moe=True, host_memory_gb=96, host_bandwidth_gb_per_s=80)
    r = prefill(hw, model, 4096, workload=workload)
    assert r.offload is not None
    touched = 128 * (1 - (1 - 4 / 128) ** 4096)
    host_s = touched * w.expert_bytes / min(63e9, 80e9)
    assert r.offload.step_time_split_s[1] == pytest.approx(host_s, rel=1e-9)
    assert r.time_s >= host_s and r.tok_s == pytest.approx(4096 / r.time_s)
    small = prefill(hw, model, HOST_COMPUTE_BELOW - 1, workload=workload)
    assert small.offload is not None
    # Below the op-offload threshold the host computes: its weights are read at host bandwidth.
    assert small.offload.host_bytes_per_token * (HOST_COMPUTE_BELOW - 1) / 80e9 == pytest.approx(
        small.offload.step_time_split_s[1]
    )


def test_prefill_charges_the_host_cpu_below_32_tokens_by_hand() -> None:
    """--host-tflops: a chunk under llama.cpp's op-offload threshold runs the host tier on the CPU, so it
    takes at least max(B_host / R_host, 2 P_host c / F_host). gpt-oss-120b MXFP4 with every routed
    expert in 80 GB/s host RAM, a 16-token prompt (one chunk):

    * B_host = m(16) experts x E, m(16) = 128 (1 - (1 - 4/128)^16), read at 80 GB/s;
    * P_host = P_lin,active x (4 E) / (W_always_on + 4 E): the active parameters split as one token's
      active bytes split between the tiers; 16 tokens do 2 P_host 16 FLOPs.

    At 2 TFLOPS the read is the longer (16 tokens do few FLOPs per expert byte read), so the rate
    changes nothing; at 0.02 TFLOPS the FLOPs are, and the prompt is bound by compute. At 32 tokens and more the weights cross the link instead and the CPU's rate is not used.
    """
    hw = get_hardware("nvidia-rtx-4090").hardware
    model = get_model("gpt-oss-120b").adapter
    w = model.weights
    assert model.prefill is not None
    host = {"cpu_moe": True, "host_memory_gb": 96, "host_bandwidth_gb_per_s": 80}
    read_s = 128 * (1 - (1 - 4 / 128) ** 16) * w.expert_bytes / 80e9
    p_host = (
        model.prefill.linear_active_params * 4 * w.expert_bytes / (w.always_on_bytes + 4 * w.expert_bytes)
    )
    for tflops in (None, 2.0, 0.02):
        r = prefill(hw, model, 16, workload=resolved(hw, model, **host, host_tflops=tflops))  # type: ignore[arg-type]
        assert r.offload is not None
        cpu_s = 0.0 if tflops is None else 2 * p_host * 16 / (tflops * 1e12)
        assert r.offload.step_time_split_s[1] == pytest.approx(max(read_s, cpu_s), rel=1e-9), tflops
        assert r.time_s == pytest.approx(max(read_s, cpu_s, r.offload.step_time_split_s[0]), rel=1e-9)
        assert r.bound_by.value == ("compute" if cpu_s > read_s else "memory"), tflops
    assert 2 * p_host * 16 / 0.02e12 > read_s > 2 * p_host * 16 / 2e12  # each case is the one named
    for prompt in (HOST_COMPUTE_BELOW, 4096):  # over the link: the CPU's rate plays no part
        slow = prefill(hw, model, prompt, workload=resolved(hw, model, **host, host_tflops=0.02))  # type: ignore[arg-type]
        plain = prefill(hw, model, prompt, workload=resolved(hw, model, **host))  # type: ignore[arg-type]
        assert slow.time_s == plain.time_s
    curve = prefill_curve(hw, model, [16], workload=resolved(hw, model, **host, host_tflops=0.02))  # type: ignore[arg-type]
    point = prefill(hw, model, 16, workload=resolved(hw, model, **host, host_tflops=0.02))  # type: ignore[arg-type]
    assert float(curve.time_s[0]) == pytest.approx(point.time_s, rel=1e-12)
    assert not bool(curve.bound_by_memory[0])
    with pytest.raises(InputError) as err:
        make_workload(host_tflops=1.0)
    assert err.value.field == "host_tflops"


def test_a_host_cpu_row_charges_its_rate_at_the_models_mode() -> None:
    """--host-cpu: the row's rate at the model's linear mode, else its fastest (no mode is faster).

    Xeon Platinum 8480+: 56 cores x 3.8 GHz x (2,048 int8 | 1,024 bf16 | 64 fp32) operations per
    cycle = 435.8 TOPS int8, 217.9 TFLOPS bf16, 13.6 TFLOPS fp32. gpt-oss-120b's linear math is fp4,
    which the CPU row does not publish: its fastest, int8, is charged. Qwen3-30B-A3B BF16 is charged
    at bf16.
    """
    cpu = get_cpu("xeon-platinum-8480plus")
    assert dict(cpu.rates) == pytest.approx({"int8": 435.8144e12, "bf16": 217.9072e12, "fp32": 13.6192e12})
    assert all("ark.intel.com" in row.source for row in cpu_rows().values())
    hw = get_hardware("nvidia-rtx-4090").hardware
    host = {"cpu_moe": True, "host_memory_gb": 256, "host_bandwidth_gb_per_s": 80, "host_cpu": cpu.id}
    for model_id, rate in (("gpt-oss-120b", 435.8144e12), ("qwen3-30b-a3b", 217.9072e12)):
        model = get_model(model_id).adapter
        r = prefill(hw, model, 8, workload=resolved(hw, model, **host))  # type: ignore[arg-type]
        assert r.offload is not None and r.offload.host_cpu == cpu.id
        assert r.offload.host_flop_per_s == pytest.approx(rate), model_id
        stated = prefill(
            hw,
            model,
            8,
            workload=resolved(hw, model, **{**host, "host_cpu": None, "host_tflops": rate / 1e12}),  # type: ignore[arg-type]
        )
        assert r.time_s == pytest.approx(stated.time_s, rel=1e-12), model_id
    for kwargs, field in (
        ({**host, "host_tflops": 1.0}, "host_cpu"),
        ({**host, "host_cpu": "pentium-4"}, "host_cpu"),
        ({"host_cpu": cpu.id}, "host_cpu"),
    ):
        with pytest.raises(InputError) as err:
            make_workload(**kwargs)  # type: ignore[arg-type]
        assert err.value.field == field, kwargs


def test_host_rows_and_bad_flags() -> None:
    assert get_host("epyc-9004-ddr5-4800-12ch").bandwidth_bytes_per_s == pytest.approx(460.8e9)
    assert get_host("desktop-ddr5-6000-2ch").bandwidth_bytes_per_s == pytest.approx(96e9)
    assert all("http" in row.source for row in host_rows().values())
    for kwargs, field in (
        ({"host": "desktop-ddr5-6000-2ch"}, "host"),
        ({"cpu_moe": True}, "host_memory_gb"),
        ({"cpu_moe": True, "host_memory_gb": 64}, "host_bandwidth_gb_per_s"),
        ({"cpu_moe": True, "gpu_layers": 3, "host": "desktop-ddr5-6000-2ch"}, "gpu_layers"),
        ({"cpu_moe": True, "host": "nope"}, "host"),
    ):
        with pytest.raises(InputError) as err:
            make_workload(**kwargs)  # type: ignore[arg-type]
        assert err.value.field == field
    with pytest.raises(InputError) as err:
        hw, dense = get_hardware("nvidia-rtx-4090").hardware, get_model("llama-3.1-8b-instruct").adapter
        decode(hw, dense, resolved(hw, dense, cpu_moe=True, host="desktop-ddr5-6000-2ch"))
    assert err.value.field == "cpu_moe"


def test_cli_offload(capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "decode",
        "-H",
        "nvidia-rtx-4090",
        "-m",
        "gpt-oss-120b",
        "--cpu-moe",
        "--host",
        "desktop-ddr5-6000-2ch",
    ]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in (
        "device_resident_bytes",
        "host_resident_bytes",
        "device_bytes_per_token",
        "host_bytes_per_token",
    ):
        assert data["offload"][key] > 0
    assert main(args) == 0 and "Offload (every routed expert in host RAM)" in capsys.readouterr().out
    assert (
        main(
            [
                "decode",
                "-H",
                "nvidia-rtx-4090",
                "-m",
                "gpt-oss-120b",
                "--n-cpu-moe",
                "99",
                "--host-memory-gb",
                "96",
                "--host-bandwidth-gb-per-s",
                "80",
            ]
        )
        == 2
    )
    assert "n_cpu_moe" in capsys.readouterr().err


def test_api_and_pair_page_take_the_offload() -> None:
    from fastapi.testclient import TestClient

    from servebound.web.app.server import create_app

    client = TestClient(create_app())
    params = {
        "hardware": "nvidia-rtx-4090",
        "model": "gpt-oss-120b",
        "cpu_moe": "true",
        "host": "desktop-ddr5-6000-2ch",
    }
    body = client.get("/api/decode", params=params).json()
    assert body["offload"]["host"] == "desktop-ddr5-6000-2ch" and body["verdict"] != "no_resident_fit"
    page = client.get(
        "/pair/nvidia-rtx-4090/gpt-oss-120b", params={"cpu_moe": "true", "host": "desktop-ddr5-6000-2ch"}
    )
    assert page.status_code == 200 and "Offload (every routed expert in host RAM)" in page.text
    bad = client.get("/api/decode", params={**params, "n_cpu_moe": "3"})
    assert bad.status_code == 400 and "n_cpu_moe" in bad.text


def test_the_curve_and_the_range_charge_the_host_tier_too() -> None:
    from servebound.core.prefill import prefill_curve, prefill_range

    hw = get_hardware("nvidia-rtx-4090").hardware
    model = get_model("gpt-oss-120b").adapter
    workload = resolved(hw, model, cpu_moe=True, host_memory_gb=96, host_bandwidth_gb_per_s=80)
    point = prefill(hw, model, 4096, workload=workload)
    curve = prefill_curve(hw, model, [1024, 4096], workload=workload)
    assert float(curve.tok_s[1]) == pytest.approx(point.tok_s, rel=1e-12)
    rng = prefill_range(hw, model, workload=workload)
    assert rng.lo_tok_s is not None and rng.hi_tok_s is not None
    assert rng.lo_tok_s <= point.tok_s <= rng.hi_tok_s
    # Without the host tier's transfer the device alone would be far faster at this length.
    assert (
        point.offload is not None and point.offload.step_time_split_s[1] > point.offload.step_time_split_s[0]
    )
