"""Device families and serving engines, read from ``catalog/data/engines.toml``.

A family says which arithmetic modes a device's silicon multiplies natively, so a format mode it has
no hardware for (FP4 on Ada or Hopper, FP8 on Ampere) is charged at the mode engines unpack it to.
An engine says how it allocates its cache, what runtime overhead it keeps, its cache dtypes in its own
spelling, and which weight formats it runs on which family. Every entry carries its source.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class Family:
    """A device family: the modes its matrix hardware runs, the one whose rate no other mode exceeds
    (``fastest_mode``), and the id prefixes that belong to it."""

    id: str
    vendor: str
    patterns: tuple[str, ...]
    hardware_modes: tuple[str, ...]
    fastest_mode: str
    source: str


@dataclass(frozen=True)
class Dequantize:
    """A format mode with no hardware on a family, charged at the first of ``to`` the row publishes."""

    mode: str
    to: tuple[str, ...]
    source: str


@functools.cache
def _data() -> dict[str, Any]:
    text = resources.files("servebound.catalog.data").joinpath("engines.toml").read_text("utf-8")
    return tomllib.loads(text)


@functools.cache
def families() -> tuple[Family, ...]:
    """Every device family, in the data file's order (the first matching pattern wins)."""
    return tuple(
        Family(
            id=row["id"],
            vendor=row["vendor"],
            patterns=tuple(row["patterns"]),
            hardware_modes=tuple(row["hardware_modes"]),
            fastest_mode=row["fastest_mode"],
            source=row["source"],
        )
        for row in _data()["family"]
    )


@functools.cache
def dequantize_rules() -> dict[str, Dequantize]:
    """Format mode -> the modes engines unpack it to on a family without hardware for it."""
    return {
        row["mode"]: Dequantize(mode=row["mode"], to=tuple(row["to"]), source=row["source"])
        for row in _data()["dequantize"]
    }


_SYSTEM_PREFIX = re.compile(r"^\d+x-")


def device_family(hardware_id: str) -> Family | None:
    """The family of a hardware id (a system's ``Nx-`` prefix stripped), or None when unknown."""
    base = _SYSTEM_PREFIX.sub("", hardware_id)
    for family in families():
        if any(base.startswith(pattern) for pattern in family.patterns):
            return family
    return None
