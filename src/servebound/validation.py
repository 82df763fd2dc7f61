"""The old import path of the validation: its code lives in ``servebound.runs`` (``reported``: the
reported-run catalog; ``validation``: the runs evaluated and summarised). Kept so callers keep working."""

from servebound.runs.reported import (
    ReportedRunEntry,
    ReportedRunsFile,
    load_reported_runs,
    parse_reported_runs,
)
from servebound.runs.validation import (
    QUANTILES,
    EfficiencyStats,
    ReportedRun,
    ValidationSummary,
    efficiency_stats,
    evaluate_entry,
    evaluate_reported_runs,
    format_summary,
    reported_run_json,
    reported_runs_for,
    stats_json,
    validation_json,
    validation_summary,
)

__all__ = [
    "QUANTILES",
    "EfficiencyStats",
    "ReportedRun",
    "ReportedRunEntry",
    "ReportedRunsFile",
    "ValidationSummary",
    "efficiency_stats",
    "evaluate_entry",
    "evaluate_reported_runs",
    "format_summary",
    "load_reported_runs",
    "parse_reported_runs",
    "reported_run_json",
    "reported_runs_for",
    "stats_json",
    "validation_json",
    "validation_summary",
]
