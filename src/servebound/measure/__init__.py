"""Measure this machine: sustained memory bandwidth R and dense compute F per mode, as a hardware file.

The figures are measured sustained rates (the derivation's *estimate* reading), not vendor peaks.
Entry point: :func:`measure_machine`, then :func:`hardware_file` to write the result in the
contract's hardware-file format with provenance keys.

    measurement = measure_machine(preset="quick", progress=lambda label, done: print(label, done))
    print(hardware_file(measurement).text)

Every name below is imported from its submodule on first use (PEP 562): a process that only detects
the machine (the site's home page) loads neither the kernels nor numpy.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from servebound.measure.bandwidth import (
        BandwidthMeasurement,
        KernelBandwidth,
        Progress,
        measure_cpu_bandwidth,
        measure_torch_bandwidth,
    )
    from servebound.measure.detect import DetectedGpu, DetectedMachine, detect_machine
    from servebound.measure.hardware_file import MeasuredHardwareFile, hardware_file, write_hardware_file
    from servebound.measure.machine import (
        PRESETS,
        QUICK_CPU_ARRAY_CAP_BYTES,
        Measurement,
        MeasurePreset,
        measure_machine,
        preset_cpu_array_bytes,
    )
    from servebound.measure.matmul import (
        MatmulMeasurement,
        MatmulRate,
        measure_numpy_matmul,
        measure_torch_matmul,
    )

__all__ = [
    "PRESETS",
    "QUICK_CPU_ARRAY_CAP_BYTES",
    "BandwidthMeasurement",
    "DetectedGpu",
    "DetectedMachine",
    "KernelBandwidth",
    "MatmulMeasurement",
    "MatmulRate",
    "MeasurePreset",
    "MeasuredHardwareFile",
    "Measurement",
    "Progress",
    "detect_machine",
    "hardware_file",
    "measure_cpu_bandwidth",
    "measure_machine",
    "measure_numpy_matmul",
    "measure_torch_bandwidth",
    "measure_torch_matmul",
    "preset_cpu_array_bytes",
    "write_hardware_file",
]

#: Each public name's submodule.
_WHERE = {
    "PRESETS": "machine",
    "QUICK_CPU_ARRAY_CAP_BYTES": "machine",
    "BandwidthMeasurement": "bandwidth",
    "DetectedGpu": "detect",
    "DetectedMachine": "detect",
    "KernelBandwidth": "bandwidth",
    "MatmulMeasurement": "matmul",
    "MatmulRate": "matmul",
    "MeasurePreset": "machine",
    "MeasuredHardwareFile": "hardware_file",
    "Measurement": "machine",
    "Progress": "bandwidth",
    "detect_machine": "detect",
    "hardware_file": "hardware_file",
    "measure_cpu_bandwidth": "bandwidth",
    "measure_machine": "machine",
    "measure_numpy_matmul": "matmul",
    "measure_torch_bandwidth": "bandwidth",
    "measure_torch_matmul": "matmul",
    "preset_cpu_array_bytes": "machine",
    "write_hardware_file": "hardware_file",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
