"""Issue 22: a path whose mode has no rate on the row is charged the fastest rate the row publishes
(or, for a format the device has no hardware for, the mode engines unpack it to), never dropped; and
S* on the pair page is where the drawn rooflines cross."""

from __future__ import annotations

import math

import pytest

from servebound.catalog.engines import device_family
from servebound.catalog.hardware import get_hardware, list_hardware
from servebound.catalog.models import get_model, profile_ids
from servebound.core.hardware import Hardware
from servebound.core.prefill import prefill, prefill_curve
from servebound.core.rates import charge_mode, fastest_mode, mode_rates
from servebound.core.workload import Workload


def _one_model_per_mode_set() -> list[str]:
    """One catalog profile per (linear mode, engine mode, attention mode): what the rate lookup sees."""
    seen: dict[tuple[str, str | None, str], str] = {}
    for pid in profile_ids():
        shape = get_model(pid).adapter.prefill
        if shape is None:
            continue
        seen.setdefault((shape.linear_mode, shape.linear_mode_if_published, shape.attention_mode), pid)
    return sorted(seen.values())


def _bounded_by_published(hw: Hardware) -> bool:
    """The row publishes a rate, and (where its family is known) the rate of its silicon's fastest mode."""
    family = device_family(hw.id)
    return bool(hw.compute_flop_per_s) and (
        family is None or hw.compute_rate(family.fastest_mode) is not None
    )


def test_no_catalog_pair_has_a_compute_free_prefill_where_its_row_publishes_a_rate() -> None:
    models = [get_model(pid).adapter for pid in _one_model_per_mode_set()]
    assert len(models) >= 5
    checked = 0
    for row in list_hardware():
        hw = row.hardware
        for model in models:
            r = prefill(hw, model, 512, workload=Workload(alloc_context_tokens=512, read_context_tokens=512))
            if _bounded_by_published(hw):
                assert r.compute_time_s is not None, (hw.id, model.id)
                fastest = fastest_mode(hw)
                assert fastest is not None
                # Charging any path at the fastest published rate is the loosest the time can be.
                true_floor = (r.linear_flops + r.attention_flops) / fastest[1]
                assert r.compute_time_s >= true_floor * (1 - 1e-12), (hw.id, model.id)
                if r.assumptions.missing_modes:
                    assert r.compute_note, (hw.id, model.id)
            else:
                assert r.compute_time_s is None and r.compute_note and "memory-only" in r.compute_note
                assert r.linear_mode_charged_why or r.attention_mode_charged_why
            checked += 1
    assert checked > 500


def test_rows_that_omit_their_silicons_fastest_mode_stay_memory_only_and_say_why() -> None:
    """An M5's Neural Accelerators have no published rate: its FP32 rate bounds nothing (a measured
    llama.cpp pp512 beats it), so prefill there is memory-only, with the reason."""
    hw = get_hardware("apple-m5-max-128gb").hardware
    charge = charge_mode(hw, "fp16")
    assert charge.mode is None and "apple-m5" in charge.reason and "fp16" in charge.reason
    assert charge_mode(get_hardware("apple-m4-max-128gb").hardware, "fp16").mode == "fp32"


def test_every_catalog_pair_has_a_rate_for_every_path_where_its_row_publishes_one() -> None:
    """The rate lookup prefill and decode share, over every (hardware, profile) pair of the catalog."""
    shapes = [(pid, get_model(pid).adapter.prefill) for pid in profile_ids()]
    pairs = 0
    for row in list_hardware():
        hw = row.hardware
        for pid, shape in shapes:
            if shape is None:
                continue
            rates = mode_rates(hw, shape)
            assert rates.available == _bounded_by_published(hw), (hw.id, pid)
            pairs += 1
    assert pairs > 50_000


def test_fallback_charges_the_fastest_rate_and_says_why() -> None:
    row = Hardware("x", "X", 1e11, 1e12, {"fp32": 20e12, "int8": 80e12})
    charge = charge_mode(row, "bf16")
    assert charge.mode == "int8" and charge.flop_per_s == 80e12 and "fastest" in charge.reason
    assert charge_mode(row, "fp32").reason == ""
    empty = charge_mode(Hardware("y", "Y", 1e11, 1e12), "bf16")
    assert empty.mode is None and empty.flop_per_s is None and "memory only" in empty.reason


def test_nvfp4_on_an_rtx_4090_is_charged_at_the_mode_engines_unpack_to() -> None:
    """Ada has no FP4 matrix hardware: NVFP4 weights run weight-only through 16-bit math (Marlin)."""
    hw = get_hardware("nvidia-rtx-4090").hardware
    model = get_model("phi-4-nvfp4").adapter
    r = prefill(hw, model, 8192)
    assert r.assumptions.linear_mode == "fp4" and r.linear_mode_charged == "bf16"
    assert r.assumptions.linear_flop_per_s == hw.compute_rate("bf16")
    why = r.linear_mode_charged_why or ""
    assert "ada has no fp4" in why and "https://" in why
    assert r.compute_note is not None and "charged at BF16" in r.compute_note
    # FP8 on Ampere likewise; an fp8 rate the row publishes is its own (a 4090 has FP8 hardware).
    assert charge_mode(get_hardware("nvidia-rtx-3090").hardware, "fp8").mode == "bf16"
    assert charge_mode(hw, "fp8").reason == ""


def test_apple_prefill_is_charged_at_the_only_rate_it_publishes() -> None:
    """A 70B Q4_K_M on an M4 Max: the int8 and bf16 paths at the row's FP32 rate, not memory-only."""
    hw = get_hardware("apple-m4-max-128gb").hardware
    r = prefill(hw, get_model("llama-3.3-70b-instruct-q4_k_m").adapter, 8192)
    fp32 = hw.compute_rate("fp32")
    assert fp32 is not None and r.compute_time_s is not None
    assert r.compute_time_s == pytest.approx((r.linear_flops + r.attention_flops) / fp32, rel=1e-12)
    assert r.bound_by.value == "compute" and r.time_s > 30


def test_the_marked_crossover_is_where_the_drawn_curve_flips() -> None:
    """RTX 4090 x Qwen3-30B-A3B Q4_K_M: the linear-only S* (about 2,205) sits right of the flip; the
    attention-inclusive S* is the flip itself."""
    hw = get_hardware("nvidia-rtx-4090").hardware
    model = get_model("qwen3-30b-a3b-q4_k_m").adapter
    r = prefill(hw, model, 1024)
    star = r.crossover_with_attention_tokens
    assert star is not None and r.crossover_tokens is not None and star < r.crossover_tokens
    below, above = math.floor(star), math.ceil(star)
    curve = prefill_curve(hw, model, [below, above])
    assert bool(curve.bound_by_memory[0]) and not bool(curve.bound_by_memory[1])
