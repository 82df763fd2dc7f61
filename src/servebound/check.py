"""The old import path of the run check: its code lives in ``servebound.runs`` (``measured``: runs and
checks; ``ceiling``: the check itself and its views; ``llama_bench`` / ``vllm`` / ``result_files``: the
result-file readers). Kept so callers keep working."""

from servebound.runs.ceiling import check_json, check_run, format_check, load_run_model
from servebound.runs.llama_bench import llama_bench_command, read_llama_bench
from servebound.runs.measured import (
    ABOVE_CEILING_MEANING,
    ABOVE_CEILING_TOLERANCE,
    MAX_RESULT_FILE_BYTES,
    MeasuredRun,
    Metric,
    Phase,
    RunCheck,
    make_run,
)
from servebound.runs.result_files import read_result_file
from servebound.runs.vllm import read_vllm_bench, vllm_bench_command

__all__ = [
    "ABOVE_CEILING_MEANING",
    "ABOVE_CEILING_TOLERANCE",
    "MAX_RESULT_FILE_BYTES",
    "MeasuredRun",
    "Metric",
    "Phase",
    "RunCheck",
    "check_json",
    "check_run",
    "format_check",
    "llama_bench_command",
    "load_run_model",
    "make_run",
    "read_llama_bench",
    "read_result_file",
    "read_vllm_bench",
    "vllm_bench_command",
]
