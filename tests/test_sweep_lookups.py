"""What a sweep computes once stays what it would compute fresh: the rates and decode compute roof kept
per hardware record, the workload copied without replace, and the one-shot point prefill on floats."""

from __future__ import annotations

import dataclasses

import pytest

from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import get_model
from servebound.core.decode_compute import decode_compute
from servebound.core.experts import ExpertTraffic
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter, PrefillShape
from servebound.core.prefill_cost import evaluate_one_shot, evaluate_settings
from servebound.core.rates import mode_rates
from servebound.core.workload import KVAllocation, Speculation, Workload
from servebound.inputs.declared import DeclaredWorkload
from servebound.inputs.scenario import resolve_scenario

#: Dense, routed (MoE), sliding-window and recurrent-state profiles from the catalog.
MODELS = ("smollm2-1.7b-instruct", "minimax-m2.1", "exaone-4.0-32b", "qwen3-next-80b-a3b-thinking")
#: A datacenter GPU, one whose family lacks FP4/FP8 hardware (fallback rates), an Apple machine.
MACHINES = ("nvidia-b200", "nvidia-rtx-3090", "apple-m4-max-128gb")


def _model(ref: str) -> ModelAdapter:
    return get_model(ref).adapter


def _fresh(hardware: Hardware) -> Hardware:
    """An equal record that has looked nothing up yet."""
    return dataclasses.replace(hardware)


def test_kept_rates_are_the_rates_a_fresh_record_gives() -> None:
    for machine in MACHINES:
        seen = get_hardware(machine).hardware
        for ref in MODELS:
            shape = _model(ref).prefill
            assert shape is not None
            # Each call differs from the one before in one input only: a key missing one input repeats
            # the answer before it.
            for linear, attention in ((None, None), ("fp8", None), ("fp8", "fp32"), (None, "fp32")):
                kept = mode_rates(seen, shape, linear, attention)
                assert kept == mode_rates(_fresh(seen), shape, linear, attention), (machine, ref)
                assert mode_rates(seen, shape, linear, attention) is kept


def test_a_replaced_record_looks_its_rates_up_again() -> None:
    b200 = get_hardware("nvidia-b200").hardware
    shape = _model("smollm2-1.7b-instruct").prefill
    assert shape is not None
    before = mode_rates(b200, shape)
    slower = dataclasses.replace(b200, compute_flop_per_s={"bf16": 1e12})
    assert mode_rates(slower, shape).linear_flop_per_s == 1e12 != before.linear_flop_per_s


def _decode_workloads() -> list[Workload]:
    draft = _model("smollm2-1.7b-instruct")
    spec = Speculation(draft=draft, draft_tokens=3, tokens_per_step=2.5)
    return [
        Workload(),
        Workload(memory_only=True),
        Workload(read_context_tokens=4096),
        Workload(read_context_tokens=4096.0),  # type: ignore[arg-type]  # echoed as given
        Workload(read_context_tokens=4096, speculation=spec),
        Workload(read_context_tokens=4096, speculation=dataclasses.replace(spec, draft_tokens=1)),
    ]


def test_kept_decode_compute_is_what_a_fresh_record_gives() -> None:
    for machine in MACHINES:
        seen = get_hardware(machine).hardware
        for ref in (*MODELS, "smollm2-1.7b-instruct-q4_k_m"):
            model = _model(ref)
            for workload in _decode_workloads():
                for linear in (None, "fp8"):
                    kept = decode_compute(seen, model, workload, linear_mode=linear)
                    fresh = decode_compute(_fresh(seen), model, workload, linear_mode=linear)
                    assert repr(kept) == repr(fresh), (machine, ref, workload, linear)
                kept = decode_compute(seen, model, workload, attention_mode="fp32")
                assert repr(kept) == repr(
                    decode_compute(_fresh(seen), model, workload, attention_mode="fp32")
                )


def test_the_workload_copy_is_replace() -> None:
    """Workload validates nothing at construction, so copying its fields is what replace builds."""
    assert not hasattr(Workload, "__post_init__")
    base = Workload(read_context_tokens=8000, kv_allocation=KVAllocation.PAGED)
    changes = {"alloc_context_tokens": 4096, "overhead_source": "x", "contexts_capped_from": (100_000, 8000)}
    copy = base._with(**changes)
    expected = dataclasses.replace(base, **changes)
    assert copy == expected and copy.overhead_source == "x" and type(copy) is Workload
    assert (
        repr(copy) == repr(expected) and base.alloc_context_tokens == 100_000 and base.overhead_source is None
    )


def test_resolve_gives_the_replaced_workload() -> None:
    hw = get_hardware("nvidia-rtx-3090").hardware
    for ref in MODELS:
        model = _model(ref)
        for declared in (
            DeclaredWorkload(Workload(), fit_contexts_to_model=True),
            DeclaredWorkload(Workload(), overhead_from_hardware=True),
        ):
            resolved = declared.resolve(hw, model)
            assert resolve_scenario(declared, hardware=hw, model=model).workload == resolved
            # a resolved record is taken as it stands: resolving it again changes nothing
            assert resolve_scenario(resolved, hardware=hw, model=model).workload == resolved


_FIELDS = (
    "sweep_bytes",
    "reread_bytes",
    "write_bytes",
    "linear_flops",
    "attention_flops",
    "memory_time",
    "linear_time",
    "attention_time",
    "traffic_bytes",
    "compute_time",
    "time",
    "tokens",
)


def _floats(ev: object) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name in _FIELDS:
        value = getattr(ev, name)
        out[name] = None if value is None else float(value)
    for name in ("batch", "prompt", "chunk", "chunks"):
        out[name] = int(getattr(ev, name))
    return out


@pytest.mark.parametrize("ref", MODELS)
def test_the_one_shot_point_is_the_one_setting_evaluation(ref: str) -> None:
    model = _model(ref)
    shape = model.prefill
    assert shape is not None
    for machine in MACHINES:
        hw = get_hardware(machine).hardware
        rates = mode_rates(hw, shape)
        for traffic in ExpertTraffic:
            for batch, prompt in ((1, 1), (1, 8192), (3, 1000), (64, 131_072)):
                args = (model, shape, rates, hw.bandwidth_bytes_per_s, traffic)
                point = _floats(evaluate_one_shot(*args, batch, prompt))
                assert point == _floats(evaluate_settings(*args, batch, prompt, prompt)), (machine, batch)
                assert point == _floats(evaluate_settings(*args, batch, prompt, None))
                assert point["chunks"] == 1 and point["reread_bytes"] == 0.0


def test_a_point_without_work_for_a_missing_rate_charges_no_time() -> None:
    """No linear parameters and no attention terms on a row without rates: compute is available and
    each path takes 0 s (the zeros the array evaluation fills)."""
    model = dataclasses.replace(_model("smollm2-1.7b-instruct"), prefill=PrefillShape(0.0))
    shape = model.prefill
    assert shape is not None
    bare = Hardware("bare", "Bare", 1e11, 1e12)
    rates = mode_rates(bare, shape)
    assert rates.available and rates.linear_flop_per_s is None and rates.attention_flop_per_s is None
    args = (model, shape, rates, bare.bandwidth_bytes_per_s, ExpertTraffic.EXPECTED, 2, 512)
    point = evaluate_one_shot(*args)
    assert point.linear_time == 0.0 and point.attention_time == 0.0 and point.time == point.memory_time
    assert _floats(point) == _floats(evaluate_settings(*args, None))


@pytest.mark.parametrize("ref", MODELS)
def test_one_count_on_floats_is_the_distinct_experts_formula(ref: str) -> None:
    from servebound.core.experts import distinct_experts

    weights = _model(ref).weights
    for mode in ExpertTraffic:
        for n in (1.0, 2.0, 3.5, 64.0, 8192.0, 1e6, 3.7e9):
            got = weights.batch(n, mode)
            if weights.experts is None:
                assert got == weights.always_on_bytes
                continue
            touched = distinct_experts(n, weights.experts.routed, weights.experts.per_token, mode)
            assert got == weights.always_on_bytes + weights.expert_bytes * touched, (mode, n)
            assert type(got) is float


def test_one_count_where_every_expert_is_chosen() -> None:
    from servebound.core.model import Experts, Weights

    weights = Weights(embedding_bytes=0.0, always_on_bytes=10.0, expert_bytes=2.0, experts=Experts(4, 4))
    assert weights.batch(3.0) == 18.0 == weights.batch(3.0, ExpertTraffic.MINIMUM)


def test_a_record_keeps_at_most_lookups_kept_answers() -> None:
    from servebound.core import hardware as hardware_module

    record = _fresh(get_hardware("nvidia-b200").hardware)
    model = _model("smollm2-1.7b-instruct")
    limit = hardware_module.LOOKUPS_KEPT
    for context in range(1, limit + 2):
        decode_compute(record, model, Workload(read_context_tokens=context))
        assert len(record.lookups) <= limit
    assert len(record.lookups) < 10  # started over at the limit: only what the last call looked up
    again = decode_compute(record, model, Workload(read_context_tokens=7))
    assert repr(again) == repr(decode_compute(_fresh(record), model, Workload(read_context_tokens=7)))
    assert record.looked_up("x", lambda: 1) == 1 and record.looked_up("x", lambda: 2) == 1
