"""The expected band as each surface writes it: a table cell, the pair page's line, the assumption.

Every function here reads the band a decode or prefill record already carries (``expected``,
``expected_from``: :func:`servebound.runs.band.with_band`, computed once per answered question); none
computes a band. The CLI's tables (rank, fit), the site's hardware and model tables and pair pages, and
their markdown mirrors all call these, so they say the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable

from servebound.core.band import BAND_MIN_RUNS, BandBasis, ExpectedBand
from servebound.runs.band import engine_words
from servebound.views.report import fmt_rate


def band_range(band: ExpectedBand) -> str:
    """``p10-p90`` in tok/s, without the unit (the table cell, and the line's figure)."""
    return f"{fmt_rate(band.p10_tok_s, '')}-{fmt_rate(band.p90_tok_s, '')}"


def band_cell(band: ExpectedBand | None) -> str:
    """A table's ``expected tok/s`` cell: p10-p90, or ``-`` where there is no band (too few runs, no
    engine runs the format, or nothing fits)."""
    return "-" if band is None else band_range(band)


def runs_phrase(basis: BandBasis) -> str:
    """``N published runs of ENGINE on CLASSs`` (the band's label, also where there is none)."""
    runs = {0: "no published runs", 1: "1 published run"}.get(basis.runs, f"{basis.runs} published runs")
    regime = f" ({basis.regime})" if basis.regime else ""
    return f"{runs} of {engine_words(basis.engine)} on {basis.hardware_class}s{regime}"


def band_line(band: ExpectedBand | None, basis: BandBasis | None) -> str:
    """The pair page's line beside the cards: ``expected with ENGINE: p10-p90 tok/s, an estimate from N
    published runs of ENGINE on CLASS``; where the runs are fewer than a band needs, it says so and gives
    no band; empty where no runs apply (a hardware file, a format no engine runs here)."""
    if basis is None:
        return ""
    head = f"expected with {engine_words(basis.engine)}"
    if band is None and not basis.has_band:
        only = "" if basis.runs == 0 else "only "
        return (
            f"{head}: no band, {only}{runs_phrase(basis)} (a band needs {basis.min_runs}); the ceiling "
            "is the bound"
        )
    if band is None:
        return f"{head}: no band, since there is no ceiling to set it beside"
    return f"{head}: {band_range(band)} tok/s, {band.label}"


def band_assumption(basis: BandBasis | None) -> str:
    """Where the engine was assumed: which and why (empty where it was given)."""
    if basis is None or not basis.engine_assumed:
        return ""
    return f"{engine_words(basis.engine)} assumed: {basis.engine_why}"


def expected_column_text(bases: Iterable[BandBasis | None]) -> str:
    """A table's note on its ``expected tok/s`` column: what the band is and which engines' runs it
    reads (those assumed said so), from the rows' own ``expected_from``."""
    engines: dict[str, bool] = {}
    for basis in bases:
        if basis is not None:
            said_as = engine_words(basis.engine)
            engines[said_as] = engines.get(said_as, False) or basis.engine_assumed
    said = ", ".join(f"{e} (assumed: the engine usually run there)" if a else e for e, a in engines.items())
    return (
        "expected tok/s: p10-p90 of one session, an estimate from published runs of the row's engine on "
        f"its hardware class, never a bound{'; engines: ' + said if said else ''}; - where fewer than "
        f"{BAND_MIN_RUNS} runs exist, no engine runs the format there, or nothing fits"
    )


#: The functions the site's templates call (the renderer's globals).
BAND_TEXT = {
    "engine_words": engine_words,
    "band_line": band_line,
    "band_cell": band_cell,
    "band_range": band_range,
    "band_assumption": band_assumption,
}
