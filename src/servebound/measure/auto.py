"""``--hardware auto``: this machine, detected and matched to the hardware catalog.

Its accelerators as their vendors' tools report them (``measure.device_tools``), matched to a catalog
row by exact name (``measure.device_match``); with no GPU, a Mac by its chip and memory, else this
machine's CPU and system RAM (``measure.detect``). ``inputs.resolve`` imports this only when ``auto`` or
the CPU-only id is asked: a command on a catalog id runs no probe and loads none of it.
"""

from __future__ import annotations

from functools import cache

from servebound.catalog.hardware_names import CPU_ONLY_ID
from servebound.core.advice import Note, Setting
from servebound.core.hardware import Hardware
from servebound.errors import InputError
from servebound.measure.detect import cpu_only_hardware, detect_host_machine
from servebound.measure.device_match import match_device
from servebound.measure.device_tools import detect_devices


@cache
def detected_hardware_id() -> str:
    """The catalog id (``Nx-<id>`` for N identical GPUs) of this machine's accelerators, found through
    NVML / nvidia-smi, amd-smi / rocm-smi, system_profiler or Intel's tools; InputError naming the fallback
    (``servebound measure``) when nothing is found or the name is not in the catalog
    (detected once per process)."""
    measured = (
        "measure this machine with `servebound measure -o my.toml` and pass ",
        Setting("hardware", "my.toml"),
    )
    devices = detect_devices()
    if not devices:
        return _cpu_only_id(measured)
    names = sorted({device.name for device in devices})
    if len(names) > 1:
        raise InputError(
            "hardware",
            Note.of(
                f"auto found different GPUs ({', '.join(names)}); give ",
                Setting("hardware", placeholder="ID"),
                ", the catalog id of the one to use (`servebound hardware match NAME` finds it)",
            ),
        )
    device = devices[0]
    try:
        match = match_device(device.name, device.memory_bytes, device.gpu_cores)
    except InputError as error:
        hint = ""
        if error.field == "memory_gb":
            hint = f"; `servebound hardware match {device.name!r} --memory-gb G` gives the id to pass to --hardware"
        raise InputError(
            "hardware", f"auto found {device.name!r} ({device.tool}): {error.problem}{hint}"
        ) from None
    return match.id if len(devices) == 1 else f"{len(devices)}x-{match.id}"


def _cpu_only_id(measured: tuple[str, Setting]) -> str:
    """No GPU answered: a Mac by its chip and memory (sysctl), else this machine's CPU and system RAM
    (``measure.detect.cpu_only_hardware``); InputError naming the fallback where the OS says neither."""
    try:
        machine = detect_host_machine()
    except (OSError, ValueError) as error:
        raise InputError(
            "hardware",
            Note.of(
                "auto found no GPU (no answer from NVML, nvidia-smi, amd-smi, rocm-smi, system_profiler, "
                f"xpu-smi, sycl-ls or lspci) and could not read this machine's memory ({error}); ",
                *measured,
            ),
        ) from None
    if machine.apple_chip_name is not None:
        return match_device(machine.apple_chip_name, machine.memory_bytes).id
    return CPU_ONLY_ID


def this_machine_cpu() -> Hardware:
    """The CPU-only row of this machine (``this-machine-cpu``): its CPU and system RAM, detected."""
    return cpu_only_hardware(detect_host_machine())
