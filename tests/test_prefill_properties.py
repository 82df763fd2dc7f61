"""Invariants of the prefill ceilings over random models, machines and settings (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servebound.core.decode import curve as decode_curve
from servebound.core.experts import ExpertTraffic
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter, PrefillShape
from servebound.core.prefill import PrefillVerdict, prefill, prefill_curve, prefill_range
from servebound.core.prefill_cost import attention_flops_per_token, traffic_per_prompt_token
from servebound.core.workload import Workload
from tests.strategies import adapters
from tests.test_prefill import brute_totals

REL = 1e-9
MAX_PROMPT = 400


def models(moe: bool | None = None) -> st.SearchStrategy[ModelAdapter]:
    return adapters(
        moe=moe,
        max_routed=128,
        always_on_bytes=(1e6, 1e10),
        kv_bytes_per_token=1e6,
        window_tokens=64,
        state_flops_per_token=1e8,
    )


machines = st.builds(
    lambda r, f: Hardware("h", "H", 1e15, r, {"bf16": f}),
    st.floats(1e10, 1e13),
    st.floats(1e12, 1e16),
)
traffic_modes = st.sampled_from(list(ExpertTraffic))


def workload(mode: ExpertTraffic = ExpertTraffic.EXPECTED) -> Workload:
    return Workload(overhead_bytes=0.0, alloc_context_tokens=MAX_PROMPT, expert_traffic=mode)


@settings(max_examples=150, deadline=None)
@given(
    models(),
    machines,
    st.integers(1, MAX_PROMPT),
    st.integers(1, MAX_PROMPT),
    st.integers(1, 8),
    traffic_modes,
)
def test_one_shot_is_the_ceiling_at_fixed_batch(
    model: ModelAdapter, hw: Hardware, prompt: int, chunk: int, batch: int, mode: ExpertTraffic
) -> None:
    wl = workload(mode)
    one_shot = prefill(hw, model, prompt, workload=wl, batch=batch)
    chunked = prefill(hw, model, prompt, workload=wl, batch=batch, chunk_tokens=chunk)
    assert chunked.tok_s <= one_shot.tok_s * (1 + REL)
    assert chunked.time_s >= one_shot.time_s * (1 - REL)
    assert chunked.memory_time_s >= one_shot.memory_time_s * (1 - REL)
    # Chunking changes the rereads and the sweeps, never the arithmetic.
    assert chunked.attention_flops == one_shot.attention_flops
    assert chunked.linear_flops == one_shot.linear_flops


@settings(max_examples=150, deadline=None)
@given(models(), machines, st.integers(1, MAX_PROMPT), st.integers(1, 60), st.integers(1, 6), traffic_modes)
def test_splitting_chunks_never_raises_the_ceiling(
    model: ModelAdapter, hw: Hardware, prompt: int, chunk: int, factor: int, mode: ExpertTraffic
) -> None:
    # Chunks of c split every chunk of k c (the boundaries of k c are multiples of c): more sweeps of
    # fewer tokens (W_batch is subadditive) and more rereads.
    wl = workload(mode)
    fine = prefill(hw, model, prompt, workload=wl, chunk_tokens=chunk)
    coarse = prefill(hw, model, prompt, workload=wl, chunk_tokens=chunk * factor)
    assert fine.tok_s <= coarse.tok_s * (1 + REL)
    assert fine.weight_sweep_bytes >= coarse.weight_sweep_bytes * (1 - REL)
    assert fine.kv_reread_bytes >= coarse.kv_reread_bytes * (1 - REL)


@settings(max_examples=60, deadline=None)
@given(models(), st.integers(1, 80), st.integers(1, 90), st.integers(1, 4))
def test_closed_forms_equal_the_chunk_by_chunk_sum(
    model: ModelAdapter, prompt: int, chunk: int, batch: int
) -> None:
    hw = Hardware("h", "H", 1e15, 1e12, {"bf16": 1e15})
    r = prefill(hw, model, prompt, workload=workload(), batch=batch, chunk_tokens=chunk)
    traffic, attention = brute_totals(model, batch, prompt, chunk)
    assert r.traffic_bytes == pytest.approx(traffic, rel=REL)
    assert r.attention_flops == pytest.approx(attention, rel=REL, abs=1e-6)


@settings(max_examples=200, deadline=None)
@given(
    st.floats(0, 1e7),
    st.floats(0, 1e7),
    st.integers(0, 50),
    st.floats(0, 1e6),
    st.integers(1, 60),
    st.integers(0, 80),
)
def test_window_average_caps_each_length(
    alpha_global: float, alpha_local: float, window: int, alpha_state: float, chunk: int, prefix: int
) -> None:
    shape = PrefillShape(1.0, alpha_global, alpha_local, window, alpha_state)
    brute = (
        alpha_global * (prefix + (chunk + 1) / 2)
        + alpha_local * sum(min(prefix + j, window) for j in range(1, chunk + 1)) / chunk
        + alpha_state
    )
    assert float(attention_flops_per_token(shape, chunk, prefix)) == pytest.approx(brute, rel=REL, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(models(moe=True), st.integers(1, 16))
def test_moe_sweep_saturates_toward_every_expert(model: ModelAdapter, batch: int) -> None:
    w = model.weights
    assert w.experts is not None
    saturated = w.always_on_bytes + w.experts.routed * w.expert_bytes
    tokens = np.unique(np.geomspace(1, 1e7, 60).astype(np.int64))
    sweep = w.batch(batch * tokens)
    # W_batch(bc) rises with the tokens per sweep, from W_active toward always-on + E * expert, never past.
    assert np.all(np.diff(sweep) >= -1e-6 * saturated)
    assert np.all(sweep <= saturated * (1 + 1e-12))
    assert sweep[0] >= w.active * (1 - 1e-12)
    assert sweep[-1] == pytest.approx(saturated, rel=1e-9)
    # Minimum traffic keeps the sweep at W_active however many tokens share it.
    np.testing.assert_allclose(w.batch(batch * tokens, ExpertTraffic.MINIMUM), w.active, rtol=1e-12)
    # The one-shot weight share per token falls as the prompt grows.
    hw = Hardware("h", "H", 1e15, 1e12, {"bf16": 1e15})
    lengths = np.arange(1, 200)
    share = prefill_curve(hw, model, lengths, workload=workload(), batch=batch).bytes_per_token
    kappa = model.prefill.kv_write_bytes_per_token if model.prefill else 0.0
    assert np.all(np.diff(share - kappa) <= 1e-9 * share[:-1])


@settings(max_examples=100, deadline=None)
@given(models(), machines, st.integers(1, MAX_PROMPT), st.integers(1, MAX_PROMPT), traffic_modes)
def test_larger_batches_wait_longer_and_never_serve_less(
    model: ModelAdapter, hw: Hardware, prompt: int, chunk: int, mode: ExpertTraffic
) -> None:
    batches = np.arange(1, 200)
    c = prefill_curve(hw, model, prompt, workload=workload(mode), batch=batches, chunk_tokens=chunk)
    assert np.all(np.diff(c.time_s) >= -REL * c.time_s[:-1])
    assert np.all(np.diff(c.tok_s) >= -REL * c.tok_s[:-1])


@settings(max_examples=100, deadline=None)
@given(models(), machines, st.integers(1, MAX_PROMPT), st.floats(1e-6, 10.0), st.floats(1.0, 1e12))
def test_budget_search_finds_the_largest_batch_within_budget(
    model: ModelAdapter, hw: Hardware, prompt: int, budget: float, room: float
) -> None:
    kv_alloc = model.kv_alloc.bytes_at(MAX_PROMPT)
    hw = Hardware("h", "H", model.weights.resident + room, hw.bandwidth_bytes_per_s, hw.compute_flop_per_s)
    room = hw.memory_bytes - model.weights.resident  # what is left after rounding C = W_resident + room
    r = prefill(hw, model, prompt, workload=workload(), batch="max", ttft_budget_s=budget)
    if kv_alloc > room:
        assert r.verdict is PrefillVerdict.NO_SESSION_FIT and r.batch_mem == 0
        return
    if r.verdict is PrefillVerdict.OVER_BUDGET:
        assert r.batch == 1 and r.time_s > budget and r.ttft_ok is False
        return
    assert r.verdict is PrefillVerdict.FITS and r.ttft_ok
    assert r.time_s <= budget
    assert r.batch * kv_alloc <= room * (1 + 1e-12)
    if r.batch < r.batch_mem:
        nxt = prefill(hw, model, prompt, workload=workload(), batch=r.batch + 1, ttft_budget_s=budget)
        assert nxt.time_s > budget and nxt.verdict is PrefillVerdict.OVER_BUDGET


@settings(max_examples=100, deadline=None)
@given(models(), machines, st.integers(0, 5000), traffic_modes)
def test_chunk_of_one_is_decode_plus_the_kv_write(
    model: ModelAdapter, hw: Hardware, read_context: int, mode: ExpertTraffic
) -> None:
    shape = model.prefill
    assert shape is not None
    # Decode's memory line (its compute roof is the other line of the step, not traffic).
    wl = Workload(
        read_context_tokens=read_context, alloc_context_tokens=5000, expert_traffic=mode, memory_only=True
    )
    batches = np.arange(1, 40)
    aggregate, _ = decode_curve(hw, model, wl, batches)
    q_pf = traffic_per_prompt_token(model, batches, 1, read_context, mode)
    # At l = 0 decode would still charge K_read(0) (recurrent state); prefill's first chunk rereads nothing.
    reread_at_zero = model.kv_read.bytes_at(0) if read_context == 0 else 0.0
    np.testing.assert_allclose(
        q_pf - shape.kv_write_bytes_per_token + reread_at_zero,
        hw.bandwidth_bytes_per_s / aggregate,
        rtol=1e-9,
    )


@settings(max_examples=30, deadline=None)
@given(models(), machines, st.integers(1, 3), st.floats(0, 1e9), st.integers(1, 150))
def test_range_equals_brute_force(
    model: ModelAdapter, hw: Hardware, batch: int, room: float, limit: int
) -> None:
    model = ModelAdapter(
        model.id, model.name, model.weights, model.kv_alloc, model.kv_read, model.prefill, limit
    )
    hw = Hardware("h", "H", model.weights.resident + room, hw.bandwidth_bytes_per_s, hw.compute_flop_per_s)
    wl = Workload(overhead_bytes=0.0, alloc_context_tokens=limit)
    rng = prefill_range(hw, model, workload=wl, batch=batch)
    room = hw.memory_bytes - model.weights.resident  # what is left after rounding C = W_resident + room
    fits = [n for n in range(1, limit + 1) if batch * model.kv_alloc.bytes_at(n) <= room]
    if not fits:
        assert rng.lo_tok_s is None and rng.verdict is not PrefillVerdict.FITS
        return
    ceilings = {n: prefill(hw, model, n, workload=wl, batch=batch).tok_s for n in fits}
    assert rng.max_prompt_tokens == max(fits)
    assert rng.lo_tok_s == pytest.approx(min(ceilings.values()), rel=1e-12)
    assert rng.hi_tok_s == pytest.approx(max(ceilings.values()), rel=1e-12)
    assert rng.lo_prompt_tokens is not None and rng.hi_prompt_tokens is not None
    assert ceilings[rng.lo_prompt_tokens] == pytest.approx(min(ceilings.values()), rel=1e-12)
    assert ceilings[rng.hi_prompt_tokens] == pytest.approx(max(ceilings.values()), rel=1e-12)
