"""The one error type users see: it names the field and the problem, and where possible the fix."""

from __future__ import annotations

from servebound.core.advice import Note


class InputError(ValueError):
    """Bad input at a boundary (a file, a flag, an API body). ``field`` names what was wrong.

    The CLI prints ``str(error)`` on one line and exits 2; the API answers 400 with
    ``{"error": {"field": ..., "message": ...}}``. A problem that names other inputs (its remedy) is a
    ``Note``: ``problem`` and ``str(error)`` spell them as the terminal does (flags), ``note.api`` as the
    API and the pages do (parameters).
    """

    def __init__(self, field: str, problem: str | Note) -> None:
        note = problem if isinstance(problem, Note) else Note((problem,))
        super().__init__(f"{field}: {note.terminal}")
        self.field = field
        self.note = note
        self.problem = note.terminal


#: The longest id a lookup considers: catalog ids are slugs of at most 120 characters. A longer one is
#: refused before any fuzzy matching (whose cost grows with the id) and is never echoed back whole.
MAX_ID_CHARS = 120
#: How much of an over-long id or path an error message repeats.
ECHO_CHARS = 80


def shown(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` as an error repeats it: whole when short, else its start and its length."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def check_id_length(ref: str, field: str) -> None:
    """InputError for an id longer than any catalog id, before any work is spent on it."""
    if len(ref) > MAX_ID_CHARS:
        raise InputError(field, f"'{shown(ref)}' is longer than any id ({MAX_ID_CHARS} characters at most)")
