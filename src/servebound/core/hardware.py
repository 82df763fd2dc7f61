"""A machine as the derivation sees it: capacity C, bandwidth R and dense compute per arithmetic mode."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, Literal, TypeVar, get_args

from servebound.core.engines import Family
from servebound.core.errors import InputError

#: An arithmetic mode a hardware row may quote (the one definition; schemas and the API use it). A mode
#: names the operand and the accumulate format (the derivation's F_hw(phi)): ``fp16`` is FP16 operands
#: with FP32 accumulate, ``fp16_acc16`` FP16 operands with FP16 accumulate, the mode GeForce tensor cores
#: run at twice the ``fp16`` rate and llama.cpp's CUDA backend uses for its FP16 cuBLAS GEMMs. A row that
#: does not quote ``fp16_acc16`` leaves that mode unavailable, never borrowed from ``fp16``.
ArithmeticMode = Literal["fp4", "fp8", "int8", "bf16", "fp16", "fp16_acc16", "fp32"]
#: The same modes as a tuple, in the order reports list them.
ARITHMETIC_MODES: tuple[str, ...] = get_args(ArithmeticMode)


#: The most answers one hardware record keeps (``Hardware.looked_up``): every (shape, modes) and
#: decode setting of a whole-catalog sweep of one device, with room to spare.
LOOKUPS_KEPT = 4096

T = TypeVar("T")


def _frozen(mapping: Mapping[str, float] | None) -> Mapping[str, float]:
    return MappingProxyType(dict(mapping or {}))


def require_positive(value: float, field: str, unit: str) -> None:
    """InputError unless ``value`` is a finite number above 0: a record refuses NaN, infinite, zero and
    negative capacities and rates at construction, so no bound is ever computed from one."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise InputError(field, f"must be a finite number of {unit} above 0 (got {value!r})")


#: The span of a real record, one device or a system of up to 1,024: from a kilobyte to an exabyte of
#: memory, a kB/s to 10 EB/s, a megaflop to 10 zettaflop/s. Beyond them a value is a unit slip.
MEMORY_BYTES = (1e3, 1e18)
BANDWIDTH_BYTES_S = (1e3, 1e19)
COMPUTE_FLOP_S = (1e6, 1e22)

#: What a real host could have (the inputs' declared bounds): 0.1 GB to 100 TB of RAM, read at 0.1
#: GB/s to 2 TB/s (a 12-channel DDR5 server reads about 0.5 TB/s), over a link of up to 2 TB/s (a
#: coherent CPU-GPU link is 0.9 TB/s), with a CPU of 0.001 to 10,000 TFLOPS.
HOST_BOUNDS: dict[str, tuple[float, float]] = {
    "host_memory_gb": (0.1, 1e5),
    "host_bandwidth_gb_per_s": (0.1, 2000.0),
    "host_link_gb_per_s": (0.1, 2000.0),
    "host_tflops": (1e-3, 1e4),
}


def require_real(value: float, field: str, unit: str, span: tuple[float, float]) -> None:
    """``require_positive``, and within ``span``: what any real machine could have."""
    require_positive(value, field, unit)
    low, high = span
    if not low <= value <= high:
        raise InputError(
            field,
            f"{value:g} {unit} is beyond any real machine; give {low:g} to {high:g} {unit}: check the unit",
        )


def require_finite(value: float, field: str, unit: str) -> None:
    """InputError unless ``value`` is a finite number (NaN and infinities refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(field, f"must be a finite number of {unit} (got {value!r})")


def require_non_negative(value: float, field: str, unit: str) -> None:
    """InputError unless ``value`` is a finite number at or above 0 (a size that may be none)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise InputError(field, f"must be a finite number of {unit}, 0 or more (got {value!r})")


@dataclass(frozen=True)
class Hardware:
    """One device or one system of identical devices treated as one memory pool.

    ``memory_bytes`` is C before runtime overhead, ``bandwidth_bytes_per_s`` is R,
    ``compute_flop_per_s`` maps an arithmetic mode (``bf16``, ``fp8`` ...) to a dense rate.
    ``provenance`` says whether R and F are vendor peaks (``peak``, the ceiling reading)
    or ``measured`` sustained rates (the estimate reading). ``runtime_overhead_bytes`` is O as the
    row states it (the OS's share of unified memory, a discrete card's runtime context and workspace),
    with its reasoning under ``sources["runtime_overhead_gb"]``; None where the row states none, and
    the workload's O (8 GB by default) applies. ``family`` is the device family of the engine table
    (``core.engines``), as the catalog attaches it: the modes its silicon multiplies and what engines
    unpack the others to; None where the table knows no family for the id.
    """

    id: str
    name: str
    memory_bytes: float
    bandwidth_bytes_per_s: float
    compute_flop_per_s: Mapping[str, float] = field(default_factory=dict)
    provenance: str = "peak"
    sources: Mapping[str, str] = field(default_factory=dict)
    runtime_overhead_bytes: float | None = None
    family: Family | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compute_flop_per_s", _frozen(self.compute_flop_per_s))
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))
        require_real(self.memory_bytes, "hardware.memory_bytes", "bytes", MEMORY_BYTES)
        require_real(
            self.bandwidth_bytes_per_s, "hardware.bandwidth_bytes_per_s", "bytes/s", BANDWIDTH_BYTES_S
        )
        for mode, rate in self.compute_flop_per_s.items():
            if mode not in ARITHMETIC_MODES:
                raise InputError(
                    f"hardware.compute_flop_per_s.{mode}",
                    f"unknown arithmetic mode {mode!r}; use one of {', '.join(ARITHMETIC_MODES)}",
                )
            require_real(rate, f"hardware.compute_flop_per_s.{mode}", "FLOP/s", COMPUTE_FLOP_S)
        if self.runtime_overhead_bytes is not None:
            require_non_negative(self.runtime_overhead_bytes, "hardware.runtime_overhead_bytes", "bytes")
            if self.runtime_overhead_bytes >= self.memory_bytes:
                raise InputError(
                    "hardware.runtime_overhead_bytes",
                    f"{self.runtime_overhead_bytes / 1e9:,.4g} GB of runtime overhead is not below the "
                    f"machine's {self.memory_bytes / 1e9:,.4g} GB of memory (O is part of C): give a smaller "
                    "runtime_overhead_gb",
                )

    @property
    def memory_power_bytes2_per_s(self) -> float:
        """D = C R, the area of the feasible (resident, flow) rectangle."""
        return self.memory_bytes * self.bandwidth_bytes_per_s

    @cached_property
    def lookups(self) -> dict[Hashable, Any]:
        """What the core derives from this record and a few other inputs, kept by those inputs (the
        record is frozen): ``core.rates.mode_rates`` and ``core.decode_compute`` keep their answers
        here, so a sweep computes each once per record. Read it through :meth:`looked_up`."""
        return {}

    def looked_up(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The answer kept under ``key``, else ``compute()`` kept there. At most LOOKUPS_KEPT answers
        are kept (a long-lived server's catalog record sees endless workloads): past that the record
        starts over."""
        found: T | None = self.lookups.get(key)
        if found is None:
            if len(self.lookups) >= LOOKUPS_KEPT:
                self.lookups.clear()
            found = self.lookups[key] = compute()
        return found

    def compute_rate(self, mode: str) -> float | None:
        """F_hw(mode) in FLOP/s, or None when the row does not publish that mode."""
        return self.compute_flop_per_s.get(mode)

    def scaled(self, count: int) -> Hardware:
        """N identical devices under ideal tensor/expert parallelism: every resource summed."""
        return Hardware(
            id=f"{count}x-{self.id}",
            name=f"{count}x {self.name}",
            memory_bytes=self.memory_bytes * count,
            bandwidth_bytes_per_s=self.bandwidth_bytes_per_s * count,
            compute_flop_per_s={k: v * count for k, v in self.compute_flop_per_s.items()},
            provenance=self.provenance,
            sources={
                **self.sources,
                **(
                    {"runtime_overhead_gb": f"{count} x the member's: {self.sources['runtime_overhead_gb']}"}
                    if "runtime_overhead_gb" in self.sources
                    else {}
                ),
            },
            runtime_overhead_bytes=None
            if self.runtime_overhead_bytes is None
            else self.runtime_overhead_bytes * count,
            family=self.family,
        )
