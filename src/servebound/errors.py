"""The one error type users see: it names the field and the problem, and where possible the fix."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input at a boundary (a file, a flag, an API body). ``field`` names what was wrong.

    The CLI prints ``str(error)`` on one line and exits 2; the API answers 400 with
    ``{"error": {"field": ..., "message": ...}}``.
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem
