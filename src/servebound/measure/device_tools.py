"""The accelerators of this machine as their vendors' own tools report them, without torch.

NVIDIA: NVML (``nvidia-ml-py``, imported only when installed), else ``nvidia-smi --query-gpu=name,
memory.total --format=csv``. AMD: ``amd-smi static --asic --vram --json``, else ``rocm-smi
--showproductname --showmeminfo vram --json``. Intel: ``xpu-smi discovery``, ``sycl-ls``, ``lspci``
(:mod:`servebound.measure.intel_tools`). Apple: ``system_profiler SPHardwareDataType
SPDisplaysDataType -json`` (chip, GPU cores, memory). Host memory: /proc/meminfo. Each parser takes the
tool's text, so tests feed them recorded outputs; the runners return None when the tool is absent.
"""

from __future__ import annotations

import json
import platform
import re
import subprocess
from collections.abc import Callable
from typing import Any

from servebound.measure.intel_tools import parse_lspci, parse_sycl_ls, parse_xpu_smi_discovery
from servebound.measure.reported import ReportedDevice

MIB = 2**20
GIB = 2**30
_TOOL_TIMEOUT_S = 10


def _size_bytes(value: Any, default_unit: str = "MB") -> int | None:
    """Bytes from ``81559 MiB``, ``196592`` (+ unit), ``{"value": 196592, "unit": "MB"}``; None for N/A.

    amd-smi writes ``MB`` for its MiB figures (196592 MB on a 192 GiB MI300X), so MB counts as MiB here.
    """
    if isinstance(value, dict):
        return _size_bytes(value.get("value"), str(value.get("unit", default_unit)))
    text = str(value).strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?", text, flags=re.IGNORECASE)
    if match is None:
        return None
    unit = (match.group(2) or default_unit).upper().replace("I", "")
    scale = {"B": 1, "KB": 2**10, "MB": MIB, "GB": GIB, "TB": 2**40}[unit]
    return int(float(match.group(1)) * scale)


def parse_nvidia_smi_csv(text: str) -> list[ReportedDevice]:
    """Rows of ``nvidia-smi --query-gpu=name,memory.total --format=csv`` (header and units optional:
    ``noheader,nounits`` output parses too). ``[N/A]`` memory (GB10's unified memory) stays None."""
    devices = []
    for line in text.splitlines():
        if not line.strip() or line.lower().startswith("name,"):
            continue
        name, _, memory = line.rpartition(",")
        if not name.strip():
            continue
        devices.append(ReportedDevice(name.strip(), _size_bytes(memory, "MiB"), "nvidia-smi"))
    return devices


def _records(data: Any) -> list[Any]:
    if isinstance(data, dict) and "gpu_data" in data:
        data = data["gpu_data"]
    return data if isinstance(data, list) else [data]


def parse_amd_smi_json(text: str) -> list[ReportedDevice]:
    """``amd-smi static --asic --vram --json``: asic.market_name and vram.size per GPU (a list, or
    ``{"gpu_data": [...]}`` in newer releases)."""
    devices = []
    for record in _records(json.loads(text)):
        if not isinstance(record, dict):
            continue
        name = (record.get("asic") or {}).get("market_name")
        vram = record.get("vram") or {}
        size = vram.get("size", vram.get("vram_size"))
        if name:
            memory = None if size is None else _size_bytes(size)
            devices.append(ReportedDevice(str(name).strip(), memory, "amd-smi"))
    return devices


def parse_rocm_smi_json(text: str) -> list[ReportedDevice]:
    """``rocm-smi --showproductname --showmeminfo vram --json``: "Card series" (or "Card Series") and
    "VRAM Total Memory (B)" per ``cardN``."""
    devices = []
    for key, card in json.loads(text).items():
        if not key.startswith("card") or not isinstance(card, dict):
            continue
        fields = {name.casefold(): value for name, value in card.items()}
        name = fields.get("card series") or fields.get("card model")
        total = fields.get("vram total memory (b)")
        if name:
            memory = None if total is None else _size_bytes(total, "B")
            devices.append(ReportedDevice(str(name).strip(), memory, "rocm-smi"))
    return devices


def parse_system_profiler_json(text: str) -> list[ReportedDevice]:
    """``system_profiler SPHardwareDataType SPDisplaysDataType -json``: the Apple chip (chip_type), its
    memory (physical_memory, "48 GB" meaning GiB as macOS counts) and GPU cores (sppci_cores)."""
    data = json.loads(text)
    hardware = (data.get("SPHardwareDataType") or [{}])[0]
    chip = hardware.get("chip_type")
    memory = _size_bytes(hardware.get("physical_memory", ""), "GB")
    cores = None
    for display in data.get("SPDisplaysDataType") or []:
        model = display.get("sppci_model", "")
        if str(model).startswith("Apple") and str(display.get("sppci_cores", "")).isdigit():
            cores = int(display["sppci_cores"])
            chip = chip or model
    if not chip:
        return []
    return [ReportedDevice(str(chip).strip(), memory, "system_profiler", cores)]


def parse_meminfo(text: str) -> int | None:
    """MemTotal of /proc/meminfo in bytes (the kernel writes kB meaning KiB)."""
    match = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, flags=re.MULTILINE)
    return int(match.group(1)) * 1024 if match else None


def _run(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_TOOL_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 and done.stdout.strip() else None


def _nvml_devices() -> list[ReportedDevice] | None:
    try:
        import pynvml  # type: ignore[import-not-found, unused-ignore]  # nvidia-ml-py
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # NVMLError: no driver
        return None
    try:
        devices = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            name = pynvml.nvmlDeviceGetName(handle)
            name = name.decode() if isinstance(name, bytes) else str(name)
            try:
                memory: int | None = int(pynvml.nvmlDeviceGetMemoryInfo(handle).total)
            except Exception:  # unified memory parts answer NOT_SUPPORTED
                memory = None
            devices.append(ReportedDevice(name, memory, "nvml"))
        return devices
    finally:
        pynvml.nvmlShutdown()


def _parsed(argv: list[str], parse: Callable[[str], list[ReportedDevice]]) -> list[ReportedDevice] | None:
    text = _run(argv)
    if text is None:
        return None
    try:
        return parse(text)
    except (ValueError, AttributeError, TypeError, IndexError):
        return None


#: The tools asked, in order, each with the parser of its output (system_profiler on macOS only).
_TOOLS: tuple[tuple[list[str], Callable[[str], list[ReportedDevice]]], ...] = (
    (["system_profiler", "SPHardwareDataType", "SPDisplaysDataType", "-json"], parse_system_profiler_json),
    (["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv"], parse_nvidia_smi_csv),
    (["amd-smi", "static", "--asic", "--vram", "--json"], parse_amd_smi_json),
    (["rocm-smi", "--showproductname", "--showmeminfo", "vram", "--json"], parse_rocm_smi_json),
)


#: Intel's tools, asked after the others (see intel_tools).
_INTEL_TOOLS: tuple[tuple[list[str], Callable[[str], list[ReportedDevice]]], ...] = (
    (["xpu-smi", "discovery"], parse_xpu_smi_discovery),
    (["sycl-ls"], parse_sycl_ls),
    (["lspci"], parse_lspci),
)


def detect_devices() -> list[ReportedDevice]:
    """This machine's accelerators from the first source that answers: NVML, then the tools of
    :data:`_TOOLS`, then Intel's (xpu-smi, sycl-ls, lspci; see intel_tools); empty when none does."""
    found = _nvml_devices()
    if found:
        return found
    for argv, parse in (*_TOOLS, *_INTEL_TOOLS):
        if argv[0] == "system_profiler" and platform.system() != "Darwin":
            continue
        found = _parsed(argv, parse)
        if found:
            return found
    return []
