"""Decode against read context: the range's extremes and curve equal decode() at every context."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servebound import (
    Experts,
    Hardware,
    KVShape,
    ModelAdapter,
    PrefillShape,
    Speculation,
    Weights,
    Workload,
    decode,
)
from servebound.cli import main
from servebound.core.decode_range import context_curve, decode_context_range
from servebound.core.workload import RangeLimit
from servebound.inputs.declared import DeclaredWorkload

GB = 1e9
ROOT = Path(__file__).resolve().parents[1]


def at(w: Workload, context: int) -> Workload:
    return replace(w, read_context_tokens=context, alloc_context_tokens=max(w.alloc_context_tokens, context))


def toy(limit: int | None, *, state: float = 0.0, window: int = 0, routed: int = 0) -> ModelAdapter:
    experts = Experts(routed, 4) if routed else None
    weights = Weights.from_params(
        bytes_per_param=0.5, total_params=30e9, active_params=6e9 if routed else 30e9, experts=experts
    )
    kv = KVShape(200_000.0, 50_000.0, window, state)
    return ModelAdapter("toy", "toy", weights, kv, kv, context_limit_tokens=limit)


def brute(hw: Hardware, model: ModelAdapter, w: Workload, top: int) -> list[tuple[int, float, int, float]]:
    """decode() at every integer read context 0..top: (L, single, b*, aggregate at b*)."""
    rows = []
    for context in range(top + 1):
        r = decode(hw, model, at(w, context))
        rows.append((context, r.single_session_tok_s or 0.0, r.batch_star or 0, r.aggregate_tok_s or 0.0))
    return rows


@pytest.mark.parametrize(
    ("model", "floor"),
    [
        (toy(3000), 20.0),
        (toy(3000, window=500, state=3e8), 20.0),
        (toy(2500, routed=64), 30.0),
        (toy(4000), 10.0),  # floor not reached at the top: the aggregate ends before the range does
    ],
)
def test_extremes_and_curve_equal_decode_at_every_context(model: ModelAdapter, floor: float) -> None:
    hw = Hardware("hw", "hw", memory_bytes=128 * GB, bandwidth_bytes_per_s=800 * GB)
    w = Workload(alloc_context_tokens=2000, read_context_tokens=1000, floor_tok_s=floor)
    rng = decode_context_range(hw, model, w)
    assert rng.max_read_context_tokens is not None and rng.curve is not None
    top = rng.max_read_context_tokens
    rows = brute(hw, model, w, top)
    singles = [r[1] for r in rows]
    assert rng.at_shortest is not None and rng.at_longest is not None
    assert rng.at_shortest.single_session_tok_s == max(singles)
    assert rng.at_longest.single_session_tok_s == min(singles)
    clearing = [r for r in rows if r[2] > 0]
    assert rng.floor_read_context_tokens == max(r[0] for r in clearing)
    assert [r[0] for r in clearing] == list(range(len(clearing)))  # a prefix 0..L_floor
    assert rng.at_floor_edge is not None
    assert rng.at_floor_edge.aggregate_tok_s == min(r[3] for r in clearing)
    assert rng.at_shortest.aggregate_tok_s == max(r[3] for r in clearing)
    # the vectorized curve, asked at every context, is decode() at every context
    curve = context_curve(hw, model, w, np.arange(top + 1))
    assert curve.batch_star.tolist() == [r[2] for r in rows]
    assert curve.single_session_tok_s.tolist() == singles
    agg = np.nan_to_num(curve.aggregate_tok_s, nan=0.0)
    # decode() evaluates expm1 in m(n) with the C library, the curve with numpy's vectorized routine:
    # the two may differ in the last bit (about 7 % of arguments), so the aggregates agree to a few ulp.
    assert agg.tolist() == pytest.approx([r[3] for r in rows], rel=1e-15, abs=0.0)


def test_compute_bound_contexts_equal_decode() -> None:
    """A datacenter-like machine at short contexts: the compute roof binds and b* is the balance batch."""
    hw = Hardware("dc", "dc", 180 * GB, 8000 * GB, compute_flop_per_s={"bf16": 2.25e15})
    weights = Weights.from_params(bytes_per_param=2.0, total_params=8e9, active_params=8e9)
    kv = KVShape(131_072.0)
    pre = PrefillShape(linear_active_params=7e9, attention_global_flops_per_pair=4 * 4096 * 32)
    model = ModelAdapter("m", "m", weights, kv, kv, pre, context_limit_tokens=4000)
    w = Workload(alloc_context_tokens=2000, read_context_tokens=100)
    rng = decode_context_range(hw, model, w)
    assert rng.max_read_context_tokens == 4000 and rng.curve is not None
    rows = brute(hw, model, w, 4000)
    curve = context_curve(hw, model, w, np.arange(4001))
    assert curve.batch_star.tolist() == [r[2] for r in rows]
    assert np.nan_to_num(curve.aggregate_tok_s).tolist() == [r[3] for r in rows]
    assert curve.single_session_tok_s.tolist() == [r[1] for r in rows]
    assert decode(hw, model, at(w, 100)).batch_limited_by is not None
    assert decode(hw, model, at(w, 100)).batch_limited_by.value == "compute"
    assert rng.at_shortest is not None and rng.at_floor_edge is not None
    assert rng.at_shortest.aggregate_tok_s == max(r[3] for r in rows)
    assert rng.at_floor_edge.aggregate_tok_s == min(r[3] for r in rows if r[2] > 0)


def test_floor_edge_before_the_top() -> None:
    hw = Hardware("hw", "hw", memory_bytes=128 * GB, bandwidth_bytes_per_s=800 * GB)
    w = Workload(alloc_context_tokens=2000, read_context_tokens=1000, floor_tok_s=50.0)
    rng = decode_context_range(hw, toy(60_000), w)
    edge = rng.floor_read_context_tokens
    assert edge is not None and rng.max_read_context_tokens is not None
    assert edge < rng.max_read_context_tokens
    assert decode(hw, toy(60_000), at(w, edge)).batch_star is not None
    assert decode(hw, toy(60_000), at(w, edge + 1)).batch_star is None


def test_memory_cuts_the_range() -> None:
    hw = Hardware("hw", "hw", memory_bytes=40 * GB, bandwidth_bytes_per_s=800 * GB)
    model = toy(1_000_000)
    w = Workload(alloc_context_tokens=2000, read_context_tokens=1000)
    rng = decode_context_range(hw, model, w)
    assert rng.limited_by is RangeLimit.MEMORY and rng.max_read_context_tokens is not None
    top = rng.max_read_context_tokens
    # 40 - 15 - 8 = 17 GB for one session at 200 kB/token (no window): 85,000 tokens
    assert top == 85_000
    assert decode(hw, model, at(w, top)).batch_mem == 1
    assert decode(hw, model, at(w, top + 1)).batch_mem == 0


def test_nothing_fits_gives_an_empty_range() -> None:
    hw = Hardware("hw", "hw", memory_bytes=16 * GB, bandwidth_bytes_per_s=800 * GB)
    rng = decode_context_range(hw, toy(4096), Workload())
    assert rng.verdict.value == "no_resident_fit"
    assert rng.curve is None and rng.max_read_context_tokens is None


@st.composite
def cases(draw: st.DrawFn) -> tuple[Hardware, ModelAdapter, Workload]:
    rates = draw(st.sampled_from([{}, {"bf16": 50e12}, {"bf16": 2e15, "fp8": 4e15}, {"fp8": 1e14}]))
    hw = Hardware(
        "hw",
        "hw",
        memory_bytes=draw(st.floats(16, 1000)) * GB,
        bandwidth_bytes_per_s=draw(st.floats(50, 8000)) * GB,
        compute_flop_per_s=rates,
    )
    routed = draw(st.sampled_from([0, 8, 128]))
    experts = Experts(routed, draw(st.integers(1, routed - 1))) if routed else None
    total = draw(st.floats(0.5, 60)) * 1e9
    weights = Weights.from_params(
        bytes_per_param=draw(st.sampled_from([0.25, 0.5, 1.0])),
        total_params=total,
        active_params=total * (draw(st.floats(0.6, 1.0)) if routed else 1.0),
        experts=experts,
    )
    kv = KVShape(
        draw(st.floats(0, 4e5)),
        draw(st.floats(0, 1e5)),
        draw(st.integers(0, 8192)),
        draw(st.sampled_from([0.0, 1e6, 5e8])),
    )
    prefill = None
    if draw(st.booleans()):
        prefill = PrefillShape(
            linear_active_params=total * draw(st.floats(0.05, 1.0)),
            attention_global_flops_per_pair=draw(st.floats(0, 1e6)),
            attention_local_flops_per_pair=draw(st.floats(0, 1e6)),
            attention_window_tokens=draw(st.integers(0, 4096)),
            kv_write_bytes_per_token=1000.0,
        )
    model = ModelAdapter(
        "m", "m", weights, kv, kv, prefill, context_limit_tokens=draw(st.integers(1, 2_000_000))
    )
    spec = None
    if draw(st.booleans()):
        draft_w = Weights.from_params(bytes_per_param=0.5, total_params=0.5e9, active_params=0.5e9)
        draft_pre = PrefillShape(linear_active_params=0.5e9, attention_global_flops_per_pair=4096.0)
        draft = ModelAdapter(
            "d",
            "d",
            draft_w,
            KVShape(20_000.0),
            KVShape(20_000.0),
            draft_pre if draw(st.booleans()) else None,
        )
        gamma = draw(st.integers(1, 6))
        spec = Speculation(draft, gamma, Speculation.rho_from_acceptance(draw(st.floats(0, 1)), gamma))
    alloc = draw(st.integers(1, 200_000))
    w = Workload(
        overhead_bytes=draw(st.floats(0, 8)) * GB,
        alloc_context_tokens=alloc,
        read_context_tokens=draw(st.integers(1, alloc)),
        floor_tok_s=draw(st.floats(0, 100)),
        speculation=spec,
    )
    return hw, model, w


@settings(max_examples=300, deadline=None, derandomize=True)
@given(cases())
def test_curve_is_decode_at_each_sampled_context(case: tuple[Hardware, ModelAdapter, Workload]) -> None:
    hw, model, w = case
    rng = decode_context_range(hw, model, w)
    if rng.curve is None:
        assert not decode(hw, model, at(w, 0)).fits
        return
    c = rng.curve
    for i, context in enumerate(c.read_context_tokens.tolist()):
        r = decode(hw, model, at(w, context))
        assert r.single_session_tok_s == c.single_session_tok_s[i]
        assert (r.batch_star or 0) == c.batch_star[i]
        if r.aggregate_tok_s is not None:
            assert r.aggregate_tok_s == c.aggregate_tok_s[i]
    # monotone: neither ceiling rises with the read context
    assert np.all(np.diff(c.single_session_tok_s) <= 0)
    agg = c.aggregate_tok_s[~np.isnan(c.aggregate_tok_s)]
    assert np.all(np.diff(agg) <= 0)


def test_cli_range_json_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    hw = str(ROOT / "examples" / "dgx-spark.toml")
    model = str(ROOT / "examples" / "qwen3.6-35b-a3b-nvfp4.toml")
    assert main(["decode", "-H", hw, "-m", model, "--range", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    cr = data["context_range"]
    assert cr["min_read_context_tokens"] == 0
    assert cr["single_session"]["hi_tok_s"] > cr["single_session"]["lo_tok_s"]
    assert cr["aggregate"]["hi_tok_s"] >= data["aggregate_tok_s"] >= cr["aggregate"]["lo_tok_s"]
    pts = cr["points"]
    assert (
        pts["read_context_tokens"][0] == 0 and pts["read_context_tokens"][-1] == cr["max_read_context_tokens"]
    )
    assert len(pts["aggregate_tok_s"]) == len(pts["read_context_tokens"])
    assert main(["decode", "-H", hw, "-m", model, "--range"]) == 0
    out = capsys.readouterr().out
    assert "context range L_read = 0.." in out and "single session:" in out


def test_the_curve_takes_the_rows_runtime_overhead_as_decode_does() -> None:
    """A workload that leaves O to the hardware row (the CLI's and the API's) gets the row's O at every
    context of the curve, as decode() does at its ends (a B200 row states 10 % of its memory)."""
    hw = Hardware(
        "dc", "dc", memory_bytes=180 * GB, bandwidth_bytes_per_s=8000 * GB, runtime_overhead_bytes=18 * GB
    )
    weights = Weights.from_params(bytes_per_param=2.0, total_params=7.6e9, active_params=7.6e9)
    kv = KVShape(57_344.0)
    model = ModelAdapter("m", "m", weights, kv, kv, context_limit_tokens=32_768)
    w = DeclaredWorkload(Workload(), overhead_from_hardware=True).resolve(
        hw, model
    )  # as the scenario hands it down
    rng = decode_context_range(hw, model, w)
    assert rng.at_shortest is not None and rng.curve is not None
    assert rng.curve.batch_star[0] == rng.at_shortest.batch_star
    assert rng.curve.aggregate_tok_s[0] == rng.at_shortest.aggregate_tok_s
    assert rng.workload.overhead_bytes == 18 * GB


def test_routed_experts_traffic_on_the_curve_is_decodes_float() -> None:
    # numpy's expm1 and libm's differ in the last bit on a few per cent of inputs; the curve takes
    # routed experts' expected traffic one count at a time, so each batch's W_batch is decode's float.
    from servebound.core.decode_range import batch_bytes
    from servebound.core.experts import ExpertTraffic

    weights = Weights.from_params(
        bytes_per_param=0.5, total_params=30e9, active_params=6e9, experts=Experts(128, 8)
    )
    batches = np.arange(1, 5001, dtype=np.float64)
    on_curve = batch_bytes(weights, batches, ExpertTraffic.EXPECTED)
    assert on_curve.tolist() == [weights.batch(b, ExpertTraffic.EXPECTED) for b in batches.tolist()]


def test_curve_is_decode_with_routed_experts_and_a_draft() -> None:
    # Found by test_curve_is_decode_at_each_sampled_context: 5.975723622782446 from decode against
    # ...447 on the curve at context 0, a target with 8 routed experts (2 per token) and a 4-token draft.
    hw = Hardware("hw", "hw", memory_bytes=16 * GB, bandwidth_bytes_per_s=50 * GB, compute_flop_per_s={})
    weights = Weights.from_params(
        bytes_per_param=0.5, total_params=16e9, active_params=12e9, experts=Experts(8, 2)
    )
    model = ModelAdapter("m", "m", weights, KVShape(0.0), KVShape(0.0), None, context_limit_tokens=1)
    draft_w = Weights.from_params(bytes_per_param=0.5, total_params=0.5e9, active_params=0.5e9)
    draft = ModelAdapter("d", "d", draft_w, KVShape(20_000.0), KVShape(20_000.0), None)
    spec = Speculation(draft, 4, Speculation.rho_from_acceptance(0.0, 4))
    w = Workload(overhead_bytes=0.0, alloc_context_tokens=1, read_context_tokens=1, speculation=spec)
    curve = decode_context_range(hw, model, w).curve
    assert curve is not None
    for i, context in enumerate(curve.read_context_tokens.tolist()):
        r = decode(hw, model, at(w, context))
        assert r.single_session_tok_s == curve.single_session_tok_s[i]
        assert (r.batch_star or 0) == curve.batch_star[i]
