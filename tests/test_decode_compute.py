"""Decode's compute roof (the two-line roofline): hand checks, the derivation's tables with compute on,
and invariants over random models, machines and workloads (hypothesis)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from servebound.core.decode import BatchLimit, Verdict, decode, step_curve
from servebound.core.decode_compute import ComputeStatus, decode_compute
from servebound.core.hardware import Hardware
from servebound.core.kv import KVShape
from servebound.core.model import ModelAdapter, PrefillShape, Weights
from servebound.core.rates import BoundBy
from servebound.core.workload import Speculation, Workload
from tests.conftest import derivation_model
from tests.strategies import adapters
from tests.strategies import workloads as shared_workloads

GB = 1e9


def dense(params: float = 8e9, bytes_per_param: float = 2.0, kv_per_token: float = 131072.0) -> ModelAdapter:
    kv = KVShape(global_bytes_per_token=kv_per_token)
    shape = PrefillShape(linear_active_params=params, attention_global_flops_per_pair=4 * 4096 * 32)
    weights = Weights(embedding_bytes=0.0, always_on_bytes=params * bytes_per_param)
    return ModelAdapter("d", "Dense", weights, kv, kv, shape)


def gpu(rates: dict[str, float] | None = None) -> Hardware:
    return Hardware("g", "GPU", 180 * GB, 8e12, {"bf16": 2.25e15} if rates is None else rates)


def test_flops_per_token_by_hand() -> None:
    """2 P_lin + a_attn(1, L) with a_attn(1, L) = alpha_global (L + 1)."""
    model = dense()
    compute = decode_compute(gpu(), model, Workload(read_context_tokens=1000, alloc_context_tokens=1000))
    assert compute.flops_per_token == pytest.approx(2 * 8e9 + 4 * 4096 * 32 * 1001, rel=1e-12)
    assert compute.seconds_per_session_step == pytest.approx(compute.flops_per_token / 2.25e15, rel=1e-12)


def test_compute_binds_on_a_datacenter_gpu_at_short_context() -> None:
    """Hand check: t_mem(b) = (16e9 + b 131072 * 100) / 8e12, t_cmp(b) = b (16e9 + 524288*101) / 2.25e15."""
    wl = Workload(read_context_tokens=100, alloc_context_tokens=200, floor_tok_s=1.0, overhead_bytes=8 * GB)
    r = decode(gpu(), dense(), wl)
    per_session_s = (2 * 8e9 + 4 * 4096 * 32 * 101) / 2.25e15
    kv = 131072.0 * 100
    balance = 16e9 / (8e12 * per_session_s - kv)  # b c = (W + b K) / R
    assert r.balance_batch == int(np.ceil(balance))
    assert r.batch_star == r.balance_batch and r.batch_limited_by is BatchLimit.COMPUTE
    assert r.bound_by is BoundBy.COMPUTE
    assert r.aggregate_tok_s == pytest.approx(1 / per_session_s, rel=1e-12)
    assert r.compute_tok_s_at_star == pytest.approx(1 / per_session_s, rel=1e-12)
    assert r.step_time_s == pytest.approx(r.batch_star * per_session_s, rel=1e-12)
    memory_only = decode(gpu(), dense(), dataclasses.replace(wl, memory_only=True))
    assert memory_only.batch_star == memory_only.batch_mem and memory_only.balance_batch is None
    assert memory_only.aggregate_tok_s is not None and r.aggregate_tok_s < memory_only.aggregate_tok_s


def test_missing_rate_charges_the_fastest_published_and_says_so() -> None:
    wl = Workload(read_context_tokens=100, alloc_context_tokens=200, floor_tok_s=1.0)
    no_bf16 = gpu({"fp8": 4.5e15})  # the model computes in bf16, which this row does not publish
    r = decode(no_bf16, dense(), wl)
    assert r.compute is not None and r.compute.status is ComputeStatus.CHARGED
    rates = r.compute.rates
    assert rates is not None and rates.missing_modes == ("bf16",) and rates.linear_flop_per_s == 4.5e15
    assert rates.linear_mode_charged == "fp8" and "fastest rate it publishes" in rates.linear_charge_reason
    assert r.compute_tok_s_at_star is not None


def test_a_row_without_rates_gives_todays_result_and_says_so() -> None:
    wl = Workload(read_context_tokens=100, alloc_context_tokens=200, floor_tok_s=1.0)
    bare = gpu({})
    r = decode(bare, dense(), wl)
    today = decode(bare, dense(), dataclasses.replace(wl, memory_only=True))
    assert r.compute is not None and r.compute.status is ComputeStatus.MISSING_RATE
    assert r.compute.rates is not None and r.compute.rates.missing_modes == ("bf16",)
    assert r.aggregate_tok_s == today.aggregate_tok_s and r.batch_star == today.batch_star
    assert r.compute_tok_s_at_star is None and r.balance_batch is None


def test_speculation_charges_the_verification_pass() -> None:
    """A pass verifies gamma + 1 tokens per session: its FLOPs are (gamma + 1) (2 P + a_attn(gamma+1, L))."""
    model = dense()
    draft = dense(params=5e8)
    spec = Speculation(draft=draft, draft_tokens=3, tokens_per_step=2.5)
    wl = Workload(read_context_tokens=1000, alloc_context_tokens=1000, speculation=spec)
    compute = decode_compute(gpu(), model, wl)
    alpha = 4 * 4096 * 32
    target = 4 * (2 * 8e9 + alpha * (1000 + 2.5))  # a_attn(4, 1000) = alpha (1000 + 5/2)
    drafted = 3 * (2 * 5e8 + alpha * 1001)
    assert compute.tokens_per_session_step == 4
    assert compute.flops_per_session_step == pytest.approx(target + drafted, rel=1e-12)
    assert compute.flops_per_token == pytest.approx((target + drafted) / 2.5, rel=1e-12)
    assert compute.draft is not None and compute.draft.startswith("charged")


def test_derivation_tables_with_compute_rates(decode_golden: dict[str, Any]) -> None:
    """The worked examples with the derivation's 500 TFLOP/s FP4 Spark and a prefill adapter with
    P_lin = P_active: compute does not bind there, so the figures are the memory-only ones exactly."""
    spark = Hardware("spark", "Spark", 128 * GB, 273 * GB, {"fp4": 500e12, "bf16": 125e12})
    for case in decode_golden["case"]:
        base = derivation_model(case)
        shape = PrefillShape(linear_active_params=case["active_params"], linear_mode="fp4")
        model = dataclasses.replace(base, prefill=shape)
        for wl in (Workload(), Workload(forced_batch=case["batch_star"] + 1)):
            with_compute = decode(spark, model, wl)
            assert with_compute.compute is not None and with_compute.compute.status is ComputeStatus.CHARGED
            today = decode(spark, base, wl)
            assert with_compute.batch_star == today.batch_star == case["batch_star"]
            assert with_compute.aggregate_tok_s == today.aggregate_tok_s
            assert with_compute.single_session_tok_s == today.single_session_tok_s
            assert with_compute.forced == today.forced
            assert with_compute.bound_by is BoundBy.MEMORY


# --- invariants ------------------------------------------------------------------------------------


def models() -> st.SearchStrategy[ModelAdapter]:
    return adapters(
        max_routed=256,
        always_on_bytes=(1e7, 1e11),
        kv_bytes_per_token=4e5,
        window_tokens=4096,
        linear_modes=("bf16", "fp8"),
    )


machines = st.builds(
    lambda c, r, f, both: Hardware("h", "H", c, r, {"bf16": f, "fp8": 2 * f} if both else {"bf16": f}),
    st.floats(1e10, 2e13),
    st.floats(1e10, 1e14),
    st.floats(1e12, 1e18),
    st.booleans(),
)


def workloads() -> st.SearchStrategy[Workload]:
    return shared_workloads(alloc_tokens=(1, 200_000), overhead_gb=8, floor_tok_s=(0, 100))


@settings(max_examples=200, deadline=None)
@given(models(), machines, workloads())
def test_compute_never_raises_the_ceilings(model: ModelAdapter, hw: Hardware, wl: Workload) -> None:
    with_compute = decode(hw, model, wl)
    today = decode(hw, model, dataclasses.replace(wl, memory_only=True))
    assert with_compute.verdict in (today.verdict, Verdict.NO_FLOOR)
    if with_compute.aggregate_tok_s is not None:
        assert today.aggregate_tok_s is not None
        assert with_compute.aggregate_tok_s <= today.aggregate_tok_s * (1 + 1e-12)
        assert with_compute.batch_star is not None and today.batch_star is not None
        assert with_compute.batch_star <= today.batch_star
    if with_compute.single_session_tok_s is not None:
        assert today.single_session_tok_s is not None
        assert with_compute.single_session_tok_s <= today.single_session_tok_s


@settings(max_examples=200, deadline=None)
@given(models(), machines, workloads(), st.integers(2, 10_000))
def test_step_curve_is_monotone(model: ModelAdapter, hw: Hardware, wl: Workload, top: int) -> None:
    """T(b) never falls and r(b) never rises, with the compute line on."""
    batches = np.unique(np.geomspace(1, top, 64).astype(np.int64))
    c = step_curve(hw, model, wl, batches)
    assert np.all(np.diff(c.tok_s) >= -1e-9 * c.tok_s[1:])
    assert np.all(np.diff(c.per_session_tok_s) <= 1e-9 * c.per_session_tok_s[:-1])
    assert np.all(c.step_time_s >= c.memory_time_s)
    if c.compute_time_s is not None:
        assert np.all(c.step_time_s >= c.compute_time_s)


@settings(max_examples=200, deadline=None)
@given(models(), machines, workloads())
def test_balance_batch_solves_the_crossing(model: ModelAdapter, hw: Hardware, wl: Workload) -> None:
    r = decode(hw, model, wl)
    b = r.balance_batch
    assume(b is not None)
    assert b is not None
    c = step_curve(hw, model, wl, [b - 1, b] if b > 1 else [b])
    assert c.compute_time_s is not None
    assert c.compute_time_s[-1] >= c.memory_time_s[-1] * (1 - 1e-12)
    if b > 1:
        assert c.compute_time_s[0] < c.memory_time_s[0] * (1 + 1e-12)
    if r.batch_limited_by is BatchLimit.COMPUTE:
        assert r.batch_star == b


no_rate_machines = st.builds(
    lambda c, r: Hardware("h", "H", c, r, {}),
    st.floats(1e10, 2e13),
    st.floats(1e10, 1e14),
)


@settings(max_examples=200, deadline=None)
@example(
    model=ModelAdapter(
        "m",
        "M",
        Weights(0.0, 1e9),
        KVShape(global_bytes_per_token=0.0),
        KVShape(global_bytes_per_token=0.0),
        PrefillShape(linear_active_params=1e9),
    ),
    hw=Hardware("h", "H", 1e12, 1e12, {}),
    wl=Workload(alloc_context_tokens=10, read_context_tokens=10),
)
# Found at random (h14's hypothesis runs): a subnormal read size under weights past R / r* sent the
# b_rate closed form to -inf, and math.floor raised OverflowError.
@example(
    model=ModelAdapter(
        "m",
        "M",
        Weights(0.0, 1e9),
        KVShape(global_bytes_per_token=5e-324),
        KVShape(global_bytes_per_token=5e-324),
        PrefillShape(linear_active_params=1e9),
    ),
    hw=Hardware("h", "H", 1e12, 1e10, {}),
    wl=Workload(alloc_context_tokens=10, read_context_tokens=10, floor_tok_s=100),
)
@given(models(), no_rate_machines, workloads())
def test_rows_without_rates_equal_todays(model: ModelAdapter, hw: Hardware, wl: Workload) -> None:
    """A row with no compute rate at all: every field equals the memory-only result exactly."""
    with_compute = decode(hw, model, wl)
    today = decode(hw, model, dataclasses.replace(wl, memory_only=True))
    for field in (
        "verdict",
        "batch_mem",
        "batch_rate",
        "batch_floor",
        "batch_star",
        "batch_limited_by",
        "single_session_tok_s",
        "aggregate_tok_s",
        "per_session_tok_s",
        "bytes_per_token_at_star",
        "memory_power_tok_s",
        "forced",
        "balance_batch",
        "step_time_s",
    ):
        assert getattr(with_compute, field) == getattr(today, field), field
    assert with_compute.compute is not None and with_compute.compute.status is ComputeStatus.MISSING_RATE


@settings(max_examples=200, deadline=None)
@given(models(), st.integers(1, 64), st.integers(0, 300_000))
def test_scalar_attention_flops_equal_the_vector_ones(model: ModelAdapter, chunk: int, prefix: int) -> None:
    from servebound.core.prefill_cost import attention_flops_per_token

    shape = model.prefill
    assert shape is not None
    vector = float(attention_flops_per_token(shape, np.asarray([chunk]), np.asarray([prefix]))[0])
    scalar = attention_flops_per_token(shape, float(chunk), float(prefix))
    assert isinstance(scalar, float)
    assert scalar == pytest.approx(vector, rel=1e-12, abs=1e-9)


def test_unreachable_floor_with_a_vanishing_read_size() -> None:
    """W_active above R / floor with a subnormal K_read: the closed form for b_rate is -inf, so no batch
    clears the floor (b_rate = 0), instead of an overflow (found by hypothesis)."""
    tiny = 5e-324
    model = ModelAdapter(
        "m",
        "M",
        Weights(0.0, 1e12),
        KVShape(global_bytes_per_token=tiny),
        KVShape(global_bytes_per_token=tiny),
    )
    hw = Hardware("h", "H", 2e13, 1e12, {"bf16": 1e15})
    result = decode(hw, model, Workload(alloc_context_tokens=1, read_context_tokens=1, floor_tok_s=50.0))
    assert result.batch_rate == 0


def test_decode_charges_mixed_precision_linear_math_by_mode() -> None:
    """Issue 36: decode's compute roof charges linear FLOPs as prefill does, each mode's part at its
    rate: gpt-oss-20b's BF16 attention and MXFP4 experts on a B200, F_linear = P / sum(P_i / F_i)."""
    from servebound.catalog.hardware import get_hardware
    from servebound.catalog.models import get_model
    from servebound.core.decode import decode
    from tests.conftest import resolved

    hw, model = get_hardware("nvidia-b200").hardware, get_model("gpt-oss-20b").adapter
    assert model.prefill is not None
    parts = dict(model.prefill.linear_params_by_mode)
    r = decode(hw, model, resolved(hw, model))
    assert r.compute is not None and r.compute.rates is not None
    harmonic = sum(parts.values()) / (
        parts["bf16"] / hw.compute_rate("bf16") + parts["fp4"] / hw.compute_rate("fp4")
    )
    assert r.compute.rates.linear_flop_per_s == pytest.approx(harmonic, rel=1e-12)
