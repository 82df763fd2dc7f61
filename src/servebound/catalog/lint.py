"""Catalog lint: every problem of a hardware catalog file in one pass, as one line each.

Checks, beyond the schema (extra or mistyped keys) and the loader's structural rules (slug ids,
duplicate ids or aliases, known classes, systems whose member exists):

* every number has a source: ``memory_gb``, ``bandwidth_gb_per_s``, ``price_usd``, ``runtime_overhead_gb`` and each compute
  mode (its own ``sources.<mode>`` or the shared ``sources.compute``); a system's quoted totals need
  ``quoted.source``;
* units are consistent: memory in decimal GB and bandwidth in GB/s within the sane range of the
  row's class, compute in TFLOPS within 0.05 to 30,000 (a value in FLOP/s, TB/s or bytes falls out);
* arithmetic modes agree: fp4 >= fp8 >= bf16, fp16 == bf16 where both are given (bf16 at half rate only on the rows of BF16_HALF_RATE), the vector
  fp32 rate below the matrix bf16/fp16 rates, and fp16_acc16 (FP16 accumulate) at least fp16 (FP32
  accumulate) and at most twice it; fp8 (FP8 with FP32 accumulate, what serving engines' FP8 GEMMs
  run) at most twice bf16, so a GeForce FP16-accumulate FP8 headline (4 x bf16) falls out;
* ``sparse_halved`` and ``derived`` name modes the row gives, and the notes explain them; a
  ``derived_from`` rule (ratio of a quoted mode, with its reason) equals its number, and is the source;
  a row with only low-precision or sparse figures (fp4, fp8, int8) derives its dense bf16/fp16;
* a system's quoted vendor totals are within 1% of count x member.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from servebound.catalog.hardware_file import read_catalog_document
from servebound.catalog.hardware_schema import CatalogFile, DeviceRow, SystemRow, structural_problems
from servebound.core.hardware import ARITHMETIC_MODES
from servebound.errors import InputError

#: Sane (memory_gb, bandwidth_gb_per_s) ranges per device class, for one device.
CLASS_RANGES: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    "datacenter GPU": ((16, 400), (250, 12_000)),
    "workstation GPU": ((8, 192), (200, 3_000)),
    "consumer GPU": ((4, 64), (100, 3_000)),
    "unified-memory SoC": ((8, 1_024), (50, 1_500)),
    "accelerator": ((8, 512), (200, 12_000)),
    "CPU": ((1, 8_192), (10, 1_500)),
}
TFLOPS_RANGE = (0.05, 30_000.0)
FP32_MAX_TFLOPS = 500.0
PRICE_RANGE_USD = (50.0, 5_000_000.0)
YEAR_RANGE = (2015, 2030)
QUOTED_TOLERANCE = 0.01
SAME_RATE_TOLERANCE = 0.005
#: fp8 / bf16 above this is an FP16-accumulate FP8 figure (4x on GeForce); NVIDIA's own rounding puts
#: the L40S at 733 / 362.05 = 2.025.
FP8_OVER_BF16_MAX = 2.05
#: Rows whose bf16 is exactly half their fp16 by the vendor's own table (elsewhere a 2x gap is a sparse
#: figure beside a dense one), keyed as lint names a device.
BF16_HALF_RATE = {"device 'amd-mi100'": "CDNA 1 runs bf16 at half its FP16 matrix rate (AMD: 184.6 / 92.3)"}


def lint_hardware_catalog(path: str | Path | None = None) -> list[str]:
    """Every problem in the packaged hardware catalog, or in the catalog file at ``path``.

    Returns one line per problem (``device 'id': what is wrong and the fix``); an empty list means
    the catalog is clean. Never raises for a bad catalog: an unreadable file is one problem.
    """
    try:
        data, _ = read_catalog_document(path)
    except InputError as exc:
        return [str(exc)]
    problems: list[str] = []
    for key in data:
        if key not in ("device", "system"):
            problems.append(f"top level: unknown table '{key}' (use [[device]] and [[system]])")
    devices = _valid_rows(data, "device", DeviceRow, problems)
    systems = _valid_rows(data, "system", SystemRow, problems)
    catalog = CatalogFile(device=tuple(devices), system=tuple(systems))
    problems.extend(structural_problems(catalog))
    for device in devices:
        problems.extend(device_problems(device))
    by_id = {device.id: device for device in devices}
    for system in systems:
        problems.extend(system_problems(system, by_id.get(system.member)))
    return problems


def _valid_rows(data: dict[str, Any], table: str, schema: Any, problems: list[str]) -> list[Any]:
    rows = data.get(table, [])
    if not isinstance(rows, list):
        problems.append(f"top level: '{table}' must be an array of tables ([[{table}]])")
        return []
    valid = []
    for position, row in enumerate(rows):
        try:
            valid.append(schema.model_validate(row))
        except ValidationError as exc:
            row_id = row.get("id") if isinstance(row, dict) else None
            label = f"{table} '{row_id}'" if row_id else f"{table} #{position + 1}"
            for error in exc.errors():
                field = ".".join(str(part) for part in error["loc"]) or "row"
                problems.append(f"{label}: {field}: {error['msg']}")
    return valid


def device_problems(row: DeviceRow) -> list[str]:
    """Sources, units and mode consistency of one device row."""
    where = f"device '{row.id}'"
    out: list[str] = []
    sources = row.sources.model_dump(exclude_none=True)
    compute = row.compute_tflops.present()

    def sourced(key: str) -> bool:
        if key in row.derived_from:
            return sourced(row.derived_from[key].of)
        text = sources.get(key) or (sources.get("compute") if key in ARITHMETIC_MODES else None)
        return bool(text and text.strip())

    numbers = ["memory_gb", "bandwidth_gb_per_s", *(["price_usd"] if row.price_usd is not None else [])]
    if row.runtime_overhead_gb is not None:
        numbers.append("runtime_overhead_gb")
        if not 0 <= row.runtime_overhead_gb < row.memory_gb:
            out.append(
                f"{where}: runtime_overhead_gb {row.runtime_overhead_gb:g} must lie in [0, memory_gb "
                f"{row.memory_gb:g})"
            )
    for key in numbers:
        if not sourced(key):
            out.append(f"{where}: {key} has no source (add sources.{key})")
    for mode in compute:
        if not sourced(mode):
            out.append(
                f"{where}: compute_tflops.{mode} has no source (add sources.{mode} or sources.compute)"
            )
    for key, text in sources.items():
        if key == "compute" and not compute:
            out.append(f"{where}: sources.compute is given but the row has no compute_tflops")
        elif key in ARITHMETIC_MODES and key not in compute:
            out.append(f"{where}: sources.{key} is given but compute_tflops.{key} is not")
        elif key == "price_usd" and row.price_usd is None:
            out.append(f"{where}: sources.price_usd is given but price_usd is not")
        elif key == "runtime_overhead_gb" and row.runtime_overhead_gb is None:
            out.append(f"{where}: sources.runtime_overhead_gb is given but runtime_overhead_gb is not")
        elif not text.strip():
            out.append(f"{where}: sources.{key} is empty")

    out.extend(_unit_problems(where, row, compute))
    out.extend(_mode_problems(where, compute))
    for label, modes in (("sparse_halved", row.sparse_halved), ("derived", row.derived)):
        for mode in modes:
            if mode not in compute:
                out.append(f"{where}: {label} names '{mode}' but compute_tflops.{mode} is not given")
        if modes and not row.notes.strip():
            out.append(f"{where}: {label} is set but notes do not explain it (say which figure and how)")
        if len(set(modes)) != len(modes):
            out.append(f"{where}: {label} repeats a mode")
    out.extend(_derived_problems(where, row, compute))
    if row.year is not None and not YEAR_RANGE[0] <= row.year <= YEAR_RANGE[1]:
        out.append(f"{where}: year {row.year} is outside {YEAR_RANGE[0]}-{YEAR_RANGE[1]}")
    if row.price_usd is not None and not PRICE_RANGE_USD[0] <= row.price_usd <= PRICE_RANGE_USD[1]:
        out.append(
            f"{where}: price_usd {row.price_usd:g} is outside {PRICE_RANGE_USD[0]:g}-{PRICE_RANGE_USD[1]:g}"
        )
    out.extend(_price_problems(where, row))
    return out


def _derived_problems(where: str, row: DeviceRow, compute: dict[str, float]) -> list[str]:
    """Each ``derived_from`` rule: a derived mode the row gives, from a mode it gives that is not itself
    derived, and a value equal to ratio x that mode's (a rule that no longer matches its number fails)."""
    out: list[str] = []
    if set(compute) & {"fp4", "fp8", "int8"} and not set(compute) & {"bf16", "fp16"}:
        out.append(
            f"{where}: only low-precision or sparse figures ({', '.join(sorted(set(compute) - {'fp32'}))}); "
            "derive dense bf16/fp16 from them ([device.derived_from], with the rule) so 16-bit math is charged"
        )
    for mode, rate in row.derived_from.items():
        if mode not in row.derived:
            out.append(f"{where}: derived_from.{mode} is given but '{mode}' is not in derived")
        if rate.of == mode or rate.of in row.derived_from:
            out.append(f"{where}: derived_from.{mode} must come from a quoted mode, not '{rate.of}'")
            continue
        if mode not in compute or rate.of not in compute:
            out.append(
                f"{where}: derived_from.{mode} needs compute_tflops.{mode} and compute_tflops.{rate.of}"
            )
            continue
        expected = rate.ratio * compute[rate.of]
        if abs(compute[mode] - expected) > SAME_RATE_TOLERANCE * expected:
            out.append(
                f"{where}: compute_tflops.{mode} ({compute[mode]:g}) is not {rate.ratio:g} x {rate.of} "
                f"({expected:g}) as derived_from.{mode} states"
            )
    return out


#: Plausible on-demand rental per device-hour and board power per device.
RENTAL_RANGE_USD_PER_HOUR = (0.01, 100.0)
BOARD_POWER_RANGE_W = (1.0, 5000.0)


def _price_problems(where: str, row: DeviceRow) -> list[str]:
    """A [price] table: every number in range and with its source; a rental with provider and date."""
    price = row.price
    if price is None:
        return []
    out: list[str] = []
    rental = price.rental_usd_per_hour
    if rental is not None:
        lo, hi = RENTAL_RANGE_USD_PER_HOUR
        if not lo <= rental <= hi:
            out.append(
                f"{where}: price.rental_usd_per_hour {rental:g} is outside {lo:g}-{hi:g} USD per device-hour"
            )
        for key in ("rental_provider", "rental_date", "rental_source"):
            if not (getattr(price, key) or "").strip():
                out.append(f"{where}: price.rental_usd_per_hour has no {key} (add price.{key})")
    elif price.rental_provider or price.rental_date or price.rental_source:
        out.append(f"{where}: price names a rental provider, date or source but no rental_usd_per_hour")
    power = price.board_power_w
    if power is not None:
        lo, hi = BOARD_POWER_RANGE_W
        if not lo <= power <= hi:
            out.append(f"{where}: price.board_power_w {power:g} is outside {lo:g}-{hi:g} W")
        if not (price.board_power_source or "").strip():
            out.append(f"{where}: price.board_power_w has no source (add price.board_power_source)")
    elif price.board_power_source:
        out.append(f"{where}: price.board_power_source is given but board_power_w is not")
    return out


def _unit_problems(where: str, row: DeviceRow, compute: dict[str, float]) -> list[str]:
    out: list[str] = []
    ranges = CLASS_RANGES.get(row.device_class)
    for key, value in (("memory_gb", row.memory_gb), ("bandwidth_gb_per_s", row.bandwidth_gb_per_s)):
        if not (math.isfinite(value) and value > 0):
            out.append(f"{where}: {key} must be a positive number (got {value})")
    if ranges is not None:
        (mem_lo, mem_hi), (bw_lo, bw_hi) = ranges
        if row.memory_gb > 0 and not mem_lo <= row.memory_gb <= mem_hi:
            out.append(
                f"{where}: memory_gb {row.memory_gb:g} is outside {mem_lo:g}-{mem_hi:g} GB for a "
                f"{row.device_class}; give decimal GB (not bytes, MB or TB)"
            )
        if row.bandwidth_gb_per_s > 0 and not bw_lo <= row.bandwidth_gb_per_s <= bw_hi:
            out.append(
                f"{where}: bandwidth_gb_per_s {row.bandwidth_gb_per_s:g} is outside {bw_lo:g}-{bw_hi:g} GB/s "
                f"for a {row.device_class}; give decimal GB/s (a TB/s figure times 1000)"
            )
    lo, hi = TFLOPS_RANGE
    for mode, value in compute.items():
        if not lo <= value <= hi:
            out.append(
                f"{where}: compute_tflops.{mode} {value:g} is outside {lo:g}-{hi:g}; give dense TFLOPS "
                "(TOPS for int8), not FLOP/s or PFLOPS"
            )
    if compute.get("fp32", 0.0) > FP32_MAX_TFLOPS:
        out.append(
            f"{where}: compute_tflops.fp32 {compute['fp32']:g} exceeds {FP32_MAX_TFLOPS:g}; TF32 tensor?"
        )
    return out


def _mode_problems(where: str, compute: dict[str, float]) -> list[str]:
    out: list[str] = []

    def below(low: str, high: str, hint: str) -> None:
        if low in compute and high in compute and compute[high] < compute[low]:
            out.append(
                f"{where}: compute_tflops.{high} ({compute[high]:g}) is below compute_tflops.{low} "
                f"({compute[low]:g}); {hint}"
            )

    below("fp8", "fp4", "a sparse figure for one and dense for the other?")
    below("bf16", "fp8", "a sparse figure for one and dense for the other?")
    below("fp32", "bf16", "fp32 is the vector rate, bf16 the matrix rate")
    below("fp32", "fp16", "fp32 is the vector rate, fp16 the matrix rate")
    below("fp16", "fp16_acc16", "FP16 accumulate is never slower than FP32 accumulate")
    if "fp16" in compute and "fp16_acc16" in compute and compute["fp16_acc16"] > 2.002 * compute["fp16"]:
        out.append(
            f"{where}: compute_tflops.fp16_acc16 ({compute['fp16_acc16']:g}) is more than twice fp16 "
            f"({compute['fp16']:g}); a sparse figure?"
        )
    if "fp8" in compute and "bf16" in compute and compute["fp8"] > FP8_OVER_BF16_MAX * compute["bf16"]:
        out.append(
            f"{where}: compute_tflops.fp8 ({compute['fp8']:g}) is more than twice bf16 ({compute['bf16']:g}); "
            "fp8 is the rate with FP32 accumulate (a GeForce headline FP8 figure is FP16 accumulate: halve it)"
        )
    if "bf16" in compute and "fp16" in compute:
        bf16, fp16 = compute["bf16"], compute["fp16"]
        half_rate = where in BF16_HALF_RATE and abs(2 * bf16 - fp16) <= SAME_RATE_TOLERANCE * fp16
        if abs(bf16 - fp16) > SAME_RATE_TOLERANCE * max(bf16, fp16) and not half_rate:
            out.append(
                f"{where}: compute_tflops.fp16 ({fp16:g}) differs from bf16 ({bf16:g}); tensor cores run "
                "both at one rate, so check the accumulate convention"
            )
    return out


def system_problems(row: SystemRow, member: DeviceRow | None) -> list[str]:
    """A system's quoted vendor totals against count x member, and their source."""
    where = f"system '{row.id}'"
    out: list[str] = _interconnect_problems(row, where)
    quoted = row.quoted
    if quoted is None or member is None:
        return out
    pairs: list[tuple[str, float | None, float | None]] = [
        ("memory_gb", quoted.memory_gb, member.memory_gb),
        ("bandwidth_gb_per_s", quoted.bandwidth_gb_per_s, member.bandwidth_gb_per_s),
    ]
    member_compute = member.compute_tflops.present()
    for mode, value in quoted.compute_tflops.present().items():
        pairs.append((f"compute_tflops.{mode}", value, member_compute.get(mode)))
    any_number = False
    for key, total, per_device in pairs:
        if total is None:
            continue
        any_number = True
        if per_device is None:
            out.append(f"{where}: quoted.{key} is given but member '{member.id}' has no {key}")
            continue
        expected = per_device * row.count
        if abs(total - expected) > QUOTED_TOLERANCE * expected:
            out.append(
                f"{where}: quoted.{key} {total:g} differs from {row.count} x {per_device:g} = {expected:g} "
                f"by more than {QUOTED_TOLERANCE:.0%}"
            )
    if any_number and not (quoted.source and quoted.source.strip()):
        out.append(f"{where}: quoted totals have no source (add quoted.source)")
    return out


def _interconnect_problems(row: SystemRow, where: str) -> list[str]:
    """A stated link: a domain of 1 to count devices, positive rates, and a source for each rate."""
    link = row.interconnect
    if link is None:
        return []
    out: list[str] = []
    if not 1 <= link.scale_up_devices <= row.count:
        out.append(
            f"{where}: interconnect.scale_up_devices {link.scale_up_devices} must be 1 to count {row.count}"
        )
    for key in ("scale_up_gb_per_s", "scale_out_gb_per_s"):
        value = getattr(link, key)
        if not value > 0:
            out.append(f"{where}: interconnect.{key} must be positive (got {value})")
        source = getattr(link.sources, key)
        if not (source and source.strip()):
            out.append(f"{where}: interconnect.{key} has no source (add interconnect.sources.{key})")
    return out
