"""The expected band beside a ceiling, from the reported runs of the same engine, hardware class, phase
and regime.

A group is the reported runs (``catalog/data/reported_runs.toml``) of one engine (names folded: vLLM is
``vllm``), one hardware class (the catalog's: consumer GPU, datacenter GPU, unified-memory SoC, ...),
one phase (``decode``: per-session decode at concurrency 1, llama-bench tg, one stream, beside the
single-session ceiling; ``serving``: decode at a concurrency above one, per-session and aggregate runs
alike, each fitted per session (an aggregate run's rate and ceiling divided by its concurrency) beside
the per-session ceiling at its batch; ``prefill``: prefill tok/s, beside the prefill ceiling) and one
regime (weights on the device, or some in host RAM: an offload run is another regime, its own group). Runs above their
own ceiling would be left out: their inputs do not describe them. The core fits the group's per-token
time model and turns it into the band (:mod:`servebound.core.band`). At a forced batch B the band is a
per-session one beside the per-session ceiling r(B) (the fitted time applied to the step at B); at b*
an aggregate one, b* times the per-session band at r(b*), beside T(b*). Above batch 1 both come from
the ``serving`` group where it has a band, else from the ``decode`` group. Each says which.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, TypeVar

from servebound.catalog.engines import engines
from servebound.core.advice import Note, Setting
from servebound.core.band import (
    BAND_MIN_RUNS,
    BandBasis,
    ExpectedBand,
    TimeModel,
    expected_band,
    fit_time_model,
    leave_one_out,
)
from servebound.core.decode import DecodeResult as Decoded
from servebound.errors import InputError
from servebound.inputs.engine_choice import assumed_engine, catalog_facts
from servebound.runs.band_table import FittedGroup, fitted, table_text

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
PHASES = ("decode", "serving", "prefill")
#: A group's regimes: every weight on the device, or some in host RAM (an offload run).
ON_DEVICE, OFFLOAD = "", "weights in host RAM"


def engine_words(key: str) -> str:
    """An engine as people write it (the engine table's name without its aside: ``vLLM``,
    ``llama.cpp``, ``TensorRT-LLM``); a key the table does not hold (``nim``) as it is."""
    row = engines().get(key)
    return key if row is None else row.name.split(" (")[0]


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
    facts = catalog_facts(hardware_id)
    return None if facts is None else facts[0]


def _phase(entry: ReportedRunEntry) -> str | None:
    from servebound.runs.measured import Metric  # here: a ceiling with no engine never loads the runs

    if entry.metric is Metric.PER_SESSION_TOK_S and entry.concurrency == 1:
        return "decode"
    if entry.metric in (Metric.PER_SESSION_TOK_S, Metric.AGGREGATE_TOK_S) and entry.concurrency > 1:
        return "serving"
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


def _per_session(run: ReportedRun) -> tuple[float, float]:
    """(ceiling, measured) of one session: an aggregate run's divided by its concurrency (the fit is
    of one session's per-token time), any other run's as checked."""
    from servebound.runs.measured import Metric

    ceiling, measured = run.check.ceiling_tok_per_s, run.check.measured_tok_per_s
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
    from servebound.runs.evaluated import evaluate_entry

    key = (engine_key(engine), hardware_cls, phase, regime)
    return _group_of(key, [evaluate_entry(entry) for entry in _groups().get(key, ())])


@cache
def band_model(engine: str, hardware_cls: str, phase: str, regime: str = ON_DEVICE) -> TimeModel | None:
    """The group's fitted time model; None under BAND_MIN_RUNS runs."""
    group = band_group(engine, hardware_cls, phase, regime)
    return fit_time_model(group.ceilings, group.measured)


@cache  # a ranking asks it once per row: the answer is a pure function of the packaged tables
def band_basis(
    engine: str | None, hardware_id: str, weight_format: str | None, phase: str, regime: str = ON_DEVICE
) -> BandBasis | None:
    """Which runs a ceiling's band comes from: ``engine``, or without one the engine usually run on the
    hardware's class for this weight format (``assumed_engine``), said as assumed; None for a hardware
    file (no class) or where no engine runs the format here. Read from the precomputed table."""
    cls = hardware_class(hardware_id)
    if cls is None:
        return None
    why = "given"
    if engine is None:
        assumed = assumed_engine(hardware_id, weight_format)
        if assumed is None:
            return None
        engine, why = assumed
    group = fitted(engine_key(engine), cls, phase, regime)
    return BandBasis(
        engine=engine_key(engine),
        engine_assumed=why != "given",
        engine_why=why,
        hardware_class=cls,
        phase=phase,
        runs=0 if group is None else group.runs,
        min_runs=BAND_MIN_RUNS,
        regime=regime,
    )


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
    turns it into the aggregate of that many sessions (band and ceiling both). The group's fit is read
    from the precomputed table (``runs.band_table``): a lookup, not a refit."""
    if engine is None or ceiling_tok_per_s is None:
        return None
    cls = hardware_class(hardware_id)
    if cls is None:
        return None
    group = fitted(engine_key(engine), cls, phase, regime)
    if group is None:
        return None
    return expected_band(
        ceiling_tok_per_s,
        group.model,
        engine=group.engine,
        engine_name=engine_words(group.engine),
        hardware_class=cls,
        phase=phase,
        run_ids=group.run_ids,
        runs_url=RUNS_URL,
        scope=scope,
        sessions=sessions,
    )


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


R = TypeVar("R", "DecodeResult", "PrefillResult")


def _with(record: R, **bands: object) -> R:
    """``dataclasses.replace`` for the band fields alone, without re-running the record's ``__init__``
    (a third of a ranking row's band): no other field is derived from them."""
    out = object.__new__(type(record))
    out.__dict__.update(record.__dict__, **bands)
    return out


def with_band(result: R, engine: str | None = None) -> R:
    """A decode or prefill result with its expected band beside the ceiling (``expected``) and where it
    comes from (``expected_from``), computed once for every surface: the CLI, the Python API, the JSON
    API, the pages and tables. Without an engine the band is the usual engine's, said as assumed (None
    where :func:`band_for` gives none). Decode at a forced batch B: the per-session band beside r(B);
    with a b*, ``expected_aggregate`` beside T(b*) too. ``engine``: the engine the caller's row runs
    (``fit --engine E``), in place of the workload's."""

    hw = result.hardware.id
    regime = OFFLOAD if result.workload.offload is not None else ON_DEVICE
    phase = "decode" if isinstance(result, Decoded) else "prefill"
    given = engine if engine is not None else result.workload.engine
    basis = band_basis(given, hw, result.model.weight_precision, phase, regime)
    engine = None if basis is None else basis.engine
    if not isinstance(result, Decoded):
        band = band_for(result.tok_per_s, engine, hw, "prefill", regime=regime, scope="prefill tok/s")
        return _with(result, expected=band, expected_from=basis)
    forced = result.forced
    if forced is not None:
        scope = f"per session at batch {forced.batch}"
        band = _at_batch(forced.per_session_tok_per_s, forced.batch, engine, hw, regime, scope)
    else:
        band = band_for(result.single_session_tok_per_s, engine, hw, "decode", regime=regime)
    star = result.batch_star
    aggregate = None
    if star is not None and result.per_session_tok_per_s is not None:
        scope = f"aggregate at b* = {star}"
        aggregate = _at_batch(result.per_session_tok_per_s, star, engine, hw, regime, scope, sessions=star)
    if basis is not None and band is not None and band.phase != basis.phase:  # a batch's serving runs
        basis = replace(basis, phase=band.phase, runs=band.runs)
    return _with(result, expected=band, expected_aggregate=aggregate, expected_from=basis)


def _at_batch(
    per_session: float | None,
    batch: int,
    engine: str | None,
    hardware_id: str,
    regime: str,
    scope: str,
    sessions: int = 1,
) -> ExpectedBand | None:
    """The band of a batch's sessions: from the serving runs (at concurrencies above one) where the
    batch is above one and their group has a band, else from the single-session runs."""
    args = (per_session, engine, hardware_id)
    if batch > 1:
        band = band_for(*args, "serving", regime=regime, scope=scope, sessions=sessions)
        if band is not None:
            return band
    return band_for(*args, "decode", regime=regime, scope=scope, sessions=sessions)


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
    band: ExpectedBand | None, basis: BandBasis | None, aggregate: ExpectedBand | None = None
) -> Note:
    """The band's lines under a ceiling: always called an estimate, with its runs, class and scope, and
    the engine's assumption where none was given; under BAND_MIN_RUNS runs, says so and gives none."""
    if basis is None:
        return Note.of(
            "expected: no published runs apply here (a hardware file has no class, or no engine of the "
            "table runs this weight format); give ",
            Setting("engine"),
            " for a band from the published runs of that engine on a catalog device (an estimate)",
        )
    assumed = ""
    if basis.engine_assumed:
        assumed = f"{basis.engine} assumed ({basis.engine_why}); --engine E for another engine's runs\n"
    if band is None:
        runs = {0: "no published run", 1: "1 published run"}.get(basis.runs, f"{basis.runs} published runs")
        return Note.of(
            f"{assumed}expected with {basis.engine}: {runs} of this engine on {basis.hardware_class}s "
            f"({basis.phase}{', ' + basis.regime if basis.regime else ''}), fewer than the "
            f"{basis.min_runs} a band needs, so no band"
            if not basis.has_band
            else f"{assumed}expected with {basis.engine}: no ceiling to set a band beside"
        )
    return Note.of(assumed + "\n".join(_band_line(b) for b in (band, aggregate) if b is not None))


def _band_line(band: ExpectedBand) -> str:
    clipped = "; p90 clipped at the ceiling" if band.clipped_at_ceiling else ""
    return (
        f"expected with {band.engine}, {band.scope} ({band.label}, not a bound): {band.p10_tok_s:,.1f} / "
        f"{band.p50_tok_s:,.1f} / {band.p90_tok_s:,.1f} tok/s (p10 / median / p90, beside a ceiling of "
        f"{band.ceiling_tok_s:,.1f}{clipped}; runs at {band.runs_url})"
    )
