"""`servebound hardware list|show|match`: the hardware catalog, every number with its source."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from servebound.catalog.hardware import CatalogHardware, get_hardware, list_hardware
from servebound.cli.common import JSON, argument, command, flags, given, group, option
from servebound.cli.output import console, line, new_table, print_json, strong
from servebound.errors import InputError
from servebound.inputs.pricing import price_json
from servebound.measure.device_match import match_device

hardware_app = group(
    "hardware",
    examples=("servebound hardware list --vendor Apple", "servebound hardware show nvidia-dgx-spark"),
)


def hardware_row_json(row: CatalogHardware) -> dict[str, Any]:
    """A catalog row in the contract's hardware-file keys, plus its metadata and sources."""
    return {
        "id": row.id,
        "name": row.name,
        "vendor": row.vendor,
        "class": row.device_class,
        "year": row.year,
        "memory_gb": row.memory_gb,
        "memory_type": row.memory_type,
        "bandwidth_gb_per_s": row.bandwidth_gb_per_s,
        "memory_power_gb2_per_s": row.hardware.memory_power_bytes2_per_s / 1e18,
        "compute_tflops": row.compute_tflops,
        "price_usd": row.price_usd,
        "price": price_json(row.price),
        "provenance": row.hardware.provenance,
        "sparse_halved": list(row.sparse_halved),
        "derived": list(row.derived),
        "low_confidence": row.low_confidence,
        "system": None if row.system is None else {"member": row.system.member_id, "count": row.system.count},
        "aliases": list(row.aliases),
        "sources": dict(row.sources),
        "notes": row.notes,
    }


@dataclass(frozen=True)
class HardwareFilters:
    """`hardware list`'s filters (``--vendor`` .. ``--systems``): the keywords of ``list_hardware``."""

    vendor: str | None = given(None, "NVIDIA, AMD, Apple, Intel, Google ...")
    cls: str | None = given(None, "e.g. 'consumer GPU', 'unified-memory SoC'.", flags=("--class",))
    min_memory_gb: float | None = given(None, "At least this much memory.")
    max_price_usd: float | None = given(None, "At most this price.")
    mode: str | None = given(None, "Publishes a dense rate for this mode.")
    include_systems: bool = given(True, "Include multi-device systems.", flags=("--systems/--no-systems",))


@command(
    "list",
    flags("filters", HardwareFilters),
    JSON,
    parent=hardware_app,
    help="List catalog hardware, filtered.",
    examples=(
        "servebound hardware list --vendor NVIDIA --min-memory-gb 80",
        "servebound hardware list --class 'consumer GPU' --no-systems --json",
    ),
)
def hardware_list(filters: HardwareFilters, json_out: bool) -> None:

    for field, value in (("min_memory_gb", filters.min_memory_gb), ("max_price_usd", filters.max_price_usd)):
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise InputError(field, f"must be a finite number >= 0 (got {value})")
    rows = list_hardware(**asdict(filters))
    if json_out:
        print_json({"hardware": [hardware_row_json(r) for r in rows]})
        return
    table = new_table(
        "id", "class", "memory GB", "GB/s", "bf16 TFLOPS", "price USD", left=("id", "class"), no_wrap=("id",)
    )
    for r in rows:
        bf16 = r.compute_tflops.get("bf16")
        table.add_row(
            r.id,
            r.device_class,
            f"{r.memory_gb:,.0f}",
            f"{r.bandwidth_gb_per_s:,.0f}",
            "-" if bf16 is None else f"{bf16:,.0f}",
            "-" if r.price_usd is None else f"{r.price_usd:,.0f}",
        )
    console.print(table)
    console.print(f"{len(rows)} rows")


@command(
    "show",
    argument("hardware_id", "Catalog id, alias or NxID."),
    JSON,
    parent=hardware_app,
    help="One catalog row with the source of every number.",
    examples=(
        "servebound hardware show nvidia-dgx-spark",
        "servebound hardware show 8x-nvidia-h100-sxm --json",
    ),
)
def hardware_show(hardware_id: str, json_out: bool) -> None:
    row = get_hardware(hardware_id)
    data = hardware_row_json(row)
    if json_out:
        print_json(data)
        return
    console.print(
        line(strong(row.name), f" ({row.id}): {row.vendor}, {row.device_class}, {row.year or 'year n/a'}")
    )
    table = new_table("quantity", "value", "source", right=("value",))
    table.add_row(
        "memory C", f"{row.memory_gb:,.1f} GB ({row.memory_type})", row.source_for("memory_gb") or "-"
    )
    table.add_row(
        "bandwidth R", f"{row.bandwidth_gb_per_s:,.1f} GB/s", row.source_for("bandwidth_gb_per_s") or "-"
    )
    table.add_row(
        "memory power D",
        f"{row.hardware.memory_power_bytes2_per_s / 1e18:,.0f} GB²/s",
        "D = C R: the area of the feasible (resident, flow) rectangle",
    )
    for mode, value in row.compute_tflops.items():
        tag = " (sparse figure halved)" if mode in row.sparse_halved else ""
        table.add_row(f"{mode} dense", f"{value:,.1f} TFLOPS{tag}", row.source_for(mode) or "-")
    if row.price_usd is not None:
        table.add_row("price", f"{row.price_usd:,.0f} USD", row.source_for("price_usd") or "-")
    p = row.price
    if p.rental_usd_per_hour is not None:
        table.add_row(
            "on-demand rental",
            f"{p.rental_usd_per_hour:,.2f} USD/h",
            f"{p.rental_provider}, read {p.rental_date}: {p.rental_source}",
        )
    if p.board_power_w is not None:
        table.add_row("board power", f"{p.board_power_w:,.0f} W", p.board_power_source or "-")
    console.print(table)
    if row.notes:
        console.print(f"notes: {row.notes}")


@command(
    "match",
    argument("name", "The device name exactly as the system reports it ('NVIDIA H100 80GB HBM3')."),
    option(
        "memory_gb",
        float,
        None,
        "The memory the device reports, GB (tells memory variants apart).",
        "--memory-gb",
    ),
    option("gpu_cores", int, None, "Apple silicon: the GPU core count (system_profiler).", "--gpu-cores"),
    JSON,
    parent=hardware_app,
    help="The catalog row of a reported device name: exact names, memory as the tie-break, never a guess.",
    examples=(
        "servebound hardware match 'NVIDIA H100 80GB HBM3'",
        "servebound hardware match 'NVIDIA GeForce RTX 4090' --memory-gb 24 --json",
    ),
)
def hardware_match(name: str, memory_gb: float | None, gpu_cores: int | None, json_out: bool) -> None:
    found = match_device(name, None if memory_gb is None else memory_gb * 1e9, gpu_cores)
    if json_out:
        print_json({"id": found.id, "reported": found.reported, "why": found.why})
        return
    console.print(f"{found.id}  ({found.why})", markup=False)
