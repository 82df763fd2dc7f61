"""nearest_fit: where no session fits, the nearest settings that do, each answered by decode there."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servebound.api import load_hardware
from servebound.core.decode import DecodeResult, Verdict, decode
from servebound.core.nearest_records import NearestFit
from servebound.inputs.resolve import resolve_model
from servebound.inputs.scenario import resolve_scenario
from servebound.inputs.workload import WorkloadInputs
from servebound.questions.nearest import applied
from servebound.views.notes import decode_notes


def answer(hardware: str, model: str, **given_inputs: object) -> DecodeResult:
    hw, adapter = load_hardware(hardware), resolve_model(model)
    scenario = resolve_scenario(WorkloadInputs(**given_inputs), hardware=hw, model=adapter)  # type: ignore[arg-type]
    return decode(scenario.hardware, scenario.model, scenario.workload)


def check_applied(result: DecodeResult, fit: NearestFit) -> None:
    """The suggestion, applied, fits and gives the speeds it announced."""
    there = decode(*applied(result, fit))
    assert there.fits
    assert there.single_session_tok_s == pytest.approx(fit.single_session_tok_s)
    assert there.aggregate_tok_s == (
        None if fit.aggregate_tok_s is None else pytest.approx(fit.aggregate_tok_s)
    )
    assert there.batch_star == fit.batch_star
    assert (there.verdict is Verdict.FLOOR_FIT) == fit.floor_fit


def test_gemma_27b_q4_on_a_24gb_card_gives_the_longest_reservation_and_its_speed() -> None:
    r = answer("nvidia-rtx-4090", "gemma-3-27b-it-q4_k_m")
    assert r.verdict is Verdict.NO_SESSION_FIT
    (fit,) = r.nearest_fit
    assert (fit.change, fit.value) == ("alloc_context", 94_978)  # the gate's own remedy
    assert fit.batch_star == 1 and fit.floor_fit and fit.single_session_tok_s > 20
    check_applied(r, fit)
    # one more token does not fit: the value is the largest
    over = answer("nvidia-rtx-4090", "gemma-3-27b-it-q4_k_m", alloc_context=94_979)
    assert not over.fits
    said = [n.terminal for n in decode_notes(r)]
    assert any("94,978 reserved tokens" in s and "tok/s for one session" in s for s in said)


@pytest.mark.parametrize(
    ("hardware", "model"),
    [
        ("2x-nvidia-rtx-3090", "llama-3.3-70b-instruct-q4_k_m"),
        ("nvidia-h100-sxm", "llama-3.3-70b-instruct-fp8"),
    ],
)
def test_llama_70b_pairs_get_a_reservation_that_fits(hardware: str, model: str) -> None:
    r = answer(hardware, model)
    assert r.verdict is Verdict.NO_SESSION_FIT
    fit = r.nearest_fit[0]
    assert fit.change == "alloc_context" and fit.value == r.remedies.max_alloc_context_tokens
    check_applied(r, fit)


def test_gpt_oss_120b_on_a_4090_offers_experts_in_host_ram() -> None:
    r = answer("nvidia-rtx-4090", "gpt-oss-120b")
    assert r.verdict is Verdict.NO_RESIDENT_FIT
    fit = next(f for f in r.nearest_fit if f.change == "cpu_moe")
    assert fit.host == "desktop-ddr5-6000-2ch"  # the catalog's host row for a consumer GPU
    # the same answer as asking with the flags
    asked = answer("nvidia-rtx-4090", "gpt-oss-120b", cpu_moe=True, host="desktop-ddr5-6000-2ch")
    assert fit.single_session_tok_s == pytest.approx(asked.single_session_tok_s)
    assert round(fit.single_session_tok_s or 0, 1) == 41.5
    check_applied(r, fit)


def test_dense_weights_too_large_get_a_lighter_format_and_layers_on_the_device() -> None:
    r = answer("nvidia-h100-sxm", "llama-3.3-70b-instruct")
    changes = [f.change for f in r.nearest_fit]
    assert changes[0] == "weight_format" and "gpu_layers" in changes
    layers = next(f for f in r.nearest_fit if f.change == "gpu_layers")
    assert isinstance(layers.value, int)
    # the most layers that fit: one more does not
    more = answer("nvidia-h100-sxm", "llama-3.3-70b-instruct", gpu_layers=layers.value + 1, host=layers.host)
    assert not more.fits
    for fit in r.nearest_fit:
        check_applied(r, fit)
    # a floor miss states the speed first, then the floor
    said = [n.terminal for n in decode_notes(r)]
    assert any("tok/s per session, below the 20 tok/s floor" in s for s in said)


def test_a_fitting_answer_has_no_suggestion_and_the_json_carries_them() -> None:
    assert answer("nvidia-h100-sxm", "qwen3-8b").nearest_fit == ()
    data = json.loads(answer("nvidia-rtx-4090", "gpt-oss-120b").to_json())
    first = data["nearest_fit"][0]
    assert {"change", "value", "single_session_tok_s", "aggregate_tok_s", "batch_star"} <= set(first)


PAIRS = [
    ("nvidia-rtx-4090", "gemma-3-27b-it-q4_k_m"),
    ("nvidia-rtx-4090", "gpt-oss-120b"),
    ("nvidia-rtx-4090", "llama-3.3-70b-instruct-q4_k_m"),
    ("nvidia-rtx-3090", "qwen3-32b"),
    ("nvidia-h100-sxm", "llama-3.3-70b-instruct"),
    ("2x-nvidia-rtx-3090", "llama-3.3-70b-instruct-q4_k_m"),
]


@settings(max_examples=25, deadline=None)
@given(
    pair=st.sampled_from(PAIRS),
    alloc=st.integers(min_value=40_000, max_value=400_000),
    overhead=st.floats(min_value=0.5, max_value=6.0),
)
def test_every_suggestion_applied_fits_and_gives_its_speed(
    pair: tuple[str, str], alloc: int, overhead: float
) -> None:
    r = answer(*pair, alloc_context=alloc, overhead_gb=overhead)
    hardware, asked_model = pair
    for fit in r.nearest_fit:
        check_applied(r, fit)
        model = asked_model
        # asked again as a person would, through the declared inputs (not through ``applied``)
        asked: dict[str, object] = {"alloc_context": alloc, "overhead_gb": overhead}
        if fit.change == "alloc_context":
            assert isinstance(fit.value, int)
            asked.update(alloc_context=fit.value, read_context=min(r.workload.read_context_tokens, fit.value))
            over = answer(hardware, model, **{**asked, "alloc_context": fit.value + 1})
            assert not over.fits  # the longest reservation that fits
        elif fit.change == "weight_format":
            model = str(fit.value)
        elif fit.change == "cpu_moe":
            asked.update(cpu_moe=True, host=fit.host)
        else:
            asked.update(gpu_layers=fit.value, host=fit.host)
        there = answer(hardware, model, **asked)
        assert there.fits and (there.verdict is Verdict.FLOOR_FIT) == fit.floor_fit
        assert there.single_session_tok_s == pytest.approx(fit.single_session_tok_s)
        assert there.batch_star == fit.batch_star


def test_a_floor_miss_heads_with_its_speed(capsys: pytest.CaptureFixture[str]) -> None:
    """A 10 tok/s Mac is an answer: the headline gives the speed first, then the floor."""
    from tests.conftest import run_cli

    status, out, _ = run_cli(
        capsys, "decode", "-H", "apple-m4-max-128gb", "-m", "llama-3.3-70b-instruct-q4_k_m"
    )
    single = answer("apple-m4-max-128gb", "llama-3.3-70b-instruct-q4_k_m").single_session_tok_s
    assert status == 0 and single is not None
    assert f"fits, at {single:,.1f} tok/s per session, below the 20 tok/s floor" in out.splitlines()[0]
    assert "no batch satisfies" not in out
