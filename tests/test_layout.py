"""Parallel layouts: hand-checked cases from the serving-economics text and properties of the layout model."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from servebound import Experts, Hardware, KVShape, ModelAdapter, Verdict, Weights, Workload, decode
from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import get_model
from servebound.core.layout import Layout, System, evaluate_layout, layout_problem, per_device_bytes, times_at
from servebound.core.layout_search import search_layouts
from servebound.core.model import LayerShape
from servebound.core.system import Interconnect, valid_layouts
from tests.strategies import workloads as shared_workloads

GB = 1e9


def dense_70b(bytes_per_param: float = 0.5) -> ModelAdapter:
    """A Llama-3-70B-shaped dense model: 80 layers, d = 8192, 64 query heads over 8 KV heads of 128."""
    kv_per_token = 80 * 2 * 8 * 128 * 2  # layers x (K, V) x kv heads x head_dim x bf16 bytes
    return ModelAdapter(
        id="dense-70b",
        name="dense 70B",
        weights=Weights.from_params(bytes_per_param=bytes_per_param, total_params=70e9, active_params=70e9),
        kv_alloc=KVShape(global_bytes_per_token=kv_per_token),
        kv_read=KVShape(global_bytes_per_token=kv_per_token),
        shape=LayerShape(layers=80, hidden_size=8192, query_heads=64, cache_shards=8),
    )


def pcie_pair(memory_gb: float = 48, bandwidth_gb_s: float = 1000, link_gb_s: float = 32) -> System:
    card = Hardware("card", "card", memory_gb * GB, bandwidth_gb_s * GB)
    return System(card, 2, Interconnect(2, link_gb_s * GB, link_gb_s * GB, "PCIe 4.0 x16", "none"))


# --------------------------------------------------------------------------------------------------
# Hand-checked cases
# --------------------------------------------------------------------------------------------------


def test_two_cards_over_pcie_tp2_dense_70b_all_reduce_by_hand() -> None:
    """Two 48 GB cards over PCIe 4.0 x16 (32 GB/s each way), TP = 2, a 4-bit dense 70B.

    Per layer two all-reduces (after attention and after the MLP); a ring over 2 devices sends
    2 (T - 1) / T = 1 times the message, and the message is b x d x 2 bytes. At b = 3:
        80 layers x 2 x 1 x (3 x 8192 x 2 bytes) / 32e9 B/s = 7,864,320 / 32e9 = 245.76 us.
    Memory: each card reads half the 35 GB of weights and half of each session's cache (8 KV heads
    split 2 ways): (17.5e9 + 3 x 4000 x 327,680 / 2) / 1e12.
    """
    system, model = pcie_pair(), dense_70b()
    workload = Workload(
        overhead_bytes=2 * GB, alloc_context_tokens=8000, read_context_tokens=4000, floor_tok_s=1
    )
    t = times_at(system, model, Layout(tp=2), 3, workload)
    assert t.all_reduce_s == pytest.approx(80 * 2 * 1 * (3 * 8192 * 2) / 32e9, rel=1e-12)
    assert t.all_reduce_s == pytest.approx(245.76e-6, rel=1e-9)
    assert t.all_to_all_s == 0 and t.hop_s == 0
    kv_per_token = 80 * 2 * 8 * 128 * 2
    assert t.memory_s == pytest.approx((35e9 / 2 + 3 * 4000 * kv_per_token / 2) / 1e12, rel=1e-12)
    assert t.stage_s == max(t.memory_s, t.all_reduce_s)
    assert t.bound_by.value == "memory"
    # per device: half the weights, 1 GB of the overhead, half of each session's 8000-token cache
    pd = per_device_bytes(system, model, Layout(tp=2), 3, workload)
    assert pd.weight_bytes == pytest.approx(17.5e9)
    assert pd.overhead_bytes == pytest.approx(1e9)
    assert pd.kv_bytes == pytest.approx(3 * 8000 * kv_per_token / 2)


def test_slow_link_makes_communication_bind() -> None:
    """At 0.01 GB/s the all-reduce dwarfs the memory sweep: bound_by says communication."""
    system, model = pcie_pair(link_gb_s=0.01), dense_70b()
    workload = Workload(
        overhead_bytes=2 * GB, alloc_context_tokens=8000, read_context_tokens=4000, floor_tok_s=0.1
    )
    result = evaluate_layout(system, model, Layout(tp=2), workload)
    assert result.times is not None and result.times.bound_by.value == "communication"


def test_deepseek_v3_256_experts_on_64_gpus_of_an_nvl72() -> None:
    """256 routed experts over ep = 64 GPUs is 4 per GPU; 8 of the 72 stay idle; 72 does not divide 256."""
    rack = get_hardware("nvidia-gb200-nvl72").system
    assert rack is not None
    system = rack.parallel_system()
    model = get_model("deepseek-v3").adapter
    experts = model.weights.experts
    assert experts is not None and experts.routed == 256
    layout = Layout(tp=1, ep=64)
    assert layout_problem(system, model, layout) is None
    result = evaluate_layout(system, model, layout, Workload())
    assert result.devices == 64 and result.idle_devices == 8
    routed = experts.routed * model.weights.expert_bytes
    assert result.per_device.weight_bytes == pytest.approx(
        (model.weights.resident - routed) + 4 * model.weights.expert_bytes, rel=1e-12
    )
    assert result.links.expert_parallel == "scale-up"
    assert "must divide the 256 routed experts" in (layout_problem(system, model, Layout(tp=1, ep=72)) or "")
    # the latent cache has one head: tp = 2 stores it twice, so per device it is 2 x larger than tp = 1
    one = per_device_bytes(system, model, Layout(tp=1, ep=64), 10)
    two = per_device_bytes(system, model, Layout(tp=2, ep=64), 10)
    assert two.kv_bytes == pytest.approx(2 * one.kv_bytes)


def moe_model(layers: int = 8, per_token: int = 8, routed: int = 64) -> ModelAdapter:
    return ModelAdapter(
        id="moe",
        name="moe",
        weights=Weights.from_params(
            bytes_per_param=1.0, total_params=100e9, active_params=10e9, experts=Experts(routed, per_token)
        ),
        kv_alloc=KVShape(global_bytes_per_token=50_000),
        kv_read=KVShape(global_bytes_per_token=50_000),
        shape=LayerShape(layers=layers, hidden_size=4096, query_heads=32, cache_shards=8, moe_layers=layers),
    )


def test_pipeline_hop_costs_less_than_in_rack_expert_traffic() -> None:
    """The text's inequality: a token crosses racks once per stage (8x slower link) but fans out to its
    k = 8 experts twice per layer inside the rack; with one layer per stage, 8 <= 2 x 8 x 1 = 16."""
    hop, experts = 8.0, 2.0 * 8 * 1  # per byte of activation, in units of 1 / scale-up bandwidth
    # The layout model agrees: two racks of 8 (one stage each), scale-out 8x slower than scale-up.
    device = Hardware("gpu", "gpu", 1000 * GB, 8000 * GB)
    system = System(device, 16, Interconnect(8, 800 * GB, 100 * GB, "scale-up", "scale-out"))
    model = moe_model(layers=2, per_token=8, routed=64)  # pp = 2: one layer per stage
    t = times_at(
        system,
        model,
        Layout(tp=1, ep=8, pp=2),
        64,
        Workload(read_context_tokens=1000, alloc_context_tokens=1000),
    )
    # per device and per stage: hop (b/G) d e_a / B_out; experts 2 (L/pp) (b/G) k d e_a (G-1)/G / B_up
    b, g, d, ea = 64, 8, 4096, 2.0
    assert t.hop_s == pytest.approx((b / g) * d * ea / (100 * GB), rel=1e-12)
    assert t.all_to_all_s == pytest.approx(2 * 1 * (b / g) * 8 * d * ea * (7 / 8) / (800 * GB), rel=1e-12)
    assert t.hop_s <= t.all_to_all_s
    assert t.all_to_all_s / t.hop_s == pytest.approx(experts / hop * 7 / 8, rel=1e-12)


def test_kv_per_device_unchanged_as_pipeline_stages_grow() -> None:
    """B = P b: with the micro-batch b fixed, P = pp micro-batches are in flight; the KV per device stays
    the same while the weights per device fall as 1 / pp."""
    device = Hardware("gpu", "gpu", 200 * GB, 8000 * GB)
    system = System(device, 64, Interconnect.ideal_for(64))
    model = dense_70b(bytes_per_param=2.0)
    by_pp = {pp: per_device_bytes(system, model, Layout(tp=8, pp=pp), 32) for pp in (1, 2, 4, 8)}
    kv = {pp: pd.kv_bytes for pp, pd in by_pp.items()}
    assert len({round(v, 6) for v in kv.values()}) == 1
    for pp, pd in by_pp.items():
        assert pd.weight_bytes == pytest.approx(140e9 / (8 * pp), rel=1e-12)


def test_search_is_ranked_and_every_layout_valid() -> None:
    system = get_hardware("8x-nvidia-h100-sxm").system
    assert system is not None
    sys_ = system.parallel_system()
    model = get_model("llama-3.1-70b").adapter
    results = search_layouts(sys_, model, Workload())
    assert {r.layout for r in results} == set(valid_layouts(sys_, model))
    fits = [r for r in results if r.verdict is Verdict.FLOOR_FIT]
    aggregates = [r.aggregate_tok_s for r in fits]
    assert aggregates == sorted(aggregates, reverse=True)
    assert results[0].layout == Layout(tp=8)


# --------------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------------


@st.composite
def dense_models(draw: st.DrawFn) -> ModelAdapter:
    total = draw(st.floats(1, 400)) * 1e9
    layers = draw(st.integers(4, 128))
    per_token = draw(st.floats(1e3, 5e5))
    return ModelAdapter(
        id="m",
        name="m",
        weights=Weights.from_params(
            bytes_per_param=draw(st.sampled_from([0.5, 1.0, 2.0])), total_params=total, active_params=total
        ),
        kv_alloc=KVShape(global_bytes_per_token=per_token),
        kv_read=KVShape(global_bytes_per_token=per_token),
        shape=LayerShape(
            layers=layers,
            hidden_size=draw(st.sampled_from([2048, 4096, 8192])),
            query_heads=64,
            cache_shards=64,
        ),
    )


def workloads() -> st.SearchStrategy[Workload]:
    return shared_workloads(
        alloc_tokens=(1000, 200_000), overhead_gb=16, floor_tok_s=(0.5, 100), expert_traffic=False
    )


def same_verdict_to_rounding(result: Any, pooled: Any) -> bool:
    """The layout's verdict equals the pooled system's, or both sit on a gate's boundary: margin
    rounding at one session, or W_resident + O = C to rounding (the per-device split of O rounds)."""
    return (
        result.verdict.value == pooled.verdict.value
        or (pooled.batch_mem is not None and pooled.batch_mem <= 1)
        or abs(pooled.resident_margin_bytes) <= 1e-9 * pooled.hardware.memory_bytes
    )


def test_ideal_link_at_the_weights_boundary() -> None:
    """Found by h14's repeated hypothesis runs (the property test below draws its workload with
    st.data(), which @example cannot give): 16 GB of weights on 2 x 8 GB with O = 2.2e-7 B. The pooled
    system reads no_resident_fit, the layout no_session_fit: both on the boundary W + O = C."""
    model = ModelAdapter(
        id="m",
        name="m",
        weights=Weights.from_params(bytes_per_param=2.0, total_params=8e9, active_params=8e9),
        kv_alloc=KVShape(global_bytes_per_token=145286.49099007872),
        kv_read=KVShape(global_bytes_per_token=145286.49099007872),
        shape=LayerShape(layers=4, hidden_size=2048, query_heads=64, cache_shards=64),
    )
    workload = Workload(
        overhead_bytes=2.220446049250313e-07, alloc_context_tokens=5990, read_context_tokens=1235
    )
    device = Hardware("d", "d", 8.0 * GB, 1822.7260484599585 * GB)
    result = evaluate_layout(System(device, 2, Interconnect.ideal_for(2)), model, Layout(tp=2), workload)
    pooled = decode(device.scaled(2), model, workload)
    assert result.verdict.value in ("no_resident_fit", "no_session_fit")
    assert pooled.verdict.value in ("no_resident_fit", "no_session_fit")
    assert same_verdict_to_rounding(result, pooled)


@settings(max_examples=150, deadline=None)
@given(
    model=dense_models(),
    count=st.sampled_from([1, 2, 4, 8, 16]),
    memory=st.floats(8, 300),
    bandwidth=st.floats(100, 10_000),
    data=st.data(),
)
def test_ideal_link_tp_only_equals_the_nx_system(
    model: ModelAdapter, count: int, memory: float, bandwidth: float, data: st.DataObject
) -> None:
    """With an infinitely fast link, tp = N gives the pooled Nx system's decode result."""
    workload = data.draw(workloads())
    device = Hardware("d", "d", memory * GB, bandwidth * GB)
    result = evaluate_layout(
        System(device, count, Interconnect.ideal_for(count)), model, Layout(tp=count), workload
    )
    pooled = decode(device.scaled(count), model, workload)
    assert same_verdict_to_rounding(result, pooled) or (
        # or at the boundary of the weights themselves (W_resident + O = C to rounding; found by
        # h14's repeated runs: O = 6.6e-261 B split over the devices against a pooled C)
        abs(pooled.resident_margin_bytes) <= 1e-9 * pooled.hardware.memory_bytes
    ), (pooled.resident_margin_bytes, result.verdict, pooled.verdict)
    if pooled.batch_star is not None and result.batch_star is not None:
        assert abs(result.batch_star - pooled.batch_star) <= 1
        if result.batch_star == pooled.batch_star:
            assert result.aggregate_tok_s == pytest.approx(pooled.aggregate_tok_s, rel=1e-9)
            assert result.per_session_tok_s == pytest.approx(pooled.per_session_tok_s, rel=1e-9)
    if pooled.single_session_tok_s is not None and result.single_session_tok_s is not None:
        assert result.single_session_tok_s == pytest.approx(pooled.single_session_tok_s, rel=1e-9)


@settings(max_examples=150, deadline=None)
@example(tp=2, pp=2, dp=1, link=0.001)
@given(
    tp=st.sampled_from([1, 2, 4]),
    pp=st.sampled_from([1, 2, 4]),
    dp=st.sampled_from([1, 2]),
    link=st.floats(0.001, 2000),
)
def test_adding_communication_never_raises_a_ceiling(tp: int, pp: int, dp: int, link: float) -> None:
    model = dense_70b()
    device = Hardware("d", "d", 48 * GB, 1000 * GB)
    count = tp * pp * dp
    workload = Workload(
        overhead_bytes=1 * GB, alloc_context_tokens=8000, read_context_tokens=4000, floor_tok_s=5
    )
    ideal = evaluate_layout(
        System(device, count, Interconnect.ideal_for(count)), model, Layout(tp, 1, pp, dp), workload
    )
    linked = evaluate_layout(
        System(device, count, Interconnect(max(1, tp), link * GB, link * GB / 8, "up", "out")),
        model,
        Layout(tp, 1, pp, dp),
        workload,
    )
    if linked.verdict is Verdict.FLOOR_FIT:
        assert ideal.verdict is Verdict.FLOOR_FIT
        assert linked.aggregate_tok_s is not None and ideal.aggregate_tok_s is not None
        assert linked.aggregate_tok_s <= ideal.aggregate_tok_s * (1 + 1e-12)
    if linked.single_session_tok_s is not None:
        assert ideal.single_session_tok_s is not None
        assert linked.single_session_tok_s <= ideal.single_session_tok_s * (1 + 1e-12)


@settings(max_examples=150, deadline=None)
@given(
    tp=st.sampled_from([1, 2, 4, 8, 16]),
    ep_factor=st.sampled_from([0, 1, 2, 4]),
    pp=st.sampled_from([1, 2, 3, 4]),
    dp=st.sampled_from([1, 2, 3]),
    batch=st.integers(0, 5000),
    shards=st.sampled_from([1, 2, 8, 16]),
)
def test_per_device_bytes_sum_to_the_system(
    tp: int, ep_factor: int, pp: int, dp: int, batch: int, shards: int
) -> None:
    """Summed over devices: every replica holds one copy of the routed experts, each attention group one
    copy of the rest; every session's cache once per replica of its heads (tp / min(tp, heads))."""
    ep = 1 if ep_factor == 0 else tp * ep_factor
    model = ModelAdapter(
        id="moe",
        name="moe",
        weights=Weights.from_params(
            bytes_per_param=1.0, total_params=100e9, active_params=10e9, experts=Experts(64, 4)
        ),
        kv_alloc=KVShape(global_bytes_per_token=10_000, state_bytes=1e6),
        kv_read=KVShape(global_bytes_per_token=10_000),
        shape=LayerShape(layers=8, hidden_size=1024, query_heads=16, cache_shards=shards, moe_layers=8),
    )
    layout = Layout(tp, ep, pp, dp)
    system = System(
        Hardware("d", "d", 100 * GB, 1000 * GB), layout.devices, Interconnect.ideal_for(layout.devices)
    )
    assume(layout_problem(system, model, layout) is None)
    workload = Workload(alloc_context_tokens=1000, read_context_tokens=500)
    pd = per_device_bytes(system, model, layout, batch, workload)
    weights = model.weights
    assert weights.experts is not None
    routed = weights.experts.routed * weights.expert_bytes
    group = layout.group
    expected_weights = dp * ((group / tp) * (weights.resident - routed) + routed)
    assert pd.weight_bytes * layout.devices == pytest.approx(expected_weights, rel=1e-12)
    sessions = dp * pp * batch
    copies = tp / min(tp, shards)
    expected_kv = sessions * model.kv_alloc.bytes_at(1000) * copies
    assert pd.kv_bytes * layout.devices == pytest.approx(expected_kv, rel=1e-12, abs=1e-6)
    assert pd.overhead_bytes * layout.devices == pytest.approx(workload.overhead_bytes)
    assert math.isclose(
        pd.free_bytes + pd.kv_bytes + pd.weight_bytes + pd.overhead_bytes, 100 * GB, rel_tol=1e-12
    )


def test_multi_device_reported_runs_sit_at_or_below_their_layout_ceilings() -> None:
    """The sourced vLLM tensor-parallel and llama.cpp layer-split runs: each under its layout's ceiling,
    which is never above the pooled Nx ceiling (the link only lowers it)."""
    from servebound.runs.reported import load_reported_runs
    from servebound.runs.validation import evaluate_reported_runs

    entries = [e for e in load_reported_runs() if e.layout is not None]
    layouts = {e.layout for e in entries}
    assert {"tp=2", "tp=4", "tp=8", "pp=2"} <= layouts
    for run in evaluate_reported_runs(entries):
        assert run.at_or_below, run.entry.id
        assert 0 < run.efficiency <= 1
        pooled = next(w for w in run.check.warnings if w.startswith("layout "))
        pooled_ceiling = float(pooled.rsplit("ceiling ", 1)[1].rstrip(")"))
        assert run.check.ceiling_tok_s <= pooled_ceiling * (1 + 1e-3)


def test_a_replica_for_prefill_holds_every_devices_runtime_overhead() -> None:
    """The replica prefill runs on is G pp devices: its capacity and runtime overhead are theirs summed
    (as the layout charges O per device), its bandwidth and compute one stage group's."""
    from servebound.questions.layout import replica_prefill_hardware

    device = Hardware(
        "gpu",
        "GPU",
        memory_bytes=180 * GB,
        bandwidth_bytes_per_s=8000 * GB,
        compute_flop_per_s={"bf16": 2.25e15},
        runtime_overhead_bytes=18 * GB,
        sources={"runtime_overhead_gb": "10 % of memory"},
    )
    replica = replica_prefill_hardware(System(device, 8, Interconnect.ideal_for(8)), Layout(tp=2, pp=2))
    assert replica.memory_bytes == 4 * 180 * GB
    assert replica.runtime_overhead_bytes == 4 * 18 * GB
    assert replica.bandwidth_bytes_per_s == 2 * 8000 * GB
    assert replica.compute_flop_per_s == {"bf16": 2 * 2.25e15}
    assert replica.id == f"gpu-replica-{Layout(tp=2, pp=2).label}"
