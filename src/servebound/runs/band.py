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

from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, TypeVar

from servebound.catalog.engines import engines
from servebound.core.advice import Note, Setting
from servebound.core.band import BAND_MIN_RUNS, BandBasis, ExpectedBand, expected_band
from servebound.core.decode import DecodeResult as Decoded
from servebound.errors import InputError
from servebound.inputs.engine_choice import assumed_engine, catalog_facts
from servebound.runs.band_table import fitted

if TYPE_CHECKING:
    from servebound.core.decode import DecodeResult
    from servebound.core.prefill_records import PrefillResult

#: The engines the contract names for --engine (a workload input; the band uses the runs of that engine).
ENGINES = ("llama.cpp", "ollama", "lm-studio", "mlx", "vllm", "sglang", "trt-llm")
#: Where every reported run is listed with its source.
RUNS_URL = "/validation"
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
    ceiling_tok_s: float | None,
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
    if engine is None or ceiling_tok_s is None:
        return None
    cls = hardware_class(hardware_id)
    if cls is None:
        return None
    group = fitted(engine_key(engine), cls, phase, regime)
    if group is None:
        return None
    return expected_band(
        ceiling_tok_s,
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
        band = band_for(result.tok_s, engine, hw, "prefill", regime=regime, scope="prefill tok/s")
        return _with(result, expected=band, expected_from=basis)
    forced = result.forced
    if forced is not None:
        scope = f"per session at batch {forced.batch}"
        band = _at_batch(forced.per_session_tok_s, forced.batch, engine, hw, regime, scope)
    else:
        band = band_for(result.single_session_tok_s, engine, hw, "decode", regime=regime)
    star = result.batch_star
    aggregate = None
    if star is not None and result.per_session_tok_s is not None:
        scope = f"aggregate at b* = {star}"
        aggregate = _at_batch(result.per_session_tok_s, star, engine, hw, regime, scope, sessions=star)
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
