"""Prefill ceilings checked by hand: every term of a round-number dense model on paper, the chunk sums
against brute force, the one formula shared with decode, and the derivation's Laguna S 2.1 example."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import get_model
from servebound.core.decode import curve as decode_curve
from servebound.core.experts import ExpertTraffic
from servebound.core.hardware import Hardware
from servebound.core.kv import KVShape
from servebound.core.model import Experts, ModelAdapter, PrefillShape, Weights
from servebound.core.prefill import (
    BatchMode,
    BoundBy,
    ChunkMode,
    PrefillVerdict,
    RangeLimit,
    crossover_tokens,
    prefill,
    prefill_curve,
    prefill_range,
)
from servebound.core.prefill_cost import (
    attention_flops_per_token,
    compute_per_prompt_token,
    traffic_per_prompt_token,
)
from servebound.core.rates import linear_mode_for, mode_rates
from servebound.core.workload import Workload
from servebound.errors import InputError
from servebound.inputs.files import parse_hardware, parse_model
from tests.conftest import load_golden, resolved

GB = 1e9

# --- a dense model with round numbers -------------------------------------------------------------
# C = 100 GB, R = 1000 GB/s, F = 100 TFLOP/s (bf16). Weights: 10 GB swept, nothing else.
# K_alloc = K_read = 100,000 bytes/token. P_lin = 5e9, alpha_global = 1e6 FLOP/pair, kappa = 1e5 B/token.
# Workload: O = 10 GB, L_alloc = 10,000.

TOY_HW = Hardware("toy", "Toy", 100 * GB, 1000 * GB, {"bf16": 100e12})
TOY_WORKLOAD = Workload(overhead_bytes=10 * GB, alloc_context_tokens=10_000)


def toy_dense(**prefill_fields: Any) -> ModelAdapter:
    fields: dict[str, Any] = dict(
        linear_active_params=5e9, attention_global_flops_per_pair=1e6, kv_write_bytes_per_token=1e5
    )
    fields.update(prefill_fields)
    kv = KVShape(global_bytes_per_token=1e5)
    return ModelAdapter(
        "toy-dense",
        "Toy dense",
        Weights(embedding_bytes=0.0, always_on_bytes=10 * GB),
        kv,
        kv,
        PrefillShape(**fields),
    )


def toy_moe(**prefill_fields: Any) -> ModelAdapter:
    """always-on 1 GB, 8 experts of 0.1 GB, 2 per token; no cache, no writes, unless given."""
    fields: dict[str, Any] = dict(linear_active_params=1e9)
    fields.update(prefill_fields)
    return ModelAdapter(
        "toy-moe",
        "Toy MoE",
        Weights(embedding_bytes=0.0, always_on_bytes=1 * GB, expert_bytes=0.1 * GB, experts=Experts(8, 2)),
        KVShape(),
        KVShape(),
        PrefillShape(**fields),
    )


def test_dense_one_shot_every_term_by_hand() -> None:
    r = prefill(TOY_HW, toy_dense(), 1000, workload=TOY_WORKLOAD)
    # Traffic: one sweep of 10 GB, no reread (one chunk), writes 1000 * 1e5 = 1e8.
    assert r.weight_sweep_bytes == 10e9
    assert r.kv_reread_bytes == 0.0
    assert r.kv_write_bytes == pytest.approx(1e8)
    assert r.traffic_bytes == pytest.approx(10.1e9)
    assert r.memory_time_s == pytest.approx(10.1e9 / 1e12)  # 0.0101 s
    # Compute: A_linear = 2 * 1000 * 5e9 = 1e13 -> 0.1 s; A_attention = 1e6 * 1000 * 1001 / 2 = 5.005e11
    # -> 0.005005 s; together 0.105005 s, so compute binds.
    assert r.linear_flops == pytest.approx(1e13)
    assert r.attention_flops == pytest.approx(5.005e11)
    assert r.linear_time_s == pytest.approx(0.1)
    assert r.attention_time_s == pytest.approx(0.005005)
    assert r.compute_time_s == pytest.approx(0.105005)
    assert r.time_s == pytest.approx(0.105005)
    assert r.bound_by is BoundBy.COMPUTE
    assert r.tok_s == pytest.approx(1000 / 0.105005)  # ~9,523 tok/s
    assert r.memory_tok_s == pytest.approx(1000 / 0.0101)  # ~99,010 tok/s
    assert r.compute_tok_s == pytest.approx(1000 / 0.105005)
    assert r.bytes_per_token == pytest.approx(1.01e7)
    assert r.flops_per_token == pytest.approx((1e13 + 5.005e11) / 1000)
    # S* = W F / (2 P R) = 10e9 * 100e12 / (2 * 5e9 * 1e12) = 100 tokens per sweep.
    assert r.crossover_tokens == pytest.approx(100.0)
    # Gate: margin = 100 - 10 - 10 = 80 GB; K_alloc(10,000) = 1 GB; b_mem = 80.
    assert r.resident_margin_bytes == pytest.approx(80e9)
    assert r.kv_alloc_bytes == pytest.approx(1e9)
    assert r.batch_mem == 80
    assert (r.verdict, r.batch, r.batch_mode) == (PrefillVerdict.FITS, 1, BatchMode.GIVEN)
    assert (r.chunk, r.chunk_mode, r.chunks) == (1000, ChunkMode.ONE_SHOT, 1)
    assert r.ttft_ok is None
    a = r.assumptions
    assert a.workspace_bytes == 0.0 and a.kernel_terms_dropped and a.compute_available
    assert (a.linear_mode, a.attention_mode, a.linear_flop_per_s, a.attention_flop_per_s) == (
        "bf16",
        "bf16",
        100e12,
        100e12,
    )
    assert not a.is_estimate  # dense, peak rates: a bound


def test_dense_small_chunk_is_a_memory_bound_policy_ceiling() -> None:
    r = prefill(TOY_HW, toy_dense(), 1000, workload=TOY_WORKLOAD, chunk_tokens=10)
    # 100 chunks of 10: 100 sweeps = 1e12 bytes; rereads K(10 i) for i = 1..99 = 1e5 * 10 * 4950 = 4.95e9;
    # writes 1e8. Q = 1.00505e12 -> 1.00505 s, above the unchanged 0.105005 s of math.
    assert r.chunks == 100
    assert r.weight_sweep_bytes == pytest.approx(1e12)
    assert r.kv_reread_bytes == pytest.approx(4.95e9)
    assert r.memory_time_s == pytest.approx(1.00505)
    assert r.compute_time_s == pytest.approx(0.105005)
    assert r.bound_by is BoundBy.MEMORY
    assert r.tok_s == pytest.approx(1000 / 1.00505)
    assert r.chunk_mode is ChunkMode.POLICY


def test_dense_shorter_final_chunk() -> None:
    r = prefill(TOY_HW, toy_dense(), 1000, workload=TOY_WORKLOAD, chunk_tokens=300)
    # Chunks 300, 300, 300, 100 after prefixes 0, 300, 600, 900: 4 sweeps; rereads 1e5 * (300+600+900).
    assert r.chunks == 4
    assert r.weight_sweep_bytes == pytest.approx(4e10)
    assert r.kv_reread_bytes == pytest.approx(1.8e8)
    assert r.traffic_bytes == pytest.approx(4e10 + 1.8e8 + 1e8)
    assert r.attention_flops == pytest.approx(5.005e11)  # chunking leaves the attention math alone


def test_moe_shorter_final_chunk_sweeps_its_own_experts() -> None:
    # L = 5, c = 2: chunks 2, 2, 1. m(n) = 8 (1 - (3/4)^n): m(2) = 3.5, m(1) = 2.
    # W(2) = 1 + 3.5 * 0.1 = 1.35 GB, W(1) = 1.2 GB; sweep = 2 * 1.35 + 1.2 = 3.9 GB.
    wl = Workload(overhead_bytes=0.0, alloc_context_tokens=100)
    r = prefill(TOY_HW, toy_moe(), 5, workload=wl, chunk_tokens=2)
    assert r.weight_sweep_bytes == pytest.approx(3.9e9)
    # The floor traffic mode replaces m(n) by k = 2: W = 1.2 GB per chunk, 3 chunks.
    floor = prefill(
        TOY_HW,
        toy_moe(),
        5,
        workload=Workload(0.0, 100, 100, expert_traffic=ExpertTraffic.MINIMUM),
        chunk_tokens=2,
    )
    assert floor.weight_sweep_bytes == pytest.approx(3.6e9)
    assert r.assumptions.is_estimate and not floor.assumptions.is_estimate


def test_batch_shares_one_sweep() -> None:
    r = prefill(TOY_HW, toy_dense(), 1000, workload=TOY_WORKLOAD, batch=4)
    # One 10 GB sweep for 4000 tokens, 4e8 of writes: 0.0104 s. Math is 4x: 0.42002 s.
    assert r.traffic_bytes == pytest.approx(10.4e9)
    assert r.time_s == pytest.approx(0.42002)
    assert r.tok_s == pytest.approx(4000 / 0.42002)


def test_batch_max_and_ttft_budget() -> None:
    model = toy_dense()
    r = prefill(TOY_HW, model, 1000, workload=TOY_WORKLOAD, batch="max")
    assert (r.batch, r.batch_mode, r.verdict) == (80, BatchMode.MAX, PrefillVerdict.FITS)
    assert r.time_s == pytest.approx(80 * 0.105005)
    # Budget 1 s: t(b) = 0.105005 b (compute binds), so b = 9 (0.945 s) and not 10 (1.050 s).
    r = prefill(TOY_HW, model, 1000, workload=TOY_WORKLOAD, batch="max", ttft_budget_s=1.0)
    assert (r.batch, r.verdict, r.ttft_ok) == (9, PrefillVerdict.FITS, True)
    assert r.time_s == pytest.approx(0.945045)
    # Budget 0.1 s: even one prompt takes 0.105 s; a verdict, with the shortest wait reported.
    r = prefill(TOY_HW, model, 1000, workload=TOY_WORKLOAD, batch="max", ttft_budget_s=0.1)
    assert (r.batch, r.verdict, r.ttft_ok) == (1, PrefillVerdict.OVER_BUDGET, False)
    r = prefill(TOY_HW, model, 1000, workload=TOY_WORKLOAD, batch=9, ttft_budget_s=1.0)
    assert r.ttft_ok and r.verdict is PrefillVerdict.FITS
    r = prefill(TOY_HW, model, 1000, workload=TOY_WORKLOAD, batch=10, ttft_budget_s=1.0)
    assert r.ttft_ok is False and r.verdict is PrefillVerdict.OVER_BUDGET


def test_a_ttft_budget_keeps_the_unrestricted_result_visible() -> None:
    """Issue 36: with a TTFT budget the unrestricted answer is reported beside the restricted one."""
    model = toy_dense()
    free = prefill(TOY_HW, model, 1000, workload=TOY_WORKLOAD, batch="max")
    assert free.unrestricted is None
    r = prefill(TOY_HW, model, 1000, workload=TOY_WORKLOAD, batch="max", ttft_budget_s=1.0)
    assert r.batch == 9 and r.unrestricted is not None
    u = r.unrestricted
    # The unrestricted search is every setting that fits: b = 80, 80 x 0.105005 s, as without a budget.
    assert (u.batch, u.verdict, u.ttft_budget_s, u.ttft_ok) == (80, PrefillVerdict.FITS, None, None)
    assert u.time_s == pytest.approx(80 * 0.105005) and u.tok_s == free.tok_s
    over = prefill(TOY_HW, model, 1000, workload=TOY_WORKLOAD, batch="max", ttft_budget_s=0.1)
    assert over.verdict is PrefillVerdict.OVER_BUDGET and over.unrestricted is not None
    assert over.unrestricted.verdict is PrefillVerdict.FITS and over.unrestricted.batch == 80


def test_capacity_verdicts() -> None:
    model = toy_dense()
    # 81 sessions of 1 GB do not fit in 80 GB: the formula's numbers, a failing verdict.
    r = prefill(TOY_HW, model, 1000, workload=TOY_WORKLOAD, batch=81)
    assert r.verdict is PrefillVerdict.NO_BATCH_FIT and not r.admissible
    # O = 89.5 GB leaves 0.5 GB: not one 1 GB reservation.
    r = prefill(TOY_HW, model, 1000, workload=Workload(overhead_bytes=89.5 * GB, alloc_context_tokens=10_000))
    assert r.verdict is PrefillVerdict.NO_SESSION_FIT and r.batch_mem == 0
    r = prefill(TOY_HW, model, 1000, workload=Workload(overhead_bytes=95 * GB, alloc_context_tokens=10_000))
    assert r.verdict is PrefillVerdict.NO_RESIDENT_FIT and r.resident_margin_bytes == pytest.approx(-5e9)
    r = prefill(
        TOY_HW,
        model,
        1000,
        workload=Workload(overhead_bytes=95 * GB, alloc_context_tokens=10_000),
        batch="max",
    )
    assert r.verdict is PrefillVerdict.NO_RESIDENT_FIT and r.batch == 1


def test_cache_free_model_caps_the_batch_search() -> None:
    # K_alloc = 0: memory never limits the batch; the search stops at MAX_BATCH and says so.
    r = prefill(TOY_HW, toy_moe(), 10, workload=Workload(alloc_context_tokens=100), batch="max")
    assert r.batch_mem_capped and r.batch == r.batch_mem


def test_missing_rates_make_compute_unavailable_never_zero() -> None:
    bare = Hardware("bare", "Bare", 100 * GB, 1000 * GB)
    r = prefill(bare, toy_dense(), 1000, workload=TOY_WORKLOAD)
    assert r.compute_tok_s is None and r.compute_time_s is None and r.crossover_tokens is None
    assert r.tok_s == r.memory_tok_s == pytest.approx(1000 / 0.0101)
    assert r.bound_by is BoundBy.MEMORY
    assert not r.assumptions.compute_available and r.assumptions.missing_modes == ("bf16",)
    assert r.compute_note is not None and "memory-only" in r.compute_note
    # Only the attention rate missing: charged at the fastest rate the row publishes, and said so.
    fp4_only = Hardware("fp4", "FP4 only", 100 * GB, 1000 * GB, {"fp4": 400e12})
    r = prefill(fp4_only, toy_dense(linear_mode="fp4"), 1000, workload=TOY_WORKLOAD)
    assert r.assumptions.compute_available and r.assumptions.missing_modes == ("bf16",)
    assert r.attention_mode_charged == "fp4" and r.linear_mode_charged_why is None
    assert r.attention_mode_charged_why is not None and "fastest" in r.attention_mode_charged_why
    assert r.compute_time_s == pytest.approx((1e13 + 5.005e11) / 400e12)
    assert r.crossover_tokens == pytest.approx(10e9 * 400e12 / (2 * 5e9 * 1e12))
    # A model with no attention math needs no attention rate.
    r = prefill(
        fp4_only,
        toy_dense(linear_mode="fp4", attention_global_flops_per_pair=0.0),
        1000,
        workload=TOY_WORKLOAD,
    )
    assert r.compute_tok_s == pytest.approx(1000 / (1e13 / 400e12)) and r.compute_note is None
    # Modes can be overridden per call.
    r = prefill(fp4_only, toy_dense(), 1000, workload=TOY_WORKLOAD, linear_mode="fp4", attention_mode="fp4")
    assert r.assumptions.compute_available and r.compute_time_s == pytest.approx((1e13 + 5.005e11) / 400e12)


def test_input_errors_name_the_field() -> None:
    no_prefill = ModelAdapter("plain", "Plain", Weights(0.0, 1e9), KVShape(), KVShape())
    with pytest.raises(InputError) as err:
        prefill(TOY_HW, no_prefill, 10)
    assert err.value.field == "prefill" and "[prefill]" in err.value.problem
    for call in (
        lambda: prefill_range(TOY_HW, no_prefill),
        lambda: prefill_curve(TOY_HW, no_prefill, [1, 2]),
    ):
        with pytest.raises(InputError, match="prefill"):
            call()
    limited = ModelAdapter("lim", "Limited", Weights(0.0, 1e9), KVShape(), KVShape(), PrefillShape(1e9), 4096)
    with pytest.raises(InputError, match="context limit") as err:
        prefill(TOY_HW, limited, 4097, workload=Workload(alloc_context_tokens=10_000))
    assert err.value.field == "prompt_tokens"
    with pytest.raises(InputError, match="alloc-context") as err:
        prefill(TOY_HW, toy_dense(), 10_001, workload=TOY_WORKLOAD)
    assert err.value.field == "prompt_tokens"
    bad: list[tuple[str, dict[str, Any]]] = [
        ("prompt_tokens", {"prompt_tokens": 0}),
        ("prompt_tokens", {"prompt_tokens": 2.5}),
        ("prompt_tokens", {"prompt_tokens": True}),
        ("chunk_tokens", {"chunk_tokens": 0}),
        ("batch", {"batch": 0}),
        ("batch", {"batch": "most"}),
        ("ttft_budget_s", {"ttft_budget_s": 0.0}),
        ("ttft_budget_s", {"ttft_budget_s": math.nan}),
    ]
    for field, kwargs in bad:
        args: dict[str, Any] = {"prompt_tokens": 100, **kwargs}
        with pytest.raises(InputError) as err:
            prefill(TOY_HW, toy_dense(), workload=TOY_WORKLOAD, **args)
        assert err.value.field == field


# --- the per-token formulas against brute force -----------------------------------------------------


@pytest.mark.parametrize("window", [0, 1, 3, 7, 20])
def test_sliding_window_average_caps_each_length(window: int) -> None:
    shape = PrefillShape(
        1.0,
        attention_global_flops_per_pair=3.0,
        attention_local_flops_per_pair=5.0,
        attention_window_tokens=window,
        attention_state_flops_per_token=11.0,
    )
    for chunk in range(1, 12):
        for prefix in range(0, 15):
            brute = (
                3.0 * sum(prefix + j for j in range(1, chunk + 1)) / chunk
                + 5.0 * sum(min(prefix + j, window) for j in range(1, chunk + 1)) / chunk
                + 11.0
            )
            assert float(attention_flops_per_token(shape, chunk, prefix)) == pytest.approx(brute, rel=1e-12)
            assert float(compute_per_prompt_token(shape, chunk, prefix)) == pytest.approx(
                2.0 + brute, rel=1e-12
            )
    # Capping the average prefix instead would be wrong: chunk 4 after prefix 1 in a window of 3 attends
    # min(2,3)+min(3,3)+min(4,3)+min(5,3) = 11 pairs, 2.75 per token, not min(1 + 2.5, 3) = 3.
    if window == 3:
        local_only = PrefillShape(1.0, attention_local_flops_per_pair=1.0, attention_window_tokens=3)
        assert float(attention_flops_per_token(local_only, 4, 1)) == pytest.approx(2.75)


def brute_totals(model: ModelAdapter, b: int, prompt: int, chunk: int) -> tuple[float, float]:
    """Q_pf and A_attention summed chunk by chunk with the per-token formulas (a Python loop)."""
    shape = model.prefill
    assert shape is not None
    traffic = attention = 0.0
    prefix = 0
    while prefix < prompt:
        width = min(chunk, prompt - prefix)
        traffic += b * width * float(traffic_per_prompt_token(model, b, width, prefix))
        attention += b * width * float(attention_flops_per_token(shape, width, prefix))
        prefix += width
    return traffic, attention


def hybrid_model() -> ModelAdapter:
    """An MoE with full, sliding (window 6) and recurrent-state layers in both the cache and the math."""
    kv = KVShape(
        global_bytes_per_token=300.0, local_bytes_per_token=700.0, window_tokens=6, state_bytes=5000.0
    )
    return ModelAdapter(
        "hybrid",
        "Hybrid",
        Weights(embedding_bytes=1e6, always_on_bytes=2e7, expert_bytes=3e6, experts=Experts(16, 4)),
        kv,
        kv,
        PrefillShape(5e6, 40.0, 90.0, 6, 17.0, 1300.0),
    )


def test_chunk_sums_equal_brute_force() -> None:
    model = hybrid_model()
    hw = Hardware("h", "H", 1e12, 1e11, {"bf16": 1e13})
    wl = Workload(overhead_bytes=0.0, alloc_context_tokens=100)
    for prompt in range(1, 40):
        for chunk in (1, 2, 3, 5, 6, 7, 13, prompt):
            for b in (1, 3):
                r = prefill(hw, model, prompt, workload=wl, batch=b, chunk_tokens=chunk)
                traffic, attention = brute_totals(model, b, prompt, chunk)
                assert r.traffic_bytes == pytest.approx(traffic, rel=1e-12)
                assert r.attention_flops == pytest.approx(attention, rel=1e-12)
                assert r.linear_flops == pytest.approx(2 * b * prompt * 5e6)


def test_one_formula_for_both_phases() -> None:
    """At c = 1 and l = L_read the prefill traffic is decode's q_KV(b) plus the KV write term."""
    for model in (toy_dense(), hybrid_model()):
        wl = Workload(read_context_tokens=700, alloc_context_tokens=1000)
        shape = model.prefill
        assert shape is not None
        batches = np.arange(1, 65)
        aggregate, _ = decode_curve(TOY_HW, model, wl, batches)
        q_kv = TOY_HW.bandwidth_bytes_per_s / aggregate
        q_pf = traffic_per_prompt_token(model, batches, 1, 700)
        np.testing.assert_allclose(q_pf - shape.kv_write_bytes_per_token, q_kv, rtol=1e-12)


# --- the range over prompt lengths -------------------------------------------------------------------


def test_range_equals_brute_force_over_every_length() -> None:
    hw = Hardware("h", "H", 1e10, 1e11, {"bf16": 2e13})
    kv = KVShape(global_bytes_per_token=2e5, local_bytes_per_token=1e5, window_tokens=30)
    for model in (
        ModelAdapter("d", "D", Weights(0.0, 2e8), kv, kv, PrefillShape(1e8, 4e4, 8e4, 30, 0.0, 5e4), 500),
        ModelAdapter(
            "m",
            "M",
            Weights(0.0, 1e8, 2e7, Experts(32, 4)),
            kv,
            kv,
            PrefillShape(1e8, 4e5, 8e4, 30, 0.0, 5e4),
            500,
        ),
    ):
        for b in (1, 2, 7):
            for overhead in (0.0, 9.8e9 - 2e8 - 32 * 2e7):
                wl = Workload(overhead_bytes=overhead, alloc_context_tokens=500)
                rng = prefill_range(hw, model, workload=wl, batch=b)
                margin = hw.memory_bytes - model.weights.resident - overhead
                fits = [L for L in range(1, 501) if b * model.kv_alloc.bytes_at(L) <= margin]
                ceilings = {L: prefill(hw, model, L, workload=wl, batch=b).tok_s for L in fits}
                assert rng.max_prompt_tokens == max(fits)
                assert rng.limited_by is (RangeLimit.CONTEXT_LIMIT if max(fits) == 500 else RangeLimit.MEMORY)
                lo = min(ceilings, key=lambda L: (ceilings[L], L))
                hi = min(ceilings, key=lambda L: (-ceilings[L], L))
                assert (rng.lo_prompt_tokens, rng.hi_prompt_tokens) == (lo, hi)
                assert rng.lo_tok_s == pytest.approx(ceilings[lo], rel=1e-12)
                assert rng.hi_tok_s == pytest.approx(ceilings[hi], rel=1e-12)


def test_range_limits_and_empty_sets() -> None:
    model = toy_dense()  # no context limit: the alloc context bounds the range
    rng = prefill_range(TOY_HW, model, workload=TOY_WORKLOAD)
    assert (rng.max_prompt_tokens, rng.limited_by, rng.verdict) == (
        10_000,
        RangeLimit.ALLOC_CONTEXT,
        PrefillVerdict.FITS,
    )
    # 80 GB / 1e5 bytes per token = 800,000 tokens fit one session; 9 sessions fit 88,888 each.
    wl = Workload(overhead_bytes=10 * GB, alloc_context_tokens=1_000_000)
    rng = prefill_range(TOY_HW, model, workload=wl, batch=9)
    assert (rng.max_prompt_tokens, rng.limited_by) == (88_888, RangeLimit.MEMORY)
    rng = prefill_range(TOY_HW, model, workload=Workload(overhead_bytes=95 * GB))
    assert rng.verdict is PrefillVerdict.NO_RESIDENT_FIT and rng.hi_tok_s is None
    rng = prefill_range(TOY_HW, model, workload=Workload(overhead_bytes=89.99999 * GB))
    assert rng.verdict is PrefillVerdict.NO_SESSION_FIT and rng.lo_prompt_tokens is None


def test_curve_matches_single_evaluations() -> None:
    model = hybrid_model()
    wl = Workload(alloc_context_tokens=100)
    lengths = np.arange(1, 60)
    c = prefill_curve(TOY_HW, model, lengths, workload=wl, batch=3, chunk_tokens=7)
    for i, L in enumerate(lengths):
        r = prefill(TOY_HW, model, int(L), workload=wl, batch=3, chunk_tokens=7)
        assert c.tok_s[i] == pytest.approx(r.tok_s, rel=1e-12)
        assert c.bytes_per_token[i] == pytest.approx(r.bytes_per_token, rel=1e-12)
        assert c.flops_per_token[i] == pytest.approx(r.flops_per_token, rel=1e-12)
        assert bool(c.bound_by_memory[i]) == (r.bound_by is BoundBy.MEMORY)
        assert c.chunk_tokens[i] == min(7, L)


# --- the derivation's worked example: Laguna S 2.1 on DGX Spark --------------------------------------

LAGUNA = load_golden("laguna_s_spark.toml")


def laguna() -> tuple[Hardware, ModelAdapter]:
    return parse_hardware(LAGUNA["hardware"]).to_hardware(), parse_model(LAGUNA["model"]).to_adapter()


def test_laguna_inputs_rebuild_from_the_printed_figures() -> None:
    d = LAGUNA["derivation"]
    _, model = laguna()
    w = model.weights
    one_expert = (
        d["moe_layers"] * 3 * d["hidden_size"] * d["moe_intermediate_size"] * d["expert_bytes_per_weight"]
    )
    assert w.expert_bytes == one_expert
    assert w.always_on_bytes + d["routed_experts"] * w.expert_bytes == pytest.approx(
        d["swept_payload_gb"] * GB, rel=1e-15
    )
    # 71.8987 - 0.6166 = 71.2821, which the derivation prints to two decimals as 71.28.
    assert d["checkpoint_tensor_gb"] - d["embedding_gb"] == pytest.approx(d["swept_payload_gb"], abs=0.005)
    kv_token = 2 * d["kv_heads"] * d["head_dim"] * d["kv_bytes_per_element"]
    assert model.kv_alloc.global_bytes_per_token == d["full_attention_layers"] * kv_token
    assert model.kv_alloc.local_bytes_per_token == d["sliding_layers"] * kv_token
    shape = model.prefill
    assert shape is not None
    assert shape.kv_write_bytes_per_token == d["layers"] * kv_token == d["kv_write_bytes_per_token"]
    assert (
        shape.attention_global_flops_per_pair
        == d["full_attention_layers"] * 4 * d["full_query_heads"] * d["head_dim"]
    )
    assert (
        shape.attention_local_flops_per_pair
        == d["sliding_layers"] * 4 * d["sliding_query_heads"] * d["head_dim"]
    )


def test_laguna_crossover_between_2100_and_8300_tokens() -> None:
    hw, model = laguna()
    cite = LAGUNA["citation"]
    # By S ~ 2,000 routings every expert is touched: (1 - 10/256)^2000 = e^-79.7, so W_batch(S*) is the
    # full 71.28 GB sweep and S* = 71.28e9 F / (2 * 7.9e9 * 273e9).
    # F = 125e12: 8.91e24 / 4.3134e21 = 2,065.7 tokens.   F = 500e12: 4x that, 8,262.6 tokens.
    low = crossover_tokens(model, linear_flop_per_s=125e12, bandwidth_bytes_per_s=hw.bandwidth_bytes_per_s)
    high = crossover_tokens(model, linear_flop_per_s=500e12, bandwidth_bytes_per_s=hw.bandwidth_bytes_per_s)
    assert low == pytest.approx(71.28e9 * 125e12 / (2 * 7.9e9 * 273e9), rel=1e-9)
    assert high == pytest.approx(71.28e9 * 500e12 / (2 * 7.9e9 * 273e9), rel=1e-9)
    assert low == pytest.approx(cite["crossover_low_tokens"], rel=0.02)  # "about 2,100"
    assert high == pytest.approx(cite["crossover_high_tokens"], rel=0.01)  # "about 8,300"
    # The fixed point holds: S* = W_batch(S*) F / (2 P R).
    for s, f in ((low, 125e12), (high, 500e12)):
        assert s is not None
        assert s == pytest.approx(float(model.weights.batch(s)) * f / (2 * 7.9e9 * 273e9), rel=1e-9)
    # With minimum expert traffic only W_active = 7.409e9 + 10 * 0.2495e9 = 9.904e9 is swept: S* ~ 287.
    floor = crossover_tokens(
        model, linear_flop_per_s=125e12, bandwidth_bytes_per_s=273e9, expert_traffic=ExpertTraffic.MINIMUM
    )
    assert floor == pytest.approx(model.weights.active * 125e12 / (2 * 7.9e9 * 273e9), rel=1e-12)


def test_laguna_8k_prompt_by_hand() -> None:
    hw, model = laguna()
    r = prefill(hw, model, 8192)
    # Memory: the full sweep 71.28e9 + writes 8192 * 98,304 = 805,306,368 -> 72,085,306,368 bytes / 273e9
    # = 0.26405 s.
    assert r.weight_sweep_bytes == pytest.approx(71.28e9, rel=1e-12)
    assert r.traffic_bytes == pytest.approx(72_085_306_368, rel=1e-12)
    assert r.memory_time_s == pytest.approx(72_085_306_368 / 273e9, rel=1e-12)
    # Linear math at FP4: 2 * 8192 * 7.9e9 = 1.294336e14 FLOP / 500e12 = 0.2588672 s.
    assert r.linear_time_s == pytest.approx(1.294336e14 / 500e12, rel=1e-12)
    # Attention at BF16: full layers 294,912 * 8192 * 8193 / 2 = 294,912 * 33,558,528 pairs;
    # sliding layers 1,327,104 * (512 * 513 / 2 + 512 * (8192 - 512)) = 1,327,104 * 4,063,488.
    attention = 294_912 * 33_558_528 + 1_327_104 * 4_063_488  # 1.5289e13 FLOP -> 0.12231 s
    assert r.attention_flops == pytest.approx(attention, rel=1e-12)
    assert r.attention_time_s == pytest.approx(attention / 125e12, rel=1e-12)
    t = 1.294336e14 / 500e12 + attention / 125e12  # 0.38118 s: compute binds, ~21,491 tok/s
    assert r.bound_by is BoundBy.COMPUTE
    assert r.time_s == pytest.approx(t, rel=1e-12)
    assert r.tok_s == pytest.approx(8192 / t, rel=1e-12)
    assert 21_400 < r.tok_s < 21_600
    assert r.assumptions.is_estimate  # expected expert routing
    # Linear math on the BF16 path instead: 1.0354688 s + 0.12231 s.
    slow = prefill(hw, model, 8192, linear_mode="bf16")
    assert slow.time_s == pytest.approx(1.294336e14 / 125e12 + attention / 125e12, rel=1e-12)
    # batch max: margin = 128 - 71.8987 - 8 = 48.1013 GB; K_alloc(100,000) = 24,576 * 100,000 +
    # 73,728 * 512 = 2,495,348,736 bytes; floor(19.28) = 19 sessions.
    full = prefill(hw, model, 8192, batch="max")
    assert full.batch == full.batch_mem == 19
    assert full.kv_alloc_bytes == 2_495_348_736


def test_laguna_range_peaks_where_the_rooflines_cross() -> None:
    hw, model = laguna()
    rng = prefill_range(hw, model)
    assert (rng.max_prompt_tokens, rng.limited_by) == (262_144, RangeLimit.CONTEXT_LIMIT)
    # The slowest length is one token: W_batch(1) = 7,409,138,688 + 10 * 249,495,552 = 9,904,094,208 bytes
    # plus 98,304 of writes per 273e9 bytes/s, ~27.56 tok/s, memory-bound.
    assert rng.lo_prompt_tokens == 1 and rng.lo_bound_by is BoundBy.MEMORY
    assert rng.lo_tok_s == pytest.approx(273e9 / (9_904_094_208 + 98_304), rel=1e-12)
    # The memory ceiling rises with L and the compute ceiling falls, so the fastest length is where they
    # cross: memory-bound one token shorter, compute-bound one token longer.
    hi = rng.hi_prompt_tokens
    assert hi is not None and rng.hi_tok_s is not None
    below, above = (
        prefill(hw, model, n, workload=Workload(alloc_context_tokens=262_144)) for n in (hi - 1, hi + 1)
    )
    assert {below.bound_by, above.bound_by} == {BoundBy.MEMORY, BoundBy.COMPUTE}
    assert rng.hi_tok_s >= max(below.tok_s, above.tok_s)
    # With attention charged, compute binds before the linear-only crossover S* = 8,262.6.
    assert 2_066 < hi < 8_263


# ---------------------------------------------------------------------------------------------------
# The linear mode on a given row: llama.cpp's F16 files name fp16_acc16 where the row publishes it


def _f16_shape(preferred: str | None = "fp16_acc16") -> PrefillShape:
    return PrefillShape(linear_active_params=1e9, linear_mode="fp16", linear_mode_if_published=preferred)


def _rated(**rates: float) -> Hardware:
    return Hardware(
        id="toy", name="toy", memory_bytes=24e9, bandwidth_bytes_per_s=1e12, compute_flop_per_s=rates
    )


def test_linear_mode_for_charges_the_engine_mode_where_the_row_publishes_it() -> None:
    geforce = _rated(fp16=165.2e12, fp16_acc16=330.3e12, bf16=165.2e12)
    mode, why = linear_mode_for(geforce, _f16_shape())
    assert mode == "fp16_acc16" and "where the hardware publishes it" in why
    rates = mode_rates(geforce, _f16_shape())
    assert rates.linear_flop_per_s == 330.3e12 and rates.linear_mode_choice == why


def test_linear_mode_for_says_so_where_the_row_lacks_the_engine_mode() -> None:
    apple = _rated(fp16=27.2e12, bf16=27.2e12)
    mode, why = linear_mode_for(apple, _f16_shape())
    assert mode == "fp16" and "publishes no fp16_acc16 rate" in why
    # a row with neither mode: fp16 is charged at the fastest rate the row publishes, and said so
    bare = _rated(fp32=31e12)
    rates = mode_rates(bare, _f16_shape())
    assert (
        rates.linear_mode == "fp16" and rates.linear_flop_per_s == 31e12 and rates.missing_modes == ("fp16",)
    )
    assert rates.linear_mode_charged == "fp32" and "fastest" in rates.linear_charge_reason


def test_linear_mode_for_a_given_mode_wins_and_plain_models_keep_theirs() -> None:
    geforce = _rated(fp16=165.2e12, fp16_acc16=330.3e12)
    assert linear_mode_for(geforce, _f16_shape(), "fp16") == ("fp16", "fp16: given for this run")
    assert linear_mode_for(geforce, _f16_shape(None))[0] == "fp16"


def test_prefill_states_the_mode_choice_in_its_assumptions() -> None:
    """Llama 2 7B F16 (llama.cpp's file type): fp16_acc16 on an RTX 4090, fp16 on an M2 Ultra, each said."""
    model = get_model("llama-2-7b-f16").adapter
    geforce = prefill(get_hardware("nvidia-rtx-4090").hardware, model, 512)
    apple = prefill(get_hardware("apple-m2-ultra-192gb").hardware, model, 512)
    assert geforce.assumptions.linear_mode == "fp16_acc16" and apple.assumptions.linear_mode == "fp16"
    assert "publishes no fp16_acc16" in apple.assumptions.linear_mode_choice
    assert geforce.assumptions.linear_flop_per_s == get_hardware("nvidia-rtx-4090").hardware.compute_rate(
        "fp16_acc16"
    )
    # the safetensors release (FP16; vLLM and friends accumulate in FP32) names no engine mode
    release = get_model("llama-2-7b").adapter.prefill
    assert release is not None and release.linear_mode == "fp16" and release.linear_mode_if_published is None


def test_model_files_carry_the_engine_mode_and_refuse_an_unknown_one() -> None:
    raw = {**LAGUNA["model"], "prefill": {**LAGUNA["model"]["prefill"], "linear_mode": "fp16"}}
    with_engine = {**raw, "prefill": {**raw["prefill"], "linear_mode_if_published": "fp16_acc16"}}
    adapter = parse_model(with_engine).to_adapter()
    assert adapter.prefill is not None and adapter.prefill.linear_mode_if_published == "fp16_acc16"
    assert parse_model(raw).to_adapter().prefill.linear_mode_if_published is None  # type: ignore[union-attr]
    bad = {**raw, "prefill": {**raw["prefill"], "linear_mode_if_published": "fp16_fast"}}
    with pytest.raises(InputError, match="linear_mode_if_published"):
        parse_model(bad)


def test_mixed_precision_linear_math_is_split_by_mode() -> None:
    """Issue 36: a path that mixes modes has its FLOPs split by mode, each part at its matching rate.

    Toy: 5e9 linear parameters, 1e9 at bf16 (100 TFLOP/s) and 4e9 at fp4 (400 TFLOP/s); attention at bf16.
    A 1,000-token prompt: A_linear = 2 x 1000 x 5e9 = 1e13 FLOP, charged 2e12 / 100e12 + 8e12 / 400e12
    = 0.02 + 0.02 = 0.04 s (one fp4 rate would say 1e13 / 400e12 = 0.025 s; one bf16 rate 0.1 s).
    The effective F_linear is 5e9 / (1e9 / 100e12 + 4e9 / 400e12) = 250 TFLOP/s.
    """
    hw = Hardware("toy2", "Toy two modes", 100 * GB, 1000 * GB, {"bf16": 100e12, "fp4": 400e12})
    split = toy_dense(linear_mode="fp4", linear_params_by_mode=(("bf16", 1e9), ("fp4", 4e9)))
    r = prefill(hw, split, 1000, workload=TOY_WORKLOAD)
    assert r.linear_flops == pytest.approx(1e13)
    assert r.linear_time_s == pytest.approx(0.04, rel=1e-12)
    assert r.assumptions.linear_flop_per_s == pytest.approx(250e12, rel=1e-12)
    # Attention: 1,000 tokens x 1e6 x (1000 + 1) / 2 FLOP = 5.005e11 at bf16 = 5.005e-3 s.
    assert r.attention_time_s == pytest.approx(5.005e-3)
    one_mode = prefill(hw, toy_dense(linear_mode="fp4"), 1000, workload=TOY_WORKLOAD)
    assert one_mode.linear_time_s == pytest.approx(0.025)
    # A mode given for the run overrides the split: every linear FLOP at that mode.
    given = prefill(hw, split, 1000, workload=TOY_WORKLOAD, linear_mode="bf16")
    assert given.linear_time_s == pytest.approx(0.1)
    # A part whose mode the row lacks falls back like any mode (no fp4 on this row: fastest is bf16).
    bf16_only = Hardware("toy3", "Toy bf16 only", 100 * GB, 1000 * GB, {"bf16": 100e12})
    fallback = prefill(bf16_only, split, 1000, workload=TOY_WORKLOAD)
    assert fallback.linear_time_s == pytest.approx(0.1)
    assert "fp4" in fallback.assumptions.missing_modes


def test_an_mxfp4_release_splits_its_linear_math_by_tensor_format() -> None:
    """gpt-oss-20b keeps its attention projections (and routers) in BF16 beside MXFP4 experts: the
    profile carries each part, and on a row with both rates the linear time is each part at its rate."""
    from servebound.catalog.hardware import get_hardware
    from servebound.catalog.models import get_model

    model = get_model("gpt-oss-20b").adapter
    assert model.prefill is not None
    parts = dict(model.prefill.linear_params_by_mode)
    assert set(parts) == {"bf16", "fp4"} and sum(parts.values()) == pytest.approx(
        model.prefill.linear_active_params
    )
    # 24 layers x 2880 x (64 x 64 q + 2 x 8 x 64 kv + 64 x 64 o) = attention; 32 experts x 2880 router.
    attention = 24 * 2880 * (64 * 64 * 2 + 2 * 8 * 64)
    router = 24 * 2880 * 32
    assert parts["bf16"] == attention + router
    hw = get_hardware("nvidia-b200").hardware
    r = prefill(hw, model, 4096, workload=resolved(hw, model))
    expected = 2 * 4096 * (parts["bf16"] / hw.compute_rate("bf16") + parts["fp4"] / hw.compute_rate("fp4"))
    assert r.linear_time_s == pytest.approx(expected, rel=1e-12)
