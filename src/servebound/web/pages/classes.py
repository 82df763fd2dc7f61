"""The browse tables' hardware classes and their per-device and per-dollar figures, as words.

The figures are the ranking row's (``servebound.questions.rank.RankRow``: its ``hardware_group`` from the
catalog row, ``devices``, ``usd_per_hour`` with its basis, ``aggregate_tok_s_per_device`` and
``usd_per_mtok_output`` at b*), so `servebound rank --json`, /api/rank and these tables show one answer;
this module only groups the rows by class and writes the figures as the pages show them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from servebound.catalog.hardware import CatalogHardware
from servebound.catalog.hardware_names import HARDWARE_CLASSES
from servebound.core.cost import DEFAULT_AMORTIZATION_YEARS, DEFAULT_USD_PER_KWH, DEFAULT_UTILIZATION
from servebound.questions.rank import Machine, RankRow
from servebound.views.cost_view import fmt_money
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
assert tuple(GROUP_TITLES) == HARDWARE_CLASSES, "a heading for every class, in the catalog's order"


@dataclass(frozen=True)
class Column:
    """A ranking table's column: the RankDisplay attribute it shows, its heading, whether a number; a
    cell's hover text (``title``: the row attribute that says what the cell is) and the heading's."""

    key: str
    heading: str
    numeric: bool = True
    title: str | None = None
    heading_title: str | None = None


#: The band's column: p10-p90 of one session, an estimate, never a bound (``views.band_view``).
EXPECTED = Column(
    "expected",
    "Expected tok/s",
    title="expected_why",
    heading_title="p10-p90 of one session: an estimate from published runs of the engine usually run on "
    "this class, never a bound",
)


#: A hardware page's table of models, after the name and the verdict; a new column is one more entry.
RANK_COLUMNS: tuple[Column, ...] = (
    Column("single", "One session"),
    Column("aggregate", "Useful aggregate"),
    Column("batch_star", "b*"),
    Column("ttft", "First token (8k prompt)"),
    Column("usd_per_mtok", "USD per million output tokens"),
    EXPECTED,
)
#: A model page's class tables: the same figures, with the machine's devices and prices.
CLASS_COLUMNS: tuple[Column, ...] = (
    *RANK_COLUMNS[:4],
    Column("devices", "Devices"),
    Column("per_device", "Aggregate per device"),
    Column("rented", "Rented"),
    Column("owned", "Owned"),
    RANK_COLUMNS[4],
    EXPECTED,
)


def price_text(usd_per_hour: float | None, basis: str | None) -> str:
    """A price per hour as the tables show it: ``$0.29/h rental``, or ``no price``."""
    return "no price" if usd_per_hour is None else f"${fmt_money(usd_per_hour)}/h {basis}"


def price_columns(usd_per_hour: float | None, basis: str | None) -> tuple[str, str]:
    """A price per hour in its own column: (rented, owned); the other column says none (a price given
    for the run, ``override``, is the owner's own figure)."""
    if usd_per_hour is None:
        return "no price", "no price"
    shown = f"${fmt_money(usd_per_hour)}/h"
    return (shown, "none") if basis == "rental" else ("none", shown)


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

    @property
    def rented(self) -> str:
        return price_columns(self.usd_per_hour, self.price_basis)[0]

    @property
    def owned(self) -> str:
        return price_columns(self.usd_per_hour, self.price_basis)[1]


def per_device(row: RankRow) -> PerDevice:
    """A ranking row's class, useful aggregate per device, price per hour and USD per million output
    tokens at b*, as words (where a figure is absent: no price, nothing at the floor)."""
    per_mtok = row.usd_per_mtok_output
    if row.usd_per_hour is None:
        mtok = "no price"
    else:
        mtok = "nothing at the floor" if per_mtok is None else f"${fmt_money(per_mtok)}"
    return PerDevice(
        row.hardware_group or "files",
        row.devices,
        fmt_rate(row.aggregate_tok_s_per_device),
        price_text(row.usd_per_hour, row.price_basis),
        mtok,
        per_mtok,
        row.usd_per_hour,
        row.price_basis,
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
    #: The price in its own column: rented (on demand) or owned (the purchase reckoned per hour).
    rented: str = ""
    owned: str = ""


def listing_row(h: CatalogHardware, rank: Any = None) -> ListingRow:
    one = Machine.of(h)
    bandwidth = h.bandwidth_gb_per_s
    return ListingRow(
        h,
        one.devices,
        h.memory_gb / one.devices,
        bandwidth / one.devices,
        price_text(one.usd_per_hour, one.price_basis),
        "no price" if one.usd_per_hour is None else f"{bandwidth / one.usd_per_hour:,.0f}",
        rank,
        *price_columns(one.usd_per_hour, one.price_basis),
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
        mine = [r for r in rows if r.hw.hardware_group == key]
        if mine:
            out.append(ListingGroup(key, title, holds, mine, sum(1 for r in mine if r.price == "no price")))
    return out
