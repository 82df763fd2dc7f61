"""Reported runs: published measurements checked against their ceilings.

The runs of the reported-run catalog (``runs.reported``) evaluated: :func:`evaluate_reported_runs` checks each against the ceiling for its own setting
(:func:`servebound.runs.ceiling.check_run`); :func:`validation_summary` counts how many sit at or below it and
describes the efficiency distribution overall, by engine, by hardware family and by phase;
:func:`reported_runs_for` picks the runs of one (hardware, model) pair for its page.

A run above its ceiling stays in the data with an ``explanation`` of why (the file is rejected without
one): an above-ceiling run is a finding about the inputs, never something to hide.

Models: a catalog profile id naming the file that was run (Llama 2 7B's llama.cpp file types are
``llama-2-7b-q4_0``, ``-q8_0``, ...; ggml-org's gpt-oss GGUFs are ``gpt-oss-20b-mxfp4_moe``), or a model file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from servebound.catalog.architectures import architecture_name
from servebound.core.arith import np  # numpy on first use: a server starts without it
from servebound.core.band import BAND_MIN_RUNS
from servebound.errors import InputError
from servebound.runs.band_fit import Calibration, band_calibration
from servebound.runs.evaluated import ReportedRun, evaluate_reported_runs

#: Quantiles reported for every group of efficiencies.
QUANTILES = (0.25, 0.5, 0.75)


@dataclass(frozen=True)
class EfficiencyStats:
    """The efficiency distribution of a group of runs: count, how many at or below 1, and quantiles
    (linear interpolation between order statistics, numpy's default). Its fields are its JSON form."""

    count: int
    at_or_below: int
    at_or_below_rate: float
    min: float
    p25: float
    median: float
    p75: float
    max: float


@dataclass(frozen=True)
class ValidationSummary:
    """What ``servebound validate`` prints and the validation page shows."""

    runs: tuple[ReportedRun, ...]
    overall: EfficiencyStats
    by_engine: dict[str, EfficiencyStats]
    by_hardware_family: dict[str, EfficiencyStats]
    by_phase: dict[str, EfficiencyStats]
    by_model_family: dict[str, EfficiencyStats]
    #: The expected bands fitted on these runs, each with its leave-one-out coverage and width.
    bands: Calibration | None = None

    @property
    def total(self) -> int:
        return len(self.runs)

    @property
    def at_or_below(self) -> int:
        return self.overall.at_or_below

    @property
    def above(self) -> tuple[ReportedRun, ...]:
        return tuple(run for run in self.runs if not run.at_or_below)


# --- loading -----------------------------------------------------------------------------------------


def efficiency_stats(efficiencies: Sequence[float]) -> EfficiencyStats:
    """Count, at-or-below count and quantiles of a non-empty group of efficiencies."""
    if not efficiencies:
        raise InputError("runs", "no runs to summarise")
    values = np.asarray(efficiencies, dtype=np.float64)
    p25, median, p75 = (float(q) for q in np.quantile(values, QUANTILES))
    at_or_below = int(np.sum(values <= 1.0 + 1e-6))
    return EfficiencyStats(
        count=len(values),
        at_or_below=at_or_below,
        at_or_below_rate=at_or_below / len(values),
        min=float(values.min()),
        p25=p25,
        median=median,
        p75=p75,
        max=float(values.max()),
    )


def _grouped(runs: Sequence[ReportedRun], key: Any) -> dict[str, EfficiencyStats]:
    groups: dict[str, list[float]] = {}
    for run in runs:
        groups.setdefault(key(run), []).append(run.efficiency)
    return {name: efficiency_stats(values) for name, values in sorted(groups.items())}


def validation_summary(runs: Sequence[ReportedRun] | None = None) -> ValidationSummary:
    """The at-or-below count and efficiency distribution over reported runs (the shipped ones by
    default), overall and by engine, hardware family, phase and model family."""
    evaluated = tuple(evaluate_reported_runs() if runs is None else runs)
    return ValidationSummary(
        runs=evaluated,
        overall=efficiency_stats([run.efficiency for run in evaluated]),
        by_engine=_grouped(evaluated, lambda run: run.entry.engine),
        by_hardware_family=_grouped(evaluated, lambda run: run.hardware_family),
        by_phase=_grouped(evaluated, lambda run: run.check.run.phase.value),
        by_model_family=_grouped(evaluated, lambda run: run.model_family),
        bands=band_calibration(evaluated),
    )


def reported_runs_for(
    hardware_id: str, model_id: str, runs: Sequence[ReportedRun] | None = None
) -> tuple[ReportedRun, ...]:
    """The reported runs of one (hardware, model) pair, for its page: exact ids as the entries give
    them (catalog hardware ids and catalog or run-model ids)."""
    evaluated = evaluate_reported_runs() if runs is None else runs
    return tuple(
        run for run in evaluated if run.entry.hardware == hardware_id and run.entry.model == model_id
    )


# --- views -------------------------------------------------------------------------------------------


def reported_run_json(run: ReportedRun) -> dict[str, Any]:
    """One reported run as measured next to ceiling, with its source and explanation."""
    entry, check = run.entry, run.check
    return {
        "id": entry.id,
        "hardware": entry.hardware,
        "hardware_family": run.hardware_family,
        "model": entry.model,
        "model_family": run.model_family,
        "engine": entry.engine,
        "engine_version": entry.engine_version,
        "quantization": entry.quantization,
        "phase": check.run.phase.value,
        "metric": entry.metric.value,
        "measured": entry.measured,
        "measured_tok_s": check.measured_tok_s,
        "ceiling_tok_s": check.ceiling_tok_s,
        "efficiency": check.efficiency,
        "at_or_below": run.at_or_below,
        "bound_by": check.bound_by,
        "reading": check.reading,
        "concurrency": entry.concurrency,
        "read_context_tokens": entry.read_context,
        "alloc_context_tokens": entry.alloc_context,
        "prompt_tokens": entry.prompt_tokens,
        "metric_definition": entry.metric_definition,
        "context_definition": entry.context_definition,
        "source_url": entry.source_url,
        "source_quote": entry.source_quote,
        "source_kind": entry.source_kind,
        "explanation": entry.explanation,
        "notes": entry.notes,
        "warnings": list(check.warnings),
    }


def validation_json(summary: ValidationSummary) -> dict[str, Any]:
    """The ``servebound validate --json`` object."""
    return {
        "total": summary.total,
        "at_or_below": summary.at_or_below,
        "at_or_below_rate": summary.overall.at_or_below_rate,
        "efficiency": asdict(summary.overall),
        "by_engine": {name: asdict(s) for name, s in summary.by_engine.items()},
        "by_hardware_family": {name: asdict(s) for name, s in summary.by_hardware_family.items()},
        "by_phase": {name: asdict(s) for name, s in summary.by_phase.items()},
        "by_model_family": {name: asdict(s) for name, s in summary.by_model_family.items()},
        "above": len(summary.above),
        "excluded_from_bands": len(summary.above),
        "bands": [] if summary.bands is None else bands_json(summary.bands),
        "runs": [reported_run_json(run) for run in summary.runs],
    }


def bands_json(calibration: Calibration) -> list[dict[str, Any]]:
    """Each band group: its runs, fit and leave-one-out coverage and median width (null where too few)."""
    out = []
    for row in calibration.groups:
        group, model = row.group, row.model
        out.append(
            {
                "engine": group.engine,
                "hardware_class": group.hardware_class,
                "phase": group.phase,
                "regime": group.regime or "on device",
                "runs": len(group.run_ids),
                "band": model is not None,
                "why_no_band": None if model else f"fewer than {BAND_MIN_RUNS} published runs: no band",
                "slope": None if model is None else model.slope,
                "fixed_ms_per_token": None if model is None else 1000 * model.fixed_s,
                "leave_one_out_inside": row.inside if row.evaluated else None,
                "leave_one_out_evaluated": row.evaluated,
                "leave_one_out_coverage": row.coverage,
                "median_width": row.median_width,
            }
        )
    return out


def format_bands(calibration: Calibration) -> list[str]:
    """The bands' lines: per engine and class, the fit, coverage and median width, or why none."""
    share = "" if calibration.share is None else f" ({100 * calibration.share:.0f} %)"
    lines = [
        "expected bands (t = a t_ceiling + t_0 per engine, class and phase; leave-one-out: runs inside the "
        f"p10-p90 the others give, {calibration.inside} of {calibration.evaluated}{share}):"
    ]
    for row in calibration.groups:
        group, model = row.group, row.model
        name = (
            f"  {group.engine:10s} {group.hardware_class:20s} {group.name:30s} {len(group.run_ids):3d} runs"
        )
        if model is None:
            lines.append(f"{name}  fewer than {BAND_MIN_RUNS}: no band")
            continue
        fit = f"a {model.slope:5.2f}  t_0 {1000 * model.fixed_s:6.2f} ms"
        if row.coverage is None or row.median_width is None:
            lines.append(f"{name}  {fit}  too few to leave one out")
        else:
            lines.append(
                f"{name}  {fit}  inside {row.inside:3d} of {row.evaluated:3d} ({100 * row.coverage:3.0f} %)  "
                f"median p90/p10 {row.median_width:.2f}"
            )
    return lines


def format_summary(summary: ValidationSummary) -> str:
    """Human lines: the at-or-below rate, the distributions, and every above-ceiling run explained."""

    def row(name: str, s: EfficiencyStats) -> str:
        return (
            f"  {name:28s} {s.count:3d} runs  {s.at_or_below:3d} at or below  "
            f"efficiency min {100 * s.min:5.1f} %  p25 {100 * s.p25:5.1f} %  median {100 * s.median:5.1f} %  "
            f"p75 {100 * s.p75:5.1f} %  max {100 * s.max:5.1f} %"
        )

    lines = [
        f"{summary.total} reported runs, {summary.at_or_below} at or below their ceiling "
        f"({100 * summary.overall.at_or_below_rate:.1f} %), {len(summary.above)} above, "
        f"{len(summary.above)} excluded from the bands",
        row("all", summary.overall),
        "by engine:",
        *(row(name, s) for name, s in summary.by_engine.items()),
        "by hardware family:",
        *(row(name, s) for name, s in summary.by_hardware_family.items()),
        "by phase:",
        *(row(name, s) for name, s in summary.by_phase.items()),
        "by model family:",
        *(row(architecture_name(name), s) for name, s in summary.by_model_family.items()),
    ]
    if summary.bands is not None:
        lines += format_bands(summary.bands)
    if summary.above:
        lines.append("above the ceiling (investigated):")
        for run in summary.above:
            lines.append(f"  {run.entry.id}: {100 * run.efficiency:.1f} %: {run.entry.explanation}")
    return "\n".join(lines)


__all__ = [
    "EfficiencyStats",
    "ReportedRun",
    "ValidationSummary",
    "bands_json",
    "efficiency_stats",
    "evaluate_reported_runs",
    "format_bands",
    "format_summary",
    "reported_run_json",
    "reported_runs_for",
    "validation_json",
    "validation_summary",
]
