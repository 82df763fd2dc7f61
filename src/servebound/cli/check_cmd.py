"""`servebound check` (a measured run against its ceiling) and `servebound validate` (the reported runs)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated

import typer

from servebound.cli.common import JsonOpt, app, with_flags
from servebound.cli.output import console, print_json
from servebound.errors import InputError


@dataclass(frozen=True)
class RunFlags:
    """How the measured run was made (``--concurrency`` .. ``--engine``), added by ``with_flags``: the
    keywords of ``make_run``."""

    concurrency: Annotated[int, typer.Option("--concurrency", help="Sessions decoding at once (batch).")] = 1
    read_context: Annotated[
        int | None, typer.Option("--read-context", help="Average context read per step.")
    ] = None
    alloc_context: Annotated[
        int | None, typer.Option("--alloc-context", help="Context reserved per session.")
    ] = None
    prompt_tokens: Annotated[
        int | None, typer.Option("--prompt", help="Prompt tokens (prefill metrics).")
    ] = None
    chunk_tokens: Annotated[
        int | None, typer.Option("--chunk", help="Prefill chunk width the engine used.")
    ] = None
    kv_precision: Annotated[str | None, typer.Option("--kv-precision", help="Cache format the run used.")] = (
        None
    )
    linear_mode: Annotated[
        str | None, typer.Option("--linear-mode", help="Arithmetic mode of the linear layers.")
    ] = None
    attention_mode: Annotated[
        str | None, typer.Option("--attention-mode", help="Arithmetic mode of attention.")
    ] = None
    engine: Annotated[str, typer.Option("--engine", help="Engine name, for the report.")] = "unspecified"


_RUN_DEFAULTS = RunFlags()


@app.command("check")
@with_flags(RunFlags, "run")
def check_command(
    hardware: Annotated[
        str | None,
        typer.Option(
            "--hardware",
            "-H",
            help="The machine the run used (file, catalog id or auto); default: the devices the file names.",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="The model the run used (file, catalog id or .gguf); default: the model file the file names.",
        ),
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file",
            help="A result file: llama-bench (markdown, csv, json, jsonl), vLLM or SGLang bench JSON(L), "
            "MLX-LM or Ollama --verbose output.",
        ),
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric", help="per_session_tok_s, aggregate_tok_s, prefill_tok_s or ttft_s (with --measured)."
        ),
    ] = None,
    measured: Annotated[
        float | None, typer.Option("--measured", help="The figure you measured, in the metric's unit.")
    ] = None,
    run: RunFlags = _RUN_DEFAULTS,
    overhead_gb: Annotated[
        float | None,
        typer.Option(
            "--overhead-gb",
            help="O for the memory-fit note only (default: the hardware row's, 8 where it states none).",
            show_default=False,
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    from servebound.runs.ceiling import check_json, check_run, format_check
    from servebound.runs.measured import make_run
    from servebound.runs.result_files import hardware_from_runs, model_from_runs, read_result_file

    if file is not None:
        if measured is not None or metric is not None:
            raise InputError("file", "give either --file or --metric with --measured, not both")
        runs = read_result_file(file)
    else:
        if metric is None or measured is None:
            raise InputError(
                "measured", "give --metric and --measured (or --file with a llama-bench or vLLM result)"
            )
        runs = [make_run(metric, measured, **asdict(run))]
    hardware = hardware if hardware is not None else hardware_from_runs(runs)
    model = model if model is not None else model_from_runs(runs)
    checks = [check_run(hardware, model, r, overhead_gb=overhead_gb) for r in runs]
    if json_out:
        print_json({"checks": [check_json(c) for c in checks]})
    else:
        for c in checks:
            console.print(format_check(c), markup=False)
    if any(c.above_ceiling for c in checks):
        raise typer.Exit(3)


@app.command("validate")
def validate_command(json_out: JsonOpt = False) -> None:
    from servebound.runs.validation import format_summary, validation_json, validation_summary

    summary = validation_summary()
    if json_out:
        print_json(validation_json(summary))
    else:
        console.print(format_summary(summary), markup=False)
