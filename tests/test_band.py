"""The expected band: percentiles of published measured / ceiling times a ceiling, from the runs of the
same engine, hardware class and phase; null under 5 runs; calibrated by leaving each run out."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from servebound.core.band import BAND_MIN_RUNS, expected_band, leave_one_out_inside, quantile
from servebound.errors import InputError
from servebound.runs.band import band_calibration, band_group, check_engine

ROOT = Path(__file__).resolve().parents[1]
BAND_MD = (ROOT / "docs" / "band.md").read_text(encoding="utf-8")


def _servebound(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SERVEBOUND_CACHE_DIR": "off"}
    return subprocess.run(
        [sys.executable, "-m", "servebound", *args], capture_output=True, text=True, env=env, check=False
    )


def test_decode_band_rtx_4090_llama_2_7b_q4_0() -> None:
    done = _servebound(
        "decode",
        "--hardware",
        "nvidia-rtx-4090",
        "--model",
        "llama-2-7b-q4_0",
        "--engine",
        "llama.cpp",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    band = out["expected"]
    assert band["runs"] >= BAND_MIN_RUNS and len(band["run_ids"]) == band["runs"]
    assert band["p10_tok_s"] <= band["p50_tok_s"] <= band["p90_tok_s"] <= out["single_session_tok_s"]
    assert (band["engine"], band["hardware_class"], band["phase"], band["reading"]) == (
        "llama.cpp",
        "consumer GPU",
        "decode",
        "estimate",
    )
    text = _servebound(
        "decode", "--hardware", "nvidia-rtx-4090", "--model", "llama-2-7b-q4_0", "--engine", "llama.cpp"
    )
    assert "an estimate" in text.stdout and "not a bound" in text.stdout


def test_decode_band_vllm_h100_sxm_qwen3_8b() -> None:
    """vLLM's one-request runs on single datacenter GPUs make a band; on a consumer GPU vLLM has none."""
    done = _servebound(
        "decode", "--hardware", "nvidia-h100-sxm", "--model", "qwen3-8b", "--engine", "vllm", "--json"
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    band = out["expected"]
    assert band["runs"] >= BAND_MIN_RUNS and len(band["run_ids"]) == band["runs"]
    assert band["p10_tok_s"] <= band["p50_tok_s"] <= band["p90_tok_s"] <= out["single_session_tok_s"]
    assert (band["engine"], band["hardware_class"], band["phase"]) == ("vllm", "datacenter GPU", "decode")
    assert "gpustack-vllm-h100-sxm-qwen3-8b-bf16-c1" in band["run_ids"]
    consumer = _servebound(
        "decode", "--hardware", "nvidia-rtx-4090", "--model", "qwen3-8b", "--engine", "vllm", "--json"
    )
    assert json.loads(consumer.stdout)["expected"] is None


def test_prefill_band_and_no_band() -> None:
    done = _servebound(
        "prefill",
        "--hardware",
        "nvidia-rtx-3090",
        "--model",
        "llama-2-7b-q4_0",
        "--prompt",
        "512",
        "--engine",
        "llama.cpp",
        "--json",
    )
    out = json.loads(done.stdout)
    assert out["expected"]["phase"] == "prefill" and out["expected"]["p90_tok_s"] <= out["tok_s"]
    for engine in ([], ["--engine", "trt-llm"]):
        plain = _servebound(
            "decode", "--hardware", "nvidia-rtx-4090", "--model", "llama-2-7b-q4_0", *engine, "--json"
        )
        assert json.loads(plain.stdout)["expected"] is None
    bad = _servebound(
        "decode", "--hardware", "nvidia-rtx-4090", "--model", "llama-2-7b-q4_0", "--engine", "x"
    )
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


def test_band_needs_five_runs_and_a_ceiling() -> None:
    kwargs = dict(engine="e", hardware_class="c", phase="decode", run_ids=(), runs_url="/validation")
    assert expected_band(100.0, [0.5] * 4, **kwargs) is None  # type: ignore[arg-type]
    assert expected_band(float("inf"), [0.5] * 5, **kwargs) is None  # type: ignore[arg-type]
    band = expected_band(100.0, [0.2, 0.4, 0.6, 0.8, 1.0], **kwargs)  # type: ignore[arg-type]
    assert band is not None and (band.p10_tok_s, band.p50_tok_s, band.p90_tok_s) == pytest.approx(
        (28, 60, 92)
    )


def test_leave_one_out_by_hand() -> None:
    # Six runs: each left out faces five others; 0.1 and 0.9 fall outside their others' p10-p90.
    values = [0.1, 0.3, 0.4, 0.5, 0.6, 0.9]
    assert leave_one_out_inside(values) == (4, 6)
    assert leave_one_out_inside(values[:5]) == (0, 0)


def test_docs_quote_the_measured_calibration() -> None:
    spec = importlib.util.spec_from_file_location("docs_band", ROOT / "scripts" / "docs_band.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "<!-- band-calibration -->" in BAND_MD
    assert module.render(BAND_MD) == BAND_MD, "run `python scripts/docs_band.py` and commit docs/band.md"
    calibration = band_calibration()
    assert calibration.share is not None and 0 < calibration.inside <= calibration.evaluated
