"""Intel GPUs as Intel's and the system's own tools report them: xpu-smi, sycl-ls and lspci.

``xpu-smi discovery`` (XPU Manager) prints one block per device with its ``Device Type`` ("Discrete
GPU" for an Arc card, "GPU" for an integrated one) and ``Device Name``. ``sycl-ls`` lists every SYCL
device; the Level Zero lines name each GPU once (the OpenCL lines repeat them), and on a machine whose
Level Zero runtime is missing only the OpenCL lines remain. ``lspci`` names the card as the PCI ID
database does ("DG2 [Arc A770]"); Intel's integrated GPU always sits at PCI address 00:02.0, which
tells it apart there. None of them states the card's memory reliably (OpenCL's global memory is the
part visible to it, a few hundred MB without Resizable BAR), so memory stays None: a name that also
covers a memory variant the catalog lacks then asks for ``--memory-gb`` (see device_names.toml).
Each parser takes the tool's text, so tests feed it recorded outputs.
"""

from __future__ import annotations

import re

from servebound.measure.device_match import fold, known_names
from servebound.measure.reported import ReportedDevice

_XPU_FIELD = re.compile(r"^[|\s]*(?:\d+\s*\|?\s*)?([A-Za-z][A-Za-z ]*?):\s*(.*?)\s*\|?\s*$")
_SYCL_LINE = re.compile(
    r"^\[(?P<backend>[a-z_]+):gpu(?::\d+)?\](?:\[[a-z_]+:\d+\])?\s+[^,]+,\s+(?P<rest>.+)$"
)
_L0_VERSION = re.compile(r"\s+\d+\.\d+(?:\.\d+)?\s+\[[^\]]*\]\s*$")
_OPENCL_VERSION = re.compile(r"\s+OpenCL\s+\d+\.\d+.*$")
_LSPCI_LINE = re.compile(
    r"^(?:[0-9a-f]{4}:)?(?P<bus>[0-9a-f]{2}:[0-9a-f]{2}\.\d)\s+"
    r"(?:VGA compatible controller|Display controller|3D controller):\s+Intel Corporation\s+(?P<name>.+)$",
    flags=re.IGNORECASE,
)
_INTEGRATED_BUS = "00:02.0"


def parse_xpu_smi_discovery(text: str) -> list[ReportedDevice]:
    """Discrete GPUs of ``xpu-smi discovery`` (plain or boxed table): each block's Device Name where
    its Device Type says Discrete; integrated GPUs ("Device Type: GPU") are left out."""
    devices = []
    kind: str | None = None
    for line in text.splitlines():
        match = _XPU_FIELD.match(line)
        if match is None:
            continue
        key, value = match.group(1).strip().casefold(), match.group(2).strip()
        if key == "device type":
            kind = value.casefold()
        elif key == "device name" and value and kind is not None and "discrete" in kind:
            devices.append(ReportedDevice(value, None, "xpu-smi"))
    return devices


def _sycl_name(backend: str, rest: str) -> str:
    pattern = _OPENCL_VERSION if backend == "opencl" else _L0_VERSION
    return pattern.sub("", rest).strip()


def parse_sycl_ls(text: str) -> list[ReportedDevice]:
    """GPUs of ``sycl-ls``: the Level Zero lines (``[level_zero:gpu][level_zero:0] Intel(R)
    Level-Zero, Intel(R) Arc(TM) A770 Graphics 12.55.8 [1.3.29735]``, or the older
    ``[ext_oneapi_level_zero:gpu:0]`` form), else the OpenCL GPU lines. sycl-ls does not say which GPU
    is integrated: where a known Arc card is listed beside an Intel iGPU (UHD Graphics), only the names
    the catalog knows are kept, so the card is what ``--hardware auto`` means."""
    level_zero: list[str] = []
    opencl: list[str] = []
    for line in text.splitlines():
        match = _SYCL_LINE.match(line.strip())
        if match is None:
            continue
        backend = match.group("backend")
        name = _sycl_name(backend, match.group("rest"))
        (opencl if backend == "opencl" else level_zero).append(name)
    names = level_zero or opencl
    known = [name for name in names if fold(name) in known_names()]
    return [ReportedDevice(name, None, "sycl-ls") for name in (known or names)]


def parse_lspci(text: str) -> list[ReportedDevice]:
    """Intel display controllers of ``lspci``, named as the PCI ID database names them ("DG2 [Arc
    A770]", "Battlemage G21 [Arc B580]"), the revision and programming interface dropped; the
    integrated GPU at 00:02.0 is left out."""
    devices = []
    for line in text.splitlines():
        match = _LSPCI_LINE.match(line.strip())
        if match is None or match.group("bus").casefold() == _INTEGRATED_BUS:
            continue
        name = re.split(r"\s+\((?:rev|prog-if)\b", match.group("name"))[0].strip()
        devices.append(ReportedDevice(name, None, "lspci"))
    return devices
