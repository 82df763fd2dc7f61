"""The engine table of ``catalog/data/engines.toml`` as core records (``core.engines``), read once
from the catalog snapshot, and the lookups the edges make against it.

The core takes what it needs of the table as records: a hardware record carries its device family
(with the rules for the modes its silicon lacks), and a resolved workload carries the weight-format
verdict of its pair (``inputs/scenario.py``). Everything else asks here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from servebound.catalog import snapshot
from servebound.core import engines as core
from servebound.core.engines import ENGINE_IDS, Dequantize, Engine, EngineTable, Family, FormatSupport

__all__ = [
    "ENGINE_IDS",
    "Engine",
    "EngineTable",
    "Family",
    "FormatSupport",
    "device_family",
    "engine_table",
    "engines",
    "families",
    "format_class",
    "format_support",
    "get_engine",
    "kv_format_for",
    "markdown_table",
    "table_from",
]


def table_from(data: dict[str, Any]) -> EngineTable:
    """The records of ``engines.toml``'s tables (parsed, or as the snapshot keeps them)."""
    rules = tuple(
        Dequantize(mode=row["mode"], to=tuple(row["to"]), source=row["source"]) for row in data["dequantize"]
    )
    families = tuple(
        Family(
            id=row["id"],
            name=row.get("name", row["id"]),
            vendor=row["vendor"],
            patterns=tuple(row["patterns"]),
            hardware_modes=tuple(row["hardware_modes"]),
            fastest_mode=row["fastest_mode"],
            source=row["source"],
            dequantize=tuple(rule for rule in rules if rule.mode not in row["hardware_modes"]),
        )
        for row in data["family"]
    )
    engines = {
        row["id"]: Engine(
            id=row["id"],
            name=row["name"],
            kv_allocation=row["kv_allocation"],
            kv_allocation_source=row["kv_allocation_source"],
            overhead=row["overhead"],
            overhead_source=row["overhead_source"],
            memory_fraction=row.get("memory_fraction"),
            kv_dtypes=MappingProxyType(dict(row["kv_dtypes"])),
            kv_dtypes_source=row["kv_dtypes_source"],
            formats=MappingProxyType({k: tuple(v) for k, v in row["formats"].items()}),
            formats_source=row["formats_source"],
        )
        for row in data["engine"]
    }
    classes = {name: (row["mode"], tuple(row["precisions"])) for name, row in data["format_class"].items()}
    return EngineTable(families, MappingProxyType(engines), MappingProxyType(classes))


@functools.cache
def engine_table() -> EngineTable:
    """The table, as the catalog snapshot keeps it (a cold command neither imports the TOML parser
    nor parses the file)."""
    return table_from(snapshot.decode(snapshot.engines(), {}))


def engines() -> dict[str, Engine]:
    """Every engine of the table, by id, in its order."""
    return dict(engine_table().engines)


def families() -> tuple[Family, ...]:
    """Every device family, in the data file's order (the first matching pattern wins)."""
    return engine_table().families


def get_engine(engine_id: str) -> Engine:
    """The engine of that id, or an InputError naming ``engine`` and the choices."""
    return engine_table().engine(engine_id)


def device_family(hardware_id: str, table: EngineTable | None = None) -> Family | None:
    """The family of a hardware id (a system's ``Nx-`` prefix stripped) in ``table`` (by default the
    packaged one), or None when unknown."""
    return (table or engine_table()).family_of(hardware_id)


def format_class(precision: str | None) -> str | None:
    """The class of a weight precision (``gguf``, ``fp4`` ...), or None when the table has none."""
    return engine_table().format_class(precision)


def format_support(
    hardware_id: str, precision: str | None, engine_id: str | None = None
) -> tuple[FormatSupport, str]:
    """Whether the device (and the engine, when one is given) runs weights of ``precision``, and why."""
    return core.format_support(engine_table(), hardware_id, precision, engine_id)


def kv_format_for(spelling: str) -> str | None:
    """The format an engine's cache-dtype spelling stores, or None when no engine spells it so."""
    return engine_table().kv_format_for(spelling)


def markdown_table(source_text: Callable[[str], str] = str) -> str:
    """The engine table of docs/engines.md (``core.engines.markdown_table``)."""
    return core.markdown_table(engine_table(), source_text)
