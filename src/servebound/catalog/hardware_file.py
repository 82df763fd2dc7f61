"""The hardware catalog as a file: ``catalog/data/hardware.toml`` or a user's catalog validated against
its schema (pydantic, :mod:`servebound.catalog.hardware_schema`) and built into the records of
:mod:`servebound.catalog.hardware`. The packaged catalog is read from the snapshot instead
(``scripts/build_snapshot.py`` builds it from here), so a command that looks up a row never loads this
module or pydantic."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from servebound.catalog.engines import device_family
from servebound.catalog.hardware import (
    CatalogHardware,
    DevicePrice,
    HardwareCatalog,
    system_record,
    vendor_free_alias,
)
from servebound.catalog.hardware_names import normalize_ref
from servebound.catalog.hardware_schema import (
    CatalogFile,
    DerivedRate,
    DeviceRow,
    PriceRow,
    structural_problems,
)
from servebound.core.engines import EngineTable
from servebound.core.hardware import Hardware
from servebound.core.units import GB, TFLOPS
from servebound.errors import InputError
from servebound.inputs import bounded, package_data

#: A hardware catalog file a user passes is read bounded (the shipped one is about 0.2 MB).
MAX_CATALOG_BYTES = 16_000_000


#: The device row's fields a catalog record keeps as they are (units, sources and price are converted).
_ROW_KEPT = (
    "id",
    "name",
    "vendor",
    "device_class",
    "year",
    "memory_type",
    "price_usd",
    "notes",
    "sparse_halved",
    "derived",
    "low_confidence",
    "aliases",
    "memory_label_gb",
)


def parse_catalog_data(data: Mapping[str, Any], origin: str = "hardware catalog") -> CatalogFile:
    """Validate a parsed catalog document; InputError naming every bad field."""
    try:
        return CatalogFile.model_validate(data)
    except ValidationError as exc:
        raise InputError(origin, "; ".join(describe_validation_errors(exc, data))) from None


def describe_validation_errors(exc: ValidationError, data: Mapping[str, Any]) -> list[str]:
    """One line per pydantic error, naming the row by its id where it has one."""
    lines = []
    for error in exc.errors():
        loc = list(error["loc"])
        where = ".".join(str(part) for part in loc)
        if len(loc) >= 2 and loc[0] in ("device", "system") and isinstance(loc[1], int):
            rows = data.get(str(loc[0]), [])
            row = rows[loc[1]] if isinstance(rows, list) and loc[1] < len(rows) else {}
            row_id = row.get("id") if isinstance(row, dict) else None
            label = f"{loc[0]} '{row_id}'" if row_id else f"{loc[0]} #{loc[1] + 1}"
            where = ".".join([label, *(str(part) for part in loc[2:])])
        lines.append(f"{where}: {error['msg']}")
    return lines


def read_catalog_document(path: str | Path | None = None) -> tuple[dict[str, Any], str]:
    """The raw TOML document and a name for messages: the packaged file, or ``path``."""
    raw: bytes | str
    if path is None:
        raw = package_data.read_text("servebound.catalog", "data", "hardware.toml")
        origin = "hardware catalog"
    else:
        origin = str(path)
        raw = bounded.read_bytes(path, "hardware catalog", max_bytes=MAX_CATALOG_BYTES)
    return bounded.parse_toml(raw, f"hardware catalog {origin}"), origin


def build_catalog(parsed: CatalogFile, table: EngineTable | None = None) -> HardwareCatalog:
    """Records and index from a validated file (families from ``table``); InputError listing any problem."""
    problems = structural_problems(parsed)
    for row in parsed.device:
        for key, value in (("memory_gb", row.memory_gb), ("bandwidth_gb_per_s", row.bandwidth_gb_per_s)):
            if not value > 0 or not math.isfinite(value):
                problems.append(f"device '{row.id}': {key} must be a positive number (got {value})")
        for mode, value in row.compute_tflops.present().items():
            if not value > 0:
                problems.append(f"device '{row.id}': compute_tflops.{mode} must be positive (got {value})")
    if problems:
        raise InputError("hardware catalog", "; ".join(problems))
    devices = [_device_record(row, table) for row in parsed.device]
    by_id = {entry.id: entry for entry in devices}
    systems = [
        system_record(
            by_id[row.member],
            row.count,
            system_id=row.id,
            name=row.name,
            system_class=row.system_class,
            year=row.year,
            notes=row.notes or None,
            aliases=tuple(row.aliases),
            interconnect=row.interconnect,
            table=table,
        )
        for row in parsed.system
    ]
    entries = (*devices, *systems)
    index: dict[str, str] = {}
    for entry in entries:
        index[entry.id] = entry.id
        for alias in entry.aliases:
            index[alias] = entry.id
    for entry in devices:
        implicit = vendor_free_alias(entry.id)
        if implicit and implicit not in index:
            index[implicit] = entry.id
    for entry in entries:  # the display name the site's pickers show is a name the catalog takes back
        index.setdefault(normalize_ref(entry.name), entry.id)
    return HardwareCatalog(index=MappingProxyType(index), by_id=MappingProxyType({e.id: e for e in entries}))


def load_hardware_catalog_file(path: str | Path) -> HardwareCatalog:
    """The hardware catalog file at ``path``, validated; InputError naming the row and field for a
    malformed file."""
    data, origin = read_catalog_document(path)
    return build_catalog(parse_catalog_data(data, origin))


def _device_record(row: DeviceRow, table: EngineTable | None = None) -> CatalogHardware:
    compute = row.compute_tflops.present()
    declared = row.sources.model_dump(exclude_none=True)
    sources: dict[str, str] = {k: v for k, v in declared.items() if k != "compute"}
    for mode in compute:
        if mode not in sources and "compute" in declared:
            sources[mode] = declared["compute"]
    for mode, rate in row.derived_from.items():
        sources[mode] = derived_source(mode, rate, sources.get(rate.of))
    hardware = Hardware(
        id=row.id,
        name=row.name,
        memory_bytes=row.memory_gb * GB,
        bandwidth_bytes_per_s=row.bandwidth_gb_per_s * GB,
        compute_flop_per_s={mode: value * TFLOPS for mode, value in compute.items()},
        provenance=row.provenance,
        sources={k: v for k, v in sources.items() if k != "price_usd"},
        runtime_overhead_bytes=None if row.runtime_overhead_gb is None else row.runtime_overhead_gb * GB,
        family=device_family(row.id, table),
    )
    return CatalogHardware(
        **row.model_dump(include=set(_ROW_KEPT)),
        hardware=hardware,
        sources=sources,
        price=_device_price(row, sources.get("price_usd")),
    )


def derived_source(mode: str, rate: DerivedRate, base_source: str | None) -> str:
    """A derived rate's source: the rule, then the source of the rate it comes from."""
    ratio = f"{rate.ratio:g}" if rate.ratio >= 1 else f"1/{1 / rate.ratio:g}"
    return f"derived: {mode} = {ratio} x {rate.of} ({rate.rule}); {rate.of}: {base_source or 'unsourced'}"


def _device_price(row: DeviceRow, purchase_source: str | None) -> DevicePrice:
    return DevicePrice(
        **(row.price or PriceRow()).model_dump(),
        purchase_usd=row.price_usd,
        purchase_source=purchase_source if row.price_usd is not None else None,
    )
