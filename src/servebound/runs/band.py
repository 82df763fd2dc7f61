"""The expected band beside a ceiling, from the reported runs of the same engine, hardware class and phase.

A group is the reported runs (``catalog/data/reported_runs.toml``) of one engine (names folded: vLLM is
``vllm``), one hardware class (the catalog's: consumer GPU, datacenter GPU, unified-memory SoC, ...) and
one phase: ``decode`` is per-session decode at concurrency 1 (llama-bench tg, one stream), set beside the
single-session ceiling; ``prefill`` is prefill tok/s, beside the prefill ceiling. Runs above their own
ceiling are left out: their inputs do not describe them (each carries its explanation), so their ratio
says nothing about the engine. The core turns the group's efficiencies into the band
(:func:`servebound.core.band.expected_band`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, TypeVar

from servebound.core.advice import Note, Setting
from servebound.core.band import BAND_MIN_RUNS, ExpectedBand, expected_band, leave_one_out_inside
from servebound.errors import InputError

if TYPE_CHECKING:  # the run catalog (pydantic) loads only when a band is asked for
    from servebound.core.decode import DecodeResult
    from servebound.core.prefill_records import PrefillResult
    from servebound.runs.reported import ReportedRunEntry

#: The engines the contract names for --engine (a workload input; the band uses the runs of that engine).
ENGINES = ("llama.cpp", "ollama", "lm-studio", "mlx", "vllm", "sglang", "trt-llm")
#: Where every reported run is listed with its source.
RUNS_URL = "/validation"
PHASES = ("decode", "prefill")


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


@dataclass(frozen=True)
class BandGroup:
    """One group's runs: ids and efficiencies (measured / the ceiling for each run's own setting)."""

    engine: str
    hardware_class: str
    phase: str
    run_ids: tuple[str, ...]
    efficiencies: tuple[float, ...]


@cache
def _groups() -> dict[tuple[str, str, str], tuple[ReportedRunEntry, ...]]:
    from servebound.runs.reported import load_reported_runs

    groups: dict[tuple[str, str, str], list[ReportedRunEntry]] = {}
    for entry in load_reported_runs():
        phase = _phase(entry)
        cls = hardware_class(entry.hardware)
        if phase is not None and cls is not None:
            groups.setdefault((engine_key(entry.engine), cls, phase), []).append(entry)
    return {key: tuple(value) for key, value in groups.items()}


@cache
def band_group(engine: str, hardware_cls: str, phase: str) -> BandGroup:
    """The group's runs at or below their ceilings, each checked against the ceiling for its setting."""
    from servebound.runs.validation import evaluate_entry

    ids: list[str] = []
    efficiencies: list[float] = []
    for entry in _groups().get((engine_key(engine), hardware_cls, phase), ()):
        evaluated = evaluate_entry(entry)
        if evaluated.at_or_below:
            ids.append(entry.id)
            efficiencies.append(evaluated.efficiency)
    return BandGroup(engine_key(engine), hardware_cls, phase, tuple(ids), tuple(efficiencies))


def band_for(
    ceiling_tok_per_s: float | None, engine: str | None, hardware_id: str, phase: str
) -> ExpectedBand | None:
    """The expected band beside a ceiling, or None: no engine named, no ceiling (nothing fits), a
    hardware file (no class), or fewer than BAND_MIN_RUNS runs in the group."""
    if engine is None or ceiling_tok_per_s is None:
        return None
    cls = hardware_class(hardware_id)
    if cls is None:
        return None
    group = band_group(engine, cls, phase)
    return expected_band(
        ceiling_tok_per_s,
        group.efficiencies,
        engine=group.engine,
        hardware_class=cls,
        phase=phase,
        run_ids=group.run_ids,
        runs_url=RUNS_URL,
    )


R = TypeVar("R", "DecodeResult", "PrefillResult")


def with_band(result: R) -> R:
    """A decode or prefill result with its expected band beside the ceiling (``expected``), as every
    surface shows it: the CLI, the Python API and the JSON API (None where :func:`band_for` gives none)."""
    from servebound.core.decode import DecodeResult as Decoded

    if isinstance(result, Decoded):
        rate, phase = result.single_session_tok_per_s, "decode"
    else:
        rate, phase = result.tok_per_s, "prefill"
    return replace(result, expected=band_for(rate, result.workload.engine, result.hardware.id, phase))


@dataclass(frozen=True)
class Calibration:
    """Leave-one-out calibration of the bands: per group and pooled, runs inside their own p10-p90."""

    groups: tuple[tuple[BandGroup, int, int], ...]
    inside: int
    evaluated: int

    @property
    def share(self) -> float | None:
        return self.inside / self.evaluated if self.evaluated else None


def band_calibration() -> Calibration:
    """Every group with more than BAND_MIN_RUNS runs: each run left out, whether it lands in the band
    the others give (the 10th-90th percentile range of their efficiencies)."""
    rows = []
    for engine, cls, phase in sorted(_groups()):
        group = band_group(engine, cls, phase)
        if len(group.efficiencies) > BAND_MIN_RUNS:
            inside, evaluated = leave_one_out_inside(group.efficiencies)
            rows.append((group, inside, evaluated))
    return Calibration(tuple(rows), sum(row[1] for row in rows), sum(row[2] for row in rows))


def expected_text(band: ExpectedBand | None, engine: str | None) -> Note:
    """The band's line under a ceiling: always called an estimate, with its runs and their class."""
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
    return Note.of(
        f"expected with {band.engine} (an estimate from {band.runs} published runs on {band.hardware_class}s, "
        f"not a bound): {band.p10_tok_s:,.1f} / {band.p50_tok_s:,.1f} / {band.p90_tok_s:,.1f} tok/s "
        f"(p10 / median / p90; runs at {band.runs_url})"
    )
