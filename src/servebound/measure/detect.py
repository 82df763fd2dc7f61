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
from typing import TYPE_CHECKING

from servebound.catalog.hardware_names import CPU_ONLY_ID
from servebound.catalog.hosts import get_host
from servebound.core.hardware import Hardware
from servebound.measure.device_tools import detect_devices, parse_meminfo

if TYPE_CHECKING:
    from servebound.core.hardware import Hardware

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


# --- a machine without a GPU -----------------------------------------------------------------------
# Its model runs from system RAM, so the ceiling is the host memory's: a catalog host row
# (catalog/data/hosts.toml) chosen by the CPU's name (the platform fixes the channels and the DDR
# generation), or, where no rule names the CPU, a stated estimate. Where the OS reports the memory
# channels and their speed (dmidecode), those give the bandwidth instead.

#: CPU names -> the host row of their platform (first match wins).
_PLATFORMS: tuple[tuple[str, str], ...] = (
    (r"EPYC 9\d\d5", "epyc-9005-ddr5-6000-12ch"),
    (r"EPYC 9\d\d4", "epyc-9004-ddr5-4800-12ch"),
    (r"EPYC 7\d\d3", "epyc-7003-ddr4-3200-8ch"),
    (r"Threadripper PRO 7\d\d\dWX", "threadripper-pro-7000wx-ddr5-5200-8ch"),
    (r"Threadripper 7\d\d\d", "threadripper-7000-ddr5-5200-4ch"),
    (r"Xeon.* 69\d\dP", "xeon-6900p-ddr5-6400-12ch"),
    (r"Xeon.* (Platinum|Gold) [56]4\d\d|Xeon.* w[579]-[23]4\d\d", "xeon-4th-gen-ddr5-4800-8ch"),
    (r"Ryzen \d+ [79]\d\d\d|Core\(TM\) Ultra|Core Ultra", "desktop-ddr5-5600-2ch"),
)
#: Where no rule names the CPU: the slowest desktop row, an estimate (a desktop or laptop with two
#: channels of DDR4-3200), said as such.
ESTIMATE_HOST = "desktop-ddr4-3200-2ch"


@dataclass(frozen=True)
class HostMachine:
    """A machine as its OS reports it, for a CPU-only answer: the CPU's name, sockets, system memory,
    and the memory channels and their speed where the OS says (``None`` where it does not)."""

    cpu_model_name: str
    memory_bytes: int
    sockets: int = 1
    channels: int | None = None
    mt_per_s: int | None = None
    apple_chip_name: str | None = None


def parse_lscpu(text: str) -> tuple[str | None, int]:
    """(model name, sockets) from ``lscpu``'s text (sockets 1 where it does not say)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in fields:
            fields[key.strip()] = value.strip()
    sockets = fields.get("Socket(s)", "1")
    return fields.get("Model name") or None, int(sockets) if sockets.isdigit() else 1


def parse_dmidecode_memory(text: str) -> tuple[int | None, int | None]:
    """(populated memory devices, their configured MT/s) from ``dmidecode -t memory``; (None, None) where
    no device states a size and a speed. Each populated DIMM is counted as one channel (a board with two
    DIMMs per channel overstates the channels: the caller keeps the row's where it has one)."""
    count, speeds = 0, []
    for block in re.split(r"\n\s*\n", text):
        if "Memory Device" not in block or re.search(r"^\s*Size:\s*No Module", block, re.MULTILINE):
            continue
        speed = re.search(r"^\s*Configured (?:Memory|Clock) Speed:\s*(\d+)\s*MT/s", block, re.MULTILINE)
        if re.search(r"^\s*Size:\s*\d+", block, re.MULTILINE) and speed:
            count += 1
            speeds.append(int(speed.group(1)))
    return (count, min(speeds)) if count else (None, None)


def parse_sysctl(text: str) -> dict[str, str]:
    """``sysctl name ...``'s ``name: value`` lines as a mapping."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def host_machine_linux(
    meminfo: str, lscpu: str | None, cpuinfo: str | None, dmidecode: str | None
) -> HostMachine:
    """A Linux machine from its recorded reports (/proc/meminfo, lscpu, /proc/cpuinfo, dmidecode)."""
    memory = parse_meminfo(meminfo)
    if memory is None:
        raise ValueError("/proc/meminfo has no MemTotal")
    model, sockets = parse_lscpu(lscpu) if lscpu else (None, 1)
    if model is None and cpuinfo:
        model = parse_cpuinfo(cpuinfo)[0]
    channels, speed = parse_dmidecode_memory(dmidecode) if dmidecode else (None, None)
    return HostMachine(model or "unknown CPU", memory, sockets, channels, speed)


def host_machine_macos(sysctl: str) -> HostMachine:
    """A Mac from ``sysctl machdep.cpu.brand_string hw.memsize``'s text: its chip and memory."""
    values = parse_sysctl(sysctl)
    memory = values.get("hw.memsize", "")
    if not memory.isdigit():
        raise ValueError("sysctl gave no hw.memsize")
    brand = values.get("machdep.cpu.brand_string") or "unknown CPU"
    return HostMachine(brand, int(memory), apple_chip_name=brand if brand.startswith("Apple") else None)


def detect_host_machine() -> HostMachine:
    """This machine's CPU and memory from the OS (Linux: /proc/meminfo, lscpu or /proc/cpuinfo, and
    dmidecode where it may be read; macOS: sysctl)."""
    if platform.system() == "Darwin":
        text = _command(["sysctl", "machdep.cpu.brand_string", "hw.memsize"])
        if text is None:
            raise ValueError("sysctl did not answer")
        return host_machine_macos(text)
    cpuinfo = Path("/proc/cpuinfo")
    return host_machine_linux(
        Path("/proc/meminfo").read_text(),
        _command(["lscpu"]),
        cpuinfo.read_text() if cpuinfo.exists() else None,
        _command(["dmidecode", "-t", "memory"]),
    )


def _command(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 and done.stdout.strip() else None


def host_row_for(machine: HostMachine) -> tuple[str, str]:
    """(host row id, why): the row of the CPU's platform, or the stated estimate."""
    for pattern, row in _PLATFORMS:
        if re.search(pattern, machine.cpu_model_name):
            return row, f"{machine.cpu_model_name!r} is a {row} platform (catalog host row)"
    return ESTIMATE_HOST, (
        f"no catalog platform names {machine.cpu_model_name!r}: an estimate, the {ESTIMATE_HOST} row "
        "(two channels of DDR4-3200); give --hardware a measured file (`servebound measure`) for this machine's own"
    )


def cpu_only_hardware(machine: HostMachine) -> Hardware:
    """A CPU-only machine as a hardware record: its RAM as capacity, its host memory's bandwidth (the
    OS's channels x 8 B x MT/s where it reports them and no platform row names the CPU; else the row's,
    times the sockets), the default runtime overhead."""
    row_id, why = host_row_for(machine)
    row = get_host(row_id)
    bandwidth = row.bandwidth_bytes_per_s * machine.sockets
    basis = f"{why}: {row.name}, {row.bandwidth_bytes_per_s / 1e9:g} GB/s per socket x {machine.sockets}; {row.source}"
    if row_id == ESTIMATE_HOST and machine.channels and machine.mt_per_s:
        bandwidth = machine.channels * 8.0 * machine.mt_per_s * 1e6
        basis = (
            f"the OS reports {machine.channels} populated memory channels at {machine.mt_per_s} MT/s "
            f"(dmidecode): {machine.channels} x 8 B x {machine.mt_per_s} MT/s"
        )
    memory = f"{machine.memory_bytes / 1e9:.1f} GB of system RAM (the OS's MemTotal or hw.memsize)"
    return Hardware(
        id=CPU_ONLY_ID,
        name=f"This machine, CPU only ({machine.cpu_model_name}, {machine.memory_bytes / 2**30:.0f} GiB RAM)",
        memory_bytes=float(machine.memory_bytes),
        bandwidth_bytes_per_s=bandwidth,
        sources={"memory_gb": memory, "bandwidth_gb_per_s": basis},
    )
