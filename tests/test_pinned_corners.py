"""Hand-checked corners of the core a mutation once slipped past (see bench/mutate.py): a boundary met
exactly, a default that must add nothing, a placement over more than one scale-up domain. Each case is
small enough to do on paper; the arithmetic is written beside it.
"""

from __future__ import annotations

import math

import pytest

from servebound import Hardware, KVShape, ModelAdapter, Weights, Workload, decode
from servebound.core.layout import LayoutResult
from servebound.core.model import LayerShape, PrefillShape
from servebound.core.system import Interconnect, Layout, System
from servebound.inputs.declared import DeclaredWorkload
from tests.test_pinned_formulas import moe_layout_model

GB = 1e9

#: C = 100 GB, R = 1,000 GB/s = 1e12 B/s, no compute rates.
DEVICE = Hardware("dev", "dev", 100 * GB, 1000 * GB)
CONTEXTS = {"overhead_bytes": 0.0, "alloc_context_tokens": 1000, "read_context_tokens": 1000}


def test_a_window_alone_adds_no_attention_flops() -> None:
    # a_attn's local term is alpha_local / c x sum min(l + j, w): with no alpha_local given it is 0
    # whatever the window, so a 512-token window alone leaves a_pf = 2 P_lin = 2e9 FLOPs per token.
    from servebound.core.prefill_cost import compute_per_prompt_token
    from servebound.core.rates import mode_rates

    shape = PrefillShape(linear_active_params=1e9, attention_window_tokens=512)
    assert float(compute_per_prompt_token(shape, 64.0, 1000.0)) == pytest.approx(2e9, rel=1e-12)
    assert not mode_rates(DEVICE, shape).needs_attention


def test_attention_without_flops_needs_no_rate_in_decode() -> None:
    # Radeon RX 7900 XTX publishes FP16 but no BF16 rate. A model whose linear math runs at fp16 and
    # whose attention (bf16) has no FLOPs: c = 2 P_lin / F_fp16 exactly, with no time for attention.
    from servebound.catalog.hardware import get_hardware

    hw = get_hardware("amd-radeon-rx-7900-xtx").hardware
    f16 = hw.compute_rate("fp16")
    assert f16 is not None and hw.compute_rate("bf16") is None
    model = ModelAdapter(
        "lin",
        "lin",
        Weights(0.0, 1 * GB),
        KVShape(global_bytes_per_token=1000.0),
        KVShape(global_bytes_per_token=1000.0),
        PrefillShape(linear_active_params=1e9, linear_mode="fp16", attention_mode="bf16"),
    )
    r = decode(hw, model, Workload(floor_tok_s=1.0, **CONTEXTS))
    assert r.compute is not None
    assert r.compute.seconds_per_session_step == pytest.approx(2e9 / f16, rel=1e-12)


def test_a_kv_precision_exactly_as_wide_as_the_room_fits() -> None:
    # C = 100 GB, W = 99 GB, O = 0: margin 1e9 B. The cache is bf16 (2 B per element), K_alloc(1,000) =
    # 2e6 x 1,000 = 2e9 B: no session fits. The widest element that fits is 2 x 1e9 / 2e9 = 1 B, so fp8
    # (exactly 1 B: one session's cache is then 1e9 B, the whole margin) fits, as does q4_0 (0.5625 B);
    # q8_0 (1.0625 B) does not.
    model = ModelAdapter(
        "kv",
        "kv",
        Weights(0.0, 99 * GB),
        KVShape(global_bytes_per_token=2e6),
        KVShape(global_bytes_per_token=2e6),
        kv_bytes_per_element=2.0,
    )
    r = decode(DEVICE, model, Workload(floor_tok_s=1.0, **CONTEXTS))
    assert r.verdict.value == "no_session_fit" and r.remedies is not None
    assert r.remedies.max_kv_bytes_per_element == 1.0
    assert r.remedies.kv_precisions_that_fit == ("fp8", "q4_0")


def test_a_prefill_exactly_at_the_ttft_budget_meets_it() -> None:
    # t_pf = 0.5 s against a budget of 0.5 s: met (t_pf <= budget); 0.25 s is missed.
    from servebound.core.plan import plan_fleet

    def ok(budget: float) -> bool | None:
        return plan_fleet(
            sessions_per_system=10,
            per_session_tok_s=1.0,
            prefill_s=0.5,
            prefill_parallel_prompts=1,
            prompt_tokens=100,
            output_tokens=10,
            devices_per_system=1,
            users=10.0,
            ttft_budget_s=budget,
        ).ttft_ok

    assert (ok(0.5), ok(0.25)) == (True, False)


def test_linear_math_without_parameters_needs_no_rate_in_decode() -> None:
    # The mirror case: no linear parameters (P_lin = 0, so no linear FLOPs) at bf16, which the 7900 XTX
    # does not publish, and attention at fp16 with alpha_state = 1e9 FLOPs per token:
    # c = a_attn / F_fp16 = 1e9 / F_fp16, with no time for the linear math.
    from servebound.catalog.hardware import get_hardware

    hw = get_hardware("amd-radeon-rx-7900-xtx").hardware
    f16 = hw.compute_rate("fp16")
    assert f16 is not None and hw.compute_rate("bf16") is None
    shape = PrefillShape(
        linear_active_params=0.0,
        attention_state_flops_per_token=1e9,
        linear_mode="bf16",
        attention_mode="fp16",
    )
    model = ModelAdapter(
        "attn",
        "attn",
        Weights(0.0, 1 * GB),
        KVShape(global_bytes_per_token=1000.0),
        KVShape(global_bytes_per_token=1000.0),
        shape,
    )
    r = decode(hw, model, Workload(floor_tok_s=1.0, **CONTEXTS))
    assert r.compute is not None
    assert r.compute.seconds_per_session_step == pytest.approx(1e9 / f16, rel=1e-12)


def test_a_range_with_no_fitting_length_reports_a_longest_of_zero() -> None:
    # C = 100 GB, W = 99 GB, O = 0: margin 1e9 B. K = 6e8 B/token: one session of 1 token (6e8 B) fits,
    # two (1.2e9 B) do not, so at b = 2 no length fits (no_batch_fit); K = 2e9 B/token fits none at all
    # (no_session_fit). Either way the longest fitting prompt is 0 tokens and there are no ceilings.
    from servebound.core.prefill import prefill_range

    def rng(per_token: float, batch: int) -> tuple[str, int, float | None]:
        model = ModelAdapter(
            "m",
            "m",
            Weights(0.0, 99 * GB),
            KVShape(global_bytes_per_token=per_token),
            KVShape(global_bytes_per_token=per_token),
            PrefillShape(linear_active_params=1e9),
        )
        r = prefill_range(DEVICE, model, workload=Workload(**CONTEXTS), batch=batch)
        return r.verdict.value, r.max_prompt_tokens, r.lo_tok_s

    assert rng(6e8, 2) == ("no_batch_fit", 0, None)
    assert rng(2e9, 1) == ("no_session_fit", 0, None)


def _domains_of_eight(devices: int) -> System:
    # Scale-up domains of 8 devices at 1e11 B/s each way, 1e10 B/s between domains.
    return System(DEVICE, devices, Interconnect(8, 1e11, 1e10, "up", "out"))


#: Dense, 6 layers, d = 1,000, 8 query and cache heads; W = 1 GB, K = 1,000 B/token.
DENSE6 = ModelAdapter(
    "dense6",
    "dense6",
    Weights(0.0, 1 * GB),
    KVShape(global_bytes_per_token=1000.0),
    KVShape(global_bytes_per_token=1000.0),
    shape=LayerShape(layers=6, hidden_size=1000, query_heads=8, cache_shards=8),
)


def test_tensor_parallel_groups_that_fill_a_domain_stay_on_scale_up() -> None:
    # 16 devices in two domains of 8; tp = 8, dp = 2: each group is one whole domain (devices 0-7, 8-15),
    # so the all-reduce runs at scale-up's 1e11 B/s. Per session:
    # 2 (L / pp) x 2 (tp - 1) / tp x (tp / G) x d e_a / B = 2 x 6 x 2 x 7/8 x 1 x 1,000 x 2 / 1e11
    #   = 21 x 2,000 / 1e11 = 4.2e-7 s, so 4.2e-6 s at b = 10 (at scale-out: 4.2e-5 s).
    from servebound.core.layout import evaluate_layout, times_at

    layout = Layout(tp=8, ep=1, pp=1, dp=2)
    t = times_at(_domains_of_eight(16), DENSE6, layout, 10, Workload(**CONTEXTS))
    assert t.all_reduce_s == pytest.approx(4.2e-6, rel=1e-12)
    links = evaluate_layout(_domains_of_eight(16), DENSE6, layout, Workload(**CONTEXTS)).links
    assert links.tensor_parallel == "scale-up"


def test_the_worst_replica_pipeline_crosses_a_domain_boundary() -> None:
    # 12 devices, domains of 8; tp = 2, pp = 3, dp = 2: replica 0 is devices 0-5 (stages {0,1} {2,3}
    # {4,5}, both hops inside domain 0); replica 1 is devices 6-11: its hop {6,7} -> {8,9} crosses into
    # domain 1, its hop {8,9} -> {10,11} does not. The worst replica's seconds per byte:
    # 1 / 1e10 + 1 / 1e11 = 1.1e-10 s/B. Per session: d e_a / G x that = 1,000 x 2 / 2 x 1.1e-10
    # = 1.1e-7 s, so 1.1e-6 s at b = 10 (replica 0 alone: 2 / 1e11 x 1,000 = 2e-8 s, 2e-7 s at b = 10).
    from servebound.core.layout import evaluate_layout, times_at

    layout = Layout(tp=2, ep=1, pp=3, dp=2)
    t = times_at(_domains_of_eight(12), DENSE6, layout, 10, Workload(**CONTEXTS))
    assert t.hop_s == pytest.approx(1.1e-6, rel=1e-12)
    links = evaluate_layout(_domains_of_eight(12), DENSE6, layout, Workload(**CONTEXTS)).links
    assert links.pipeline == "mixed"


def test_links_inside_one_domain_name_only_the_collectives_that_run() -> None:
    # tp = 2, ep = 1, pp = 1 on 2 of 8 devices in one domain: the all-reduce runs at scale-up; no expert
    # dispatch (ep = 1, the model is dense) and no pipeline hop cross any link.
    from servebound.core.layout import evaluate_layout

    links = evaluate_layout(_domains_of_eight(8), DENSE6, Layout(tp=2), Workload(**CONTEXTS)).links
    assert (links.tensor_parallel, links.expert_parallel, links.pipeline) == ("scale-up", "none", "none")


def test_prefill_hops_carry_every_token_of_the_pass() -> None:
    # pp = 2 on 2 devices of one domain at 1e9 B/s: one boundary, so each token's activation
    # d e_a = 1,000 x 2 = 2,000 B crosses once at 1e9 B/s: 2e-6 s a token, 2e-3 s for 1,000 tokens.
    from servebound.core.layout import prefill_communication

    system = System(DEVICE, 2, Interconnect(2, 1e9, 1e9, "up", "out"))
    comm = prefill_communication(system, DENSE6, Layout(pp=2), 1000, Workload(**CONTEXTS))
    assert comm.hop_s == pytest.approx(2e-3, rel=1e-12)
    assert comm.all_reduce_s == comm.all_to_all_s == 0.0


def test_a_fallback_rate_counts_only_for_a_path_with_work() -> None:
    # Radeon RX 7900 XTX: fp16 published, bf16 not (and no rate bounds it). Linear math at fp16 and
    # attention at bf16 with no attention FLOPs: nothing is charged at another mode's rate.
    # A row publishing only bf16 (1e12 FLOP/s): attention FLOPs at bf16 run at their own rate; at fp16
    # they are charged the fastest published rate, bf16's, and that is a fallback.
    from servebound.catalog.hardware import get_hardware
    from servebound.core.rates import mode_rates

    xtx = get_hardware("amd-radeon-rx-7900-xtx").hardware
    no_attention = PrefillShape(1e9, linear_mode="fp16", attention_mode="bf16")
    assert mode_rates(xtx, no_attention).fallback is False
    bf16_only = Hardware("b", "b", 100 * GB, 1000 * GB, {"bf16": 1e12})

    def fallback(attention_mode: str) -> bool:
        shape = PrefillShape(1e9, attention_state_flops_per_token=1e6, attention_mode=attention_mode)
        return mode_rates(bf16_only, shape).fallback

    assert (fallback("bf16"), fallback("fp16")) == (False, True)


def test_weight_fetch_latency_is_W_over_S_R() -> None:
    # One scale-up domain of S = 8 devices streams its share of W = 1 GB in parallel at R = 1e12 B/s
    # each: W / (S R) = 1e9 / 8e12 = 1.25e-4 s.
    from servebound.core.layout import evaluate_layout

    result = evaluate_layout(_domains_of_eight(16), DENSE6, Layout(tp=8, dp=2), Workload(**CONTEXTS))
    assert result.weight_fetch_latency_s == pytest.approx(1.25e-4, rel=1e-12)
    assert Interconnect(4, 1e11, 1e10).weight_fetch_latency_s(2e9, 5e11) == pytest.approx(1e-3, rel=1e-12)


def test_a_fraction_of_free_overhead_takes_off_only_known_weights() -> None:
    # O = (1 - f)(C - W_resident) with f = 0.9, C = 100 GB. With no weights known (W_resident = 0)
    # none are taken off: O = 0.1 x 100e9 = 1e10 B; resolved with W = 99 GB of weights:
    # O = 0.1 x 1e9 = 1e8 B.
    w = DeclaredWorkload(
        Workload(engine_overhead=("fraction_of_free", 0.9, "stated")), overhead_from_hardware=True
    )
    assert w.with_overhead(w.stated, DEVICE, 0.0).overhead_bytes == pytest.approx(1e10, rel=1e-13)
    model = ModelAdapter("m", "m", Weights(0.0, 99 * GB), KVShape(1.0), KVShape(1.0))
    assert w.resolve(DEVICE, model).overhead_bytes == pytest.approx(1e8, rel=1e-9)


def test_the_shared_fleet_rounds_up_past_the_rounding_tolerance() -> None:
    # shared = ceil(lambda L / P + N / S - 1e-12): users N = 110 at r = 1 tok/s, G = 1 output token:
    # lambda = N r / G = 110 requests/s, L = 1 token, P = 1 x 1 / t_pf. N / S = 110 / 10 = 11 exactly,
    # and t_pf = 1.5e-12 / 110 s makes lambda L / P = 110 x 1.5e-12 / 110 = 1.5e-12: the sum is
    # 11 + 1.5e-12, past the 1e-12 allowed for rounding, so 12 systems (a tolerance of 2e-12 gives 11).
    from servebound.core.plan import plan_fleet

    plan = plan_fleet(
        sessions_per_system=10,
        per_session_tok_s=1.0,
        prefill_s=1.5e-12 / 110,
        prefill_parallel_prompts=1,
        prompt_tokens=1,
        output_tokens=1,
        devices_per_system=1,
        users=110.0,
    )
    assert plan.shared_systems == 12


def _ten_session_layout() -> tuple[System, ModelAdapter, LayoutResult]:
    # One device: C = 100 GB, W = 90 GB, K_alloc = K_read = 1e6 B/token x 1,000 = 1e9 B, O = 0:
    # b_mem = 10e9 / 1e9 = 10 sessions; tau(10) = (90e9 + 10 x 1e9) / 1e12 = 0.1 s, 10 tok/s each,
    # above a 1 tok/s floor: b* = 10, so the system holds S = 10 sessions.
    from servebound.core.layout import evaluate_layout

    system = System(DEVICE, 1, Interconnect.ideal_for(1))
    model = ModelAdapter(
        "m",
        "m",
        Weights(0.0, 90 * GB),
        KVShape(global_bytes_per_token=1e6),
        KVShape(global_bytes_per_token=1e6),
    )
    best = evaluate_layout(system, model, Layout(), Workload(floor_tok_s=1.0, **CONTEXTS))
    assert (best.batch_star, best.sessions) == (10, 10)
    return system, model, best


def test_served_sessions_within_rounding_of_whole_systems_stay_on_them() -> None:
    # N = 110.00000000000001 (the double after 110) over S = 10: N / S = 11.000000000000002 is 11
    # systems within rounding, 10.000000000000002 sessions each (rounding it up would spread them
    # over 12, 9.17 each).
    from servebound.core.plan import served_batch

    system, model, best = _ten_session_layout()
    served = served_batch(
        system,
        model,
        best,
        Workload(floor_tok_s=1.0, **CONTEXTS),
        None,
        users=math.nextafter(110.0, math.inf),
        requests_per_s=None,
        output_tokens=100,
    )
    assert served.sessions_per_system == pytest.approx(10.0, rel=1e-12)
    assert served.batch == 10


def test_a_served_rate_short_of_the_floor_by_more_than_rounding_misses_it() -> None:
    # At b = 10 each session gets 1 / tau = 1 / 0.1 = 10 tok/s. A floor of 10 (1 + 1.5e-12) tok/s is
    # missed: 10 < floor x (1 - 1e-12) = 10 (1 + 5e-13) (a tolerance of 2e-12 would let it clear);
    # a floor of 10 (1 + 5e-13) tok/s is met within rounding, and one of exactly 10 tok/s.
    from servebound.core.plan import served_batch

    system, model, best = _ten_session_layout()

    def clears(floor: float) -> bool:
        return served_batch(
            system,
            model,
            best,
            Workload(floor_tok_s=floor, **CONTEXTS),
            None,
            users=10.0,
            requests_per_s=None,
            output_tokens=100,
        ).clears_floor

    assert (clears(10.0 * (1 + 1.5e-12)), clears(10.0 * (1 + 5e-13)), clears(10.0)) == (False, True, True)


def test_expert_parallel_inside_one_domain_by_hand() -> None:
    # ep = 2 on 2 of 8 devices in one domain at 1e11 B/s: a device sends 1/G of its tokens' expert
    # copies to its one mate: 1 / 2 / 1e11 = 5e-12 s per byte. Per session:
    # 2 (L_moe / pp) k / G x d e_a x that = 2 x 4 x 2 / 2 x 2,000 x 5e-12 = 8e-8 s, 8e-7 s at b = 10.
    # tp = 1 and pp = 1: no all-reduce and no hop on any link.
    from servebound.core.layout import evaluate_layout, times_at

    layout = Layout(tp=1, ep=2)
    t = times_at(_domains_of_eight(8), moe_layout_model(), layout, 10, Workload(**CONTEXTS))
    assert t.all_to_all_s == pytest.approx(8e-7, rel=1e-12)
    links = evaluate_layout(_domains_of_eight(8), moe_layout_model(), layout, Workload(**CONTEXTS)).links
    assert (links.tensor_parallel, links.expert_parallel, links.pipeline) == ("none", "scale-up", "none")


def test_prefill_dispatch_runs_in_every_stage() -> None:
    # ep = 2, pp = 2 on 4 devices of one domain at 1e11 B/s: per session and stage
    # 2 (L_moe / pp) k / G x d e_a x 1 / (2 x 1e11) = 2 x 2 x 2 / 2 x 2,000 x 5e-12 = 4e-8 s; the pass
    # of 1,000 tokens runs it in both stages: 2 x 1,000 x 4e-8 = 8e-5 s. One hop a token:
    # d e_a / G x 1 / 1e11 = 1,000 x 1e-11 = 1e-8 s, 1e-5 s for 1,000 tokens.
    from servebound.core.layout import prefill_communication

    comm = prefill_communication(
        _domains_of_eight(8), moe_layout_model(), Layout(ep=2, pp=2), 1000, Workload(**CONTEXTS)
    )
    assert comm.all_to_all_s == pytest.approx(8e-5, rel=1e-12)
    assert comm.hop_s == pytest.approx(1e-5, rel=1e-12)


def test_tensor_parallel_groups_straddling_a_domain_edge_over_one_period() -> None:
    # 12 devices in scale-up domains of 6; tp = 4, dp = 3: groups 0-3 (domain 0), 4-7 (devices 4, 5 in
    # domain 0, 6, 7 in domain 1) and 8-11 (domain 1). The straddling group's ring runs at scale-out's
    # 1e10 B/s: per session 2 (L / pp) x 2 (tp - 1) / tp x (tp / G) x d e_a / B
    # = 2 x 6 x 2 x 3/4 x 1 x 2,000 / 1e10 = 3.6e-6 s, 3.6e-5 s at b = 10.
    from servebound.core.layout import evaluate_layout, times_at

    system = System(DEVICE, 12, Interconnect(6, 1e11, 1e10, "up", "out"))
    layout = Layout(tp=4, dp=3)
    t = times_at(system, DENSE6, layout, 10, Workload(**CONTEXTS))
    assert t.all_reduce_s == pytest.approx(3.6e-5, rel=1e-12)
    assert evaluate_layout(system, DENSE6, layout, Workload(**CONTEXTS)).links.tensor_parallel == "mixed"


def test_a_pipeline_whose_every_hop_crosses_out_is_scale_out_only() -> None:
    # 16 devices in domains of 8; tp = 8, pp = 2: stage 0 is domain 0, stage 1 domain 1, so the one hop
    # crosses scale-out and none runs on scale-up. Per session: d e_a / G x 1 / 1e10 = 1,000 x 2 / 8
    # / 1e10 = 2.5e-8 s, 2.5e-7 s at b = 10.
    from servebound.core.layout import evaluate_layout, times_at

    layout = Layout(tp=8, pp=2)
    t = times_at(_domains_of_eight(16), DENSE6, layout, 10, Workload(**CONTEXTS))
    assert t.hop_s == pytest.approx(2.5e-7, rel=1e-12)
    assert (
        evaluate_layout(_domains_of_eight(16), DENSE6, layout, Workload(**CONTEXTS)).links.pipeline
        == "scale-out"
    )


def test_tensor_parallel_all_reduce_runs_in_each_stage_of_a_pipeline() -> None:
    # tp = 2, pp = 2 on 4 devices of one domain at 1e11 B/s: each stage all-reduces for its L / pp = 3
    # layers: 2 x 3 x 2 x 1/2 x 1 x 2,000 / 1e11 = 1.2e-7 s per session, 1.2e-6 s at b = 10.
    from servebound.core.layout import times_at

    t = times_at(_domains_of_eight(8), DENSE6, Layout(tp=2, pp=2), 10, Workload(**CONTEXTS))
    assert t.all_reduce_s == pytest.approx(1.2e-6, rel=1e-12)


def test_the_largest_batch_exactly_at_the_ttft_budget_is_taken() -> None:
    # Dense W = 1 GB, P_lin = 1e9 on 1e15 FLOP/s and 1e12 B/s; one chunk of 1,000 tokens a prompt:
    # memory 1e9 / 1e12 = 1e-3 s, compute 2 x 1e9 x 1,000 b / 1e15 = 2e-3 b s, so t(b) = 2e-3 b.
    # A budget of 4e-3 s is met exactly at b = 2 (t_pf <= budget); 3.9e-3 s only at b = 1.
    from servebound.core.prefill import prefill

    hw = Hardware("fast", "fast", 100 * GB, 1000 * GB, {"bf16": 1e15})
    model = ModelAdapter(
        "d",
        "d",
        Weights(0.0, 1 * GB),
        KVShape(global_bytes_per_token=1000.0),
        KVShape(global_bytes_per_token=1000.0),
        PrefillShape(linear_active_params=1e9),
    )

    def batch(budget: float) -> int:
        r = prefill(
            hw,
            model,
            1000,
            workload=Workload(**CONTEXTS),
            batch="max",
            chunk_tokens=1000,
            ttft_budget_s=budget,
        )
        return r.batch

    assert (batch(4e-3), batch(3.9e-3)) == (2, 1)


def test_any_linear_parameter_needs_a_linear_rate() -> None:
    # P_lin = 0.5 (a hand-built toy) is still linear work: 2 x 0.5 = 1 FLOP a token needs F_linear;
    # P_lin = 0 needs none.
    from servebound.core.rates import mode_rates

    assert mode_rates(DEVICE, PrefillShape(0.5)).needs_linear is True
    assert mode_rates(DEVICE, PrefillShape(0.0)).needs_linear is False


def test_a_one_token_window_is_attention_work() -> None:
    # Local attention over a window of w = 1: a_attn = alpha_local / c x sum_{j=1..c} min(l + j, 1)
    # = alpha_local / c x c = alpha_local = 4 FLOPs per token, so a_pf = 2 P_lin + 4 = 2e9 + 4, and
    # the attention path has work: its mode needs a rate (the row here publishes none).
    from servebound.core.prefill_cost import compute_per_prompt_token
    from servebound.core.rates import mode_rates

    shape = PrefillShape(
        linear_active_params=1e9, attention_local_flops_per_pair=4.0, attention_window_tokens=1
    )
    assert float(compute_per_prompt_token(shape, 64.0, 1000.0)) == pytest.approx(2e9 + 4.0, rel=1e-13)
    rates = mode_rates(DEVICE, shape)
    assert rates.needs_attention is True


def test_the_linear_mode_choice_names_the_models_own_mode() -> None:
    # With no engine-preferred mode, or one equal to the model's own, the choice is the model's mode,
    # said as such; a different preferred mode the row publishes is charged and named as the engine's.
    from servebound.core.rates import mode_rates

    row = Hardware("dev", "dev", 100 * GB, 1000 * GB, {"fp16": 1e14, "fp16_acc16": 2e14})
    plain = PrefillShape(linear_active_params=1e9, linear_mode="fp16")
    same = PrefillShape(linear_active_params=1e9, linear_mode="fp16", linear_mode_if_published="fp16")
    other = PrefillShape(linear_active_params=1e9, linear_mode="fp16", linear_mode_if_published="fp16_acc16")
    assert mode_rates(row, plain).linear_mode_choice == "fp16: the model's linear mode"
    assert mode_rates(row, same).linear_mode_choice == "fp16: the model's linear mode"
    picked = mode_rates(row, other)
    assert picked.linear_mode == "fp16_acc16" and picked.linear_mode_choice.startswith(
        "fp16_acc16: the model's engine"
    )
