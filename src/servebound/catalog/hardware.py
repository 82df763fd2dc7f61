"""The hardware catalog: sourced device rows and multi-device systems, validated once at load.

The data lives in ``catalog/data/hardware.toml`` (read with servebound.inputs.package_data, so it works from an
installed wheel). Units at this edge are the contract's: decimal GB, GB/s and dense TFLOPS (TOPS for
int8). Each row becomes a core :class:`~servebound.core.hardware.Hardware` (bytes, bytes/s, FLOP/s)
wrapped in a :class:`CatalogHardware` that keeps the display metadata and a source per number.

Ids
    Every device and system has a lowercase slug id. A device is also found under its id without the
    vendor prefix (``h100-sxm`` for ``nvidia-h100-sxm``) and under its explicit ``aliases``.
    Lookups ignore case and treat spaces and underscores as hyphens.

Systems
    A ``[[system]]`` row is ``count`` identical ``member`` devices under ideal tensor/expert parallelism:
    capacity, bandwidth and compute are the member's times the count (``Hardware.scaled``). Beyond the
    declared systems, ``Nx-<device id>`` (for example ``3x-amd-mi300x``) names N of any catalog device,
    1 <= N <= 1024. The hyphen is required: ``3xamd-mi300x`` is rejected with the canonical spelling
    as the suggestion, so every system has exactly one id. Systems cannot be multiplied again.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from servebound.catalog import snapshot
from servebound.catalog.hardware_names import (
    ALL_CLASSES,
    CLASS_OF_DEVICE_CLASS,
    MAX_SYSTEM_COUNT,
    SYSTEM_CLASSES,
    hardware_row,
    normalize_ref,
    system_hardware,
)
from servebound.core.engines import Dequantize, EngineTable, Family
from servebound.core.hardware import ARITHMETIC_MODES, Hardware
from servebound.core.system import Interconnect, System
from servebound.core.units import GB, TFLOPS
from servebound.errors import InputError

if (
    TYPE_CHECKING
):  # the schema (pydantic) is imported where a catalog file is validated, never from a snapshot
    from servebound.catalog.hardware_schema import InterconnectRow

_VENDOR_PREFIX = re.compile(r"^[a-z0-9]+-")


# --------------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SystemMembership:
    """What a system is made of: ``count`` of the catalog device ``member_id`` (its row ``member``),
    joined by ``interconnect`` (None: no link stated, the ideal upper bound) whose numbers have
    ``interconnect_sources``."""

    member_id: str
    count: int
    member: Hardware | None = None
    interconnect: Interconnect | None = None
    interconnect_sources: Mapping[str, str] = field(default_factory=dict)

    def parallel_system(self) -> System:
        """The core view for parallel layouts: the device, the count and the link (ideal if unstated)."""
        assert self.member is not None
        link = self.interconnect or Interconnect.ideal_for(self.count)
        return System(device=self.member, count=self.count, interconnect=link)


@dataclass(frozen=True)
class DevicePrice:
    """What running a row costs, each number with its source (None where unknown).

    ``rental_usd_per_hour`` is on-demand rental for the whole row (a system's is its member's times the
    count), ``purchase_usd`` the row's purchase price, ``board_power_w`` its board power.
    """

    rental_usd_per_hour: float | None = None
    rental_provider: str | None = None
    rental_date: str | None = None
    rental_source: str | None = None
    purchase_usd: float | None = None
    purchase_source: str | None = None
    board_power_w: float | None = None
    board_power_source: str | None = None

    def scaled(self, count: int, member_id: str) -> DevicePrice:
        """``count`` devices: every cost and power figure times the count, the sources saying so."""
        amounts: dict[str, Any] = {key: _times(getattr(self, key), count) for key in _PRICE_AMOUNTS}
        sources: dict[str, Any] = {
            key: None if (text := getattr(self, key)) is None else f"{count} x {member_id}: {text}"
            for key in _PRICE_SOURCES
        }
        return dataclasses.replace(self, **amounts, **sources)


#: A DevicePrice's figures that scale with the device count, and the sources that say so.
_PRICE_AMOUNTS = ("rental_usd_per_hour", "purchase_usd", "board_power_w")
_PRICE_SOURCES = ("rental_source", "purchase_source", "board_power_source")


def _times(value: float | None, count: int) -> float | None:
    return None if value is None else value * count


@dataclass(frozen=True)
class CatalogHardware:
    """A catalog row: the core :class:`Hardware` plus what a display needs.

    ``sources`` maps each number's key (``memory_gb``, ``bandwidth_gb_per_s``, ``price_usd``, or a
    compute mode) to its source. ``sparse_halved`` lists the modes whose dense rate is a vendor's
    with-sparsity figure halved; ``derived`` those computed by ratio rather than quoted. For a system,
    ``system`` names the member device and count and the numbers are the member's times the count.
    """

    id: str
    name: str
    vendor: str
    device_class: str
    year: int | None
    memory_type: str
    price_usd: float | None
    hardware: Hardware
    sources: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""
    sparse_halved: tuple[str, ...] = ()
    derived: tuple[str, ...] = ()
    low_confidence: bool = False
    aliases: tuple[str, ...] = ()
    system: SystemMembership | None = None
    #: The capacity as marketed ("16 GB"), when memory_gb states the bytes the device reports instead.
    memory_label_gb: float | None = None
    price: DevicePrice = DevicePrice()

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))

    @property
    def is_system(self) -> bool:
        return self.system is not None

    @property
    def hardware_group(self) -> str:
        """The row's class (one of HARDWARE_CLASSES) from its catalog fields: a system (or a row of a
        system class) is ``systems``, an Apple part ``apple``, else its ``device_class`` decides."""
        if self.is_system or self.device_class in SYSTEM_CLASSES:
            return "systems"
        if self.vendor == "Apple":
            return "apple"
        return CLASS_OF_DEVICE_CLASS.get(self.device_class, "files")

    @property
    def devices(self) -> int:
        """The devices the row's numbers add up (1 for a single device)."""
        return 1 if self.system is None else self.system.count

    @property
    def memory_gb(self) -> float:
        return self.hardware.memory_bytes / GB

    @property
    def bandwidth_gb_per_s(self) -> float:
        return self.hardware.bandwidth_bytes_per_s / GB

    @property
    def compute_tflops(self) -> dict[str, float]:
        """Dense rates in TFLOPS per mode, in ARITHMETIC_MODES order."""
        rates = self.hardware.compute_flop_per_s
        return {mode: rates[mode] / TFLOPS for mode in ARITHMETIC_MODES if mode in rates}

    def source_for(self, key: str) -> str | None:
        """The source of one number: its own key, or ``compute`` for a compute mode."""
        if key in self.sources:
            return self.sources[key]
        if key in ARITHMETIC_MODES and key in self.compute_tflops:
            return self.sources.get("compute")
        return None


def vendor_free_alias(device_id: str) -> str | None:
    """A device id without its vendor prefix (``nvidia-h100-sxm`` -> ``h100-sxm``), or None."""
    stripped = _VENDOR_PREFIX.sub("", device_id, count=1)
    return stripped if stripped != device_id and stripped else None


def system_record(
    member: CatalogHardware,
    count: int,
    *,
    system_id: str | None = None,
    name: str | None = None,
    system_class: str = "multi-device system",
    year: int | None = None,
    notes: str | None = None,
    aliases: tuple[str, ...] = (),
    interconnect: InterconnectRow | None = None,
    table: EngineTable | None = None,
) -> CatalogHardware:
    """``count`` identical ``member`` devices as one row: every resource summed (Hardware.scaled)."""
    if member.is_system:
        raise InputError("hardware", f"'{member.id}' is already a system; multiply a device instead")
    if not 1 <= count <= MAX_SYSTEM_COUNT:
        raise InputError("hardware", f"device count {count} is out of range; use 1 to {MAX_SYSTEM_COUNT}")
    scaled = system_hardware(member.hardware, count, system_id=system_id, name=name, table=table)
    sid, sname = scaled.id, scaled.name
    sources = {key: f"{count} x {member.id}: {text}" for key, text in member.sources.items()}
    if member.price_usd is not None:
        price_source = member.sources.get("price_usd", "unsourced")
        sources["price_usd"] = f"{count} x {member.id} price (devices only, no host): {price_source}"
    default_notes = (
        f"{count} x {member.id} under ideal tensor/expert parallelism: capacity, bandwidth and compute "
        "summed; no link is stated, so parallel layouts treat communication as free (the ideal upper "
        "bound)."
    )
    link: Interconnect | None = None
    link_sources: dict[str, str] = {}
    if interconnect is not None:
        link = Interconnect(
            scale_up_devices=interconnect.scale_up_devices,
            scale_up_bytes_per_s=interconnect.scale_up_gb_per_s * GB,
            scale_out_bytes_per_s=interconnect.scale_out_gb_per_s * GB,
            scale_up_link=interconnect.scale_up_link,
            scale_out_link=interconnect.scale_out_link,
        )
        link_sources = interconnect.sources.model_dump(exclude_none=True)
    return dataclasses.replace(
        member,
        id=sid,
        name=sname,
        device_class=system_class,
        year=year if year is not None else member.year,
        price_usd=_times(member.price_usd, count),
        hardware=scaled,
        sources=sources,
        notes=notes if notes is not None else default_notes,
        aliases=aliases,
        system=SystemMembership(member.id, count, member.hardware, link, MappingProxyType(link_sources)),
        memory_label_gb=_times(member.memory_label_gb, count),
        price=member.price.scaled(count, member.id),
    )


# --------------------------------------------------------------------------------------------------
# The catalog
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HardwareCatalog:
    """Every device and declared system, in file order (``by_id``), with an index of ids and aliases."""

    index: Mapping[str, str]
    by_id: Mapping[str, CatalogHardware]

    @cached_property
    def entries(self) -> tuple[CatalogHardware, ...]:
        return tuple(self.by_id.values())

    def __iter__(self) -> Iterator[CatalogHardware]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.by_id)

    def ids(self) -> list[str]:
        return list(self.by_id)

    def get(self, ref: str) -> CatalogHardware:
        """A catalog id, alias or NxID system; InputError with suggestions when unknown
        (``hardware_names.hardware_row`` reads the reference)."""
        row_id, count = hardware_row(ref, self.index, self._system_of)
        row = self.by_id[row_id]
        return row if count is None else system_record(row, count)

    def _system_of(self, row_id: str) -> tuple[str, int] | None:
        system = self.by_id[row_id].system
        return None if system is None else (system.member_id, system.count)


#: The record types of a hardware row in the catalog snapshot.
SNAPSHOT_KINDS: dict[str, type] = {
    cls.__name__: cls
    for cls in (CatalogHardware, Hardware, DevicePrice, SystemMembership, Interconnect, Family, Dequantize)
}


@functools.cache
def _snapshot_row(entry_id: str) -> CatalogHardware:
    row: CatalogHardware = snapshot.decode(snapshot.row(snapshot.HARDWARE, entry_id), SNAPSHOT_KINDS)
    return row


@functools.cache
def load_hardware_catalog() -> HardwareCatalog:
    """The packaged hardware catalog, from the snapshot (built from hardware.toml by
    scripts/build_snapshot.py), cached. A catalog file is read by
    :func:`servebound.catalog.hardware_file.load_hardware_catalog_file`."""
    return HardwareCatalog(
        index=snapshot.hardware_index(), by_id=snapshot.Rows(snapshot.HARDWARE, _snapshot_row)
    )


def get_hardware(id_or_alias: str, catalog: HardwareCatalog | None = None) -> CatalogHardware:
    """A catalog device or system by id, alias or ``Nx-<device id>``.

    Raises InputError("hardware", "'xyz' is not in the catalog; did you mean ...?") for unknown ids.
    """
    return (catalog or load_hardware_catalog()).get(id_or_alias)


def list_hardware(
    vendor: str | None = None,
    cls: str | None = None,
    min_memory_gb: float | None = None,
    max_price_usd: float | None = None,
    mode: str | None = None,
    include_systems: bool = True,
    catalog: HardwareCatalog | None = None,
) -> list[CatalogHardware]:
    """Rows of ``catalog`` (the packaged one by default) matching every filter given, in catalog order.

    ``vendor`` and ``cls`` match case-insensitively (``cls`` also as a slug: ``consumer-gpu``);
    ``mode`` keeps rows that publish a rate for that arithmetic mode; ``max_price_usd`` drops rows
    without a price.
    """
    if cls is not None:
        wanted = normalize_ref(cls)
        classes = {normalize_ref(c): c for c in ALL_CLASSES}
        if wanted not in classes:
            raise InputError("class", f"'{cls}' is not a hardware class; use one of {', '.join(ALL_CLASSES)}")
        cls = classes[wanted]
    if mode is not None and mode not in ARITHMETIC_MODES:
        raise InputError(
            "mode", f"'{mode}' is not an arithmetic mode; use one of {', '.join(ARITHMETIC_MODES)}"
        )
    out: list[CatalogHardware] = []
    for entry in catalog or load_hardware_catalog():
        if not include_systems and entry.is_system:
            continue
        if vendor is not None and entry.vendor.lower() != vendor.strip().lower():
            continue
        if cls is not None and entry.device_class != cls:
            continue
        if min_memory_gb is not None and entry.memory_gb < min_memory_gb:
            continue
        if max_price_usd is not None and (entry.price_usd is None or entry.price_usd > max_price_usd):
            continue
        if mode is not None and mode not in entry.compute_tflops:
            continue
        out.append(entry)
    return out
