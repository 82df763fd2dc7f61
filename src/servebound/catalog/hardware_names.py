"""The hardware catalog's names and limits (classes, the id pattern, the NxID form), apart from its
schema (``hardware_schema``, pydantic) so that reading the catalog from its snapshot imports no
validation library."""

from __future__ import annotations

import re

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
