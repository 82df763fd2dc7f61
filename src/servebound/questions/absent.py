"""Why a figure of an answer is absent, as records: where nothing fits, no rate, batch or wait exists;
where no batch holds the floor, no useful aggregate; a model without prefill fields has no prefill
ceiling. A ranking row carries them; every surface says them in the same words (the pair page's
answers, the rank tables' "n/a" cells)."""

from __future__ import annotations

from servebound.core.advice import Note
from servebound.core.decode import DecodeResult, Verdict

#: Why a figure is absent, in the words every page says it (the pair page's answers, the rank tables'
#: "n/a" cells): where nothing fits, no rate, batch or wait exists; where no batch holds the floor, no
#: useful aggregate; a model without prefill fields has no prefill ceiling.
NOTHING_FITS_WHY = "nothing fits in memory"
NO_FLOOR_WHY = "no batch holds the floor"
NO_WAIT_WHY = "nothing fits in memory, so no prompt is processed and there is no wait to report"
NO_PREFILL_WHY = (
    "this model has no prefill fields (linear parameters, attention FLOPs), so no prefill ceiling"
)


def missing_decode(r: DecodeResult) -> dict[str, Note]:
    """Why each of a decode answer's headline figures is absent (single session, useful aggregate, b*),
    by its JSON name; a figure that is present has no entry."""
    why = NOTHING_FITS_WHY if r.verdict in (Verdict.NO_RESIDENT_FIT, Verdict.NO_SESSION_FIT) else NO_FLOOR_WHY
    figures = {
        "single_session_tok_s": r.single_session_tok_s,
        "aggregate_tok_s": r.aggregate_tok_s,
        "batch_star": r.batch_star,
    }
    return {name: Note((why,)) for name, value in figures.items() if value is None}
