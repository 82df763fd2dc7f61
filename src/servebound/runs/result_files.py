"""Result files told apart by content: llama-bench JSON/JSONL or a vLLM ``--save-result`` file.

Neither file carries the machine's bandwidth, so the hardware is always named by the caller (a catalog
id or a hardware file, such as one ``servebound measure`` wrote).
"""

from __future__ import annotations

from pathlib import Path

from servebound import bounded
from servebound.errors import InputError
from servebound.runs.llama_bench import llama_bench_runs
from servebound.runs.measured import MAX_RESULT_FILE_BYTES, MeasuredRun
from servebound.runs.vllm import vllm_runs


def read_result_file(path: str | Path) -> list[MeasuredRun]:
    """Runs from a llama-bench JSON/JSONL file or a vLLM ``--save-result`` file, told apart by content.

    The file never carries the hardware's bandwidth: the caller names the hardware (catalog id or
    hardware file) and the model (catalog profile, model file, or the GGUF itself).
    """
    values = bounded.read_json_values(path, "result file", max_bytes=MAX_RESULT_FILE_BYTES)
    first = values[0]
    if isinstance(first, list):
        first = first[0] if first else None
    if isinstance(first, dict) and "avg_ts" in first:
        return llama_bench_runs(values, path)
    if isinstance(first, dict) and ("output_throughput" in first or "mean_tpot_ms" in first):
        return vllm_runs(values, path)
    raise InputError(
        "result file",
        f"{path} is neither `llama-bench -o json` output (records with avg_ts) nor a `vllm bench serve "
        "--save-result` file (output_throughput, mean_tpot_ms); for other engines give the measured "
        "figure as plain values (the hardware and model are always given separately: files carry no bandwidth)",
    )
