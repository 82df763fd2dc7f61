"""Result files told apart by content: llama-bench JSON/JSONL, CSV or markdown, a vLLM ``--save-result``
file, SGLang ``bench_serving`` JSONL, MLX-LM's generation lines or Ollama's ``--verbose`` timings.

No file carries the machine's bandwidth: the hardware is a catalog row, found from the device names a
llama-bench file reports (gpu_info) or named by the caller (a catalog id or a hardware file, such as one
``servebound measure`` wrote).
"""

from __future__ import annotations

from pathlib import Path

from servebound.errors import InputError
from servebound.inputs import bounded
from servebound.measure.device_match import match_device
from servebound.runs.llama_bench import llama_bench_runs
from servebound.runs.measured import MAX_RESULT_FILE_BYTES, MeasuredRun
from servebound.runs.text_results import text_result_runs
from servebound.runs.vllm import vllm_runs


def read_result_file(path: str | Path) -> list[MeasuredRun]:
    """Runs from any result file the module names, read once and told apart by content: JSON or JSON
    Lines (llama-bench records with avg_ts; vLLM or SGLang results with output_throughput or
    mean_tpot_ms), else text (llama-bench markdown or CSV, MLX-LM, Ollama)."""
    raw = bounded.read_bytes(path, "result file", max_bytes=MAX_RESULT_FILE_BYTES)
    head = raw.lstrip()[:1]
    if head not in (b"[", b"{"):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError("result file", f"{path} is not UTF-8 text (byte {error.start})") from None
        runs = text_result_runs(text, path)
        if runs is None:
            raise InputError("result file", f"{path}: {_KNOWN}")
        if not runs:
            raise InputError("result file", f"{path} holds no timing line with a positive rate")
        return runs
    values = bounded.parse_json_values(raw, f"result file {Path(path)}")
    first = values[0]
    if isinstance(first, list):
        first = first[0] if first else None
    if isinstance(first, dict) and "avg_ts" in first:
        return llama_bench_runs(values, path)
    if isinstance(first, dict) and ("output_throughput" in first or "mean_tpot_ms" in first):
        return vllm_runs(values, path)
    raise InputError("result file", f"{path}: {_KNOWN}")


_KNOWN = (
    "not a result file servebound reads: llama-bench output (markdown, -o csv, -o json, -o jsonl), "
    "`vllm bench serve --save-result`, SGLang bench_serving JSONL, MLX-LM's Prompt:/Generation: lines "
    "or `ollama run --verbose` timings; for other engines give --metric and --measured, with --hardware "
    "(no result file carries the bandwidth)"
)


def hardware_from_runs(runs: list[MeasuredRun]) -> str:
    """The catalog id of the devices a result file names (llama-bench's gpu_info): N identical devices
    are ``Nx-<id>``. InputError asking for --hardware when the file names none, or different ones."""
    named = {run.hardware_names for run in runs}
    if named == {()} or not named:
        raise InputError(
            "hardware", "the result file names no device; give --hardware (a catalog id, a file or auto)"
        )
    if len(named) > 1 or len(set(next(iter(named)))) > 1:
        raise InputError(
            "hardware",
            "the result file names different devices; give --hardware for the machine the runs used",
        )
    names = next(iter(named))
    try:
        found = match_device(names[0])
    except InputError as error:
        raise InputError("hardware", f"the file names {names[0]!r}: {error.problem}") from None
    return found.id if len(names) == 1 else f"{len(names)}x-{found.id}"


def model_from_runs(runs: list[MeasuredRun]) -> str:
    """The model file a result file names (llama-bench's model_filename) when it is on this machine;
    InputError asking for --model otherwise."""
    paths = {run.model_path for run in runs}
    path = next(iter(paths)) if len(paths) == 1 else None
    if path is None:
        raise InputError(
            "model",
            "the result file names no single model file; give --model (a catalog id, a model file or the .gguf)",
        )
    if not Path(path).is_file():
        raise InputError(
            "model",
            f"the result file names {path}, which is not on this machine; give --model (the .gguf, a model "
            "file or a catalog id)",
        )
    return path
