"""What machine is this: CPU, system memory, last-level cache, GPUs.

Detection reads the operating system's own reports (/proc/cpuinfo, /sys cache descriptions,
``sysctl`` on macOS, psutil) and never guesses a figure it cannot read: an unknown stays ``None``.
GPUs come from the vendors' tools, the same detection as ``--hardware auto``
(:func:`servebound.measure.device_tools.detect_devices`: NVML / nvidia-smi, amd-smi / rocm-smi,
system_profiler, xpu-smi / sycl-ls / lspci): torch is not needed to find them, only to run the
bandwidth and matmul kernels on one (:mod:`servebound.measure`).
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_CACHE_ROOT = Path("/sys/devices/system/cpu")


@dataclass(frozen=True)
class DetectedGpu:
    """One accelerator as its vendor's tool reports it. ``backend`` is ``cuda``, ``rocm``, ``mps`` or
    ``xpu``.

    ``torch_device`` is the string torch would take to measure it (``cuda:0``, ``mps``, ``xpu:0``);
    ROCm builds of torch also answer to ``cuda:N``. ``memory_bytes`` is the device's total memory as
    the tool reports it (for ``mps``: the unified system memory, which CPU and GPU share); None where
    the tool gives none (GB10's unified memory, sycl-ls and lspci). ``tool`` names the source.
    """

    backend: str
    index: int
    name: str
    memory_bytes: int | None
    torch_device: str
    tool: str = ""


@dataclass(frozen=True)
class DetectedMachine:
    """The machine as detected. Names are exactly as the system reports them, for catalog matching.

    ``cpu_physical_cores`` is None where the system does not say; ``usable_cpus`` is the number of
    logical CPUs this process may run on (its affinity mask, which containers narrow).
    ``last_level_cache_bytes`` sums every distinct cache at the highest level (all sockets, all CCDs).
    """

    system: str
    architecture: str
    cpu_model_name: str
    cpu_physical_cores: int | None
    cpu_logical_cores: int
    usable_cpus: int
    system_memory_bytes: int
    last_level_cache_bytes: int | None
    apple_chip_name: str | None
    unified_memory: bool
    gpus: tuple[DetectedGpu, ...]

    @property
    def device_names(self) -> tuple[str, ...]:
        """Every name a catalog lookup could try, most specific first: GPUs, Apple chip, CPU."""
        names = [gpu.name for gpu in self.gpus]
        if self.apple_chip_name:
            names.append(self.apple_chip_name)
        names.append(self.cpu_model_name)
        return tuple(dict.fromkeys(name for name in names if name))


def parse_cpuinfo(text: str) -> tuple[str | None, int | None, int]:
    """(model name, physical cores, logical CPUs) from the text of Linux's /proc/cpuinfo.

    Physical cores count distinct (physical id, core id) pairs; None when the file has no core ids
    (many Arm kernels). The model name is x86's ``model name``, else Arm's ``Hardware`` or ``Model``.
    """
    model: str | None = None
    fallback_model: str | None = None
    logical = 0
    cores: set[tuple[str, str]] = set()
    physical_id = "0"
    core_id: str | None = None
    for block in re.split(r"\n\s*\n", text.strip()):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip().lower()] = value.strip()
        if "processor" in fields and fields["processor"].isdigit():
            logical += 1
            physical_id = fields.get("physical id", "0")
            core_id = fields.get("core id")
            if core_id is not None:
                cores.add((physical_id, core_id))
        if model is None and fields.get("model name"):
            model = fields["model name"]
        for key in ("hardware", "model"):
            if fallback_model is None and fields.get(key) and not fields[key].isdigit():
                fallback_model = fields[key]
    return (model or fallback_model), (len(cores) or None), logical


def parse_cache_size(text: str) -> int:
    """Bytes from a Linux cache size string: ``32768K`` -> 33554432, ``2M``, ``512`` (bytes)."""
    match = re.fullmatch(r"\s*(\d+)\s*([KMG]?)i?B?\s*", text, flags=re.IGNORECASE)
    if match is None:
        raise ValueError(f"not a cache size: {text!r}")
    scale = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[match.group(2).upper()]
    return int(match.group(1)) * scale


def last_level_cache_bytes(caches: Iterable[tuple[int, str, str]]) -> int | None:
    """Sum of the distinct caches at the highest level, from (level, size, shared CPU list) rows.

    Caches shared by several CPUs appear once per CPU in /sys; the shared CPU list tells them apart.
    """
    distinct: dict[tuple[int, str], int] = {}
    for level, size, shared in caches:
        distinct[(level, shared.strip())] = parse_cache_size(size)
    if not distinct:
        return None
    top = max(level for level, _ in distinct)
    return sum(size for (level, _), size in distinct.items() if level == top)


def _sysfs_caches(root: Path = _CACHE_ROOT) -> list[tuple[int, str, str]]:
    rows = []
    for index in root.glob("cpu[0-9]*/cache/index[0-9]*"):
        try:
            kind = (index / "type").read_text().strip()
            if kind == "Instruction":
                continue
            rows.append(
                (
                    int((index / "level").read_text()),
                    (index / "size").read_text().strip(),
                    (index / "shared_cpu_list").read_text().strip(),
                )
            )
        except (OSError, ValueError):
            continue
    return rows


def detect_last_level_cache_bytes() -> int | None:
    """This machine's last-level cache in bytes (Linux /sys, macOS sysctl), None when unreported."""
    system = platform.system()
    if system == "Linux":
        return last_level_cache_bytes(_sysfs_caches())
    if system == "Darwin":
        return _sysctl_int("hw.perflevel0.l2cachesize") or _sysctl_int("hw.l2cachesize")
    return None


def _sysctl(name: str) -> str | None:
    try:
        done = subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    value = done.stdout.strip()
    return value if done.returncode == 0 and value else None


def _sysctl_int(name: str) -> int | None:
    value = _sysctl(name)
    return int(value) if value is not None and value.isdigit() else None


def usable_cpu_count() -> int:
    """Logical CPUs this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


#: The backend a reporting tool's devices run under.
_BACKENDS = {
    "nvml": "cuda",
    "nvidia-smi": "cuda",
    "amd-smi": "rocm",
    "rocm-smi": "rocm",
    "system_profiler": "mps",
    "xpu-smi": "xpu",
    "sycl-ls": "xpu",
    "lspci": "xpu",
}


def detect_gpus() -> tuple[DetectedGpu, ...]:
    """This machine's GPUs from the vendors' tools (the detection ``--hardware auto`` uses), without
    torch; empty when no tool answers."""
    from servebound.measure.device_tools import detect_devices

    gpus: list[DetectedGpu] = []
    for index, device in enumerate(detect_devices()):
        backend = _BACKENDS.get(device.tool, "cuda")
        if backend == "mps":
            memory = device.memory_bytes or _system_memory_bytes()
            gpus.append(DetectedGpu(backend, 0, device.name, memory, "mps", device.tool))
            continue
        prefix = "xpu" if backend == "xpu" else "cuda"
        gpus.append(
            DetectedGpu(backend, index, device.name, device.memory_bytes, f"{prefix}:{index}", device.tool)
        )
    return tuple(gpus)


def _system_memory_bytes() -> int:
    import psutil

    return int(psutil.virtual_memory().total)


def detect_machine(*, include_gpus: bool = True) -> DetectedMachine:
    """Detect the CPU, memory, caches and (unless ``include_gpus`` is False) the GPUs of this machine."""
    import psutil

    system = platform.system()
    model: str | None = None
    physical: int | None = None
    logical = psutil.cpu_count(logical=True) or os.cpu_count() or 1
    apple_chip: str | None = None
    if system == "Linux":
        try:
            model, physical, counted = parse_cpuinfo(Path("/proc/cpuinfo").read_text())
            logical = counted or logical
        except OSError:
            pass
    elif system == "Darwin":
        model = _sysctl("machdep.cpu.brand_string")
        if model and model.startswith("Apple"):
            apple_chip = model
        physical = _sysctl_int("hw.physicalcpu")
    physical = physical or psutil.cpu_count(logical=False)
    return DetectedMachine(
        system=system,
        architecture=platform.machine(),
        cpu_model_name=model or platform.processor() or platform.machine() or "unknown CPU",
        cpu_physical_cores=physical,
        cpu_logical_cores=int(logical),
        usable_cpus=usable_cpu_count(),
        system_memory_bytes=_system_memory_bytes(),
        last_level_cache_bytes=detect_last_level_cache_bytes(),
        apple_chip_name=apple_chip,
        unified_memory=apple_chip is not None,
        gpus=detect_gpus() if include_gpus else (),
    )
