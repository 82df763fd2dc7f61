"""``inputs.engine_choice.catalog_facts`` reads a hardware row's class and vendor from the snapshot (a
cold decode loads no catalog module): it must say what the catalog's row says, NxID forms included."""

from __future__ import annotations

import pytest

from servebound.catalog.hardware import get_hardware, load_hardware_catalog
from servebound.errors import InputError
from servebound.inputs.engine_choice import catalog_facts

REFS = [
    "nvidia-rtx-4090",
    "RTX 4090",  # an alias, spelled loosely
    "8x-nvidia-h200-sxm",  # a system the catalog lists
    "8x-h200",  # the same, through the device's alias
    "3x-nvidia-rtx-4090",  # a system the catalog builds
    "2x-8x-nvidia-h200-sxm",  # a system of a system: refused
    "0x-nvidia-rtx-4090",  # a count out of range
    "2000x-nvidia-rtx-4090",
    "2x-no-such-device",
    "no-such-device",
    "this-machine-cpu",
]


def _catalog(ref: str) -> tuple[str, str] | None:
    try:
        row = get_hardware(ref)
    except InputError:
        return None
    return row.device_class, row.vendor


@pytest.mark.parametrize("ref", REFS)
def test_facts_are_the_catalog_rows(ref: str) -> None:
    assert catalog_facts(ref) == _catalog(ref)


def test_facts_of_every_row_and_its_pair() -> None:
    for row in load_hardware_catalog():
        assert catalog_facts(row.id) == (row.device_class, row.vendor)
        if not row.is_system:
            assert catalog_facts(f"2x-{row.id}") == _catalog(f"2x-{row.id}")
