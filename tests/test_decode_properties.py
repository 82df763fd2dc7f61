"""Invariants the derivation proves, checked with hypothesis over random adapters and machines."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from servebound import (
    Experts,
    ExpertTraffic,
    Hardware,
    KVShape,
    ModelAdapter,
    Speculation,
    Verdict,
    Weights,
    Workload,
    decode,
    expected_distinct_experts,
)
from servebound.core.decode import curve
from tests.strategies import workloads as shared_workloads

GB = 1e9


@st.composite
def machines(draw: st.DrawFn) -> Hardware:
    return Hardware(
        "hw",
        "hw",
        memory_bytes=draw(st.floats(4, 2000)) * GB,
        bandwidth_bytes_per_s=draw(st.floats(50, 20_000)) * GB,
    )


@st.composite
def models(draw: st.DrawFn, moe: bool | None = None) -> ModelAdapter:
    total = draw(st.floats(0.1, 400)) * 1e9
    is_moe = draw(st.booleans()) if moe is None else moe
    experts = None
    active = total
    if is_moe:
        routed = draw(st.integers(2, 512))
        per_token = draw(st.integers(1, routed - 1))
        experts = Experts(routed, per_token)
        # the always-on part is non-negative: P_active >= k/E * P_total
        active = total * draw(st.floats(per_token / routed, 1.0))
    weights = Weights.from_params(
        bytes_per_param=draw(st.sampled_from([0.25, 0.5, 0.5625, 1.0, 2.0])),
        total_params=total,
        active_params=active,
        embedding_params=draw(st.floats(0, 0.01)) * active,
        experts=experts,
    )
    per_token_bytes = draw(st.floats(1e3, 1e6))
    window = draw(st.integers(0, 8192))
    kv = KVShape(per_token_bytes, draw(st.floats(0, 1e5)), window, draw(st.floats(0, 1e8)))
    return ModelAdapter("m", "m", weights, kv, kv)


def workloads() -> st.SearchStrategy[Workload]:
    return shared_workloads(alloc_tokens=(1, 1_000_000), overhead_gb=16, floor_tok_s=(0.5, 200))


@settings(max_examples=300, deadline=None)
@given(machines(), models(), workloads())
def test_kv_aware_below_memory_power_below_large_memory(
    hw: Hardware, model: ModelAdapter, w: Workload
) -> None:
    r = decode(hw, model, w)
    assume(r.verdict is Verdict.FLOOR_FIT)
    assert r.aggregate_tok_s is not None and r.memory_power_tok_s is not None
    assert r.large_memory_limit_tok_s is not None
    assert r.aggregate_tok_s <= r.memory_power_tok_s * (1 + 1e-9)
    assert r.memory_power_tok_s <= r.large_memory_limit_tok_s * (1 + 1e-9)


@settings(max_examples=300, deadline=None)
@given(machines(), models(), workloads())
def test_rate_at_b_star_clears_floor_and_next_batch_does_not_improve(
    hw: Hardware, model: ModelAdapter, w: Workload
) -> None:
    r = decode(hw, model, w)
    assume(r.verdict is Verdict.FLOOR_FIT)
    assert r.batch_star is not None and r.batch_mem is not None and r.per_session_tok_s is not None
    assert r.per_session_tok_s >= w.floor_tok_s
    assert r.batch_star <= r.batch_mem
    if r.batch_rate is not None:
        assert r.batch_star <= r.batch_rate  # b_rate is a necessary condition
    if r.batch_star < r.batch_mem:
        _, per_session = curve(hw, model, w, [r.batch_star + 1])
        assert per_session[0] < w.floor_tok_s


@settings(max_examples=100, deadline=None)
@given(machines(), models(), workloads())
def test_search_equals_brute_force_on_small_batches(hw: Hardware, model: ModelAdapter, w: Workload) -> None:
    r = decode(hw, model, w)
    assume(r.batch_mem is not None and 0 < r.batch_mem <= 3000)
    assert r.batch_mem is not None
    batches = np.arange(1, r.batch_mem + 1)
    aggregate, per_session = curve(hw, model, w, batches)
    usable = per_session >= w.floor_tok_s
    if not usable.any():
        assert r.verdict is Verdict.NO_FLOOR
        return
    best = int(np.argmax(np.where(usable, aggregate, -np.inf)))
    assert r.aggregate_tok_s is not None
    assert math.isclose(r.aggregate_tok_s, float(aggregate[best]), rel_tol=1e-12)


def _ceilings(hw: Hardware, model: ModelAdapter, w: Workload) -> tuple[float, float, float]:
    r = decode(hw, model, w)
    return (
        r.single_session_tok_s or 0.0,
        r.aggregate_tok_s or 0.0,
        r.memory_power_tok_s if r.memory_power_tok_s is not None and r.fits else 0.0,
    )


@settings(max_examples=200, deadline=None)
@given(machines(), models(), workloads(), st.floats(1.0, 4.0), st.sampled_from(["memory", "bandwidth"]))
def test_every_ceiling_non_decreasing_in_capacity_and_bandwidth(
    hw: Hardware, model: ModelAdapter, w: Workload, factor: float, which: str
) -> None:
    bigger = Hardware(
        "hw2",
        "hw2",
        memory_bytes=hw.memory_bytes * (factor if which == "memory" else 1),
        bandwidth_bytes_per_s=hw.bandwidth_bytes_per_s * (factor if which == "bandwidth" else 1),
    )
    for small, large in zip(_ceilings(hw, model, w), _ceilings(bigger, model, w), strict=True):
        assert large >= small * (1 - 1e-12)


@given(st.integers(1, 1024), st.data())
def test_distinct_experts_endpoints(routed: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(1, routed))
    assert float(expected_distinct_experts(1, routed, k)) == np.float64(k) or math.isclose(
        float(expected_distinct_experts(1, routed, k)), k, rel_tol=1e-12
    )
    assert math.isclose(float(expected_distinct_experts(10**9, routed, k)), routed, rel_tol=1e-12)
    n = np.arange(1, 200)
    m = expected_distinct_experts(n, routed, k)
    assert np.all(np.diff(m) >= -1e-9) and np.all(m <= routed + 1e-9) and np.all(m >= k - 1e-9)


@settings(max_examples=200, deadline=None)
@given(models(moe=True), st.integers(1, 100_000))
def test_minimum_expert_traffic_never_above_expected(model: ModelAdapter, n: int) -> None:
    expected = float(model.weights.batch(n, ExpertTraffic.EXPECTED))
    minimum = float(model.weights.batch(n, ExpertTraffic.MINIMUM))
    assert minimum <= expected * (1 + 1e-12)
    assert math.isclose(
        float(model.weights.batch(1, ExpertTraffic.EXPECTED)), model.weights.active, rel_tol=1e-9
    )


@settings(max_examples=200, deadline=None)
@given(
    st.floats(1e6, 1e11),
    st.floats(0, 1e9),
    st.floats(1e3, 1e9),
    st.integers(1, 256),
    machines(),
    workloads(),
)
def test_dense_and_moe_forms_agree_when_every_expert_is_chosen(
    always_on: float, embedding: float, expert: float, routed: int, hw: Hardware, w: Workload
) -> None:
    kv = KVShape(5e4)
    moe = ModelAdapter("a", "a", Weights(embedding, always_on, expert, Experts(routed, routed)), kv, kv)
    dense = ModelAdapter("b", "b", Weights(embedding, always_on + routed * expert), kv, kv)
    a, b = decode(hw, moe, w), decode(hw, dense, w)
    assert a.verdict == b.verdict and a.batch_star == b.batch_star and a.batch_mem == b.batch_mem
    for x, y in (
        (a.aggregate_tok_s, b.aggregate_tok_s),
        (a.single_session_tok_s, b.single_session_tok_s),
    ):
        assert (x is None and y is None) or math.isclose(x or 0, y or 0, rel_tol=1e-12)


@settings(max_examples=200, deadline=None)
@given(machines(), models(), workloads(), models(moe=False), st.integers(1, 1000))
def test_speculation_at_gamma_zero_is_ordinary_decoding(
    hw: Hardware, model: ModelAdapter, w: Workload, draft: ModelAdapter, b: int
) -> None:
    ordinary = Workload(read_context_tokens=w.read_context_tokens, expert_traffic=w.expert_traffic)
    spec = Workload(
        read_context_tokens=w.read_context_tokens,
        expert_traffic=w.expert_traffic,
        speculation=Speculation(draft=draft, draft_tokens=0, tokens_per_step=1.0),
    )
    q_plain = curve(hw, model, ordinary, [b])[0]
    q_spec = curve(hw, model, spec, [b])[0]
    assert math.isclose(float(q_plain[0]), float(q_spec[0]), rel_tol=1e-12)


def test_rho_from_acceptance() -> None:
    assert Speculation.rho_from_acceptance(0.0, 4) == 1.0
    assert Speculation.rho_from_acceptance(1.0, 4) == 5.0
    # alpha = 0.5, gamma = 3: (1 - 0.5^4) / 0.5 = 1.875
    assert math.isclose(Speculation.rho_from_acceptance(0.5, 3), 1.875)
