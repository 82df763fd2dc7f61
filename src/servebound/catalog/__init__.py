"""Catalog data files with a source per number, their schemas and loaders."""

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
