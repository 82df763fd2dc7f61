"""The host catalog (``catalog/data/hosts.toml``): host memory rows and host CPU rows, each with its
source, and the offload a person's inputs ask for (``offload_spec``: the flags, the API's parameters
and the pair page's form, checked once, a ``host`` row's figures filled in) as the core's
``OffloadSpec``."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from servebound.core.advice import Note, Setting, listed
from servebound.core.errors import InputError
from servebound.core.hardware import HOST_BOUNDS
from servebound.core.offload import _HOST, _PLACED, _PLACEMENTS, DEFAULT_LINK_BYTES_PER_S, OffloadSpec
from servebound.inputs import package_data


@dataclass(frozen=True)
class HostRow:
    """A host memory row: channels x 8 bytes x MT/s of peak bandwidth, a common capacity, the source."""

    id: str
    name: str
    channels: int
    mt_per_s: int
    memory_gb: float
    source: str

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return self.channels * 8.0 * self.mt_per_s * 1e6


@functools.cache
def host_rows() -> dict[str, HostRow]:
    """The host catalog (``catalog/data/hosts.toml``), by id."""
    return {
        row["id"]: HostRow(
            id=row["id"],
            name=row["name"],
            channels=int(row["channels"]),
            mt_per_s=int(row["mt_per_s"]),
            memory_gb=float(row["memory_gb"]),
            source=row["source"],
        )
        for row in package_data.read_toml("servebound.catalog", "data", "hosts.toml")["host"]
    }


@dataclass(frozen=True)
class CpuRow:
    """A host CPU row: cores x max turbo x operations per cycle per core, per mode, and the source."""

    id: str
    name: str
    cores: int
    max_ghz: float
    ops_per_cycle: tuple[tuple[str, int], ...]
    source: str

    @property
    def rates(self) -> tuple[tuple[str, float], ...]:
        """Peak FLOP/s per mode (int8: operations/s)."""
        return tuple((mode, self.cores * self.max_ghz * 1e9 * ops) for mode, ops in self.ops_per_cycle)


@functools.cache
def cpu_rows() -> dict[str, CpuRow]:
    """The host CPU catalog (``hosts.toml``'s ``[[cpu]]``), by id."""
    return {
        row["id"]: CpuRow(
            id=row["id"],
            name=row["name"],
            cores=int(row["cores"]),
            max_ghz=float(row["max_ghz"]),
            ops_per_cycle=tuple((str(k), int(v)) for k, v in row["ops_per_cycle"].items()),
            source=row["source"],
        )
        for row in package_data.read_toml("servebound.catalog", "data", "hosts.toml").get("cpu", [])
    }


def get_cpu(cpu_id: str) -> CpuRow:
    """The host CPU row of that id, or an InputError naming ``host_cpu`` and the choices."""
    found = cpu_rows().get(cpu_id)
    if found is None:
        raise InputError("host_cpu", f"unknown host CPU {cpu_id!r}; use one of {', '.join(cpu_rows())}")
    return found


def get_host(host_id: str) -> HostRow:
    """The host row of that id, or an InputError naming ``host`` and the choices."""
    found = host_rows().get(host_id)
    if found is None:
        raise InputError("host", f"unknown host {host_id!r}; use one of {', '.join(host_rows())}")
    return found


def offload_spec(
    *,
    cpu_moe: bool = False,
    n_cpu_moe: int | None = None,
    gpu_layers: int | None = None,
    host: str | None = None,
    host_memory_gb: float | None = None,
    host_bandwidth_gb_per_s: float | None = None,
    host_link_gb_per_s: float | None = None,
    host_tflops: float | None = None,
    host_cpu: str | None = None,
) -> OffloadSpec | None:
    """The offload the flags ask for (None: none), validated: one placement, a host's memory and
    bandwidth (a ``host`` row's, each overridable by its flag). Every bad value is an InputError."""
    placements = [
        name
        for name, on in (
            ("cpu_moe", cpu_moe),
            ("n_cpu_moe", n_cpu_moe is not None),
            ("gpu_layers", gpu_layers is not None),
        )
        if on
    ]
    host_given = [
        name
        for name, value in (
            ("host", host),
            ("host_memory_gb", host_memory_gb),
            ("host_bandwidth_gb_per_s", host_bandwidth_gb_per_s),
            ("host_link_gb_per_s", host_link_gb_per_s),
            ("host_tflops", host_tflops),
            ("host_cpu", host_cpu),
        )
        if value is not None
    ]
    if not placements:
        if host_given:
            raise InputError(host_given[0], Note.of("applies with ", *_PLACED, " (what goes to host RAM)"))
        return None
    if len(placements) > 1:
        raise InputError(
            placements[1], Note.of("give one of ", *_PLACEMENTS, f" (got {', '.join(placements)})")
        )
    for name, count in (("n_cpu_moe", n_cpu_moe), ("gpu_layers", gpu_layers)):
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
            raise InputError(name, f"must be a whole number >= 0 (got {count!r})")
    if host_tflops is not None and host_cpu is not None:
        rates = Note.of(
            "give one of ", Setting("host_cpu"), " (a CPU row's rates) or ", Setting("host_tflops")
        )
        raise InputError("host_cpu", rates)
    cpu = get_cpu(host_cpu) if host_cpu is not None else None
    row = get_host(host) if host is not None else None
    memory = host_memory_gb if host_memory_gb is not None else (row.memory_gb if row else None)
    bandwidth = (
        host_bandwidth_gb_per_s
        if host_bandwidth_gb_per_s is not None
        else (row.bandwidth_bytes_per_s / 1e9 if row else None)
    )
    if memory is None:
        ram = Setting("host_memory_gb", placeholder="G")
        raise InputError(
            "host_memory_gb", Note.of("offload needs the host's RAM: give ", *listed(ram, _HOST))
        )
    if bandwidth is None:
        rate = Setting("host_bandwidth_gb_per_s", placeholder="R")
        needs = Note.of("offload needs the host's memory bandwidth: give ", *listed(rate, _HOST))
        raise InputError("host_bandwidth_gb_per_s", needs)
    for name, value in (
        ("host_memory_gb", memory),
        ("host_bandwidth_gb_per_s", bandwidth),
        ("host_link_gb_per_s", host_link_gb_per_s),
        ("host_tflops", host_tflops),
    ):
        if value is not None and not (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
            and 0 < value <= 1e9
        ):
            raise InputError(name, f"must be a positive finite number (got {value!r})")
        low, high = HOST_BOUNDS[name]
        if value is not None and not low <= value <= high:
            raise InputError(name, f"{value:g} is beyond any real host; give {low:g} to {high:g}")
    source = row.source if row else "given"
    if row is not None and (host_memory_gb is not None or host_bandwidth_gb_per_s is not None):
        source = f"{row.id}, with the given overrides ({source})"
    return OffloadSpec(
        host_memory_bytes=float(memory) * 1e9,
        host_bandwidth_bytes_per_s=float(bandwidth) * 1e9,
        cpu_moe=cpu_moe,
        n_cpu_moe=n_cpu_moe,
        gpu_layers=gpu_layers,
        link_bytes_per_s=DEFAULT_LINK_BYTES_PER_S if host_link_gb_per_s is None else host_link_gb_per_s * 1e9,
        host_id=row.id if row else None,
        host_source=source,
        host_flop_per_s=None if host_tflops is None else host_tflops * 1e12,
        host_cpu=cpu.id if cpu else None,
        host_cpu_rates=cpu.rates if cpu else (),
    )
