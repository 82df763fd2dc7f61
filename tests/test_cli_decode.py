"""The decode command end to end: real files, the real entry point, exit codes and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli as run
from tests.conftest import run_json, servebound_process

ROOT = Path(__file__).resolve().parents[1]
HW = str(ROOT / "examples" / "dgx-spark.toml")
MODEL = str(ROOT / "examples" / "qwen3.6-35b-a3b-nvfp4.toml")


def test_json_has_the_contract_fields(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "decode", "--hardware", HW, "--model", MODEL, "--batch", "16", "--json")
    for field in (
        "verdict",
        "resident_margin_bytes",
        "batch_mem",
        "kv_alloc_bytes",
        "kv_read_bytes",
        "single_session_tok_s",
        "batch_star",
        "aggregate_tok_s",
        "per_session_tok_s",
        "memory_power_tok_s",
        "large_memory_limit_tok_s",
        "forced",
        "assumptions",
    ):
        assert field in data, field
    assert data["verdict"] == "floor_fit"
    assert data["batch_star"] == 17
    assert round(data["aggregate_tok_s"]) == 346
    assert set(data["forced"]) >= {"batch", "aggregate_tok_s", "per_session_tok_s", "clears_floor"}
    a = data["assumptions"]
    assert (
        a["overhead_gb"] == 8 and a["alloc_context_tokens"] == 100_000 and a["read_context_tokens"] == 32_000
    )
    assert a["floor_tok_s"] == 20 and a["tokens_per_step"] == 1 and a["expert_traffic"] == "expected"
    assert a["reading"] == "estimate"


def test_minimum_expert_traffic_is_a_bound(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "decode", "-H", HW, "-m", MODEL, "--expert-traffic", "minimum", "--json")
    assert data["assumptions"]["reading"] == "bound"
    # Minimum traffic replaces m(n) by k: b* reaches b_rate's closed form (37) exactly.
    assert data["batch_star"] == data["batch_rate"] == 37


def test_human_report_names_the_gate(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "decode", "-H", HW, "-m", MODEL)
    assert status == 0
    assert "limited by floor" in out and "assumptions" in out and "346 tok/s" in out


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_no_floor_is_not_a_fit_failure(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "decode", "-H", HW, "-m", MODEL, "--floor", "200", "--json")
    data = json.loads(out)
    assert status == 0 and data["verdict"] == "no_floor"
    assert data["batch_mem"] == 100 and data["aggregate_tok_s"] is None
    # batch 1 reaches R / (W_active + K_read) = 273 / 1.8268992 = 149.4 tok/s, below 200
    assert data["remedies"]["batch1_tok_per_s"] == pytest.approx(273 / 1.8268992)
    assert any("149.4 tok/s per session, below the 200 tok/s floor" in n for n in data["notes"])


def test_no_session_fit_says_what_would_fit(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    model = write(
        tmp_path,
        "m.toml",
        'name = "big cache"\n[weights]\nbytes_per_param = 2\ntotal_params = 50e9\n'
        '[kv]\nprecision = "bf16"\n[kv.alloc]\nglobal_bytes_per_token = 320000\n',
    )
    status, out, _ = run(capsys, "decode", "-H", HW, "-m", model, "--json")
    data = json.loads(out)
    assert status == 0 and data["verdict"] == "no_session_fit"
    # margin = 128 - 100 - 8 = 20 GB; 20e9 / 320000 = 62,500 tokens
    assert data["remedies"]["max_alloc_context_tokens"] == 62_500
    # 100,000 tokens at 160,000 bytes (fp8) = 16 GB fits; q8_0 (1.0625 bytes) = 17 GB fits too
    assert "fp8" in data["remedies"]["kv_precisions_that_fit"]
    assert "bf16" not in data["remedies"]["kv_precisions_that_fit"]
    status, out, _ = run(capsys, "decode", "-H", HW, "-m", model, "--kv-precision", "fp8", "--json")
    assert json.loads(out)["verdict"] != "no_session_fit"


def test_no_resident_fit(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    model = write(
        tmp_path,
        "m.toml",
        'name = "huge"\n[weights]\nbytes_per_param = 2\ntotal_params = 70e9\n[kv.alloc]\nglobal_bytes_per_token = 1\n',
    )
    status, out, _ = run(capsys, "decode", "-H", HW, "-m", model, "--json")
    data = json.loads(out)
    assert status == 0 and data["verdict"] == "no_resident_fit" and data["batch_mem"] is None
    assert data["resident_margin_bytes"] == pytest.approx(128e9 - 140e9 - 8e9)


def test_recurrent_state_only_is_capped_not_infinite(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    model = write(
        tmp_path,
        "m.toml",
        'name = "recurrent"\n[weights]\nbytes_per_param = 2\ntotal_params = 1e9\n[kv.alloc]\nstate_bytes = 0\n',
    )
    status, out, _ = run(capsys, "decode", "-H", HW, "-m", model, "--json")
    data = json.loads(out)
    assert status == 0 and data["batch_limited_by"] == "search_cap" and data["batch_mem_capped"]
    assert data["memory_power_tok_s"] is None and data["large_memory_limit_tok_s"] is None
    assert "Infinity" not in out and "NaN" not in out
    assert any("Memory does not bound the batch" in n for n in data["notes"])


BAD_CASES = [
    (
        'name = "x"\n[weights]\nbytes_per_param = -1\ntotal_params = 1e9\n[kv.alloc]\n',
        "weights.bytes_per_param",
    ),
    ('name = "x"\n[weights]\nbytes_per_param = 1\ntotal_params = nan\n[kv.alloc]\n', "total_params"),
    ('name = "x"\n[weights]\nbytes_per_param = 1\ntotal_params = inf\n[kv.alloc]\n', "total_params"),
    ('name = "x"\n[weights]\nbytes_per_param = 1\ntotal_params = 0\n[kv.alloc]\n', "weights.total_params"),
    (
        'name = "x"\n[weights]\nbytes_per_param = 1\ntotal_params = 1e9\nactive_params = 2e9\n[kv.alloc]\n',
        "weights",
    ),
    (
        'name = "x"\n[weights]\nbytes_per_param = 1\ntotal_params = 1e9\nactive_params = 5e8\n'
        "[experts]\nrouted = 8\nper_token = 9\n[kv.alloc]\n",
        "experts",
    ),
    ('name = "x"\n[weights]\nbytes_per_param = 1\ntotal_params = 1e9\n', "model.kv"),
    (
        'name = "x"\n[weights]\nbytes_per_param = 1\ntotal_params = 1e9\nbogus = 3\n[kv.alloc]\n',
        "weights.bogus",
    ),
    ('name = "x"\n[weights\n', "model"),
    ('name = "x"\n[weights]\nbytes_per_param = true\ntotal_params = 1e9\n[kv.alloc]\n', "bytes_per_param"),
    ('name = "x"\n[weights]\nbytes_per_param = "2"\ntotal_params = 1e9\n[kv.alloc]\n', "bytes_per_param"),
    (
        'name = "x"\n[weights]\nbytes_per_param = 2\ntotal_params = 1e9\nactive_params = 5e8\n[kv.alloc]\n',
        "experts",
    ),
    (
        'name = "x"\n[weights]\nbytes_per_param = 2\ntotal_params = 1e9\n[kv.alloc]\nlocal_bytes_per_token = 9\n',
        "window",
    ),
    (
        'name = "x"\n[weights]\nbytes_per_param = 2\ntotal_params = 1e9\nresident_gb = 0.5\n[kv.alloc]\n',
        "resident_gb",
    ),
]


@pytest.mark.parametrize(("text", "field"), BAD_CASES)
def test_bad_model_file_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, field: str
) -> None:
    model = write(tmp_path, "bad.toml", text)
    status, out, err = run(capsys, "decode", "-H", HW, "-m", model)
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and field in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--read-context", "200000"], "read_context"),
        (["--alloc-context", "0"], "alloc_context"),
        (["--overhead-gb", "-1"], "overhead_gb"),
        (["--floor", "nan"], "floor"),
        (["--batch", "0"], "batch"),
        (["--batch", "x"], "batch"),
        (["--expert-traffic", "typical"], "expert_traffic"),
        (["--kv-precision", "fp3"], "kv_precision"),
        (["--draft-tokens", "3"], "draft"),
    ],
)
def test_bad_flags(capsys: pytest.CaptureFixture[str], args: list[str], field: str) -> None:
    status, _, err = run(capsys, "decode", "-H", HW, "-m", MODEL, *args)
    assert status == 2 and field in err and len(err.strip().splitlines()) == 1


def test_hostile_nesting_and_folders(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    deep = write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    status, _, err = run(capsys, "decode", "-H", HW, "-m", deep)
    assert status == 2 and "nested too deeply" in err
    status, _, err = run(capsys, "decode", "-H", str(tmp_path), "-m", MODEL)
    assert status == 2 and "not a file" in err
    status, _, err = run(capsys, "decode", "-H", HW, "-m", MODEL, "--floor", "1e-300", "--json")
    assert status == 0
    status, _, err = run(capsys, "decode", "-H", HW, "-m", MODEL, "--overhead-gb", "1e300")
    assert status == 2 and "overhead_gb" in err


def test_missing_files_and_json_hardware(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = run(capsys, "decode", "-H", str(tmp_path / "nope.toml"), "-m", MODEL)
    assert status == 2 and "does not exist" in err
    hw = write(tmp_path, "hw.json", json.dumps({"name": "J", "memory_gb": 128, "bandwidth_gb_per_s": 273}))
    status, out, _ = run(capsys, "decode", "-H", hw, "-m", MODEL, "--json")
    assert status == 0 and json.loads(out)["batch_star"] == 17
    bad = write(tmp_path, "hw2.json", json.dumps({"name": "J", "memory_gb": 128, "bandwidth_gb_per_s": 0}))
    status, _, err = run(capsys, "decode", "-H", bad, "-m", MODEL)
    assert status == 2 and "hardware.bandwidth_gb_per_s" in err
    nan = write(tmp_path, "hw3.json", '{"name": "J", "memory_gb": NaN, "bandwidth_gb_per_s": 1}')
    status, _, err = run(capsys, "decode", "-H", nan, "-m", MODEL)
    assert status == 2 and "NaN" in err


def test_speculative_flags(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    draft = write(
        tmp_path,
        "draft.toml",
        'name = "draft"\n[weights]\nbytes_per_param = 0.5\ntotal_params = 0.6e9\n'
        "[kv.alloc]\nglobal_bytes_per_token = 1000\n",
    )
    speculative = ["decode", "-H", HW, "-m", MODEL, "--draft", draft, "--draft-tokens", "3"]
    spec = run_json(capsys, *speculative, "--acceptance", "0.7", "--json")["assumptions"]["speculation"]
    # rho = (1 - 0.7^4) / 0.3 = 2.533
    assert spec["tokens_per_step"] == pytest.approx((1 - 0.7**4) / 0.3)
    status, _, err = run(capsys, *speculative, "--tokens-per-step", "9")
    assert status == 2 and "tokens_per_step" in err


def test_console_script_runs_as_a_process() -> None:
    done = servebound_process("decode", "-H", HW, "-m", MODEL, "--floor", "-5")
    assert done.returncode == 2 and "floor" in done.stderr and "Traceback" not in done.stderr
