"""Hand-checked numbers for the formulas a mutation of the core once slipped past.

Each case is small enough to do on paper; the arithmetic is written beside it. They pin what the
suite otherwise checked only through a cross-check (calc.js in the conformance test, the context
range's curve) or not at all: the cost per token under speculation, the pipeline hop in a layout's
token time, speculative decode's compute roof, the single-session rate under the compute roof, and
q_spec's division by rho. See bench/mutate.py for the mutation run that found them.
"""

from __future__ import annotations

import math

import pytest

from servebound import Hardware, KVShape, ModelAdapter, Speculation, Weights, Workload, decode
from servebound.core.cost import cost_curve
from servebound.core.layout import times_at
from servebound.core.model import LayerShape, PrefillShape
from servebound.core.system import Interconnect, Layout, System
from servebound.inputs.declared import DeclaredWorkload

GB = 1e9

#: R = 1,000 GB/s = 1e12 B/s, F_bf16 = 1 TFLOP/s = 1e12 FLOP/s, C = 100 GB.
HW = Hardware("hand", "hand", 100 * GB, 1000 * GB, {"bf16": 1e12})

#: Target: dense, W = 1 GB swept per step, K = 1,000 B/token (K_read(1,000) = 1e6 B),
#: P_lin,active = 1e9 so one token costs 2e9 FLOP, no attention FLOPs.
TARGET = ModelAdapter(
    "target",
    "target",
    Weights(0.0, 1 * GB),
    KVShape(global_bytes_per_token=1000.0),
    KVShape(global_bytes_per_token=1000.0),
    PrefillShape(linear_active_params=1e9, linear_mode="bf16", attention_mode="bf16"),
)
#: Draft: dense, W_d = 0.1 GB, K_d = 100 B/token (K_read,d(1,000) = 1e5 B), P_lin,d = 1e8.
DRAFT = ModelAdapter(
    "draft",
    "draft",
    Weights(0.0, 0.1 * GB),
    KVShape(global_bytes_per_token=100.0),
    KVShape(global_bytes_per_token=100.0),
    PrefillShape(linear_active_params=1e8, linear_mode="bf16", attention_mode="bf16"),
)
CONTEXTS = {"overhead_bytes": 0.0, "alloc_context_tokens": 1000, "read_context_tokens": 1000}
#: gamma = 3 draft tokens a step, rho = 2.5 tokens emitted per session per step.
SPEC = Speculation(DRAFT, draft_tokens=3, tokens_per_step=2.5)


def test_single_session_rate_is_bound_by_compute_when_compute_binds() -> None:
    # c = 2 P / F = 2e9 / 1e12 = 2e-3 s per session per step; R c = 2e9 B per token.
    # q(1) = W + K_read = 1e9 + 1e6 = 1.001e9 B < R c, so compute binds at batch 1:
    # single = R / max(q(1), R c) = 1e12 / 2e9 = 500 tok/s (memory alone: 1e12 / 1.001e9 = 999.0 tok/s).
    r = decode(HW, TARGET, Workload(floor_tok_s=1.0, **CONTEXTS))
    assert r.single_session_tok_s == pytest.approx(500.0, rel=1e-12)
    memory_only = decode(HW, TARGET, Workload(floor_tok_s=1.0, memory_only=True, **CONTEXTS))
    assert memory_only.single_session_tok_s == pytest.approx(1e12 / 1.001e9, rel=1e-12)


def test_speculative_traffic_divides_by_rho() -> None:
    # Memory only. shared = W_batch(b(gamma+1)) + gamma W_d = 1e9 + 3 x 1e8 = 1.3e9 B (dense: any n);
    # private = K_read + gamma K_read,d = 1e6 + 3 x 1e5 = 1.3e6 B.
    # q_spec(1) = shared / (1 rho) + private / rho = 1.3013e9 / 2.5 = 5.2052e8 B per emitted token,
    # single = R / q_spec(1) = 1e12 / 5.2052e8 = 1,921.155... tok/s.
    w = Workload(floor_tok_s=1.0, memory_only=True, speculation=SPEC, **CONTEXTS)
    r = decode(HW, TARGET, w)
    assert r.single_session_tok_s == pytest.approx(1e12 / 5.2052e8, rel=1e-12)
    # at b = 10 the weights are shared and the caches are not: q = 1.3e9 / 25 + 1.3e6 / 2.5 = 5.252e7 B,
    # so T(10) = R / q = 1e12 / 5.252e7 tok/s.
    forced = decode(
        HW,
        TARGET,
        Workload(floor_tok_s=1.0, memory_only=True, speculation=SPEC, forced_batch=10, **CONTEXTS),
    ).forced
    assert forced is not None
    assert forced.aggregate_tok_s == pytest.approx(1e12 / 5.252e7, rel=1e-12)


def test_speculative_compute_roof_is_R_c_over_rho() -> None:
    # Verification pass: n = gamma + 1 = 4 tokens, 4 x 2e9 = 8e9 FLOP; the draft's gamma = 3 one-token
    # steps: 3 x 2e8 = 6e8 FLOP. c = 8.6e9 / 1e12 = 8.6e-3 s per session per step.
    # In bytes per emitted token: R c / rho = 1e12 x 8.6e-3 / 2.5 = 3.44e9 B > q_spec(1) = 5.2052e8 B,
    # so single = R / 3.44e9 = rho / c = 290.697... tok/s (R c rho would give 1e12 / 2.15e10 = 46.5).
    w = Workload(floor_tok_s=1.0, speculation=SPEC, **CONTEXTS)
    r = decode(HW, TARGET, w)
    assert r.compute is not None and r.compute.seconds_per_session_step == pytest.approx(8.6e-3, rel=1e-12)
    assert r.single_session_tok_s == pytest.approx(2.5 / 8.6e-3, rel=1e-12)
    assert r.compute.bytes_equivalent(HW.bandwidth_bytes_per_s) == pytest.approx(3.44e9, rel=1e-12)


def test_cost_per_token_under_speculation_divides_by_batch_times_rho() -> None:
    # Batch 1: t_mem = 1 x rho x q_spec(1) / R = 2.5 x 5.2052e8 / 1e12 = 1.3013e-3 s, t_cmp = 8.6e-3 s,
    # so t(1) = 8.6e-3 s for b rho = 2.5 tokens. At 3.6 USD/h = 1e-3 USD/s:
    # 1e-3 x 8.6e-3 / 2.5 = 3.44e-6 USD per token = 3.44 USD/Mtok (dividing by b alone: 8.6).
    # Batch 4: t_mem = 4 x 2.5 x (1.3e9 / 10 + 1.3e6 / 2.5) / 1e12 = 10 x 1.3052e8 / 1e12 = 1.3052e-3 s,
    # t_cmp = 4 x 8.6e-3 = 3.44e-2 s, so 1e-3 x 3.44e-2 / 10 = 3.44 USD/Mtok again (compute-bound: flat).
    w = Workload(floor_tok_s=1.0, speculation=SPEC, **CONTEXTS)
    curve = cost_curve(HW, TARGET, w, [1, 4], usd_per_hour=3.6)
    assert list(curve.usd_per_mtok_output) == pytest.approx([3.44, 3.44], rel=1e-12)
    # Memory only, batch 4: t = 1.3052e-3 s for 10 tokens: 1e-3 x 1.3052e-3 / 10 = 0.13052 USD/Mtok.
    mem = cost_curve(
        HW,
        TARGET,
        Workload(floor_tok_s=1.0, speculation=SPEC, memory_only=True, **CONTEXTS),
        [4],
        usd_per_hour=3.6,
    )
    assert float(mem.usd_per_mtok_output[0]) == pytest.approx(0.13052, rel=1e-12)


def test_pipeline_token_time_adds_the_hop_to_pp_stage_times() -> None:
    # Two devices of C = 100 GB, R = 1e12 B/s, one scale-up domain at 1e9 B/s; pp = 2.
    # Model: dense W = 1 GB, K = 1,000 B/token, d = 4,096, 8 layers; e_a = 2 B per activation element.
    # Stage memory at b = 8: [W / pp + b K_read / pp] / R = [5e8 + 8 x 1e6 / 2] / 1e12 = 5.04e-4 s.
    # Hop: (b / G) d e_a / B_link = 8 x 4,096 x 2 / 1e9 = 6.5536e-5 s (one boundary).
    # tau(8) = pp t_s + t_hop = 2 x 5.04e-4 + 6.5536e-5 = 1.073536e-3 s.
    device = Hardware("d", "d", 100 * GB, 1000 * GB)
    model = ModelAdapter(
        "m",
        "m",
        Weights(0.0, 1 * GB),
        KVShape(global_bytes_per_token=1000.0),
        KVShape(global_bytes_per_token=1000.0),
        shape=LayerShape(layers=8, hidden_size=4096, query_heads=32, cache_shards=8),
    )
    system = System(device, 2, Interconnect(2, 1e9, 1e9, "test link", "test link"))
    t = times_at(system, model, Layout(1, 1, 2, 1), 8, Workload(**CONTEXTS))
    assert t.memory_s == pytest.approx(5.04e-4, rel=1e-12)
    assert t.hop_s == pytest.approx(6.5536e-5, rel=1e-12)
    assert t.token_s == pytest.approx(2 * 5.04e-4 + 6.5536e-5, rel=1e-12)
    assert math.isclose(t.token_s, 2 * t.stage_s + t.hop_s, rel_tol=1e-15)


def test_compute_ceiling_is_rho_over_c() -> None:
    # c = 2e-3 s per session per step at rho = 1: the compute roof allows rho / c = 500 tok/s at any batch.
    r = decode(HW, TARGET, Workload(floor_tok_s=1.0, **CONTEXTS))
    assert r.compute is not None and r.compute.ceiling_tok_s == pytest.approx(500.0, rel=1e-12)
    # with speculation: rho / c = 2.5 / 8.6e-3 tok/s
    spec = decode(HW, TARGET, Workload(floor_tok_s=1.0, speculation=SPEC, **CONTEXTS))
    assert spec.compute is not None and spec.compute.ceiling_tok_s == pytest.approx(2.5 / 8.6e-3, rel=1e-12)


def test_context_curve_by_hand() -> None:
    # Batch 3, K = 1e5 B/token: t_mem(L) = (W + 3 K L) / R = (1e9 + 3e5 L) / 1e12 s;
    # t_cmp = 3 c = 3 x 2e-3 = 6e-3 s (no attention FLOPs: flat in L).
    # L = 1,000: t_mem = 1.3e-3, L = 10,000: 4e-3, L = 100,000: 3.1e-2 s; t = max(t_mem, 6e-3).
    # At 3.6 USD/h = 1e-3 USD/s, 3 tokens a step: 1e-3 t / 3 x 1e6 = [2, 2, 10.333...] USD/Mtok.
    # Crossover: 1e9 + 3e5 L >= 6e9 from L = 16,666.7, so the smallest integer is 16,667.
    from servebound.core.cost import context_curve

    model = ModelAdapter(
        "k",
        "k",
        Weights(0.0, 1 * GB),
        KVShape(global_bytes_per_token=1e5),
        KVShape(global_bytes_per_token=1e5),
        PrefillShape(linear_active_params=1e9, linear_mode="bf16", attention_mode="bf16"),
    )
    w = Workload(overhead_bytes=0.0, alloc_context_tokens=100_000, read_context_tokens=1000)
    curve = context_curve(HW, model, w, 3, [1000, 10_000, 100_000], usd_per_hour=3.6)
    assert list(curve.memory_time_s) == pytest.approx([1.3e-3, 4e-3, 3.1e-2], rel=1e-12)
    assert curve.compute_time_s is not None
    assert list(curve.compute_time_s) == pytest.approx([6e-3] * 3, rel=1e-12)
    assert list(curve.usd_per_mtok_output) == pytest.approx([2.0, 2.0, 31 / 3], rel=1e-12)
    assert curve.crossover_tokens == 16_667


def test_memory_power_with_a_cache_and_weights_under_a_byte() -> None:
    # The formulas hold at any scale, so a cache and weights under one byte still get their ceilings:
    # W_active = 0.5 B, K_alloc(1,000) = 5e-4 x 1,000 = 0.5 B, so K_alloc W_active = 0.25 B^2.
    # Large-memory limit D / (K_alloc W_active) = C R / 0.25; memory power R (C - W_res - O) / 0.25, O = 0.
    model = ModelAdapter(
        "tiny",
        "tiny",
        Weights(0.0, 0.5),
        KVShape(global_bytes_per_token=5e-4),
        KVShape(global_bytes_per_token=5e-4),
    )
    r = decode(HW, model, Workload(floor_tok_s=1.0, **CONTEXTS))
    c, bw = HW.memory_bytes, HW.bandwidth_bytes_per_s
    assert r.large_memory_limit_tok_s == pytest.approx(c * bw / 0.25, rel=1e-12)
    assert r.memory_power_tok_s == pytest.approx(bw * (c - 0.5) / 0.25, rel=1e-12)


def test_a_forced_batch_exactly_at_the_floor_clears_it() -> None:
    # Dense W = 1e9 B, no cache read, no compute: r(b) = R / (b (W / b)) = R / W = 1,000 tok/s at any b,
    # exactly. A floor of exactly 1,000 tok/s is cleared (r >= r*), at batch 4 as at batch 1.
    model = ModelAdapter("flat", "flat", Weights(0.0, 1 * GB), KVShape(global_bytes_per_token=1.0), KVShape())
    w = Workload(floor_tok_s=1000.0, forced_batch=4, **CONTEXTS)
    r = decode(HW, model, w)
    assert r.forced is not None and r.forced.per_session_tok_s == 1000.0
    assert r.forced.clears_floor


def test_balance_batch_without_a_cache_read_is_W_over_R_c() -> None:
    # b c R = W_batch(b) + b K_read with K_read left at its default 0: b = W / (R c) for a dense model.
    # W = 1e9 B, R = 1e12 B/s, c = 1e-4 s: b = 1e9 / 1e8 = 10.
    from servebound.core.economics import balance_batch

    b = balance_batch(Weights(0.0, 1 * GB), bandwidth_bytes_per_s=1e12, seconds_per_session_step=1e-4)
    assert b == pytest.approx(10.0, rel=1e-12)


def test_context_range_charges_a_compute_roof_under_one_byte() -> None:
    # A roof of R c = 1e12 x 2e-13 = 0.2 B per token (P_lin = 1e9 at 1e22 FLOP/s) above q(1) = W = 0.1 B
    # (no cache read): compute binds, so one session runs at R / 0.2 = 5e12 tok/s, not R / 0.1 = 1e13,
    # at every read context of the range as in decode() itself.
    from servebound.core.decode_range import context_curve

    fast = Hardware("fast", "fast", 100 * GB, 1000 * GB, {"bf16": 1e22})
    model = ModelAdapter(
        "tiny",
        "tiny",
        Weights(0.0, 0.1),
        KVShape(global_bytes_per_token=1e-6),
        KVShape(),
        PrefillShape(linear_active_params=1e9, linear_mode="bf16", attention_mode="bf16"),
    )
    w = Workload(floor_tok_s=1.0, **CONTEXTS)
    assert decode(fast, model, w).single_session_tok_s == pytest.approx(5e12, rel=1e-12)
    curve = context_curve(fast, model, w, [0, 500, 1000])
    assert list(curve.single_session_tok_s) == pytest.approx([5e12] * 3, rel=1e-12)


def test_context_range_floor_cap_with_a_cache_read_under_one_byte() -> None:
    # W = 1e9 B, K_read = K_alloc = 5e-4 B/token x 1,000 = 0.5 B, R = 1e12, floor r* = R / 1.1e9:
    # r(b) = R / (W + 0.5 b) >= r* while W + 0.5 b <= 1.1e9, i.e. b <= 1e8 / 0.5 = 2e8 (b_rate), far
    # below b_mem = 99 GB / 0.5 B (capped at 1e9). The range's b* at L_read = 1,000 equals decode()'s.
    from servebound.core.decode_range import context_curve

    model = ModelAdapter(
        "thin",
        "thin",
        Weights(0.0, 1 * GB),
        KVShape(global_bytes_per_token=5e-4),
        KVShape(global_bytes_per_token=5e-4),
    )
    w = Workload(floor_tok_s=1e12 / 1.1e9, **CONTEXTS)
    r = decode(HW, model, w)
    assert r.batch_star is not None and abs(r.batch_star - 2e8) <= 1
    curve = context_curve(HW, model, w, [1000])
    assert int(curve.batch_star[0]) == r.batch_star


def test_batch_grid_by_hand() -> None:
    # geomspace(1, 100, 3) = [1, 10, 100]; the extras inside 1..100 join (7), the rest do not (0, 250, None).
    from servebound.core.cost import batch_grid

    assert batch_grid(100, points=3, extra=(7, 0, 250, None)).tolist() == [1, 7, 10, 100]
    assert batch_grid(0).tolist() == []


def test_step_curve_emits_b_rho_tokens_a_step() -> None:
    # Speculation at batch 1: t(1) = max(1.3013e-3, 8.6e-3) = 8.6e-3 s for b rho = 2.5 tokens, so
    # T(1) = 2.5 / 8.6e-3 = 290.697... tok/s (b / t alone would give 116.3).
    from servebound.core.decode import step_curve

    c = step_curve(HW, TARGET, Workload(floor_tok_s=1.0, speculation=SPEC, **CONTEXTS), [1])
    assert float(c.tok_s[0]) == pytest.approx(2.5 / 8.6e-3, rel=1e-12)
    assert float(c.memory_time_s[0]) == pytest.approx(1.3013e-3, rel=1e-12)


def test_context_range_samples_both_sides_of_the_floor_edge() -> None:
    # No compute, W = 1e9 B, K = 1e5 B/token: batch 1 runs at R / (W + K L) = 1e12 / (1e9 + 1e5 L), which
    # is exactly r* = 500 tok/s at L = 10,000 and below it from 10,001 on: the curve holds both points.
    from servebound.core.decode_range import decode_context_range

    model = ModelAdapter(
        "edge",
        "edge",
        Weights(0.0, 1 * GB),
        KVShape(global_bytes_per_token=1e5),
        KVShape(global_bytes_per_token=1e5),
    )
    w = Workload(overhead_bytes=0.0, alloc_context_tokens=20_000, read_context_tokens=1000, floor_tok_s=500.0)
    rng = decode_context_range(HW, model, w)
    assert rng.floor_read_context_tokens == 10_000 and rng.max_read_context_tokens == 20_000
    assert rng.curve is not None
    points = dict(
        zip(rng.curve.read_context_tokens.tolist(), rng.curve.single_session_tok_s.tolist(), strict=True)
    )
    assert points[10_000] == pytest.approx(500.0, rel=1e-15)
    assert points[10_001] == pytest.approx(1e12 / (1e9 + 1e5 * 10_001), rel=1e-12)


def test_context_range_with_room_for_exactly_one_session() -> None:
    # W = 1 GB, K = 3e6 B/token reserved at 20,000 tokens: K_alloc = 60 GB, margin = 100 - 1 = 99 GB, so
    # b_mem = floor(99 / 60) = 1. One session runs at R / (W + K L_read) = 1e12 / (1e9 + 3e9) = 250 tok/s at
    # L_read = 1,000, and b* = 1 there, in the range's curve as in decode().
    from servebound.core.decode_range import context_curve

    model = ModelAdapter(
        "one",
        "one",
        Weights(0.0, 1 * GB),
        KVShape(global_bytes_per_token=3e6),
        KVShape(global_bytes_per_token=3e6),
    )
    w = Workload(overhead_bytes=0.0, alloc_context_tokens=20_000, read_context_tokens=1000, floor_tok_s=1.0)
    r = decode(HW, model, w)
    assert r.batch_mem == 1 and r.batch_star == 1
    curve = context_curve(HW, model, w, [1000])
    assert int(curve.batch_star[0]) == 1
    assert float(curve.aggregate_tok_s[0]) == pytest.approx(250.0, rel=1e-12)


def test_a_window_of_no_tokens_holds_no_growing_cache() -> None:
    # K(L) = g L + l min(L, w) + s: with g = 0 and w = 0 the local part is l min(L, 0) = 0 at every L, so the
    # cache does not grow with context (only with a window of at least one token, or a global part).
    assert not KVShape(local_bytes_per_token=5.0, window_tokens=0, state_bytes=1e6).grows_with_context
    assert KVShape(local_bytes_per_token=5.0, window_tokens=1).grows_with_context
    assert KVShape(global_bytes_per_token=1e-9).grows_with_context
    assert KVShape(local_bytes_per_token=5.0, window_tokens=0).bytes_at(10_000) == 0.0


def test_longest_context_within_a_budget_by_hand() -> None:
    # K(L) = g L + l min(L, w) + s. A window-only cache (g = 0, l = 10 B, w = 100) holds at most 1,000 B:
    # 500 B holds L = 50, 999 B holds 99, and 1,000 B holds every L (None: never exceeded).
    window_only = KVShape(local_bytes_per_token=10.0, window_tokens=100)
    assert [window_only.max_context_within(b) for b in (500.0, 999.0, 1000.0)] == [50, 99, None]
    # With g = 1 B as well: 11 B/token inside the window, so 500 B holds floor(500 / 11) = 45; 1,100 B is
    # the full window, L = 100; past it 1 B/token: 1,150 B holds 100 + 50 = 150.
    both = KVShape(global_bytes_per_token=1.0, local_bytes_per_token=10.0, window_tokens=100)
    assert [both.max_context_within(b) for b in (500.0, 1100.0, 1150.0)] == [45, 100, 150]
    # Below the recurrent state nothing fits (-1).
    assert KVShape(global_bytes_per_token=1.0, state_bytes=10.0).max_context_within(5.0) == -1


def test_longest_context_when_rounding_hides_the_per_token_bytes() -> None:
    # s = 1e20 B swamps g = 1e-3 B/token (one ulp of 1e20 is 16,384 B), so the closed form's neighbours
    # all round to the budget and the search falls back to bisecting K itself: an integer L near
    # 1e6 / 1e-3 = 1e9 tokens with K(L) within the budget.
    k = KVShape(global_bytes_per_token=1e-3, state_bytes=1e20)
    budget = 1e20 + 1e6
    found = k.max_context_within(budget)
    assert isinstance(found, int) and abs(found - 1e9) < 2e7
    assert k.bytes_at(found) <= budget < k.bytes_at(found + 10**8)


def moe_layout_model() -> ModelAdapter:
    # MoE: always-on 1 GB, 8 routed experts of 0.1 GB, k = 2; K = 1,000 B/token; 4 layers, all MoE,
    # d = 1,000, 8 query and 8 cache heads.
    from servebound import Experts

    return ModelAdapter(
        "moe",
        "moe",
        Weights(0.0, 1 * GB, 0.1 * GB, Experts(8, 2)),
        KVShape(global_bytes_per_token=1000.0),
        KVShape(global_bytes_per_token=1000.0),
        shape=LayerShape(layers=4, hidden_size=1000, query_heads=8, cache_shards=8, moe_layers=4),
    )


def test_tensor_parallel_step_over_two_domains_by_hand() -> None:
    # 4 devices (R = 1e12 B/s) in scale-up domains of 2 (1e11 B/s inside, 1e10 B/s between); tp = 4 spans
    # both domains, so its all-reduce runs at scale-out's 1e10 B/s. At b = 10, c = 1e-4 s, e_a = 2 B:
    # all-reduce: b x 2 (L / pp) x 2 (tp - 1) / tp x (tp / G) x d e_a / B = 10 x 2 x 4 x 2 x 0.75 x 1 x 2,000
    #   / 1e10 = 2.4e-5 s.
    # memory: [W_on / (tp pp) + w_e m(10) / (G pp) + b (tp / G) K_read / (h pp)] / R, m(10) = 8 (1 - 0.75^10)
    #   = 7.549..., h = min(tp, 8) = 4: [2.5e8 + 1e8 x 7.549... / 4 + 10 x 1e6 / 4] / 1e12 s.
    # compute: b c / (G pp) = 10 x 1e-4 / 4 = 2.5e-4 s. No hop (pp = 1), no all-to-all (ep = 1).
    device = Hardware("d", "d", 100 * GB, 1000 * GB)
    system = System(device, 4, Interconnect(2, 1e11, 1e10, "up", "out"))
    t = times_at(
        system,
        moe_layout_model(),
        Layout(4, 1, 1, 1),
        10,
        Workload(**CONTEXTS),
        compute_s_per_session_step=1e-4,
    )
    touched = 8 * (1 - 0.75**10)
    memory = (2.5e8 + 1e8 * touched / 4 + 10 * 1e6 / 4) / 1e12
    assert t.all_reduce_s == pytest.approx(2.4e-5, rel=1e-12)
    assert t.all_to_all_s == 0.0 and t.hop_s == 0.0
    assert t.memory_s == pytest.approx(memory, rel=1e-12)
    assert t.compute_s == pytest.approx(2.5e-4, rel=1e-12)
    assert t.token_s == pytest.approx(memory, rel=1e-12)


def test_expert_parallel_all_to_all_over_two_domains_by_hand() -> None:
    # ep = 4 over the same 4 devices: from device 0 one peer shares its domain (1/G of its tokens' expert
    # copies at 1e11 B/s), two do not (2/G at scale-out): per byte max(1/4/1e11, 2/4/B_out).
    # all-to-all per session: 2 (L_moe / pp) k / G x d e_a x that = 2 x 4 x 2 / 4 x 2,000 x that.
    # B_out = 1e10: 4 x 2,000 x 5e-11 = 4e-7 s per session, 4e-6 s at b = 10; memory binds.
    # B_out = 1e7: 4 x 2,000 x 5e-8 = 4e-4 s per session, 4e-3 s at b = 10, above memory
    #   [1e9 + 1e8 x 7.549... / 4 + 10 x 1e6 / 4] / 1e12 = 1.19e-3 s: communication binds the step.
    from servebound.core.layout import BoundBy

    device = Hardware("d", "d", 100 * GB, 1000 * GB)
    for out, per_session in ((1e10, 4e-7), (1e7, 4e-4)):
        system = System(device, 4, Interconnect(2, 1e11, out, "up", "out"))
        t = times_at(system, moe_layout_model(), Layout(1, 4, 1, 1), 10, Workload(**CONTEXTS))
        assert t.all_to_all_s == pytest.approx(10 * per_session, rel=1e-12)
        assert t.all_reduce_s == 0.0
    assert t.bound_by is BoundBy.COMMUNICATION
    assert t.token_s == pytest.approx(4e-3, rel=1e-12)


def test_a_layout_with_half_a_byte_of_margin_still_holds_its_weights() -> None:
    # One device of C = 100 GB holding W_resident = 100 GB - 0.5 B with O = 0: the weights fit with
    # 0.5 B to spare, and a cache of 1e-4 B per session leaves room for 5,000 sessions.
    from servebound.core.decode import Verdict
    from servebound.core.layout import evaluate_layout

    model = ModelAdapter(
        "full",
        "full",
        Weights(0.0, 100 * GB - 0.5),
        KVShape(global_bytes_per_token=1e-7),
        KVShape(global_bytes_per_token=1e-7),
        shape=LayerShape(layers=4, hidden_size=1000, query_heads=8, cache_shards=8),
    )
    system = System(Hardware("d", "d", 100 * GB, 1000 * GB), 1, Interconnect.ideal_for(1))
    result = evaluate_layout(system, model, Layout(), Workload(floor_tok_s=1.0, **CONTEXTS))
    assert result.verdict is not Verdict.NO_RESIDENT_FIT
    assert result.per_device.free_bytes >= 0


def test_rl_tokens_at_equal_cost_by_hand() -> None:
    # D_inf = 50e6 tok/s x 60 days x 86,400 s = 2.592e14 tokens; RL at c_rl = 4 FLOPs per parameter-token
    # and eta = 0.3 costs the same at 2 eta D_inf / c_rl = 0.15 D_inf = 3.888e13 tokens; pretraining at
    # D_inf / 3 = 8.64e13.
    from servebound.core.economics import equal_cost

    e = equal_cost(50e6, 60 * 86_400.0, 100e9)
    assert e.inference_tokens == pytest.approx(2.592e14, rel=1e-12)
    assert e.rl_tokens_equal_cost == pytest.approx(3.888e13, rel=1e-12)
    assert e.pretrain_tokens_equal_cost == pytest.approx(8.64e13, rel=1e-12)


def test_a_layout_degree_below_one_is_refused() -> None:
    from servebound.core.system import layout_problem

    system = System(Hardware("d", "d", 100 * GB, 1000 * GB), 8, Interconnect.ideal_for(8))
    for layout in (Layout(0, 1, 1, 1), Layout(1, 1, 0, 1), Layout(1, 1, 1, 0)):
        assert layout_problem(system, moe_layout_model(), layout) == "every degree must be at least 1"


def test_parameter_form_weights_by_hand() -> None:
    # Dense, e_w = 0.5 B: P_embed = 1e9 untied -> 0.5e9 B resident and not swept; always-on
    # (P_total - P_embed) e_w = 9e9 x 0.5 = 4.5e9 B; W_resident = 5e9 B.
    w = Weights.from_params(bytes_per_param=0.5, total_params=10e9, active_params=10e9, embedding_params=1e9)
    assert (w.embedding_bytes, w.always_on_bytes, w.resident) == pytest.approx((0.5e9, 4.5e9, 5e9), rel=1e-12)


def test_prefill_flops_per_token_and_the_crossover_by_hand() -> None:
    # a_pf = 2 P_lin + a_attn: with P_lin = 1e9 and no attention, 2e9 FLOPs per prompt token.
    # S* = W F / (2 P_lin R) for a dense model: tiny P_lin = 0.5 with W = 1 B at F = R gives S* = 1.
    from servebound.core.prefill_cost import compute_per_prompt_token, crossover_tokens

    shape = PrefillShape(linear_active_params=1e9)
    assert float(compute_per_prompt_token(shape, 1.0, 0.0)) == pytest.approx(2e9, rel=1e-12)
    tiny = ModelAdapter(
        "t", "t", Weights(0.0, 1.0), KVShape(), KVShape(), PrefillShape(linear_active_params=0.5)
    )
    assert crossover_tokens(tiny, linear_flop_per_s=1e12, bandwidth_bytes_per_s=1e12) == pytest.approx(1.0)


def test_attention_needs_a_rate_only_where_it_has_flops() -> None:
    # Sliding-window FLOPs count only with a window of at least one token.
    from servebound.core.rates import mode_rates

    def needs(local: float, window: int) -> bool:
        shape = PrefillShape(1e9, attention_local_flops_per_pair=local, attention_window_tokens=window)
        return mode_rates(HW, shape).needs_attention

    assert [needs(100.0, 0), needs(100.0, 1), needs(0.0, 512)] == [False, True, False]


def test_a_whole_number_of_systems_within_rounding_is_not_rounded_up() -> None:
    # 110 sessions within rounding (the next double above 110, so 110.00000000000001 / 10 rounds to
    # 11.000000000000002) at 10 sessions per system need 11 systems, not 12.
    from servebound.core.plan import plan_fleet

    plan = plan_fleet(
        sessions_per_system=10,
        per_session_tok_s=1.0,
        prefill_s=1.0,
        prefill_parallel_prompts=1,
        prompt_tokens=1,
        output_tokens=1,
        devices_per_system=1,
        users=math.nextafter(110.0, math.inf),
    )
    assert plan.decode_systems == 11


def test_all_experts_active_holds_no_extra_expert_bytes() -> None:
    # k = E: every expert runs for every token, so the parameter form books them all as always-on:
    # W_resident = (P_total - P_embed) e_w = 8e9 x 0.5 = 4e9 B, and no bytes per routed expert.
    from servebound import Experts

    w = Weights.from_params(bytes_per_param=0.5, total_params=8e9, active_params=8e9, experts=Experts(4, 4))
    assert w.expert_bytes == 0.0 and w.resident == pytest.approx(4e9, rel=1e-15)
    dense = Weights.from_params(bytes_per_param=0.5, total_params=8e9, active_params=8e9)
    assert dense.expert_bytes == 0.0


def test_valid_layouts_of_a_moe_on_eight_devices() -> None:
    # 8 query heads, 8 routed experts, 4 layers: tp in {1, 2, 4, 8}; ep = 1 or a multiple of tp that
    # divides 8, from 2 up; pp up to 8 / max(tp, ep). A model without a layer shape runs replicas only.
    from servebound.core.system import layout_problem, valid_layouts

    system = System(Hardware("d", "d", 100 * GB, 1000 * GB), 8, Interconnect.ideal_for(8))
    pairs = {(lay.tp, lay.ep) for lay in valid_layouts(system, moe_layout_model())}
    assert pairs == {
        (1, 1),
        (1, 2),
        (1, 4),
        (1, 8),
        (2, 1),
        (2, 2),
        (2, 4),
        (2, 8),
        (4, 1),
        (4, 4),
        (4, 8),
        (8, 1),
        (8, 8),
    }
    shapeless = ModelAdapter("s", "s", Weights(0.0, 1 * GB), KVShape(), KVShape())
    assert layout_problem(system, shapeless, Layout(1, 1, 1, 8)) is None
    assert layout_problem(system, shapeless, Layout(2, 1, 1, 4)) is not None


def test_no_margin_and_no_cache_fits_sessions_without_bound() -> None:
    # b_mem = floor(margin / K_alloc): a cache of 0 B per session leaves every batch fitting, even with
    # no margin at all (capped at MAX_BATCH and marked so); a negative margin fits none.
    from servebound.core.workload import MAX_BATCH, memory_fit_batch

    assert memory_fit_batch(0.0, 0.0) == (MAX_BATCH, True)
    assert memory_fit_batch(0.0, 1.0) == (0, False)
    assert memory_fit_batch(-1.0, 0.0) == (0, False)


def test_contexts_equal_to_the_model_limit_are_not_capped() -> None:
    # A default reservation of exactly the model's limit stays as it is, and the result says nothing was
    # capped; one token more is capped at the limit.
    model = ModelAdapter(
        "m", "m", Weights(0.0, 1 * GB), KVShape(1.0), KVShape(1.0), context_limit_tokens=4096
    )
    hw = Hardware("x", "x", 100 * GB, 1000 * GB)
    same = DeclaredWorkload(
        Workload(alloc_context_tokens=4096, read_context_tokens=1000), fit_contexts_to_model=True
    )
    assert same.resolve(hw, model).contexts_capped_from is None
    more = DeclaredWorkload(
        Workload(alloc_context_tokens=4097, read_context_tokens=1000), fit_contexts_to_model=True
    )
    assert more.resolve(hw, model).alloc_context_tokens == 4096


def test_latency_floor_sweeps_the_weights_of_one_token() -> None:
    # One token of the MoE touches the always-on 1 GB and its k = 2 experts of 0.1 GB: W_batch(1) = 1.2 GB,
    # so no step is shorter than 1.2e9 / 1e12 = 1.2 ms (a second token could touch 3.75 experts more).
    from servebound.core.cost import cost_curve

    curve = cost_curve(HW, moe_layout_model(), Workload(**CONTEXTS), [1], usd_per_hour=3.6)
    assert curve.latency_floor_s == pytest.approx(1.2e-3, rel=1e-12)


def test_b_rate_at_exactly_the_search_cap() -> None:
    # b_rate = floor((R / r* - W_active) / K_read) = (1e12 - 1e11) / 900 = 1e9 exactly, the search cap:
    # still a rate limit (reported), not "no limit".
    from servebound.core.workload import MAX_BATCH

    model = ModelAdapter(
        "cap",
        "cap",
        Weights(0.0, 1e11),
        KVShape(global_bytes_per_token=1e-9),
        KVShape(global_bytes_per_token=0.9),
    )
    w = Workload(overhead_bytes=0.0, alloc_context_tokens=1000, read_context_tokens=1000, floor_tok_s=1.0)
    assert decode(Hardware("big", "big", 1000 * GB, 1000 * GB), model, w).batch_rate == MAX_BATCH
