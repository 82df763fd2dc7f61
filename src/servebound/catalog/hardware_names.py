"""The hardware catalog's names and limits (classes, the id pattern, the NxID form) and the reading of
a reference against a catalog's index (``hardware_row``), apart from its schema (``hardware_schema``,
pydantic) and its display records (``catalog.hardware``): a decode reads an id, an alias or an NxID
system from the snapshot's index and rows with no validation library and no catalog record."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping

from servebound.catalog.engines import device_family
from servebound.core.engines import EngineTable
from servebound.core.hardware import Hardware
from servebound.errors import InputError, check_id_length

MAX_SYSTEM_COUNT = 1024

#: Device classes, as the shared hardware.tsv README defines them (``CPU`` is reserved).
DEVICE_CLASSES: tuple[str, ...] = (
    "datacenter GPU",
    "workstation GPU",
    "consumer GPU",
    "unified-memory SoC",
    "accelerator",
    "CPU",
)
#: Classes of ``[[system]]`` rows.
SYSTEM_CLASSES: tuple[str, ...] = ("multi-device system", "rack-scale system")
ALL_CLASSES: tuple[str, ...] = DEVICE_CLASSES + SYSTEM_CLASSES

#: The classes rankings and browse tables group machines by, in the order the tables show them:
#: consumer GPUs, workstations (workstation GPUs and unified-memory machines that are not Apple's),
#: Apple silicon, datacenter GPUs and accelerators one device each, multi-device systems, and rows
#: read from a hardware file (no catalog class).
HARDWARE_CLASSES: tuple[str, ...] = ("consumer", "workstation", "apple", "datacenter", "systems", "files")
#: The class of each device class (a system class is always ``systems``).
CLASS_OF_DEVICE_CLASS: dict[str, str] = {
    "consumer GPU": "consumer",
    "workstation GPU": "workstation",
    "unified-memory SoC": "workstation",
    "datacenter GPU": "datacenter",
    "accelerator": "datacenter",
}

SLUG_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_NX_FORM = re.compile(r"^(\d+)x-(.+)$")
_NX_NO_HYPHEN = re.compile(r"^(\d+)x([a-z].*)$")


#: The id this machine answers to where no GPU tool answers: its CPU and system RAM
#: (``measure.detect.cpu_only_hardware``).
CPU_ONLY_ID = "this-machine-cpu"


def nx_form(key: str) -> tuple[int, str] | None:
    """(count, device reference) of an ``<count>x-<device>`` system reference as ``normalize_ref`` reads
    it, else None."""
    match = _NX_FORM.match(key)
    return None if match is None else (int(match.group(1)), match.group(2))


def normalize_ref(ref: str) -> str:
    """How lookups read what a user typed: trimmed, lowercase, spaces and underscores as hyphens."""
    return re.sub(r"[\s_]+", "-", ref.strip().lower())


def hardware_row(
    ref: str, index: Mapping[str, str], system_of: Callable[[str], tuple[str, int] | None]
) -> tuple[str, int | None]:
    """(row id, None) for a catalog id or alias; for ``<count>x-<device>``, (the declared system's id,
    None) where the catalog lists that system (its link and price included), else (the device's id,
    count). ``index`` maps each id and alias (as ``normalize_ref`` reads them) to its row's id;
    ``system_of`` gives a system row's (member id, count), None for a device. An unknown reference
    (or a system multiplied, or a count out of range) is an InputError with the closest ids."""
    check_id_length(ref, "hardware")
    key = normalize_ref(ref)
    if key in index:
        return index[key], None
    nx = nx_form(key)
    if nx is not None:
        count, member_ref = nx
        if member_ref not in index:
            raise InputError(
                "hardware",
                f"'{ref}': {unknown_hardware(member_ref, member_ref, index)} (systems are '<count>x-<device id>')",
            )
        member_id = index[member_ref]
        system = system_of(member_id)
        if system is not None:
            raise InputError(
                "hardware",
                f"'{ref}' multiplies the system '{member_id}'; multiply its device instead: "
                f"'{system[1] * count}x-{system[0]}'",
            )
        if not 1 <= count <= MAX_SYSTEM_COUNT:
            raise InputError(
                "hardware", f"'{ref}': device count {count} is out of range; use 1 to {MAX_SYSTEM_COUNT}"
            )
        listed = index.get(f"{count}x-{member_id}")  # 8x-h200 is the catalog's 8x-nvidia-h200-sxm,
        return (listed, None) if listed is not None else (member_id, count)  # not an ideal-link stand-in
    loose = _NX_NO_HYPHEN.match(key)
    if loose and loose.group(2) in index:
        canonical = f"{int(loose.group(1))}x-{index[loose.group(2)]}"
        raise InputError(
            "hardware",
            f"'{ref}' is not in the catalog; did you mean '{canonical}'? Systems are written "
            "'<count>x-<device id>'",
        )
    raise InputError("hardware", unknown_hardware(ref, key, index))


def system_hardware(
    member: Hardware,
    count: int,
    *,
    system_id: str | None = None,
    name: str | None = None,
    table: EngineTable | None = None,
) -> Hardware:
    """``count`` identical ``member`` devices as one record (``Hardware.scaled``): the id
    ``<count>x-<member id>`` and the name ``<count>x <member name>`` unless given, the family of the id."""
    sid = system_id or f"{count}x-{member.id}"
    family = device_family(sid, table)
    return dataclasses.replace(
        member.scaled(count), id=sid, name=name or f"{count}x {member.name}", family=family
    )


def hardware_suggestions(key: str, index: Mapping[str, str], limit: int = 3) -> list[str]:
    """Catalog ids closest to a mistyped reference (aliases count, ids are returned)."""
    from rapidfuzz import fuzz, process, utils

    found = process.extract(
        key, list(index), scorer=fuzz.WRatio, processor=utils.default_process, limit=limit * 4
    )
    out: list[str] = []
    for name, score, _ in found:
        target = index[name]
        if score >= 65 and target not in out:
            out.append(target)
    return out[:limit]


def unknown_hardware(ref: str, key: str, index: Mapping[str, str]) -> str:
    """What an unknown reference's error says: the closest ids, and where the list is."""
    close = hardware_suggestions(key, index)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ";"
    return f"'{ref}' is not in the catalog{hint} `servebound hardware list` shows all"
