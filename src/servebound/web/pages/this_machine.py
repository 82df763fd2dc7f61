"""The served site's first answer: what fits the machine it runs on.

`servebound serve` runs on someone's own machine far more often than on a shared host, so its home page
opens with the record `servebound fit` computes there: the machine detected as ``--hardware auto``
detects it (``hardware_ref("auto")``: :func:`servebound.measure.auto.detected_hardware_id`), every
catalog model evaluated at the default workload, the heaviest format an engine runs there that clears the floor, largest model first.
Where detection finds nothing it says so, with the reason, and points to choosing a machine. A static
export is not this machine: its home page never carries this section.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import list_models
from servebound.errors import InputError
from servebound.inputs.resolve import AUTO, CPU_ONLY_ID, hardware_ref
from servebound.inputs.scenario import make_workload
from servebound.inputs.workload import WorkloadInputs
from servebound.questions.fit import fit_models
from servebound.views.band_view import band_cell
from servebound.web.pages.text import pair_path
from servebound.web.pages.words import page_text

if TYPE_CHECKING:
    from servebound.web.pages.site import SiteData

#: Rows the home page shows (the full list is `servebound fit --json`).
HOME_ROWS = 12


@dataclass(frozen=True)
class MachineFitRow:
    model_name: str
    profile_id: str
    weight_format: str
    engine: str
    resident_gb: float
    single_tok_s: float | None
    aggregate_tok_s: float | None
    expected_p50_tok_s: float | None
    expected_runs: int | None
    href: str  # the pair page on this machine ("" where the site has no such page)
    expected: str = "-"  # the row's band, p10-p90 of one session (``views.band_view.band_cell``)


@dataclass(frozen=True)
class MachineFit:
    """What fits this machine, or why it is not known: ``hardware_id`` None means detection found
    nothing usable and ``problem`` says what it found."""

    hardware_id: str | None
    hardware_name: str | None
    problem: str | None
    rows: tuple[MachineFitRow, ...]
    fitting: int
    considered: int
    floor_tok_s: float


_CPU_ONLY = (
    "auto found no GPU: `servebound fit` answers for this machine's CPU and system RAM (its memory "
    "bandwidth from the catalog host row of its platform, or an estimate); measure this machine with "
    "`servebound measure -o my.toml` for its own figures"
)


def machine_fit(limit: int = HOME_ROWS) -> MachineFit:
    """The fit record of this machine (``servebound fit`` at its defaults), at most ``limit`` rows."""
    workload = make_workload(WorkloadInputs())  # `servebound fit`'s defaults, as its flags give them
    try:
        hardware_id = hardware_ref(AUTO)  # the device probes load here, not at the server's start
        if hardware_id == CPU_ONLY_ID:  # the pages are per catalog row: the CLI answers for the CPU
            return MachineFit(None, None, _CPU_ONLY, (), 0, 0, workload.stated.floor_tok_s)
        row = get_hardware(hardware_id)
    except InputError as error:
        return MachineFit(None, None, page_text(error.note), (), 0, 0, workload.stated.floor_tok_s)
    found, considered = fit_models(row.hardware, row.vendor, list_models(), workload)
    rows = []
    for fit in found[:limit]:
        single = fit.decode.single_session_tok_s
        band = fit.decode.expected  # the row's band, as `servebound fit` gives it
        rows.append(
            MachineFitRow(
                fit.profile.name,
                fit.profile.id,
                fit.profile.weight_format,
                fit.engine,
                fit.profile.adapter.weights.resident / 1e9,
                single,
                fit.decode.aggregate_tok_s,
                None if band is None else band.p50_tok_s,
                None if band is None else band.runs,
                pair_path(hardware_id, fit.profile.id),
                band_cell(band),
            )
        )
    return MachineFit(
        hardware_id,
        row.hardware.name,
        None,
        tuple(rows),
        len(found),
        considered,
        workload.stated.floor_tok_s,
    )


def on_site(fit: MachineFit, site: SiteData) -> MachineFit:
    """The record as this site can link it: rows whose profile the site lists, each linking to its pair
    page where the site resolves the machine (a site built over its own short lists has fewer)."""
    if fit.hardware_id is None:
        return fit
    try:
        site.get_hardware(fit.hardware_id)
        linked = True
    except InputError:
        linked = False
    rows = tuple(
        row if linked else replace(row, href="") for row in fit.rows if row.profile_id in site.models_by_id
    )
    return replace(fit, rows=rows)
