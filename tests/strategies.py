"""Hypothesis strategies the property tests share, each drawn over the ranges its test module gives."""

from __future__ import annotations

from hypothesis import strategies as st

from servebound.core.experts import ExpertTraffic
from servebound.core.kv import KVShape
from servebound.core.model import Experts, ModelAdapter, PrefillShape, Weights
from servebound.core.workload import Workload

GB = 1e9


@st.composite
def adapters(
    draw: st.DrawFn,
    *,
    moe: bool | None = None,
    max_routed: int,
    always_on_bytes: tuple[float, float],
    kv_bytes_per_token: float,
    window_tokens: int,
    state_flops_per_token: float = 0.0,
    linear_modes: tuple[str, ...] = ("bf16",),
) -> ModelAdapter:
    """Byte-form adapters with a prefill shape. Weights: up to 1 GB of embedding, always-on bytes within
    the range given and, for an MoE (either kind when moe is None), 2 to max_routed routed experts of
    0.1 MB to 1 GB each, fewer per token than routed. Cache (read as allocated): up to
    kv_bytes_per_token global and local bytes per token, a window of up to window_tokens, up to 10 MB
    of state. Prefill: attention over the same range of windows, at one of linear_modes."""
    experts = None
    expert_bytes = 0.0
    if draw(st.booleans()) if moe is None else moe:
        routed = draw(st.integers(2, max_routed))
        experts = Experts(routed, draw(st.integers(1, routed - 1)))
        expert_bytes = draw(st.floats(1e5, 1e9))
    weights = Weights(
        embedding_bytes=draw(st.floats(0, 1e9)),
        always_on_bytes=draw(st.floats(*always_on_bytes)),
        expert_bytes=expert_bytes,
        experts=experts,
    )
    kv = KVShape(
        global_bytes_per_token=draw(st.floats(0, kv_bytes_per_token)),
        local_bytes_per_token=draw(st.floats(0, kv_bytes_per_token)),
        window_tokens=draw(st.integers(0, window_tokens)),
        state_bytes=draw(st.floats(0, 1e7)),
    )
    shape = PrefillShape(
        linear_active_params=draw(st.floats(1e6, 1e11)),
        attention_global_flops_per_pair=draw(st.floats(0, 1e7)),
        attention_local_flops_per_pair=draw(st.floats(0, 1e7)),
        attention_window_tokens=draw(st.integers(0, window_tokens)),
        attention_state_flops_per_token=draw(st.floats(0, state_flops_per_token)),
        kv_write_bytes_per_token=draw(st.floats(0, 1e6)),
        linear_mode=draw(st.sampled_from(linear_modes)),
    )
    return ModelAdapter("m", "M", weights, kv, kv, shape)


@st.composite
def workloads(
    draw: st.DrawFn,
    *,
    alloc_tokens: tuple[int, int],
    overhead_gb: float,
    floor_tok_s: tuple[float, float],
    expert_traffic: bool = True,
) -> Workload:
    """Workloads whose read context never exceeds the reserved one, with up to overhead_gb of
    overhead; every expert-traffic reading when expert_traffic, else the expected one (the default)."""
    alloc = draw(st.integers(*alloc_tokens))
    return Workload(
        overhead_bytes=draw(st.floats(0, overhead_gb)) * GB,
        alloc_context_tokens=alloc,
        read_context_tokens=draw(st.integers(1, alloc)),
        floor_tok_s=draw(st.floats(*floor_tok_s)),
        expert_traffic=draw(st.sampled_from(list(ExpertTraffic)))
        if expert_traffic
        else ExpertTraffic.EXPECTED,
    )
