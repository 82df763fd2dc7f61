"""Measuring one device of this machine: the presets and :func:`measure_machine` (the entry point
``servebound.measure``'s docstring names; the CLI's `measure` imports it from here)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from servebound.errors import InputError
from servebound.measure.bandwidth import (
    DEFAULT_CPU_ARRAY_BYTES,
    BandwidthMeasurement,
    Progress,
    default_cpu_array_bytes,
    measure_cpu_bandwidth,
    measure_torch_bandwidth,
)
from servebound.measure.detect import DetectedGpu, DetectedMachine, detect_machine
from servebound.measure.matmul import MatmulMeasurement, measure_numpy_matmul, measure_torch_matmul


@dataclass(frozen=True)
class MeasurePreset:
    """How long and how hard to measure.

    CPU arrays are max(4 x last-level cache, ``cpu_array_floor_bytes``) each (capped at a sixth of
    free memory); GPU arrays ``gpu_array_bytes`` each (None: 1 GiB or 4 x L2). Each matmul sample
    lasts about ``matmul_call_s``; n grows up to ``cpu_max_n`` / ``gpu_max_n``.
    """

    name: str
    cpu_array_floor_bytes: int
    gpu_array_bytes: int | None
    bandwidth_runs: int
    matmul_runs: int
    matmul_call_s: float
    cpu_max_n: int
    gpu_max_n: int
    #: An upper bound on each CPU array whatever the cache (None: none). ``quick`` promises a bounded
    #: footprint: 4 x a large server's last-level cache made three 1 GB arrays (3.7 GB peak RSS).
    cpu_array_cap_bytes: int | None = None


#: ``quick``'s bound on each CPU bandwidth array: three arrays then stay under 850 MB. On a machine
#: whose last-level cache exceeds 64 MiB the quick figure may read partly from cache; the default
#: preset sizes arrays to 4 x the cache.
QUICK_CPU_ARRAY_CAP_BYTES = 256 * 2**20

#: ``default`` aims at well under 30 s on a desktop; ``quick`` at a few seconds.
PRESETS: dict[str, MeasurePreset] = {
    preset.name: preset
    for preset in (
        MeasurePreset("default", DEFAULT_CPU_ARRAY_BYTES, None, 10, 5, 0.2, 4096, 8192),
        MeasurePreset("quick", 64 * 2**20, 256 * 2**20, 4, 3, 0.03, 2048, 4096, QUICK_CPU_ARRAY_CAP_BYTES),
    )
}


@dataclass(frozen=True)
class Measurement:
    """One device measured: its capacity C (detected), bandwidth R and compute F (measured).

    ``device`` is ``cpu`` or a torch device (``cuda:0``, ``mps``); ``memory_bytes`` is system memory
    for the CPU and for Apple's unified memory, the device's own memory for a discrete GPU.
    """

    machine: DetectedMachine
    device: str
    device_name: str
    memory_bytes: int
    bandwidth: BandwidthMeasurement
    matmul: MatmulMeasurement
    preset: str
    elapsed_s: float


def _torch_available() -> bool:
    try:
        import torch  # type: ignore[import-not-found, unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


def _gpu_memory_bytes(gpu: DetectedGpu, machine: DetectedMachine) -> int:
    """The GPU's memory: as its tool reported it, else as torch reports it (the tool gave none: sycl-ls,
    lspci), else the system's (unified memory: GB10, whose nvidia-smi says [N/A])."""
    if gpu.memory_bytes is not None:
        return gpu.memory_bytes
    import torch  # type: ignore[import-not-found, unused-ignore]

    module = getattr(torch, "xpu" if gpu.backend == "xpu" else "cuda", None)
    try:
        return int(module.get_device_properties(gpu.torch_device).total_memory)  # type: ignore[union-attr]
    except (AttributeError, RuntimeError, AssertionError):
        return machine.system_memory_bytes


def _scaled(progress: Progress | None, start: float, end: float) -> Progress | None:
    if progress is None:
        return None
    return lambda label, fraction: progress(label, start + (end - start) * fraction)


def _find_gpu(machine: DetectedMachine, device: str) -> DetectedGpu:
    for gpu in machine.gpus:
        if device in (gpu.torch_device, gpu.backend) or (device == "cuda" and gpu.index == 0):
            return gpu
    known = ", ".join(["cpu", *(gpu.torch_device for gpu in machine.gpus)])
    raise InputError("device", f"no device {device!r} on this machine; measurable here: {known}")


def preset_cpu_array_bytes(
    preset: MeasurePreset, last_level_cache_bytes: int | None, available_bytes: int
) -> int:
    """Bytes per CPU bandwidth array under ``preset``: max(4 x last-level cache, the preset's floor),
    at most a sixth of free memory, and at most the preset's cap."""
    size = default_cpu_array_bytes(last_level_cache_bytes, available_bytes, preset.cpu_array_floor_bytes)
    return size if preset.cpu_array_cap_bytes is None else min(size, preset.cpu_array_cap_bytes)


def measure_machine(
    device: str | None = None,
    preset: str | MeasurePreset = "default",
    *,
    array_bytes: int | None = None,
    threads: int | None = None,
    progress: Progress | None = None,
) -> Measurement:
    """Detect this machine and measure one device's sustained bandwidth and matmul rates.

    ``device``: ``cpu``, or a detected GPU by its torch device (``cuda:0``, ``mps``, ``xpu:0``); None
    picks the first GPU the vendors' tools report when torch is installed to measure it, else the CPU.
    GPUs are found without torch; measuring one runs torch's kernels (InputError naming the fix when
    torch is missing). ``preset``: ``default`` or ``quick`` (or a :class:`MeasurePreset`).
    ``array_bytes`` overrides the bandwidth array size (bytes per array) and ``threads`` the CPU
    thread count. ``progress(label, fraction)`` is called as the work advances, fraction 0 to 1.
    Raises InputError for an unknown device or preset.
    """
    if isinstance(preset, str):
        if preset not in PRESETS:
            raise InputError("preset", f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
        preset = PRESETS[preset]
    if array_bytes is not None and array_bytes <= 0:
        raise InputError("array_bytes", f"must be a positive number of bytes, got {array_bytes}")
    if threads is not None and threads <= 0:
        raise InputError("threads", f"must be a positive thread count, got {threads}")
    began = time.perf_counter()
    if progress is not None:
        progress("detecting the machine", 0.0)
    machine = detect_machine(include_gpus=device != "cpu")
    if device is None:
        device = machine.gpus[0].torch_device if machine.gpus and _torch_available() else "cpu"
    bandwidth_progress, matmul_progress = _scaled(progress, 0.0, 0.5), _scaled(progress, 0.5, 1.0)
    if device == "cpu":
        import psutil

        floor = preset_cpu_array_bytes(
            preset, machine.last_level_cache_bytes, int(psutil.virtual_memory().available)
        )
        bandwidth = measure_cpu_bandwidth(
            array_bytes=array_bytes or floor,
            threads=threads,
            runs=preset.bandwidth_runs,
            progress=bandwidth_progress,
        )
        runs, call_s, max_n = preset.matmul_runs, preset.matmul_call_s, preset.cpu_max_n
        if _torch_available():
            matmul = measure_torch_matmul(
                "cpu",
                modes=("fp32", "bf16", "fp16", "int8"),
                runs=runs,
                call_s=call_s,
                max_n=max_n,
                progress=matmul_progress,
            )
        else:
            matmul = measure_numpy_matmul(runs=runs, call_s=call_s, max_n=max_n, progress=matmul_progress)
        device_name, memory_bytes = (
            machine.apple_chip_name or machine.cpu_model_name,
            machine.system_memory_bytes,
        )
    else:
        gpu = _find_gpu(machine, device)
        device = gpu.torch_device
        if not _torch_available():
            raise InputError(
                "device",
                f"{gpu.name} ({gpu.tool or 'detected'}) is measured with torch's kernels, and torch is not "
                f"installed: install the torch build for {gpu.backend}, or measure the CPU with --device cpu",
            )
        bandwidth = measure_torch_bandwidth(
            device,
            array_bytes=array_bytes or preset.gpu_array_bytes,
            runs=preset.bandwidth_runs,
            progress=bandwidth_progress,
        )
        matmul = measure_torch_matmul(
            device,
            runs=preset.matmul_runs,
            call_s=preset.matmul_call_s,
            max_n=preset.gpu_max_n,
            progress=matmul_progress,
        )
        device_name, memory_bytes = gpu.name, _gpu_memory_bytes(gpu, machine)
    if progress is not None:
        progress("done", 1.0)
    return Measurement(
        machine=machine,
        device=device,
        device_name=device_name,
        memory_bytes=memory_bytes,
        bandwidth=bandwidth,
        matmul=matmul,
        preset=preset.name,
        elapsed_s=time.perf_counter() - began,
    )
