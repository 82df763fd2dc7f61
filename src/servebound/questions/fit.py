"""What this machine serves: for each catalog model, the weight format (and engine) it would run in, where
a session fits and clears the floor, best (largest) model first.

Every profile of every model (all weight formats) is evaluated at the workload given; per model the
format kept is ``inputs.engine_formats.choose_format``'s (the heaviest that clears the floor among the
formats an engine runs on this hardware; its module states which engine runs which format). A bare
model name under ``--engine`` takes the same choice (``resolve_scenario``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from servebound.catalog.models import CatalogModel, list_models
from servebound.core.decode import DecodeResult, decode
from servebound.core.hardware import Hardware
from servebound.inputs.declared import AnyWorkload
from servebound.inputs.engine_choice import hardware_vendor, usual_engines
from servebound.inputs.engine_formats import FormatChoice, choose_format
from servebound.inputs.scenario import make_workload, resolve_scenario
from servebound.runs.band import with_band


@dataclass(frozen=True)
class FitRow:
    """One model this machine serves at the floor, in the format and engine it would use."""

    profile: CatalogModel
    engine: str
    decode: DecodeResult


def fit_models(
    hardware: Hardware,
    vendor: str | None,
    profiles: Iterable[CatalogModel],
    workload: AnyWorkload,
    *,
    engine: str | None = None,
    usual: tuple[str, ...] | None = None,
) -> tuple[list[FitRow], int]:
    """(rows, models considered): per model the heaviest format an engine runs here that clears the floor,
    largest model (total parameters) first; ``engine`` keeps only that engine's formats, ``usual`` (where
    no engine is named) only those of the engines people run on the device (by default
    ``usual_engines``: every surface asks the same question)."""
    profiles = list(profiles)
    rows = [
        FitRow(c.profile, c.engine, c.decode)
        for c in _choices(hardware, vendor, profiles, workload, engine=engine, usual=usual)
        if c.decode is not None
    ]
    considered = len({p.base_id for p in profiles})
    rows.sort(key=lambda r: (-(r.profile.total_params or 0.0), -(r.decode.single_session_tok_s or 0.0)))
    # each row's band, of the engine named (else the one usually run here), read once for every surface
    return [replace(r, decode=with_band(r.decode, engine)) for r in rows], considered


def _choices(
    hardware: Hardware,
    vendor: str | None,
    profiles: Iterable[CatalogModel],
    workload: AnyWorkload,
    *,
    engine: str | None = None,
    usual: tuple[str, ...] | None = None,
) -> list[FormatChoice]:
    """Per model (in catalog order) ``choose_format``'s choice for these engines, where one runs here."""
    if usual is None:
        usual = usual_engines(hardware.id) if engine is None else ()
    tried: tuple[str | None, ...] = (engine,) if engine is not None else (usual or (None,))
    by_model: dict[str, list[CatalogModel]] = {}
    for profile in profiles:
        by_model.setdefault(profile.base_id, []).append(profile)

    def evaluate(profile: CatalogModel) -> DecodeResult:
        scenario = resolve_scenario(workload, hardware=hardware, model=profile.adapter)
        return decode(hardware, profile.adapter, scenario.workload)

    found = (choose_format(formats, vendor, hardware.id, tried, evaluate) for formats in by_model.values())
    return [choice for choice in found if choice is not None]


def usual_formats(
    hardware: Hardware,
    vendor: str | None,
    profiles: list[CatalogModel],
    workload: AnyWorkload,
    usual: tuple[str, ...],
) -> list[CatalogModel]:
    """One profile per model for a ranking on a device whose usual engines are known: the heaviest format
    they run that clears the floor (``fit``'s choice, so rank and fit agree), else the lightest format
    they run (the nearest to fitting), else the release as published."""
    chosen = {
        c.profile.base_id: c.profile for c in _choices(hardware, vendor, profiles, workload, usual=usual)
    }
    return [chosen.get(p.base_id, p) for p in profiles if p.native]


def usual_profile_ids(
    hardware: Hardware, workload: AnyWorkload
) -> tuple[tuple[str, ...], frozenset[str]] | None:
    """(the usual engines, the profile per model ``usual_formats`` keeps) for a ranking of every model on
    this hardware, or None where its class has no usual engine (the releases are ranked as published).
    The CLI's rank, the API's and the site's call this one function, so they agree."""
    usual = usual_engines(hardware.id)
    if not usual:
        return None
    vendor = hardware_vendor(hardware.id)
    return usual, frozenset(p.id for p in usual_formats(hardware, vendor, list_models(), workload, usual))


def fitting_profiles(hardware: Hardware, profiles: Iterable[CatalogModel]) -> list[CatalogModel]:
    """The profiles of which one session fits on ``hardware`` at the default workload (`servebound models
    list --fits`), in the order given."""
    workload = make_workload()  # the default workload
    return [
        p
        for p in profiles
        if decode(
            hardware, p.adapter, resolve_scenario(workload, hardware=hardware, model=p.adapter).workload
        ).fits
    ]
