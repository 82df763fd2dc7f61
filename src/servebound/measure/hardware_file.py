"""A measurement written as a hardware file (the contract's TOML keys) with its provenance.

Contract keys: ``id``, ``name``, ``memory_gb`` (detected capacity, decimal GB),
``bandwidth_gb_per_s`` (the best sustained STREAM kernel, decimal GB/s) and ``[compute_tflops]``
(measured dense modes, 1e12 FLOP/s; int8 in 1e12 OP/s). Added keys: ``provenance = "measured"``,
``measured_on`` (ISO date), ``method`` (one sentence: kernels, sizes, runs), ``[sources]`` and a
``[measurement]`` table with the raw figures behind each number (see :func:`hardware_document`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomli_w

from servebound.core.hardware import ARITHMETIC_MODES, Hardware
from servebound.errors import InputError
from servebound.inputs.files import parse_hardware

if TYPE_CHECKING:
    from servebound.measure.machine import Measurement

_KERNEL_FORMULA = {"copy": "c = a, 2 arrays counted", "triad": "a = b + s*c, 3 arrays counted"}


@dataclass(frozen=True)
class MeasuredHardwareFile:
    """The file's TOML ``text``, the ``document`` it parses to, and the core ``hardware`` it describes
    (built from the same rounded figures, so reading the file back gives the same record)."""

    text: str
    document: Mapping[str, Any]
    hardware: Hardware


def round_significant(value: float, digits: int = 4) -> float:
    """``value`` rounded to ``digits`` significant figures (a file should not claim 17 of them)."""
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def slug(text: str) -> str:
    """A lowercase id from a name: runs of anything but letters and digits become one hyphen."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "machine"


def _version() -> str:
    try:
        return metadata.version("servebound")
    except metadata.PackageNotFoundError:
        return "unknown"


def _memory_source(measurement: Measurement) -> str:
    if measurement.device == "cpu":
        return "total system memory"
    if measurement.device == "mps":
        return "unified memory shared by CPU and GPU"
    return f"total memory of {measurement.device} as torch reports it"


def _method(measurement: Measurement) -> str:
    bandwidth, matmul = measurement.bandwidth, measurement.matmul
    best = bandwidth.best
    runs = len(best.rates_bytes_per_s)
    threads = f" on {bandwidth.threads} threads" if bandwidth.device == "cpu" else ""
    sizes = ", ".join(f"{rate.mode} n={rate.n}" for rate in matmul.rates)
    matmul_runs = max((len(rate.rates_flop_per_s) for rate in matmul.rates), default=0)
    return (
        f"servebound {_version()} measure, {measurement.preset} preset, on {measurement.device}: "
        f"bandwidth_gb_per_s is the best of {runs} STREAM {best.kernel} runs "
        f"({_KERNEL_FORMULA[best.kernel]}) "
        f"over {best.array_bytes / 1e9:.3g} GB {bandwidth.dtype} arrays with {bandwidth.backend}{threads}, "
        f"warm-up excluded; compute_tflops are dense n x n matrix products (2 n^3 FLOP each) with "
        f"{matmul.backend}, best of {matmul_runs} samples after a warm-up ({sizes}); "
        f"memory_gb is the detected capacity"
    )


def hardware_document(
    measurement: Measurement,
    *,
    measured_on: date | None = None,
    hardware_id: str | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """The hardware file as a dict, rounded to 4 significant figures (memory_gb to 1 MB).

    Keys beyond the contract: ``provenance``, ``measured_on``, ``method``, ``[sources]``
    (``memory_gb``, ``bandwidth_gb_per_s``, ``compute_tflops``: one line each) and a flat
    ``[measurement]`` table of scalars: ``device``, ``device_name``, ``preset``, ``elapsed_s``,
    ``bandwidth_kernel``, ``bandwidth_spread``, ``bandwidth_backend``, ``bandwidth_dtype``,
    ``threads``, ``array_bytes``, ``copy_gb_per_s``, ``copy_median_gb_per_s``, ``copy_spread``,
    ``triad_gb_per_s``, ``triad_median_gb_per_s``, ``triad_spread``, ``matmul_backend``, then per
    measured mode ``<mode>_median_tflops``, ``<mode>_spread``, ``<mode>_matrix_n`` and per mode not
    measured ``<mode>_unavailable`` (the reason). Spreads are (best - worst) / best over the timed runs.
    """
    bandwidth, matmul = measurement.bandwidth, measurement.matmul
    best = bandwidth.best
    name = name or f"{measurement.device_name} (measured)"
    order = {mode: index for index, mode in enumerate(ARITHMETIC_MODES)}
    rates = sorted(matmul.rates, key=lambda rate: order.get(rate.mode, len(order)))
    detail: dict[str, Any] = {
        "device": measurement.device,
        "device_name": measurement.device_name,
        "preset": measurement.preset,
        "elapsed_s": round_significant(measurement.elapsed_s, 3),
        "bandwidth_kernel": best.kernel,
        "bandwidth_spread": round_significant(best.spread_fraction, 3),
        "bandwidth_backend": bandwidth.backend,
        "bandwidth_dtype": bandwidth.dtype,
        "threads": bandwidth.threads,
        "array_bytes": best.array_bytes,
    }
    for kernel in (bandwidth.copy, bandwidth.triad):
        detail[f"{kernel.kernel}_gb_per_s"] = round_significant(kernel.best_bytes_per_s / 1e9)
        detail[f"{kernel.kernel}_median_gb_per_s"] = round_significant(kernel.median_bytes_per_s / 1e9)
        detail[f"{kernel.kernel}_spread"] = round_significant(kernel.spread_fraction, 3)
    detail["matmul_backend"] = matmul.backend
    for rate in rates:
        detail[f"{rate.mode}_median_tflops"] = round_significant(rate.median_flop_per_s / 1e12)
        detail[f"{rate.mode}_spread"] = round_significant(rate.spread_fraction, 3)
        detail[f"{rate.mode}_matrix_n"] = rate.n
    for mode, reason in matmul.unavailable.items():
        detail[f"{mode}_unavailable"] = reason
    when = (measured_on or date.today()).isoformat()
    return {
        "id": hardware_id or f"{slug(measurement.device_name)}-measured",
        "name": name,
        "memory_gb": round(measurement.memory_bytes / 1e9, 3),
        "bandwidth_gb_per_s": round_significant(best.best_bytes_per_s / 1e9),
        "provenance": "measured",
        "measured_on": when,
        "method": _method(measurement),
        "compute_tflops": {r.mode: round_significant(r.best_flop_per_s / 1e12) for r in rates},
        "sources": {
            "memory_gb": f"detected on {when}: {_memory_source(measurement)}",
            "bandwidth_gb_per_s": f"measured on {when}: best STREAM {best.kernel}, see method",
            "compute_tflops": f"measured on {when}: dense matrix products, see method",
        },
        "measurement": detail,
    }


def hardware_file(
    measurement: Measurement,
    *,
    measured_on: date | None = None,
    hardware_id: str | None = None,
    name: str | None = None,
) -> MeasuredHardwareFile:
    """The measurement as hardware-file TOML text, with its parsed figures and core record."""
    document = hardware_document(measurement, measured_on=measured_on, hardware_id=hardware_id, name=name)
    hardware = parse_hardware(document).to_hardware()  # the project's own loader checks what we write
    return MeasuredHardwareFile(text=tomli_w.dumps(document), document=document, hardware=hardware)


def write_hardware_file(
    measurement: Measurement,
    path: str | Path,
    *,
    overwrite: bool = False,
    measured_on: date | None = None,
    hardware_id: str | None = None,
    name: str | None = None,
) -> MeasuredHardwareFile:
    """Write :func:`hardware_file`'s text to ``path``; InputError if it exists and not ``overwrite``."""
    target = Path(path)
    if target.exists() and not overwrite:
        raise InputError("output", f"{target} already exists; choose another path or allow overwriting")
    written = hardware_file(measurement, measured_on=measured_on, hardware_id=hardware_id, name=name)
    try:
        target.write_text(written.text, encoding="utf-8")
    except OSError as exc:
        raise InputError("output", f"cannot write {target}: {exc.strerror or exc}") from None
    return written
