"""A name a device reports, mapped to its hardware catalog row: exact names, memory as the tie-break.

The table is ``catalog/data/device_names.toml``: each reported string (as nvidia-smi, amd-smi,
rocm-smi, llama.cpp or system_profiler prints it) names the rows it can be. A name is compared after
folding case, runs of whitespace and the ``(R)``/``(TM)`` marks, nothing more: an unknown name is no
match, never the nearest spelling. Where a name covers several rows, the memory the device reports picks
the one within :data:`MEMORY_TOLERANCE` of it; Apple chips are told apart by GPU core count and memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from servebound.catalog.hardware import get_hardware
from servebound.errors import InputError
from servebound.inputs import bounded

#: How far a reported memory may sit from a row's capacity and still be that row: devices report a
#: little less than their label (driver reserve) or their exact binary size; a variant the catalog lacks
#: (an 8 GB card where only the 16 GB one is listed) sits 50 % away or more.
MEMORY_TOLERANCE = 0.10
GIB = 2**30


@dataclass(frozen=True)
class DeviceMatch:
    """The catalog row a reported name (and memory, GPU cores) maps to, and why."""

    id: str
    reported: str
    why: str


def fold(name: str) -> str:
    """The comparison form of a reported name: case, whitespace and (R)/(TM) marks folded."""
    text = re.sub(r"\((?:r|tm)\)", " ", name.casefold())
    return " ".join(text.split())


@dataclass(frozen=True)
class _Table:
    names: dict[str, tuple[str, ...]]
    apple: dict[str, tuple[str, int]]
    memory_decides: frozenset[str]


@cache
def _table() -> _Table:
    text = resources.files("servebound.catalog").joinpath("data", "device_names.toml").read_bytes()
    data = bounded.parse_toml(text, "device_names.toml")
    names: dict[str, tuple[str, ...]] = {}
    decides: set[str] = set()
    for row in data["name"]:
        for reported in row["reported"]:
            names[fold(reported)] = tuple(row["hardware"])
            if row.get("memory_decides", False):
                decides.add(fold(reported))
    apple = {row_id: (str(chip), int(cores)) for row_id, (chip, cores) in data["apple"].items()}
    return _Table(names, apple, frozenset(decides))


def known_names() -> dict[str, tuple[str, ...]]:
    """Every folded reported name and the catalog rows it can be."""
    return dict(_table().names)


def apple_rows() -> dict[str, tuple[str, int]]:
    """Apple rows: id -> (chip name as system_profiler reports it, GPU cores)."""
    return dict(_table().apple)


def _memory_bytes(row_id: str) -> float:
    return get_hardware(row_id).hardware.memory_bytes


def _close(memory_bytes: float, row_id: str) -> bool:
    return abs(memory_bytes / _memory_bytes(row_id) - 1.0) <= MEMORY_TOLERANCE


def _gb(value: float) -> str:
    return f"{value / 1e9:.1f} GB"


def _apple_match(name: str, memory_bytes: float | None, gpu_cores: int | None) -> DeviceMatch:
    chip = fold(name)
    rows = {rid: cores for rid, (c, cores) in _table().apple.items() if fold(c) == chip}
    if gpu_cores is not None:
        offered = sorted(set(rows.values()))
        rows = {rid: cores for rid, cores in rows.items() if cores == gpu_cores}
        if not rows:
            raise InputError(
                "gpu_cores",
                f"the catalog has no {name} with a {gpu_cores}-core GPU (it lists "
                f"{', '.join(map(str, offered))}); measure this machine with `servebound measure -o my.toml`",
            )
    if memory_bytes is not None:
        gib = round(memory_bytes / GIB)
        # Apple rows hold the binary size macOS reports (its "48 GB" is 48 GiB); the size must be the
        # row's label exactly, counted in GiB (as system_profiler reports it) or in GB (as typed).
        sizes = {gib, round(memory_bytes / 1e9)}
        exact = {rid: c for rid, c in rows.items() if round(_memory_bytes(rid) / GIB) in sizes}
        if not exact:
            raise InputError(
                "memory_gb",
                f"the catalog has no {name}{_cores(gpu_cores)} with {gib} GB; it lists "
                f"{', '.join(sorted(rows))}; measure this machine with `servebound measure -o my.toml`",
            )
        rows = exact
    if len(rows) > 1:
        need = "--gpu-cores and --memory-gb" if gpu_cores is None else "--memory-gb"
        raise InputError(
            "hardware",
            f"{name} is one of {', '.join(sorted(rows))}; give {need} to tell them apart",
        )
    (row_id,) = rows
    detail = []
    if gpu_cores is not None:
        detail.append(f"{gpu_cores}-core GPU")
    if memory_bytes is not None:
        detail.append(f"{round(memory_bytes / GIB)} GB")
    why = f"{name}" + (f" with {', '.join(detail)}" if detail else " (the only catalog row of that chip)")
    return DeviceMatch(row_id, name, why)


def _cores(gpu_cores: int | None) -> str:
    return "" if gpu_cores is None else f" ({gpu_cores}-core GPU)"


def match_device(name: str, memory_bytes: float | None = None, gpu_cores: int | None = None) -> DeviceMatch:
    """The catalog row for a reported device name; InputError naming the fix when there is none.

    ``memory_bytes``: the memory the device (or, for unified memory, the system) reports; it picks the
    row among a name's memory variants and must agree with a single candidate too. ``gpu_cores``: Apple
    silicon's GPU core count (system_profiler's sppci_cores).
    """
    if not name.strip():
        raise InputError(
            "name", "give the device name as the system reports it (e.g. 'NVIDIA H100 80GB HBM3')"
        )
    if memory_bytes is not None and not memory_bytes > 0:
        raise InputError("memory_gb", f"must be a positive size, got {memory_bytes / 1e9:g}")
    if gpu_cores is not None and gpu_cores < 1:
        raise InputError("gpu_cores", f"must be a positive core count, got {gpu_cores}")
    key = fold(name)
    if any(fold(chip) == key for chip, _ in _table().apple.values()):
        return _apple_match(name.strip(), memory_bytes, gpu_cores)
    candidates = _table().names.get(key)
    if candidates is None:
        raise InputError(
            "name",
            f"{name!r} is not a device name the catalog knows (names are matched exactly, as nvidia-smi, "
            "amd-smi, rocm-smi or system_profiler print them); give --hardware a catalog id "
            "(`servebound hardware list`) or measure this machine with `servebound measure -o my.toml`",
        )
    rows = candidates
    if memory_bytes is None and key in _table().memory_decides:
        raise InputError(
            "memory_gb",
            f"{name.strip()} is also made with a memory size the catalog lacks; give --memory-gb (the "
            f"catalog lists {', '.join(f'{rid} ({_gb(_memory_bytes(rid))})' for rid in candidates)})",
        )
    if memory_bytes is not None:
        rows = tuple(rid for rid in candidates if _close(memory_bytes, rid))
        if not rows:
            listed = ", ".join(f"{rid} ({_gb(_memory_bytes(rid))})" for rid in candidates)
            raise InputError(
                "memory_gb",
                f"{name} with {_gb(memory_bytes)} is no catalog row ({listed}): a memory variant the "
                "catalog lacks; measure it with `servebound measure -o my.toml`",
            )
    if len(rows) > 1:
        raise InputError(
            "memory_gb", f"{name} is one of {', '.join(rows)}; give --memory-gb to tell them apart"
        )
    why = name.strip() + (f" with {_gb(memory_bytes)}" if memory_bytes is not None else "")
    return DeviceMatch(rows[0], name.strip(), why)
