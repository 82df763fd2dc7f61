"""The band's groups, fitted from the reported runs: the table a ceiling's band is read from
(``runs.band_table``, rebuilt by ``band_table_text``) and the bands' leave-one-out calibration.

A group is the reported runs of one engine, hardware class, phase and regime (``runs.band`` says which
runs a ceiling's band comes from); each run is evaluated against the ceiling for its own setting and the
runs at or below it are fitted (:mod:`servebound.core.band`). This reads and validates the run catalog
and runs a decode or prefill per run, so a ceiling never does it at run time: it reads the fits from the
precomputed table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from servebound.core.band import TimeModel, fit_time_model, leave_one_out
from servebound.runs.band import OFFLOAD, ON_DEVICE, engine_key, hardware_class
from servebound.runs.band_table import FittedGroup, GroupKey, table_text
from servebound.runs.evaluated import ReportedRun, evaluate_entry
from servebound.runs.measured import Metric
from servebound.runs.reported import ReportedRunEntry, load_reported_runs


def _phase(entry: ReportedRunEntry) -> str | None:
    if entry.metric is Metric.PER_SESSION_TOK_S and entry.concurrency == 1:
        return "decode"
    if entry.metric in (Metric.PER_SESSION_TOK_S, Metric.AGGREGATE_TOK_S) and entry.concurrency > 1:
        return "serving"
    if entry.metric is Metric.PREFILL_TOK_S:
        return "prefill"
    return None


def group_key(entry: ReportedRunEntry) -> GroupKey | None:
    phase, cls = _phase(entry), hardware_class(entry.hardware)
    if phase is None or cls is None:
        return None
    return engine_key(entry.engine), cls, phase, OFFLOAD if entry.offload is not None else ON_DEVICE


@dataclass(frozen=True)
class BandGroup:
    """One group's runs at or below their ceilings: ids, ceilings and measured rates (tok/s)."""

    engine: str
    hardware_class: str
    phase: str
    run_ids: tuple[str, ...]
    ceilings: tuple[float, ...]
    measured: tuple[float, ...]
    regime: str = ON_DEVICE

    @property
    def efficiencies(self) -> tuple[float, ...]:
        return tuple(m / c for m, c in zip(self.measured, self.ceilings, strict=True))

    @property
    def name(self) -> str:
        return self.phase + (f" ({self.regime})" if self.regime else "")


@cache
def _groups() -> dict[GroupKey, tuple[ReportedRunEntry, ...]]:
    groups: dict[GroupKey, list[ReportedRunEntry]] = {}
    for entry in load_reported_runs():
        key = group_key(entry)
        if key is not None:
            groups.setdefault(key, []).append(entry)
    return {key: tuple(value) for key, value in groups.items()}


def _per_session(run: ReportedRun) -> tuple[float, float]:
    """(ceiling, measured) of one session: an aggregate run's divided by its concurrency (the fit is
    of one session's per-token time), any other run's as checked."""
    ceiling, measured = run.check.ceiling_tok_s, run.check.measured_tok_s
    if run.entry.metric is Metric.AGGREGATE_TOK_S and run.entry.concurrency > 1:
        return ceiling / run.entry.concurrency, measured / run.entry.concurrency
    return ceiling, measured


def _group_of(key: GroupKey, runs: Sequence[ReportedRun]) -> BandGroup:
    kept = [run for run in runs if run.at_or_below]
    rates = [_per_session(run) for run in kept]
    return BandGroup(
        key[0],
        key[1],
        key[2],
        tuple(run.entry.id for run in kept),
        tuple(ceiling for ceiling, _ in rates),
        tuple(measured for _, measured in rates),
        key[3],
    )


@cache
def band_group(engine: str, hardware_cls: str, phase: str, regime: str = ON_DEVICE) -> BandGroup:
    """The group's runs at or below their ceilings, each checked against the ceiling for its setting."""
    key = (engine_key(engine), hardware_cls, phase, regime)
    return _group_of(key, [evaluate_entry(entry) for entry in _groups().get(key, ())])


@cache
def band_model(engine: str, hardware_cls: str, phase: str, regime: str = ON_DEVICE) -> TimeModel | None:
    """The group's fitted time model; None under BAND_MIN_RUNS runs."""
    group = band_group(engine, hardware_cls, phase, regime)
    return fit_time_model(group.ceilings, group.measured)


def band_table_text() -> str:
    """``catalog/data/snapshot/bands.json``: every group's runs and fit, refitted now from the runs."""
    groups = []
    for key in sorted(_groups()):
        group = band_group(*key)
        model = band_model(*key)
        groups.append(
            FittedGroup(group.engine, group.hardware_class, group.phase, group.regime, group.run_ids, model)
        )
    return table_text(groups)


@dataclass(frozen=True)
class GroupCalibration:
    """One group's band: its fit and its leave-one-out coverage and median width (None under the
    runs a band needs when each is left out)."""

    group: BandGroup
    model: TimeModel | None
    inside: int
    evaluated: int
    median_width: float | None

    @property
    def coverage(self) -> float | None:
        return self.inside / self.evaluated if self.evaluated else None


@dataclass(frozen=True)
class Calibration:
    """Leave-one-out calibration of the bands: every group, and the pooled share of runs inside their
    own p10-p90 over the groups that could be evaluated."""

    groups: tuple[GroupCalibration, ...]
    inside: int
    evaluated: int

    @property
    def share(self) -> float | None:
        return self.inside / self.evaluated if self.evaluated else None


def band_calibration(runs: Sequence[ReportedRun] | None = None) -> Calibration:
    """Every group (of the shipped runs, or of ``runs`` already evaluated): its fit, and each run left
    out, whether it lands in the band the others give."""
    if runs is None:
        groups = [band_group(*key) for key in sorted(_groups())]
    else:
        by_key: dict[GroupKey, list[ReportedRun]] = {}
        for run in runs:
            key = group_key(run.entry)
            if key is not None:
                by_key.setdefault(key, []).append(run)
        groups = [_group_of(key, by_key[key]) for key in sorted(by_key)]
    rows = []
    for group in groups:
        loo = leave_one_out(group.ceilings, group.measured)
        model = fit_time_model(group.ceilings, group.measured)
        rows.append(GroupCalibration(group, model, loo.inside, loo.evaluated, loo.median_width))
    return Calibration(tuple(rows), sum(r.inside for r in rows), sum(r.evaluated for r in rows))
