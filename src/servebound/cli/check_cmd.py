"""`servebound check` (a measured run against its ceiling) and `servebound validate` (the reported runs)."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from servebound.cli.common import JSON, command, flags, given, option
from servebound.cli.output import console, print_json
from servebound.errors import InputError
from servebound.questions.check import checked_runs
from servebound.runs.ceiling import check_json, format_check
from servebound.runs.measured import make_run
from servebound.runs.result_files import hardware_from_runs, model_from_runs, read_result_file
from servebound.runs.validation import format_summary, validation_json, validation_summary


@dataclass(frozen=True)
class RunFlags:
    """How the measured run was made (``--concurrency`` .. ``--engine``): the keywords of ``make_run``."""

    concurrency: int = given(1, "Sessions decoding at once (batch).")
    read_context: int | None = given(None, "Average context read per step.")
    alloc_context: int | None = given(None, "Context reserved per session.")
    prompt_tokens: int | None = given(None, "Prompt tokens (prefill metrics).", flags=("--prompt",))
    chunk_tokens: int | None = given(None, "Prefill chunk width the engine used.", flags=("--chunk",))
    kv_precision: str | None = given(None, "Cache format the run used.")
    linear_mode: str | None = given(None, "Arithmetic mode of the linear layers.")
    attention_mode: str | None = given(None, "Arithmetic mode of attention.")
    engine: str = given("unspecified", "Engine name, for the report.")


@command(
    "check",
    option(
        "hardware",
        str,
        None,
        "The machine the run used (file, catalog id or auto); default: the devices the file names.",
        "--hardware",
        "-H",
    ),
    option(
        "model",
        str,
        None,
        "The model the run used (file, catalog id or .gguf); default: the model file the file names.",
        "--model",
        "-m",
    ),
    option(
        "file",
        str,
        None,
        "A result file: llama-bench (markdown, csv, json, jsonl), vLLM or SGLang bench JSON(L), "
        "MLX-LM or Ollama --verbose output.",
        "--file",
    ),
    option(
        "metric",
        str,
        None,
        "per_session_tok_s, aggregate_tok_s, prefill_tok_s or ttft_s (with --measured).",
        "--metric",
    ),
    option("measured", float, None, "The figure you measured, in the metric's unit.", "--measured"),
    flags("run", RunFlags),
    option(
        "overhead_gb",
        float,
        None,
        "O for the memory-fit note only (default: the hardware row's, 8 where it states none).",
        "--overhead-gb",
    ),
    JSON,
    examples=(
        "servebound check -H nvidia-rtx-4090 -m qwen3-8b --metric per_session_tok_s --measured 55 --read-context 4096",
        "servebound check -H nvidia-h100-sxm -m llama-3.1-8b --metric aggregate_tok_s --measured 3000 --read-context 4096 "
        "--concurrency 64 --engine vllm --json",
    ),
)
def check_command(
    hardware: str | None,
    model: str | None,
    file: str | None,
    metric: str | None,
    measured: float | None,
    run: RunFlags,
    overhead_gb: float | None,
    json_out: bool,
) -> int:
    if file is not None:
        if measured is not None or metric is not None:
            raise InputError("file", "give either --file or --metric with --measured, not both")
        runs = read_result_file(Path(file))
    else:
        if metric is None or measured is None:
            raise InputError(
                "measured", "give --metric and --measured (or --file with a llama-bench or vLLM result)"
            )
        runs = [make_run(metric, measured, **asdict(run))]
    hardware = hardware if hardware is not None else hardware_from_runs(runs)
    model = model if model is not None else model_from_runs(runs)
    checks = checked_runs(hardware, model, runs, overhead_gb)
    if json_out:
        print_json({"checks": [check_json(c) for c in checks]})
    else:
        for c in checks[:MAX_PRINTED_CHECKS]:
            console.print(format_check(c), markup=False)
        if len(checks) > MAX_PRINTED_CHECKS:
            console.print(checks_summary(checks[MAX_PRINTED_CHECKS:]), markup=False)
    return 3 if any(c.above_ceiling for c in checks) else 0


#: The most checks printed in full; the rest of a long result file is summarized (--json has each).
MAX_PRINTED_CHECKS = 20


def checks_summary(rest: list[Any]) -> str:
    """One paragraph for the checks not printed: how many, how many above the ceiling, the spread."""
    ratios = sorted(100 * c.efficiency for c in rest)
    above = sum(c.above_ceiling for c in rest)
    return (
        f"... and {len(rest):,} more records (not printed; --json lists every one): "
        f"{above:,} above the ceiling; efficiency {ratios[0]:,.1f} % to {ratios[-1]:,.4g} %, "
        f"median {statistics.median(ratios):,.1f} %"
    )


@command(
    "validate",
    JSON,
    examples=("servebound validate", "servebound validate --json"),
)
def validate_command(json_out: bool) -> None:
    summary = validation_summary()
    if json_out:
        print_json(validation_json(summary))
    else:
        console.print(format_summary(summary), markup=False)
