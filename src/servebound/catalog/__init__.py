"""Catalog data files with a source per number, their schemas and loaders.

The hardware names below are imported from ``catalog.hardware`` on first use, so reading a data file
of the package (``catalog.data``) costs no schema import (pydantic)."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from servebound.catalog.hardware import (
        CatalogHardware,
        HardwareCatalog,
        get_hardware,
        list_hardware,
        load_hardware_catalog,
    )

__all__ = [
    "CatalogHardware",
    "HardwareCatalog",
    "get_hardware",
    "list_hardware",
    "load_hardware_catalog",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from servebound.catalog import hardware

        return getattr(hardware, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
