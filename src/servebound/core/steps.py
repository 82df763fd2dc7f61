"""One line of shown arithmetic: what was computed, its value and how.

An importer's derivation (every adapter quantity from its config or file) and a fleet plan's sizing are
each a list of these, so a reader can redo every number."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """One derived quantity: its name (a model-file key where one exists), value and the arithmetic."""

    quantity: str
    value: float
    formula: str
