"""Things defined once: the per-mode schema tables follow the one list of arithmetic modes; the catalog
record copies the device row's fields by name, so every name it copies must be a field of both."""

from __future__ import annotations

import dataclasses
from typing import get_args

from servebound.catalog import hardware as catalog_hardware
from servebound.catalog import hardware_file
from servebound.catalog.hardware_schema import ComputeRow, DeviceRow, SourcesRow
from servebound.core.hardware import ARITHMETIC_MODES, ArithmeticMode
from servebound.inputs.files import ComputeFile


def test_arithmetic_modes_are_the_literal() -> None:
    assert get_args(ArithmeticMode) == ARITHMETIC_MODES


def test_per_mode_schema_fields_follow_the_modes() -> None:
    assert tuple(ComputeFile.model_fields) == ARITHMETIC_MODES
    assert tuple(ComputeRow.model_fields) == ARITHMETIC_MODES
    assert tuple(SourcesRow.model_fields)[-len(ARITHMETIC_MODES) :] == ARITHMETIC_MODES


def test_the_catalog_record_keeps_device_row_fields_by_their_names() -> None:
    # pydantic's model_dump(include=...) ignores a name it does not know: a renamed field would
    # otherwise fall back to its default in every catalog record without a word.
    kept = set(hardware_file._ROW_KEPT)
    assert kept <= set(DeviceRow.model_fields)
    assert kept <= {f.name for f in dataclasses.fields(catalog_hardware.CatalogHardware)}
