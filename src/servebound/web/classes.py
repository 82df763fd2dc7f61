"""The browse tables' hardware classes and their per-device and per-dollar figures.

A row's class comes from the catalog's own fields: a system (``[[system]]``, or a ``multi-device`` or
``rack-scale`` class) is a multi-device system; an Apple part is Apple silicon; then the row's
``class``: consumer GPU, workstation GPU or a unified-memory machine that is not Apple's (DGX Spark,
Ryzen AI Max, Jetson) under workstations, datacenter GPUs and accelerators as one datacenter device.
A user's hardware file has no class and goes last, as a file.

The price is the one a pair page's cost section uses (``servebound.inputs.pricing.resolve_price`` on the row's
``[price]`` figures: on-demand rental where the row has it, else the owned cost of its purchase price),
and the cost per million output tokens is that price over the useful aggregate at b*
(``servebound.core.cost.usd_per_mtok_at_rate``), which the pair page's cost table shows at b*.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from servebound.catalog.hardware import CatalogHardware
from servebound.core.cost import (
    DEFAULT_AMORTIZATION_YEARS,
    DEFAULT_USD_PER_KWH,
    DEFAULT_UTILIZATION,
    usd_per_mtok_at_rate,
)
from servebound.errors import InputError
from servebound.inputs.pricing import ResolvedPrice, resolve_price
from servebound.views.cost_report import fmt_money
from servebound.views.report import fmt_rate

#: The classes in the order the tables show them: (key, heading, what the class holds).
GROUPS: tuple[tuple[str, str, str], ...] = (
    ("consumer", "Consumer GPUs", "Gaming and desktop graphics cards"),
    (
        "workstation",
        "Workstations",
        "Workstation GPUs and desktop unified-memory machines that are not Apple's (DGX Spark, Ryzen AI Max, "
        "Jetson)",
    ),
    ("apple", "Apple silicon", "Macs with unified memory"),
    ("datacenter", "Datacenter, one device", "Datacenter GPUs and accelerators, counted one device each"),
    ("systems", "Multi-device systems", "Several devices serving together (servers, racks, clusters)"),
    ("files", "Hardware files", "Rows read from a hardware file, with no catalog class"),
)
#: How an owned cost is reckoned where a row has a purchase price and no rental (the cost defaults).
OWNED_TERMS = (
    f"the purchase spread over {DEFAULT_AMORTIZATION_YEARS:g} years of use at {DEFAULT_UTILIZATION:.0%} "
    f"of the hours, plus board power at {DEFAULT_USD_PER_KWH:g} USD per kWh where the row gives it"
)
GROUP_TITLES = {key: title for key, title, _ in GROUPS}
_SYSTEM_CLASSES = ("multi-device system", "rack-scale system")
_BY_CLASS = {
    "consumer GPU": "consumer",
    "workstation GPU": "workstation",
    "unified-memory SoC": "workstation",
    "datacenter GPU": "datacenter",
    "accelerator": "datacenter",
}


def hardware_group(h: CatalogHardware) -> str:
    """The key (in GROUPS) of a row's class, from its catalog fields."""
    if h.is_system or h.device_class in _SYSTEM_CLASSES:
        return "systems"
    if h.vendor == "Apple":
        return "apple"
    return _BY_CLASS.get(h.device_class, "files")


def device_count(h: CatalogHardware) -> int:
    """The devices the row's numbers add up (1 for a single device)."""
    return h.system.count if h.system is not None else 1


def row_price(h: CatalogHardware) -> ResolvedPrice | None:
    """The row's price per hour as a pair page's cost section takes it, or None where it has none."""
    price = None if getattr(h, "user_file", False) else h.price
    try:
        return resolve_price(h.hardware, price)
    except InputError:
        return None


@dataclass(frozen=True)
class PerDevice:
    """A ranking row's class, per-device and per-dollar figures, formatted once for HTML and markdown."""

    group: str
    devices: int
    per_device: str
    price: str
    usd_per_mtok: str
    usd_per_mtok_value: float | None
    usd_per_hour: float | None
    price_basis: str | None


def per_device(h: CatalogHardware, aggregate_tok_s: float | None) -> PerDevice:
    """The class, the useful aggregate per device, the price per hour and the USD per million output
    tokens at b* for one row (words where a figure is absent: no price, nothing at the floor)."""
    count = device_count(h)
    price = row_price(h)
    each = fmt_rate(aggregate_tok_s / count) if aggregate_tok_s else fmt_rate(None)
    if price is None:
        return PerDevice(hardware_group(h), count, each, "no price", "no price", None, None, None)
    per_mtok = usd_per_mtok_at_rate(price.usd_per_hour, aggregate_tok_s) if aggregate_tok_s else None
    return PerDevice(
        hardware_group(h),
        count,
        each,
        f"${fmt_money(price.usd_per_hour)}/h {price.basis}",
        f"${fmt_money(per_mtok)}" if per_mtok is not None else "nothing at the floor",
        per_mtok,
        price.usd_per_hour,
        price.basis,
    )


@dataclass(frozen=True)
class ClassTable:
    """One class's rows (in the ranking's order), its best row at the floor (None where no row serves
    there) and its cheapest per output token (None where no priced row serves at the floor)."""

    key: str
    title: str
    holds: str
    rows: Sequence[Any]
    best: Any
    cheapest: Any
    unpriced: int
    #: Where no row serves at the floor: the fastest single session among the rows that fit.
    nearest: Any = None


def class_tables(rows: Sequence[Any]) -> list[ClassTable]:
    """Ranking rows (each with ``verdict`` and a ``cls`` PerDevice) split by class in GROUPS order, each
    keeping the ranking's order (the best useful aggregate first); classes without a row left out."""
    out = []
    for key, title, holds in GROUPS:
        mine = [r for r in rows if r.cls.group == key]
        if not mine:
            continue
        serving = [r for r in mine if r.verdict == "floor_fit"]
        priced = [r for r in serving if r.cls.usd_per_mtok_value is not None]
        cheapest = min(priced, key=lambda r: r.cls.usd_per_mtok_value) if priced else None
        unpriced = sum(1 for r in mine if r.cls.usd_per_hour is None)
        fitting = [r for r in mine if r.verdict == "no_floor"]
        best = serving[0] if serving else None
        nearest = fitting[0] if fitting and best is None else None
        out.append(ClassTable(key, title, holds, mine, best, cheapest, unpriced, nearest))
    return out


@dataclass(frozen=True)
class ListingRow:
    """A /hardware row: the catalog row, its per-device capacity and bandwidth, its price per hour and
    the memory bandwidth an hour's dollar buys; ``rank`` is its ranking row for the chosen model."""

    hw: Any
    devices: int
    memory_per_device_gb: float
    bandwidth_per_device_gb_s: float
    price: str
    gb_s_per_usd_hour: str
    rank: Any = None


def listing_row(h: CatalogHardware, rank: Any = None) -> ListingRow:
    count = device_count(h)
    price = row_price(h)
    bandwidth = h.bandwidth_gb_per_s
    return ListingRow(
        h,
        count,
        h.memory_gb / count,
        bandwidth / count,
        "no price" if price is None else f"${fmt_money(price.usd_per_hour)}/h {price.basis}",
        "no price" if price is None else f"{bandwidth / price.usd_per_hour:,.0f}",
        rank,
    )


@dataclass(frozen=True)
class ListingGroup:
    key: str
    title: str
    holds: str
    rows: Sequence[ListingRow]
    unpriced: int


def listing_groups(rows: Sequence[ListingRow]) -> list[ListingGroup]:
    """The listing's rows by class, in GROUPS order, each keeping the order it was given."""
    out = []
    for key, title, holds in GROUPS:
        mine = [r for r in rows if hardware_group(r.hw) == key]
        if mine:
            out.append(ListingGroup(key, title, holds, mine, sum(1 for r in mine if r.price == "no price")))
    return out
