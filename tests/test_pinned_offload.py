"""Hand-checked numbers for host offload (core/offload.py), where a mutation of the core once slipped
past: each case is small enough to do on paper, the arithmetic beside it (see bench/mutate.py).

The offload formulas are the module's own (its docstring): one decode step of b sessions takes
t(b) = B_dev(b) / R_dev + B_host(b) / R_host, with ``-ngl N`` keeping N of the layers (weights and
their caches) on the device, so h = (layers - N) / layers of both sits in host RAM.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from servebound import Hardware, KVShape, ModelAdapter, Weights, Workload, decode
from servebound.catalog.hosts import get_host, offload_spec
from servebound.core.experts import ExpertTraffic
from servebound.core.model import LayerShape, PrefillShape
from servebound.core.offload import (
    DEFAULT_LINK_BYTES_PER_S,
    offloaded,
    one_shot_host_seconds,
    report,
)

GB = 1e9

#: The device: C = 100 GB, R_dev = 1,000 GB/s = 1e12 B/s, no compute rates (memory only).
DEVICE = Hardware("dev", "dev", 100 * GB, 1000 * GB)

#: Dense, 4 layers: W_on = 4 GB swept per step (1 GB a layer), no untied embedding;
#: K = 1e6 B/token, so one session's cache at 1,000 tokens is K_alloc = K_read = 1e9 B.
DENSE = ModelAdapter(
    "dense4",
    "dense4",
    Weights(0.0, 4 * GB),
    KVShape(global_bytes_per_token=1e6),
    KVShape(global_bytes_per_token=1e6),
    shape=LayerShape(layers=4, hidden_size=1000, query_heads=8, cache_shards=8),
)
CONTEXTS = {"overhead_bytes": 0.0, "alloc_context_tokens": 1000, "read_context_tokens": 1000}


def _gpu_layers(n: int, host_memory_gb: float, *, memory_only: bool = False) -> Workload:
    # R_host = 100 GB/s = 1e11 B/s, so R_dev / R_host = 10.
    spec = offload_spec(gpu_layers=n, host_memory_gb=host_memory_gb, host_bandwidth_gb_per_s=100)
    return Workload(floor_tok_s=1.0, offload=spec, memory_only=memory_only, **CONTEXTS)  # type: ignore[arg-type]


def test_gpu_layers_step_splits_weights_and_cache_by_layer() -> None:
    # -ngl 3 of 4 layers: h = 1/4 of the weights and of the caches in host RAM.
    # At b = 2: B_dev = (1 - h) (W_on + b K_read) = 0.75 x (4e9 + 2e9) = 4.5e9 B,
    #           B_host = h (W_on + b K_read) = 0.25 x 6e9 = 1.5e9 B;
    # per emitted token 2.25e9 and 7.5e8 B; step terms 4.5e9 / 1e12 = 4.5e-3 s, 1.5e9 / 1e11 = 1.5e-2 s.
    workload = _gpu_layers(3, 64)
    spec = workload.offload
    assert spec is not None
    _, where, host_margin = offloaded(DEVICE, DENSE, spec, 0.0)
    assert (where.host_layer_share, where.host_resident_bytes) == (0.25, 1e9)
    off = report(DEVICE, DENSE, spec, where, host_margin, 2, 1000, ExpertTraffic.EXPECTED)
    assert off.device_bytes_per_token == pytest.approx(2.25e9, rel=1e-12)
    assert off.host_bytes_per_token == pytest.approx(7.5e8, rel=1e-12)
    assert off.step_time_split_s == pytest.approx((4.5e-3, 1.5e-2), rel=1e-12)
    # One session: t(1) = 0.75 x (4e9 + 1e9) / 1e12 + 0.25 x 5e9 / 1e11 = 3.75e-3 + 1.25e-2 = 1.625e-2 s,
    # so 1 / 1.625e-2 = 61.538... tok/s.
    r = decode(DEVICE, DENSE, _gpu_layers(3, 64, memory_only=True))
    assert r.single_session_tok_s == pytest.approx(1 / 1.625e-2, rel=1e-12)


def test_host_ram_bounds_the_batch_when_its_share_of_the_caches_binds() -> None:
    # -ngl 3 of 4: the device holds 3e9 B of weights, so its margin is 100e9 - 3e9 - 0 = 97e9 B, and
    # each session puts (1 - h) K_alloc = 7.5e8 B there: 97e9 / 7.5e8 = 129.3 sessions.
    # Host RAM of 11.1 GB less its 1e9 B of weights leaves 10.1e9 B for h K_alloc = 2.5e8 B a session:
    # 10.1e9 / 2.5e8 = 40.4, so b_mem = min(129, 40) = 40.
    tight = decode(DEVICE, DENSE, _gpu_layers(3, 11.1))
    assert tight.batch_mem == 40
    # With 64 GB of host RAM the host holds 63e9 / 2.5e8 = 252 sessions: the device's 129 binds.
    roomy = decode(DEVICE, DENSE, _gpu_layers(3, 64))
    assert roomy.batch_mem == 129


def test_no_layer_on_the_device_is_refused_and_no_expert_layer_in_host_ram_is_no_offload() -> None:
    # -ngl 0 would leave the device no weights to hold (W_dev = 0 B): refused, naming the flag and the
    # range. --n-cpu-moe 0 is a whole number >= 0 and moves nothing: the same ceiling as no offload,
    # W_on + K_read = 4e9 + 1e9 = 5e9 B at 1e12 B/s, 200 tok/s.
    from servebound import Experts
    from servebound.errors import InputError

    with pytest.raises(InputError) as err:
        decode(DEVICE, DENSE, _gpu_layers(0, 64))
    assert err.value.field == "gpu_layers" and "between 1 and the model's 4 layers (got 0)" in str(err.value)
    moe = ModelAdapter(
        "moe4",
        "moe4",
        Weights(0.0, 4 * GB, 0.0, Experts(8, 2)),
        KVShape(global_bytes_per_token=1e6),
        KVShape(global_bytes_per_token=1e6),
        shape=LayerShape(layers=4, hidden_size=1000, query_heads=8, cache_shards=8, moe_layers=4),
    )
    spec = offload_spec(n_cpu_moe=0, host_memory_gb=64, host_bandwidth_gb_per_s=100)
    assert spec is not None and spec.n_cpu_moe == 0 and spec.mode == "n_cpu_moe=0"
    r = decode(DEVICE, moe, Workload(floor_tok_s=1.0, offload=spec, memory_only=True, **CONTEXTS))  # type: ignore[arg-type]
    assert r.single_session_tok_s == pytest.approx(200.0, rel=1e-12)


def test_a_host_row_with_one_flag_overridden_says_so() -> None:
    # desktop-ddr5-6000-2ch: 2 channels x 8 B x 6,000 MT/s = 96 GB/s. Overriding either figure alone
    # names the row and the override; the row alone names its own source.
    row = "desktop-ddr5-6000-2ch"
    memory_only = offload_spec(cpu_moe=True, host=row, host_memory_gb=32)
    bandwidth_only = offload_spec(cpu_moe=True, host=row, host_bandwidth_gb_per_s=50)
    plain = offload_spec(cpu_moe=True, host=row)
    assert memory_only is not None and bandwidth_only is not None and plain is not None
    source = get_host(row).source
    assert (
        memory_only.host_source == bandwidth_only.host_source == f"{row}, with the given overrides ({source})"
    )
    assert plain.host_source == source
    assert (memory_only.host_memory_bytes, memory_only.host_bandwidth_bytes_per_s) == (32e9, 96e9)
    assert bandwidth_only.host_bandwidth_bytes_per_s == 50e9


def test_one_shot_host_seconds_over_the_link_and_in_host_memory() -> None:
    # -ngl 3 of 4, dense: each prefill pass needs the host tier's weights h W_on = 1e9 B.
    # 16 tokens (< 32) compute on the host, reading them at R_host: 1e9 / 1e11 = 0.01 s;
    # 64 tokens cross the link at min(R_link, R_host) = min(63e9, 1e11): 1e9 / 63e9 = 0.015873... s.
    spec = _gpu_layers(3, 64).offload
    assert spec is not None and spec.link_bytes_per_s == DEFAULT_LINK_BYTES_PER_S == 63e9
    _, where, _ = offloaded(DEVICE, DENSE, spec, 0.0)
    seconds = one_shot_host_seconds(DENSE, where, spec, np.array([16.0, 64.0]), ExpertTraffic.EXPECTED)
    assert list(seconds) == pytest.approx([0.01, 1 / 63], rel=1e-12)
    # A count that is not a number gives no time (NaN), for a dense model as for a routed one.
    unknown = one_shot_host_seconds(DENSE, where, spec, np.array([math.nan]), ExpertTraffic.EXPECTED)
    assert math.isnan(float(unknown[0]))


def test_prefill_takes_the_larger_of_the_device_time_and_the_host_transfer() -> None:
    # The dense 4-layer model with P_lin = 1e9 (2e9 FLOPs a token, no attention FLOPs) on a device of
    # 1e15 FLOP/s; -ngl 3 of 4, R_host = 1e11 B/s, link 63e9 B/s. One chunk of 1,000 tokens:
    #   device memory: its weights (1 - h) W_on = 3e9 B once: 3e9 / 1e12 = 3e-3 s; compute 2e12 / 1e15 = 2e-3 s;
    #   host transfer: h W_on = 1e9 B over min(63e9, 1e11): 1 / 63 s = 0.015873 s, the larger:
    # t = memory time = 1 / 63 s, 1,000 x 63 = 63,000 tok/s.
    from dataclasses import replace

    from servebound.core.prefill import prefill, prefill_curve, prefill_range
    from servebound.core.rates import BoundBy

    hw = Hardware("fast", "fast", 100 * GB, 1000 * GB, {"bf16": 1e15})
    model = replace(DENSE, prefill=PrefillShape(linear_active_params=1e9))
    workload = _gpu_layers(3, 64)
    r = prefill(hw, model, 1000, workload=workload, chunk_tokens=1000)
    assert r.offload is not None
    assert r.offload.step_time_split_s == pytest.approx((3e-3, 1 / 63), rel=1e-12)
    assert (r.time_s, r.memory_time_s) == pytest.approx((1 / 63, 1 / 63), rel=1e-12)
    assert r.tok_s == pytest.approx(63_000.0, rel=1e-12)
    curve = prefill_curve(hw, model, [1000], workload=workload)
    assert float(curve.memory_time_s[0]) == pytest.approx(1 / 63, rel=1e-12)
    assert float(curve.tok_s[0]) == pytest.approx(63_000.0, rel=1e-12)
    # The range over L = 1 .. 1,000 (the alloc context): below 32 tokens the host computes, reading its
    # 1e9 B at 1e11 B/s (0.01 s, above the device's 3e-3 s), so L = 1 gives the lowest 1 / 0.01 = 100 tok/s;
    # from 32 on the link binds (1 / 63 s), and L = 1,000 the highest, 63,000 tok/s. Moving weights is
    # memory traffic: both ends, like the point, are memory-bound.
    rng = prefill_range(hw, model, workload=workload)
    assert (rng.lo_tok_s, rng.hi_tok_s) == pytest.approx((100.0, 63_000.0), rel=1e-12)
    assert (rng.lo_prompt_tokens, rng.hi_prompt_tokens) == (1, 1000)
    assert rng.lo_bound_by == rng.hi_bound_by == r.bound_by == BoundBy.MEMORY


def test_a_routed_model_split_by_layer_keeps_the_device_share_of_its_experts() -> None:
    # MoE, 4 layers, all with experts: W_on = 4 GB, 8 experts of 0.1 GB, k = 2 (one token touches
    # m(1) = k = 2 of them). -ngl 3 of 4: h = 1/4 of every layer's weights, experts included, in host RAM.
    # At b = 1 (K_read = 1e9 B): B_dev = (1 - h)(W_on + 2 w_e + K_read) = 0.75 x (4e9 + 2e8 + 1e9)
    # = 3.9e9 B, B_host = 0.25 x 5.2e9 = 1.3e9 B.
    from servebound import Experts

    moe = ModelAdapter(
        "moe4",
        "moe4",
        Weights(0.0, 4 * GB, 0.1 * GB, Experts(8, 2)),
        KVShape(global_bytes_per_token=1e6),
        KVShape(global_bytes_per_token=1e6),
        shape=LayerShape(layers=4, hidden_size=1000, query_heads=8, cache_shards=8, moe_layers=4),
    )
    spec = _gpu_layers(3, 64).offload
    assert spec is not None
    _, where, host_margin = offloaded(DEVICE, moe, spec, 0.0)
    off = report(DEVICE, moe, spec, where, host_margin, 1, 1000, ExpertTraffic.EXPECTED)
    assert (off.device_bytes_per_token, off.host_bytes_per_token) == pytest.approx((3.9e9, 1.3e9), rel=1e-12)


def test_the_runtime_overhead_counts_against_the_device_when_host_ram_binds() -> None:
    # As above (-ngl 3 of 4, 11.1 GB of host RAM: 40.4 sessions' host share) with O = 7 GB: the device
    # margin is 100e9 - 3e9 - 7e9 = 90e9 B, 90e9 / 7.5e8 = 120 sessions there, so host RAM still binds:
    # b_mem = floor(10.1e9 / 2.5e8) = 40.
    from dataclasses import replace

    r = decode(DEVICE, DENSE, replace(_gpu_layers(3, 11.1), overhead_bytes=7 * GB))
    assert r.batch_mem == 40


def test_host_ram_exactly_full_of_weights_still_holds_them() -> None:
    # -ngl 3 of 4 with 1 GB of host RAM: exactly the host tier's weights h W_on = 0.25 x 4e9 = 1e9 B.
    # They fit (margin 0 B), but no session's host share of the cache (2.5e8 B) does: b_mem = 0.
    r = decode(DEVICE, DENSE, _gpu_layers(3, 1))
    assert r.offload is not None and r.offload.host_fits
    assert r.batch_mem == 0 and r.verdict.value == "no_session_fit"
    # Prefill says the same: the weights fit both tiers, no prompt's cache does.
    from dataclasses import replace

    from servebound.core.prefill import prefill

    with_prefill = replace(DENSE, prefill=PrefillShape(linear_active_params=1e9))
    pf = prefill(DEVICE, with_prefill, 1000, workload=_gpu_layers(3, 1), chunk_tokens=1000)
    assert pf.offload is not None and pf.offload.host_fits and pf.verdict.value == "no_session_fit"


def test_with_no_device_margin_the_reservation_is_the_device_share() -> None:
    # -ngl 3 of 4 with O = 97 GB: the device margin is 100e9 - 3e9 - 97e9 = 0 B, so no session fits
    # there, whatever the host holds; host RAM of 1e9 B + 0.125 B leaves the host a sliver. The cache
    # reserved on the device is its share (1 - h) K_alloc = 0.75 x 1e9 = 7.5e8 B a session (the host's
    # sliver binds nothing once the device has no room).
    from dataclasses import replace

    r = decode(DEVICE, DENSE, replace(_gpu_layers(3, 1.000000000125), overhead_bytes=97 * GB))
    assert r.batch_mem == 0
    assert r.kv_alloc_bytes == pytest.approx(7.5e8, rel=1e-12)


def test_host_flops_split_like_the_active_weight_bytes() -> None:
    # 2 P_host = 2 P_lin x (host share of one token's active bytes). MoE as above with P_lin = 1e9:
    # one token's active bytes W_on + k w_e = 4e9 + 2 x 1e8 = 4.2e9; -ngl 3 of 4 keeps h = 1/4 of each
    # layer, experts included, on the host: 0.25 x 4e9 + 0.25 x 2e8 = 1.05e9, a quarter, so
    # 2 x 1e9 x 0.25 = 5e8 FLOPs per token on the host.
    from dataclasses import replace

    from servebound import Experts
    from servebound.core.offload import host_flops_per_token

    moe = ModelAdapter(
        "moe4",
        "moe4",
        Weights(0.0, 4 * GB, 0.1 * GB, Experts(8, 2)),
        KVShape(global_bytes_per_token=1e6),
        KVShape(global_bytes_per_token=1e6),
        PrefillShape(linear_active_params=1e9),
        shape=LayerShape(layers=4, hidden_size=1000, query_heads=8, cache_shards=8, moe_layers=4),
    )
    spec = _gpu_layers(3, 64).offload
    assert spec is not None
    _, where, _ = offloaded(DEVICE, moe, spec, 0.0)
    assert host_flops_per_token(moe, where) == pytest.approx(5e8, rel=1e-12)
    assert host_flops_per_token(replace(moe, prefill=None), where) == 0.0


def test_a_dense_records_stray_expert_size_counts_nowhere() -> None:
    # A Weights record without experts ignores expert_bytes: W_resident = W_emb + W_on (4e9 B here) and
    # W_batch(n) = W_on whatever the size says. The offload terms read it the same way: -ngl 3 of 4 with
    # P_lin = 1e9 puts h = 1/4 of the 4e9 active bytes on the host, 2 x 1e9 x 0.25 = 5e8 FLOPs per token,
    # and a one-shot pass of 16 tokens reads h W_on = 1e9 B at R_host = 1e11 B/s: 0.01 s, as with no size.
    from dataclasses import replace

    from servebound.core.offload import host_flops_per_token

    stray = replace(
        DENSE, weights=Weights(0.0, 4 * GB, 0.5 * GB), prefill=PrefillShape(linear_active_params=1e9)
    )
    assert stray.weights.resident == 4 * GB and float(stray.weights.batch(64)) == 4 * GB
    spec = _gpu_layers(3, 64).offload
    assert spec is not None
    _, where, _ = offloaded(DEVICE, stray, spec, 0.0)
    assert host_flops_per_token(stray, where) == pytest.approx(5e8, rel=1e-12)
    seconds = one_shot_host_seconds(stray, where, spec, np.array([16.0]), ExpertTraffic.EXPECTED)
    assert list(seconds) == pytest.approx([0.01], rel=1e-12)
