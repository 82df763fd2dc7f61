"""The ceiling for a run's own setting, and the run's efficiency against it (``servebound check``).

:func:`check_run` evaluates the derivation's ceiling for exactly the run's setting (decode at the forced
batch b = concurrency and the run's read context; prefill at the run's prompt length, batch and chunk)
and divides. An efficiency above 1 means the inputs do not describe the run: the report says so loudly
instead of printing a number above 100 % as if it were an achievement.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servebound.core.decode import decode
from servebound.core.formats import KV_FORMATS
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.prefill import prefill
from servebound.core.rates import charge_mode, linear_mode_for
from servebound.core.units import GB
from servebound.errors import InputError
from servebound.importers.gguf_file import import_gguf
from servebound.inputs.scenario import load_hardware, load_model, make_workload, resolve_scenario
from servebound.runs.measured import (
    ABOVE_CEILING_MEANING,
    ABOVE_CEILING_TOLERANCE,
    MeasuredRun,
    Metric,
    Phase,
    RunCheck,
)

# --- the model a run used --------------------------------------------------------------------------


def load_run_model(ref: str | ModelAdapter) -> ModelAdapter:
    """A model for a check: a ``.gguf`` file (imported with exact tensor bytes), a model file, or a
    catalog profile id. Giving the GGUF a llama-bench run used makes the weight bytes exact."""
    if isinstance(ref, ModelAdapter):
        return ref
    if ref.lower().endswith(".gguf"):
        if not Path(ref).is_file():
            raise InputError("model", f"GGUF file {ref!r} does not exist")
        return import_gguf(ref).adapter
    return load_model(ref)


# --- the ceiling for the run's setting ---------------------------------------------------------------


def _pick_mode(
    hardware: Hardware, wanted: str | None, model_mode: str, role: str, warnings: list[str]
) -> str:
    """The arithmetic mode whose rate charges a prefill path: the run's, else the model's. When the
    hardware publishes no rate for it, the rate charged in its place (``core.rates.charge_mode``: the
    mode engines unpack to, the fastest published rate, or none: memory only) is named in a warning,
    with the modes the row does publish, any of which the caller may charge explicitly."""
    mode = wanted if wanted is not None else model_mode
    if hardware.compute_rate(mode) is None:
        published = ", ".join(hardware.compute_flop_per_s) or "none"
        charge = charge_mode(hardware, mode)
        instead = (
            "the prefill ceiling is the memory roofline alone (looser)"
            if charge.mode is None
            else f"it is charged at {charge.mode} ({charge.reason})"
        )
        warnings.append(
            f"hardware '{hardware.id}' has no {mode} rate for the {role} math, so {instead}; it publishes: "
            f"{published}. Name the mode the engine used (the run's linear or attention mode) to charge its rate"
        )
    return mode


def _decode_check(
    hw: Hardware, adapter: ModelAdapter, run: MeasuredRun, overhead_gb: float | None, warnings: list[str]
) -> RunCheck:
    """A decode run against the forced-batch ceiling at its concurrency and read context."""
    assert run.read_context_tokens is not None
    alloc = max(run.alloc_context_tokens or run.read_context_tokens, run.read_context_tokens)
    workload = make_workload(
        overhead_gb=overhead_gb,
        alloc_context=alloc,
        read_context=run.read_context_tokens,
        batch=run.concurrency,
        expert_traffic=run.expert_traffic,
        **dict(run.workload_options),
    )
    scenario = resolve_scenario(workload, hardware=hw, model=adapter)
    result = decode(scenario.hardware, scenario.model, scenario.workload)
    forced = result.forced
    assert forced is not None
    ceiling = forced.per_session_tok_s if run.metric is Metric.PER_SESSION_TOK_S else forced.aggregate_tok_s
    fits = result.fits and forced.fits_memory
    measured = run.measured_tok_s
    efficiency = measured / ceiling
    return RunCheck(
        run=run,
        hardware=hw,
        model=adapter,
        overhead_bytes=result.workload.overhead_bytes,
        ceiling_tok_s=ceiling,
        measured_tok_s=measured,
        efficiency=efficiency,
        above_ceiling=efficiency > 1.0 + ABOVE_CEILING_TOLERANCE,
        fits_memory=fits,
        reading="estimate" if result.is_estimate else "bound",
        bound_by="memory",
        decode=result,
        warnings=tuple(warnings),
    )


def _profile_warnings(run: MeasuredRun, adapter: ModelAdapter) -> tuple[ModelAdapter, list[str]]:
    """The model at the run's cache precision, and what the run's setting says the profile leaves out."""
    warnings: list[str] = []
    if run.kv_precision is not None and run.kv_precision != adapter.kv_precision:
        if adapter.kv_bytes_per_element is None:
            warnings.append(
                f"the run used a {run.kv_precision} cache but the model does not say its own KV width; not rescaled"
            )
        else:
            factor = KV_FORMATS[run.kv_precision].bytes_per_element / adapter.kv_bytes_per_element
            adapter = adapter.with_kv_scale(factor, run.kv_precision)
    if run.model_file_bytes is not None:
        resident = adapter.weights.resident
        if abs(resident - run.model_file_bytes) > 0.03 * run.model_file_bytes:
            warnings.append(
                f"the model profile holds {resident / GB:.3f} GB of weights but the run's file held "
                f"{run.model_file_bytes / GB:.3f} GB: the profile may be another quantization; "
                "give the GGUF file itself as the model for exact bytes"
            )
    if run.prefix_tokens > 0:
        warnings.append(
            f"the prompt followed {run.prefix_tokens} cached tokens; the ceiling leaves that prefix out "
            "(less attention and no reread), which only raises it"
        )
    if run.metric is Metric.AGGREGATE_TOK_S and run.concurrency_definition != "given":
        warnings.append(f"concurrency {run.concurrency} is {run.concurrency_definition}")
    return adapter, warnings


def check_run(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    run: MeasuredRun,
    *,
    overhead_gb: float | None = 0.0,
) -> RunCheck:
    """The ceiling for the run's own setting, and the run's efficiency against it.

    Decode: the forced-batch ceiling at b = ``run.concurrency`` with L_read = the run's read context
    (``per_session_tok_s`` compares with r(b), ``aggregate_tok_s`` with T(b)). Prefill: the ceiling
    for b prompts of the run's length in the run's chunks (b = 1 for a TTFT). ``overhead_gb`` only
    gates the memory-fit note (default 0: the run evidently fitted; None: the hardware row's, as decode).
    ``hardware`` and ``model`` are records, file paths or catalog ids (a ``.gguf`` model is imported).
    The result flags a run above its ceiling; it never raises for one.
    """
    if not isinstance(run, MeasuredRun):
        raise InputError(
            "run",
            f"must be a MeasuredRun (got {type(run).__name__} {str(run)[:40]!r}); build one with "
            "servebound.make_run(metric, value, ...), or check a result file with `servebound check --file`",
        )
    hw = load_hardware(hardware)
    adapter, warnings = _profile_warnings(run, load_run_model(model))

    if run.phase is Phase.DECODE:
        return _decode_check(hw, adapter, run, overhead_gb, warnings)

    assert run.prompt_tokens is not None
    if adapter.prefill is None:
        raise InputError(
            "model", f"model '{adapter.id}' has no [prefill] fields, so no prefill ceiling can be computed"
        )
    model_linear, _ = linear_mode_for(hw, adapter.prefill)
    _pick_mode(hw, run.linear_mode, model_linear, "linear", warnings)
    _pick_mode(hw, run.attention_mode, adapter.prefill.attention_mode, "attention", warnings)
    alloc = max(run.alloc_context_tokens or run.prompt_tokens, run.prompt_tokens)
    options: dict[str, Any] = dict(run.workload_options)
    workload = resolve_scenario(
        hardware=hw,
        model=adapter,
        overhead_gb=overhead_gb,
        alloc_context=alloc,
        read_context=min(alloc, run.prompt_tokens),
        **options,
    ).workload
    batch = 1 if run.metric is Metric.TTFT_S else run.concurrency
    pf = prefill(
        hw,
        adapter,
        run.prompt_tokens,
        workload=workload,
        batch=batch,
        chunk_tokens=run.chunk_tokens,
        linear_mode=run.linear_mode,
        attention_mode=run.attention_mode,
    )
    measured = run.measured_tok_s
    efficiency = measured / pf.tok_s
    return RunCheck(
        run=run,
        hardware=hw,
        model=adapter,
        overhead_bytes=workload.overhead_bytes,
        ceiling_tok_s=pf.tok_s,
        measured_tok_s=measured,
        efficiency=efficiency,
        above_ceiling=efficiency > 1.0 + ABOVE_CEILING_TOLERANCE,
        fits_memory=pf.admissible,
        reading="estimate" if pf.assumptions.is_estimate else "bound",
        bound_by=pf.bound_by.value,
        prefill=pf,
        warnings=tuple(warnings),
    )


# --- views -------------------------------------------------------------------------------------------


def check_json(check: RunCheck) -> dict[str, Any]:
    """The ``servebound check --json`` object for one run."""
    run = check.run
    out: dict[str, Any] = {
        "hardware": {
            "id": check.hardware.id,
            "bandwidth_gb_per_s": check.hardware.bandwidth_bytes_per_s / GB,
        },
        "model": {"id": check.model.id, "name": check.model.name},
        "phase": run.phase.value,
        "metric": run.metric.value,
        "label": run.label,
        "measured": run.value,
        "measured_tok_s": check.measured_tok_s,
        "ceiling_tok_s": check.ceiling_tok_s,
        "efficiency": check.efficiency,
        "above_ceiling": check.above_ceiling,
        "above_ceiling_meaning": ABOVE_CEILING_MEANING if check.above_ceiling else None,
        "reading": check.reading,
        "bound_by": check.bound_by,
        "fits_memory": check.fits_memory,
        "overhead_gb": check.overhead_bytes / GB,
        "concurrency": run.concurrency,
        "concurrency_definition": run.concurrency_definition,
        "read_context_tokens": run.read_context_tokens,
        "alloc_context_tokens": run.alloc_context_tokens,
        "prompt_tokens": run.prompt_tokens,
        "chunk_tokens": run.chunk_tokens,
        "prefix_tokens": run.prefix_tokens,
        "expert_traffic": run.expert_traffic,
        "kv_precision": check.model.kv_precision,
        "ceiling_time_s": check.ceiling_time_s,
        "engine": run.engine,
        "engine_version": run.engine_version,
        "metric_definition": run.metric_definition,
        "source": run.source,
        "reproduce_command": run.command,
        "warnings": [*run.notes, *check.warnings],
    }
    if check.prefill is not None:
        out["linear_mode"] = check.prefill.assumptions.linear_mode
        out["attention_mode"] = check.prefill.assumptions.attention_mode
    return out


def _figure(value: float, decimals: int = 2) -> str:
    """A figure as written for people: grouped digits up to a trillion, powers of ten past it (a file's
    1e300 tok/s prints as 1e+300, not 301 digits)."""
    return f"{value:,.{decimals}f}" if abs(value) < 1e12 else f"{value:.4g}"


def format_check(check: RunCheck) -> str:
    """A few human lines for one run: the figure, the ceiling, the efficiency, and loud flags."""
    run = check.run
    lines = [
        f"{run.label} on {check.hardware.id} with {check.model.id} ({run.engine}"
        + (f" {run.engine_version}" if run.engine_version else "")
        + ")",
        f"  measured {_figure(check.measured_tok_s)} tok/s ({run.metric.value})"
        + (f", TTFT {run.value:.3f} s" if run.metric is Metric.TTFT_S else ""),
        f"  ceiling  {_figure(check.ceiling_tok_s)} tok/s ({check.reading}, {check.bound_by}-bound)",
        f"  efficiency {_figure(100 * check.efficiency, 1)} %",
    ]
    if check.above_ceiling:
        lines.append(f"  ABOVE THE CEILING: {ABOVE_CEILING_MEANING}")
    if not check.fits_memory:
        lines.append(
            f"  note: this setting does not fit the hardware with overhead O = {check.overhead_bytes / GB:g} GB"
        )
    lines += [f"  note: {text}" for text in (*run.notes, *check.warnings)]
    if run.command:
        lines.append(f"  reproduce: {run.command}")
    return "\n".join(lines)
