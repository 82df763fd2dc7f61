"""`servebound prefill` end to end on the derivation's Laguna S 2.1 example files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli as run
from tests.conftest import run_json

ROOT = Path(__file__).resolve().parents[1]
HW = str(ROOT / "examples" / "dgx-spark.toml")
MODEL = str(ROOT / "examples" / "laguna-s-2.1-nvfp4.toml")


def test_json_has_the_contract_fields(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "prefill", "-H", HW, "-m", MODEL, "--prompt", "8192", "--range", "--json")
    for field in (
        "prompt_tokens",
        "batch",
        "chunk",
        "memory_tok_s",
        "compute_tok_s",
        "tok_s",
        "time_s",
        "bound_by",
        "bytes_per_token",
        "flops_per_token",
        "crossover_tokens",
        "ttft_ok",
        "range",
        "assumptions",
    ):
        assert field in data, field
    assert set(data["range"]) >= {"lo_tok_s", "lo_prompt_tokens", "hi_tok_s", "hi_prompt_tokens"}
    assert data["chunk"] == 8192 and data["batch"] == 1 and data["chunk_mode"] == "one_shot"
    assert data["tok_s"] == pytest.approx(min(data["memory_tok_s"], data["compute_tok_s"]))
    assert data["time_s"] == pytest.approx(8192 / data["tok_s"])
    # S* with F_linear = 500 TFLOP/s (fp4): the derivation's "about 8,300 tokens per sweep"
    assert 8000 < data["crossover_tokens"] < 8600
    a = data["assumptions"]
    assert a["linear_mode"] == "fp4" and a["attention_mode"] == "bf16" and a["workspace_gb"] == 0
    assert a["linear_tflops"] == 500 and a["attention_tflops"] == 125


def test_chunked_is_a_policy_ceiling_and_never_higher(capsys: pytest.CaptureFixture[str]) -> None:
    _, one_shot, _ = run(capsys, "prefill", "-H", HW, "-m", MODEL, "--prompt", "8192", "--json")
    _, chunked, _ = run(
        capsys, "prefill", "-H", HW, "-m", MODEL, "--prompt", "8192", "--chunk", "512", "--json"
    )
    a, b = json.loads(one_shot), json.loads(chunked)
    assert b["chunk_mode"] == "policy" and b["chunks"] == 16
    assert b["tok_s"] <= a["tok_s"]
    assert b["flops_per_token"] == pytest.approx(
        a["flops_per_token"]
    )  # chunking never changes the arithmetic


def test_batch_max_under_budget(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys,
        "prefill",
        "-H",
        HW,
        "-m",
        MODEL,
        "--prompt",
        "8192",
        "--batch",
        "max",
        "--ttft-budget",
        "2",
        "--json",
    )
    data = json.loads(out)
    assert status == 0 and data["ttft_ok"] is True and data["time_s"] <= 2
    assert data["batch"] >= 1 and data["batch_mode"] == "max"
    _, tight, _ = run(
        capsys, "prefill", "-H", HW, "-m", MODEL, "--prompt", "8192", "--ttft-budget", "0.001", "--json"
    )
    assert json.loads(tight)["ttft_ok"] is False  # a budget no setting meets is a verdict, not an error
    # Issue 36: the unrestricted answer beside the restricted one, in JSON and on the terminal.
    free = data["unrestricted"]
    _, plain, _ = run(
        capsys, "prefill", "-H", HW, "-m", MODEL, "--prompt", "8192", "--batch", "max", "--json"
    )
    unbudgeted = json.loads(plain)
    assert unbudgeted["unrestricted"] is None
    assert (free["batch"], free["tok_s"]) == (unbudgeted["batch"], unbudgeted["tok_s"])
    assert free["verdict"] == "fits" and free["batch"] >= data["batch"]
    _, text, _ = run(
        capsys, "prefill", "-H", HW, "-m", MODEL, "--prompt", "8192", "--batch", "max", "--ttft-budget", "2"
    )
    assert "without the budget" in text and f"unrestricted: batch {free['batch']:,}" in text


def test_human_report(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "prefill", "-H", HW, "-m", MODEL, "--prompt", "4096", "--range")
    assert status == 0
    for text in (
        "memory ceiling",
        "compute ceiling",
        "combined ceiling",
        "modeled prefill time",
        "range over L",
    ):
        assert text in out


def test_missing_rate_is_charged_at_a_fallback_and_said(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys, "prefill", "-H", HW, "-m", MODEL, "--prompt", "4096", "--linear-mode", "fp8", "--json"
    )
    data = json.loads(out)
    assert status == 0 and data["compute_tok_s"] is not None
    assert data["assumptions"]["missing_modes"] == ["fp8"]
    assert data["linear_mode_charged"] != "fp8" and data["linear_mode_charged_why"]
    assert data["compute_note"] and "charged at" in data["compute_note"]
    status, out, _ = run(capsys, "prefill", "-H", HW, "-m", MODEL, "--prompt", "4096", "--linear-mode", "fp8")
    assert status == 0 and "charged at" in out


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--prompt", "200000"], "prompt_tokens"),
        (["--prompt", "0"], "prompt"),
        (["--prompt", "100", "--chunk", "0"], "chunk"),
        (["--prompt", "100", "--linear-mode", "fp9"], "linear_mode"),
        (["--prompt", "100", "--attention-mode", "tf33"], "attention_mode"),
        (["--prompt", "100", "--batch", "many"], "batch"),
        (["--prompt", "100", "--ttft-budget", "-1"], "ttft_budget"),
        ([], "prompt"),
    ],
)
def test_bad_input(capsys: pytest.CaptureFixture[str], args: list[str], field: str) -> None:
    status, _, err = run(capsys, "prefill", "-H", HW, "-m", MODEL, *args)
    assert status == 2 and field in err and len(err.strip().splitlines()) == 1


def test_model_without_prefill_fields(capsys: pytest.CaptureFixture[str]) -> None:
    model = str(ROOT / "examples" / "qwen3.6-35b-a3b-nvfp4.toml")
    status, _, err = run(capsys, "prefill", "-H", HW, "-m", model, "--prompt", "100")
    assert status == 2 and "prefill" in err
