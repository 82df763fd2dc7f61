"""The expected band beside a ceiling, from the reported runs of the same engine, hardware class, phase
and regime.

A group is the reported runs (``catalog/data/reported_runs.toml``) of one engine (names folded: vLLM is
``vllm``), one hardware class (the catalog's: consumer GPU, datacenter GPU, unified-memory SoC, ...),
one phase (``decode``: per-session decode at concurrency 1, llama-bench tg, one stream, beside the
single-session ceiling; ``prefill``: prefill tok/s, beside the prefill ceiling) and one regime (weights
on the device, or some in host RAM: an offload run is another regime, its own group). Runs above their
own ceiling would be left out: their inputs do not describe them. The core fits the group's per-token
time model and turns it into the band (:mod:`servebound.core.band`). At a forced batch B the band is a
per-session one beside the per-session ceiling r(B) (the fitted time applied to the step at B); at b*
an aggregate one, b* times the per-session band at r(b*), beside T(b*). Each says which.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, TypeVar

from servebound.core.advice import Note, Setting
from servebound.core.band import (
    BAND_MIN_RUNS,
    ExpectedBand,
    TimeModel,
    expected_band,
    fit_time_model,
    leave_one_out,
)
from servebound.core.decode import DecodeResult as Decoded
from servebound.errors import InputError

if TYPE_CHECKING:  # the run catalog (pydantic) loads only when a band is asked for
    from collections.abc import Sequence

    from servebound.core.decode import DecodeResult
    from servebound.core.prefill_records import PrefillResult
    from servebound.runs.evaluated import ReportedRun
    from servebound.runs.reported import ReportedRunEntry

#: The engines the contract names for --engine (a workload input; the band uses the runs of that engine).
ENGINES = ("llama.cpp", "ollama", "lm-studio", "mlx", "vllm", "sglang", "trt-llm")
#: Where every reported run is listed with its source.
RUNS_URL = "/validation"
PHASES = ("decode", "prefill")
#: A group's regimes: every weight on the device, or some in host RAM (an offload run).
ON_DEVICE, OFFLOAD = "", "weights in host RAM"


def engine_key(name: str) -> str:
    """An engine name in the form groups use: case folded, so vLLM and vllm are one engine."""
    return name.strip().casefold()


def check_engine(name: str | None) -> str | None:
    """``--engine``'s value, one of ENGINES (case folded); InputError naming the choices otherwise."""
    if name is None:
        return None
    if engine_key(name) not in ENGINES:
        raise InputError("engine", f"unknown engine {name!r}; use one of {', '.join(ENGINES)}")
    return engine_key(name)


def hardware_class(hardware_id: str) -> str | None:
    """The catalog class of a hardware id (``multi-device system`` for Nx and systems); None for a file."""
    from servebound.catalog.hardware import get_hardware

    try:
        return get_hardware(hardware_id).device_class
    except InputError:
        return None


def _phase(entry: ReportedRunEntry) -> str | None:
    from servebound.runs.measured import Metric  # here: a ceiling with no engine never loads the runs

    if entry.metric is Metric.PER_SESSION_TOK_S and entry.concurrency == 1:
        return "decode"
    if entry.metric is Metric.PREFILL_TOK_S:
        return "prefill"
    return None


GroupKey = tuple[str, str, str, str]


def _key(entry: ReportedRunEntry) -> GroupKey | None:
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
    from servebound.runs.reported import load_reported_runs

    groups: dict[GroupKey, list[ReportedRunEntry]] = {}
    for entry in load_reported_runs():
        key = _key(entry)
        if key is not None:
            groups.setdefault(key, []).append(entry)
    return {key: tuple(value) for key, value in groups.items()}


def _group_of(key: GroupKey, runs: Sequence[ReportedRun]) -> BandGroup:
    kept = [run for run in runs if run.at_or_below]
    return BandGroup(
        key[0],
        key[1],
        key[2],
        tuple(run.entry.id for run in kept),
        tuple(run.check.ceiling_tok_per_s for run in kept),
        tuple(run.check.measured_tok_per_s for run in kept),
        key[3],
    )


@cache
def band_group(engine: str, hardware_cls: str, phase: str, regime: str = ON_DEVICE) -> BandGroup:
    """The group's runs at or below their ceilings, each checked against the ceiling for its setting."""
    from servebound.runs.evaluated import evaluate_entry

    key = (engine_key(engine), hardware_cls, phase, regime)
    return _group_of(key, [evaluate_entry(entry) for entry in _groups().get(key, ())])


@cache
def band_model(engine: str, hardware_cls: str, phase: str, regime: str = ON_DEVICE) -> TimeModel | None:
    """The group's fitted time model; None under BAND_MIN_RUNS runs."""
    group = band_group(engine, hardware_cls, phase, regime)
    return fit_time_model(group.ceilings, group.measured)


def band_for(
    ceiling_tok_per_s: float | None,
    engine: str | None,
    hardware_id: str,
    phase: str,
    *,
    regime: str = ON_DEVICE,
    scope: str = "single session",
    sessions: int = 1,
) -> ExpectedBand | None:
    """The expected band beside a per-session ceiling, or None: no engine named, no ceiling (nothing
    fits), a hardware file (no class), or fewer than BAND_MIN_RUNS runs in the group. ``sessions``
    turns it into the aggregate of that many sessions (band and ceiling both)."""
    if engine is None or ceiling_tok_per_s is None:
        return None
    cls = hardware_class(hardware_id)
    if cls is None:
        return None
    group = band_group(engine, cls, phase, regime)
    return expected_band(
        ceiling_tok_per_s,
        band_model(engine, cls, phase, regime),
        engine=group.engine,
        hardware_class=cls,
        phase=phase,
        run_ids=group.run_ids,
        runs_url=RUNS_URL,
        scope=scope,
        sessions=sessions,
    )


R = TypeVar("R", "DecodeResult", "PrefillResult")


def with_band(result: R) -> R:
    """A decode or prefill result with its expected band beside the ceiling (``expected``), as every
    surface shows it: the CLI, the Python API and the JSON API (None where :func:`band_for` gives none).
    Decode at a forced batch B: the per-session band beside r(B); with a b*, ``expected_aggregate``
    beside T(b*) too."""
    engine, hw = result.workload.engine, result.hardware.id
    regime = OFFLOAD if result.workload.offload is not None else ON_DEVICE
    if not isinstance(result, Decoded):
        band = band_for(result.tok_per_s, engine, hw, "prefill", regime=regime, scope="prefill tok/s")
        return replace(result, expected=band)
    forced = result.forced
    if forced is not None:
        scope = f"per session at batch {forced.batch}"
        band = band_for(forced.per_session_tok_per_s, engine, hw, "decode", regime=regime, scope=scope)
    else:
        band = band_for(result.single_session_tok_per_s, engine, hw, "decode", regime=regime)
    star = result.batch_star
    aggregate = None
    if star is not None and result.per_session_tok_per_s is not None:
        aggregate = band_for(
            result.per_session_tok_per_s,
            engine,
            hw,
            "decode",
            regime=regime,
            scope=f"aggregate at b* = {star}",
            sessions=star,
        )
    return replace(result, expected=band, expected_aggregate=aggregate)


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
            key = _key(run.entry)
            if key is not None:
                by_key.setdefault(key, []).append(run)
        groups = [_group_of(key, by_key[key]) for key in sorted(by_key)]
    rows = []
    for group in groups:
        loo = leave_one_out(group.ceilings, group.measured)
        model = fit_time_model(group.ceilings, group.measured)
        rows.append(GroupCalibration(group, model, loo.inside, loo.evaluated, loo.median_width))
    return Calibration(tuple(rows), sum(r.inside for r in rows), sum(r.evaluated for r in rows))


def expected_text(
    band: ExpectedBand | None, engine: str | None, aggregate: ExpectedBand | None = None
) -> Note:
    """The band's line under a ceiling: always called an estimate, with its runs, class and scope."""
    if engine is None:
        return Note.of(
            "expected: give ",
            Setting("engine"),
            " for a band from the published runs of that engine (an estimate)",
        )
    if band is None:
        return Note.of(
            f"expected with {engine}: fewer than {BAND_MIN_RUNS} published runs of this engine on this "
            "hardware class and phase, so no band"
        )
    return Note.of("\n".join(_band_line(b) for b in (band, aggregate) if b is not None))


def _band_line(band: ExpectedBand) -> str:
    clipped = "; p90 clipped at the ceiling" if band.clipped_at_ceiling else ""
    return (
        f"expected with {band.engine}, {band.scope} ({band.label}, not a bound): {band.p10_tok_s:,.1f} / "
        f"{band.p50_tok_s:,.1f} / {band.p90_tok_s:,.1f} tok/s (p10 / median / p90, beside a ceiling of "
        f"{band.ceiling_tok_s:,.1f}{clipped}; runs at {band.runs_url})"
    )
