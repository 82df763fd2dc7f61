"""Reported runs evaluated: each entry of the reported-run catalog (``runs.reported``) checked against
the ceiling for its own setting (:func:`servebound.runs.ceiling.check_run`), with its hardware and model
family. ``runs.validation`` summarises them; ``runs.band`` fits its bands on them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import get_model
from servebound.errors import InputError
from servebound.questions.layout import layout_decode_ceiling
from servebound.runs.ceiling import check_run
from servebound.runs.measured import ABOVE_CEILING_TOLERANCE, Metric, RunCheck, make_run
from servebound.runs.reported import load_reported_runs

if TYPE_CHECKING:
    from servebound.runs.reported import ReportedRunEntry


@dataclass(frozen=True)
class ReportedRun:
    """A reported run evaluated: the entry, the check against its ceiling, its hardware family and its
    model family (the catalog's, from the config's model_type)."""

    entry: ReportedRunEntry
    check: RunCheck
    hardware_family: str
    model_family: str = "model file"

    @property
    def efficiency(self) -> float:
        return self.check.efficiency

    @property
    def at_or_below(self) -> bool:
        return not self.check.above_ceiling


def _model_family(model_id: str) -> str:
    try:
        return get_model(model_id).family
    except InputError:
        return "model file"


def _hardware_family(hardware_id: str) -> str:
    try:
        return get_hardware(hardware_id).device_class
    except InputError:
        return "measured or custom"


# --- evaluation --------------------------------------------------------------------------------------


def evaluate_entry(entry: ReportedRunEntry) -> ReportedRun:
    """Check one reported run against the ceiling for its setting."""
    try:
        run = make_run(
            entry.metric,
            entry.measured,
            concurrency=entry.concurrency,
            read_context=entry.read_context,
            alloc_context=entry.alloc_context,
            prompt_tokens=entry.prompt_tokens,
            chunk_tokens=entry.chunk_tokens,
            kv_precision=entry.kv_precision,
            linear_mode=entry.linear_mode,
            attention_mode=entry.attention_mode,
            engine=entry.engine,
            engine_version=entry.engine_version,
        )
    except InputError as exc:
        raise InputError(f"reported run {entry.id}: {exc.field}", exc.problem) from None

    run = replace(
        run,
        metric_definition=entry.metric_definition,
        source=entry.source_url,
        label=entry.id,
        expert_traffic=entry.expert_traffic,
        workload_options=entry.workload_options(),
    )
    check = check_run(entry.hardware, entry.model, run)
    if entry.layout is not None:
        check = _layout_check(entry, check)
    return ReportedRun(
        entry=entry,
        check=check,
        hardware_family=_hardware_family(entry.hardware),
        model_family=_model_family(entry.model),
    )


def _layout_check(entry: ReportedRunEntry, check: RunCheck) -> RunCheck:
    """The same run against its layout's ceiling (never above the pooled one: communication only lowers
    it). A micro-batch of ceil(concurrency / (dp pp)) sessions; per session 1 / tau, aggregate c / tau."""
    assert entry.layout is not None and check.decode is not None
    workload = check.decode.workload
    per_session, aggregate, label = layout_decode_ceiling(
        entry.hardware, check.model, entry.layout, entry.concurrency, workload
    )
    ceiling = per_session if entry.metric is Metric.PER_SESSION_TOK_S else aggregate
    efficiency = check.measured_tok_s / ceiling
    note = (
        f"layout {label}: ceiling {ceiling:.4g} tok/s with the link charged (pooled Nx ceiling "
        f"{check.ceiling_tok_s:.4g})"
    )
    return replace(
        check,
        ceiling_tok_s=ceiling,
        efficiency=efficiency,
        above_ceiling=efficiency > 1.0 + ABOVE_CEILING_TOLERANCE,
        warnings=(*check.warnings, note),
    )


def evaluate_reported_runs(entries: Iterable[ReportedRunEntry] | None = None) -> tuple[ReportedRun, ...]:
    """Every reported run (the shipped file by default) checked against its ceiling.

    Raises InputError when a run above its ceiling carries no ``explanation``: such a run must be
    investigated and explained in its entry, never dropped.
    """
    evaluated = tuple(evaluate_entry(e) for e in (load_reported_runs() if entries is None else entries))
    for run in evaluated:
        if not run.at_or_below and not (run.entry.explanation or "").strip():
            raise InputError(
                f"reported run {run.entry.id}: explanation",
                f"the run is at {100 * run.efficiency:.1f} % of its ceiling; a run above the ceiling "
                "needs an explanation of what in the inputs does not describe it",
            )
    return evaluated
