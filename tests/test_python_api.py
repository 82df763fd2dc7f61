"""The Python API as a user meets it: ids or records alike, the workload as keywords, results whose
to_dict() / to_json() are what the CLI's --json prints, JSON names as attributes, a compact repr."""

from __future__ import annotations

import json

import pytest

import servebound
from servebound.cli import main
from servebound.errors import InputError

HW, MODEL = "nvidia-rtx-4090", "qwen3-8b"
SYSTEM, BIG = "8x-nvidia-h100-sxm", "llama-3.3-70b-instruct-fp8"


def cli_text(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    status = main([*args, "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


#: (the Python call, the same question on the command line)
CASES = [
    (lambda: servebound.decode(HW, MODEL), ("decode", "-H", HW, "-m", MODEL)),
    (
        lambda: servebound.decode(HW, MODEL, read_context=1000, alloc_context=4000, batch=4),
        (
            "decode",
            "-H",
            HW,
            "-m",
            MODEL,
            "--read-context",
            "1000",
            "--alloc-context",
            "4000",
            "--batch",
            "4",
        ),
    ),
    (
        lambda: servebound.decode(HW, MODEL, kv_precision="fp8", overhead_gb=2),
        ("decode", "-H", HW, "-m", MODEL, "--kv-precision", "fp8", "--overhead-gb", "2"),
    ),
    (lambda: servebound.prefill(HW, MODEL, 4096), ("prefill", "-H", HW, "-m", MODEL, "--prompt", "4096")),
    (
        lambda: servebound.prefill(HW, MODEL, 2048, batch="max", chunk_tokens=512),
        ("prefill", "-H", HW, "-m", MODEL, "--prompt", "2048", "--batch", "max", "--chunk", "512"),
    ),
    (lambda: servebound.cost(HW, MODEL), ("cost", "-H", HW, "-m", MODEL)),
    (
        lambda: servebound.cost(HW, MODEL, usd_per_hour=1.5),
        ("cost", "-H", HW, "-m", MODEL, "--usd-per-hour", "1.5"),
    ),
    (lambda: servebound.layout(SYSTEM, BIG), ("layout", "-H", SYSTEM, "-m", BIG)),
    (
        lambda: servebound.plan(SYSTEM, BIG, users=50, prompt_tokens=2000, output_tokens=500),
        ("plan", "-H", SYSTEM, "-m", BIG, "--users", "50", "--prompt", "2000", "--output-tokens", "500"),
    ),
]


@pytest.mark.parametrize(("call", "argv"), CASES, ids=[" ".join(argv[:1] + argv[5:]) for _, argv in CASES])
def test_to_dict_and_to_json_equal_the_cli_json(
    capsys: pytest.CaptureFixture[str], call: object, argv: tuple[str, ...]
) -> None:
    result = call()  # type: ignore[operator]
    text = cli_text(capsys, *argv)
    assert result.to_dict() == json.loads(text)
    assert result.to_json() + "\n" == text


def test_ids_and_records_give_the_same_result() -> None:
    hw, model = servebound.load_hardware(HW), servebound.load_model(MODEL)
    assert servebound.decode(hw, model) == servebound.decode(HW, MODEL)
    # prefill took only records (AttributeError on ids): now either
    assert servebound.prefill(hw, model, 4096) == servebound.prefill(HW, MODEL, 4096)
    assert servebound.prefill(HW, model, 4096).to_dict() == servebound.prefill(hw, MODEL, 4096).to_dict()
    work = servebound.make_workload(read_context=2000)
    assert servebound.decode(HW, MODEL, work) == servebound.decode(HW, MODEL, read_context=2000)
    # without a workload, the default answer for the pair (the row's overhead, contexts capped)
    assert servebound.decode(HW, MODEL) == servebound.decode(HW, MODEL, servebound.default_workload())


def test_a_dict_workload_is_a_clear_error() -> None:
    with pytest.raises(
        InputError, match=r"workload: must be a Workload .* not a dict; call decode\(hw, model, \*\*"
    ):
        servebound.decode(HW, MODEL, {"read_context": 1000})  # type: ignore[arg-type]
    with pytest.raises(InputError, match="workload: must be a Workload"):
        servebound.prefill(HW, MODEL, 4096, {"read_context": 1000})  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"workload: give a Workload or keywords \(read_context\), not both"):
        servebound.decode(HW, MODEL, servebound.make_workload(), read_context=1000)
    with pytest.raises(InputError, match="read_contxt: unknown keyword; did you mean read_context"):
        servebound.decode(HW, MODEL, read_contxt=1000)  # a misspelt keyword names its close match


def test_one_name_per_quantity_across_python_and_json() -> None:
    result = servebound.decode(HW, MODEL, batch=2)
    data = result.to_dict()
    for name in (
        "single_session_tok_s",
        "aggregate_tok_s",
        "per_session_tok_s",
        "memory_power_tok_s",
        "large_memory_limit_tok_s",
        "compute_tok_s_at_star",
        "memory_tok_s_at_star",
    ):
        assert getattr(result, name) == data[name], name
    assert result.forced is not None
    assert result.forced.aggregate_tok_s == data["forced"]["aggregate_tok_s"]
    assert result.forced.per_session_tok_s == data["forced"]["per_session_tok_s"]
    pre = servebound.prefill(HW, MODEL, 4096)
    out = pre.to_dict()
    assert (pre.tok_s, pre.memory_tok_s, pre.compute_tok_s, pre.chunk) == (
        out["tok_s"],
        out["memory_tok_s"],
        out["compute_tok_s"],
        out["chunk"],
    )


def test_reprs_are_compact() -> None:
    result = servebound.decode(HW, MODEL)
    text = repr(result)
    assert text.startswith("DecodeResult(hardware='nvidia-rtx-4090', model='qwen3-8b', verdict='floor_fit'")
    assert len(text) < 200 and "Weights(" not in text
    assert f"batch_star={result.batch_star}" in text
    assert repr(servebound.prefill(HW, MODEL, 4096)).startswith("PrefillResult(hardware='nvidia-rtx-4090'")
    assert "best='tp=8" in repr(servebound.layout(SYSTEM, BIG))


def test_importers_and_check_are_public(tmp_path: object) -> None:
    run = servebound.make_run("per_session_tok_s", 40.0, read_context=1000)
    check = servebound.check_run(HW, MODEL, run)
    assert isinstance(check, servebound.RunCheck) and 0 < check.efficiency < 1
    for name in ("import_gguf", "import_hf_config", "import_safetensors", "rank_models", "rank_hardware"):
        assert callable(getattr(servebound, name)), name


def test_the_package_is_typed() -> None:
    from importlib import resources

    assert resources.files("servebound").joinpath("py.typed").is_file()
