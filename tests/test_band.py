"""The expected band: a per-token time t = a t_ceiling + t_0 fitted on the published runs of the same
engine, hardware class, phase and regime, its spread from the residuals in log time; never above its
ceiling; null under 5 runs; calibrated by leaving each run out."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from servebound.core.band import (
    BAND_MIN_RUNS,
    conformal_level,
    expected_band,
    fit_time_model,
    leave_one_out,
    quantile,
)
from servebound.errors import InputError
from servebound.runs.band import check_engine
from servebound.runs.band_fit import band_calibration, band_group, band_model
from tests.conftest import process_json, servebound_process

ROOT = Path(__file__).resolve().parents[1]
BAND_MD = (ROOT / "docs" / "band.md").read_text(encoding="utf-8")


Q4_0 = "--hardware nvidia-rtx-4090 --model llama-2-7b-q4_0"  # llama.cpp's runs on consumer GPUs


def _json(command: str) -> dict[str, Any]:
    out: dict[str, Any] = process_json(*command.split())
    return out


def _decode_band(command: str) -> dict[str, Any]:
    """``decode``'s band: from at least 5 runs, named each, and at or below the one-session ceiling."""
    out = _json(f"decode {command}")
    band: dict[str, Any] = out["expected"]
    assert band["runs"] >= BAND_MIN_RUNS and len(band["run_ids"]) == band["runs"]
    assert band["p10_tok_s"] <= band["p50_tok_s"] <= band["p90_tok_s"] <= out["single_session_tok_s"]
    return band


def test_decode_band_rtx_4090_llama_2_7b_q4_0() -> None:
    band = _decode_band(f"{Q4_0} --engine llama.cpp")
    assert (band["engine"], band["hardware_class"], band["phase"], band["reading"]) == (
        "llama.cpp",
        "consumer GPU",
        "decode",
        "estimate",
    )
    text = servebound_process(*f"decode {Q4_0} --engine llama.cpp".split())
    assert "an estimate" in text.stdout and "not a bound" in text.stdout


def test_decode_band_vllm_h100_sxm_qwen3_8b() -> None:
    """vLLM's one-request runs on single datacenter GPUs make a band; on a consumer GPU vLLM has none."""
    band = _decode_band("--hardware nvidia-h100-sxm --model qwen3-8b --engine vllm")
    assert (band["engine"], band["hardware_class"], band["phase"]) == ("vllm", "datacenter GPU", "decode")
    assert "gpustack-vllm-h100-sxm-qwen3-8b-bf16-c1" in band["run_ids"]
    assert _json("decode --hardware nvidia-rtx-4090 --model qwen3-8b --engine vllm")["expected"] is None


def test_prefill_band_and_no_band() -> None:
    out = _json("prefill --hardware nvidia-rtx-3090 --model llama-2-7b-q4_0 --prompt 512 --engine llama.cpp")
    assert out["expected"]["phase"] == "prefill" and out["expected"]["p90_tok_s"] <= out["tok_s"]
    assert out["expected"]["scope"] == "prefill tok/s" and out["expected"]["ceiling_tok_s"] == out["tok_s"]
    plain = _json(f"decode {Q4_0}")
    # without --engine: the engine usually run on consumer GPUs for a GGUF file, said as assumed
    assert plain["expected"]["engine"] == "llama.cpp" and plain["expected_from"]["engine_assumed"] is True
    assert "usually run on consumer GPUs" in plain["expected_from"]["engine_why"]
    given = _json(f"decode {Q4_0} --engine llama.cpp")
    assert given["expected"] == plain["expected"] and given["expected_from"]["engine_assumed"] is False
    none = _json(f"decode {Q4_0} --engine trt-llm")
    # too few runs: no band, and the record says how many there are and how many a band needs
    assert none["expected"] is None
    assert none["expected_from"]["runs"] < none["expected_from"]["min_runs"] == BAND_MIN_RUNS
    text = servebound_process(*f"decode {Q4_0} --engine trt-llm".split()).stdout
    assert "fewer than the 5 a band needs, so no band" in " ".join(text.split())
    bad = servebound_process(*f"decode {Q4_0} --engine x".split())
    assert bad.returncode == 2 and "engine" in bad.stderr


def test_group_runs_are_at_or_below_their_ceilings() -> None:
    group = band_group("llama.cpp", "consumer GPU", "decode")
    assert len(group.efficiencies) >= BAND_MIN_RUNS and all(0 < e <= 1 for e in group.efficiencies)
    assert band_group("LLAMA.CPP", "consumer GPU", "decode") == group
    with pytest.raises(InputError):
        check_engine("llamacpp")


@given(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=40), st.sampled_from([0.1, 0.5, 0.9]))
@example([0.5], 0.9)
def test_quantile_is_numpys_linear(values: list[float], q: float) -> None:
    assert quantile(values, q) == pytest.approx(float(np.quantile(values, q)), rel=1e-12, abs=1e-15)


KWARGS: dict[str, Any] = dict(
    engine="e", hardware_class="c", phase="decode", run_ids=(), runs_url="/validation"
)
rates = st.floats(1.0, 5_000.0)
runs_st = st.lists(st.tuples(rates, st.floats(0.05, 1.0)), min_size=BAND_MIN_RUNS, max_size=30)
#: Six ceilings (tok/s), the fewest that leave-one-out evaluates.
CEILINGS = [40.0, 80.0, 120.0, 200.0, 300.0, 450.0]


def _ceilings_measured(runs: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """Drawn runs (ceiling, efficiency) as the fit takes them: the ceilings and the measured rates."""
    return [c for c, _ in runs], [c * e for c, e in runs]


def test_band_needs_five_runs_and_a_ceiling() -> None:
    ceilings, measured = [100.0, 200.0, 300.0, 400.0], [50.0, 90.0, 120.0, 150.0]
    assert fit_time_model(ceilings, measured) is None
    model = fit_time_model([*ceilings, 500.0], [*measured, 170.0])
    assert model is not None and model.runs == 5
    assert expected_band(float("inf"), model, **KWARGS) is None
    assert expected_band(100.0, None, **KWARGS) is None


def test_exact_time_model_is_recovered() -> None:
    """Runs that follow t = 1.25 / C + 2 ms exactly give back a = 1.25, t_0 = 2 ms and a zero-width band."""
    model = fit_time_model(CEILINGS, [1 / (1.25 / c + 0.002) for c in CEILINGS])
    assert model is not None
    assert (model.slope, model.fixed_s) == pytest.approx((1.25, 0.002), rel=1e-9)
    band = expected_band(250.0, model, **KWARGS)
    assert band is not None and band.p10_tok_s == pytest.approx(band.p90_tok_s, rel=1e-9)
    assert band.p50_tok_s == pytest.approx(1 / (1.25 / 250 + 0.002), rel=1e-9)
    assert band.label == "an estimate from 6 published runs of e on cs" and not band.clipped_at_ceiling


@given(runs_st)
def test_the_closed_form_is_numpys_least_squares(runs: list[tuple[float, float]]) -> None:
    ceilings, measured = _ceilings_measured(runs)
    x, t = 1 / np.asarray(ceilings), 1 / np.asarray(measured)
    (a, t0), *_ = np.linalg.lstsq(np.column_stack([x / t, 1 / t]), np.ones_like(t), rcond=None)
    model = fit_time_model(ceilings, measured)
    assert model is not None
    got = (model.slope, model.fixed_s)
    if a > 0 and t0 >= 0 and np.linalg.cond(np.column_stack([x / t, 1 / t])) < 1e6:
        assert got == pytest.approx((a, t0), rel=1e-6, abs=1e-12)
    assert got[0] >= 0 and got[1] >= 0


@given(runs_st, rates)
def test_no_band_is_ever_above_its_ceiling(runs: list[tuple[float, float]], ceiling: float) -> None:
    model = fit_time_model(*_ceilings_measured(runs))
    assert model is not None
    band = expected_band(ceiling, model, **KWARGS)
    assert band is not None
    assert 0 < band.p10_tok_s <= band.p50_tok_s <= band.p90_tok_s <= ceiling
    assert band.ceiling_tok_s == ceiling


def test_conformal_levels() -> None:
    assert conformal_level(0.9, 9) == pytest.approx(1.0)
    assert conformal_level(0.1, 9) == pytest.approx(0.0)
    assert conformal_level(0.9, 45) == pytest.approx(0.92)
    assert conformal_level(0.1, 45) == pytest.approx(0.08)
    assert conformal_level(0.5, 7) == 0.5


def test_leave_one_out_needs_six_runs() -> None:
    measured = [30.0, 55.0, 70.0, 110.0, 140.0, 180.0]
    assert leave_one_out(CEILINGS[:5], measured[:5]).evaluated == 0
    loo = leave_one_out(CEILINGS, measured)
    assert (
        loo.evaluated == 6 and 0 <= loo.inside <= 6 and loo.median_width is not None and loo.median_width >= 1
    )


@pytest.mark.parametrize("hardware_class", ["consumer GPU", "unified-memory SoC"])
def test_llama_cpp_decode_band_meets_its_goal(hardware_class: str) -> None:
    """Issue 37: at least 75 % of runs inside the band the others give, at a median p90/p10 of 1.6 at
    most, for llama.cpp on consumer GPUs and on unified-memory SoCs (Apple silicon and its peers)."""
    row = next(
        r
        for r in band_calibration().groups
        if (r.group.engine, r.group.hardware_class, r.group.name) == ("llama.cpp", hardware_class, "decode")
    )
    assert row.coverage is not None and row.coverage >= 0.75
    assert row.median_width is not None and row.median_width <= 1.6
    model = band_model("llama.cpp", hardware_class, "decode")
    assert model is not None and model.slope >= 1 and model.fixed_s > 0  # below the ceiling, a fixed cost


def test_offload_runs_are_their_own_regime() -> None:
    on_device = band_group("llama.cpp", "consumer GPU", "decode")
    offload = band_group("llama.cpp", "consumer GPU", "decode", "weights in host RAM")
    assert offload.run_ids and not set(offload.run_ids) & set(on_device.run_ids)
    assert band_model("llama.cpp", "consumer GPU", "decode", "weights in host RAM") is None  # too few


def test_docs_quote_the_measured_calibration() -> None:
    spec = importlib.util.spec_from_file_location("docs_band", ROOT / "scripts" / "docs_band.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "<!-- band-calibration -->" in BAND_MD
    assert module.render(BAND_MD) == BAND_MD, "run `python scripts/docs_band.py` and commit docs/band.md"
    calibration = band_calibration()
    assert calibration.share is not None and 0 < calibration.inside <= calibration.evaluated
    assert calibration.share >= 0.75
