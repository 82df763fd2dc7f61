"""Things defined once: the per-mode schema tables follow the one list of arithmetic modes."""

from __future__ import annotations

from typing import get_args

from servebound.catalog.hardware_schema import ComputeRow, SourcesRow
from servebound.core.hardware import ARITHMETIC_MODES, ArithmeticMode
from servebound.files import ComputeFile


def test_arithmetic_modes_are_the_literal() -> None:
    assert get_args(ArithmeticMode) == ARITHMETIC_MODES


def test_per_mode_schema_fields_follow_the_modes() -> None:
    assert tuple(ComputeFile.model_fields) == ARITHMETIC_MODES
    assert tuple(ComputeRow.model_fields) == ARITHMETIC_MODES
    assert tuple(SourcesRow.model_fields)[-len(ARITHMETIC_MODES) :] == ARITHMETIC_MODES
