"""`servebound check` and `servebound validate` through the real entry point, on result files the tests write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli as run
from tests.test_check import llama_bench_record, vllm_result, write_json


def test_check_llama_bench_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    tg = llama_bench_record(n_prompt=0, n_gen=128, avg_ts=118.881588)
    path = write_json(tmp_path / "bench.json", [llama_bench_record(), tg])
    status, out, _ = run(
        capsys, "check", "-H", "nvidia-rtx-4080", "-m", "qwen2.5-7b-q4_k_m", "--file", str(path), "--json"
    )
    checks = json.loads(out)["checks"]
    assert status == 0 and len(checks) == 2
    decode = next(c for c in checks if c["phase"] == "decode")
    assert decode["measured_tok_s"] == pytest.approx(118.881588)
    assert decode["efficiency"] == pytest.approx(decode["measured_tok_s"] / decode["ceiling_tok_s"])
    assert 0 < decode["efficiency"] <= 1 and decode["reproduce_command"].startswith("llama-bench")


def test_check_vllm_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_json(tmp_path / "vllm.json", vllm_result())
    status, out, _ = run(
        capsys, "check", "-H", "nvidia-h100-sxm", "-m", "llama-3.1-8b-instruct", "--file", str(path), "--json"
    )
    assert status == 0 and {c["metric"] for c in json.loads(out)["checks"]} >= {
        "per_session_tok_s",
        "aggregate_tok_s",
    }


@pytest.mark.parametrize(
    ("measured", "status", "needle"),
    [
        ("120", 0, "efficiency"),  # the plain flags, under the ceiling
        ("900", 3, "ABOVE THE CEILING"),  # above it: loud, and its own exit status
    ],
)
def test_check_plain_flags(
    capsys: pytest.CaptureFixture[str], measured: str, status: int, needle: str
) -> None:
    args = ["check", "-H", "nvidia-rtx-4090", "-m", "llama-3.1-8b-q4_k_m", "--metric", "per_session_tok_s"]
    got, out, _ = run(capsys, *args, "--measured", measured, "--read-context", "512")
    assert got == status and needle in out


def test_check_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = run(
        capsys, "check", "-H", "nvidia-rtx-4090", "-m", "llama-3.1-8b-q4_k_m", "--measured", "5"
    )
    assert status == 2 and "measured" in err
    bad = write_json(tmp_path / "x.json", {"hello": 1})
    status, _, err = run(
        capsys, "check", "-H", "nvidia-rtx-4090", "-m", "llama-3.1-8b-q4_k_m", "--file", str(bad)
    )
    assert status == 2 and len(err.strip().splitlines()) == 1


def test_validate(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "validate", "--json")
    data = json.loads(out)
    assert status == 0 and data["total"] >= 20
    assert data["at_or_below"] <= data["total"] and 0 < data["at_or_below_rate"] <= 1
    above = [r for r in data["runs"] if r["efficiency"] > 1]
    assert all(r.get("explanation") for r in above)
