"""Issue 19's command-line reproducers: absurd values refused with one line naming the field, conflicts
answered with an error instead of resolved silently, and read_context = 0 allowed as --range's start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servebound.errors import InputError
from servebound.runs.result_files import read_result_file
from tests.conftest import one_line_error
from tests.conftest import run_cli as run
from tests.test_check import llama_bench_record, write_json

ROOT = Path(__file__).resolve().parents[1]
HW = str(ROOT / "examples" / "dgx-spark.toml")
MODEL = str(ROOT / "examples" / "qwen3.6-35b-a3b-nvfp4.toml")


# Absurd values ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("--amortization-years", "amortization_years: must be >= 0.01 (got 1e-300)"),
        ("--utilization", "utilization: must be >= 0.001 (got 1e-300)"),
    ],
)
def test_cost_refuses_a_vanishing_amortization_or_utilization(
    capsys: pytest.CaptureFixture[str], flag: str, message: str
) -> None:
    """1e-300 years used to price an hour at 1.8e299 USD."""
    err = one_line_error(
        capsys, "cost", "-H", "nvidia-h100-sxm", "-m", "llama-3.1-8b", "--pricing", "owned", flag, "1e-300"
    )
    assert message in err


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--users", "1e12", "users: 1,000,000,000,000 is beyond any real setting; at most 1,000,000,000"),
        (
            "--requests-per-s",
            "1e300",
            "requests_per_s: 1e+300 is beyond any real setting; at most 10,000,000",
        ),
    ],
)
def test_plan_refuses_traffic_beyond_any_service(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    """The answer was a fleet counted in 300-digit numbers of systems."""
    err = one_line_error(
        capsys,
        "plan",
        "-H",
        "nvidia-h100-sxm",
        "-m",
        "llama-3.1-8b",
        "--prompt",
        "1000",
        "--output-tokens",
        "100",
        flag,
        value,
    )
    assert message in err


def test_llama_bench_unknown_cache_type_is_refused(tmp_path: Path) -> None:
    path = write_json(tmp_path / "bench.json", [llama_bench_record(n_prompt=0, n_gen=128, type_k="q9_9")])
    with pytest.raises(
        InputError, match=r"llama-bench record 0\.type_k: 'q9_9' is not a llama\.cpp cache type"
    ):
        read_result_file(path)
    # A real llama.cpp type servebound has no format for is still read, with its note.
    path = write_json(
        tmp_path / "ok.json", [llama_bench_record(n_prompt=0, n_gen=128, type_k="q5_1", type_v="q5_1")]
    )
    (run_,) = read_result_file(path)
    assert run_.kv_precision is None


# Conflicts ----------------------------------------------------------------------------------------------


def test_drain_refuses_numbers_beside_a_hardware_row(capsys: pytest.CaptureFixture[str]) -> None:
    """The numbers were ignored for the row's own."""
    err = one_line_error(
        capsys, "economics", "drain", "-H", "nvidia-b200", "--capacity-gb", "5", "--bandwidth-gb-per-s", "10"
    )
    assert "--capacity-gb and --bandwidth-gb-per-s conflict with --hardware 'nvidia-b200'" in err
    data = json.loads(
        run(capsys, "economics", "drain", "--capacity-gb", "5", "--bandwidth-gb-per-s", "10", "--json")[1]
    )
    assert data["quantities"][0]["value"] == pytest.approx(0.5)


def test_price_ratio_below_one_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """It printed "1 - 1/0.2 = 0%"."""
    err = one_line_error(capsys, "economics", "price-ratio", "--output-usd", "1", "--input-usd", "5")
    assert "output_usd: the output price 1 is below the input price 5" in err


def test_decode_layout_with_range_is_an_error_not_a_dropped_range(capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_error(
        capsys, "decode", "-H", "8x-nvidia-b200", "-m", "llama-3.1-8b", "--layout", "tp=8", "--range"
    )
    assert "range: --range is not computed for a parallel layout" in err


# read_context = 0 -------------------------------------------------------------------------------------


def test_read_context_zero_is_allowed_as_the_range_starts_there(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "decode", "-H", HW, "-m", MODEL, "--read-context", "0", "--json")
    assert status == 0, err
    data = json.loads(out)
    assert data["kv_read_bytes"] == 0
    status, out, err = run(capsys, "decode", "-H", HW, "-m", MODEL, "--range", "--json")
    assert status == 0, err
    rng = json.loads(out)["context_range"]
    assert rng["min_read_context_tokens"] == 0
    assert rng["single_session"]["hi_read_context_tokens"] == 0
    assert rng["single_session"]["hi_tok_s"] == pytest.approx(data["single_session_tok_s"])
    err = one_line_error(capsys, "decode", "-H", HW, "-m", MODEL, "--read-context", "-1")
    assert "read_context: must be >= 0 (got -1)" in err
