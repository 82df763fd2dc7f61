"""Intel GPUs: xpu-smi, sycl-ls and lspci outputs recorded on Arc machines, parsed, matched to the
catalog's Arc rows, and `--hardware auto` end to end through each tool on PATH."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from servebound.errors import InputError
from servebound.measure.device_match import match_device
from servebound.measure.intel_tools import parse_lspci, parse_sycl_ls, parse_xpu_smi_discovery

TOOLS = Path(__file__).parent / "data" / "device_tools"


def _names(devices: list) -> list[str]:
    return [device.name for device in devices]


def test_sycl_ls_level_zero_names_the_card_beside_the_igpu() -> None:
    # Level Zero lists the UHD 770 iGPU and the A770; the catalog knows only the card.
    devices = parse_sycl_ls((TOOLS / "sycl-ls-a770-uhd770.txt").read_text())
    assert _names(devices) == ["Intel(R) Arc(TM) A770 Graphics"]
    assert devices[0].memory_bytes is None and devices[0].tool == "sycl-ls"


def test_sycl_ls_new_line_form_and_opencl_fallback() -> None:
    assert _names(parse_sycl_ls((TOOLS / "sycl-ls-a750.txt").read_text())) == [
        "Intel(R) Arc(TM) A750 Graphics"
    ]
    # No Level Zero runtime: only the OpenCL lines name the GPU.
    only_cl = parse_sycl_ls((TOOLS / "sycl-ls-a770-opencl-only.txt").read_text())
    assert _names(only_cl) == ["Intel(R) Arc(TM) A770 Graphics"]


def test_sycl_ls_without_a_gpu_is_empty() -> None:
    cpu_only = "[opencl:cpu][opencl:0] Intel(R) OpenCL, Intel(R) Core(TM) i7-8750H CPU @ 2.20GHz OpenCL 3.0 (Build 0) [2024.18.7.0.11_160000]"
    assert parse_sycl_ls(cpu_only) == []


def test_xpu_smi_keeps_discrete_gpus_only() -> None:
    assert _names(parse_xpu_smi_discovery((TOOLS / "xpu-smi-discovery-a770.txt").read_text())) == [
        "Intel(R) Arc(TM) A770 Graphics"
    ]
    # Meteor Lake's integrated "Intel(R) Arc(TM) Graphics" is Device Type: GPU, not Discrete.
    assert parse_xpu_smi_discovery((TOOLS / "xpu-smi-discovery-mtl-igpu.txt").read_text()) == []


def test_lspci_names_and_the_integrated_gpu_left_out() -> None:
    assert _names(parse_lspci((TOOLS / "lspci-a770.txt").read_text())) == ["DG2 [Arc A770]"]
    assert _names(parse_lspci((TOOLS / "lspci-b580.txt").read_text())) == ["Battlemage G21 [Arc B580]"]
    igpu = "00:02.0 VGA compatible controller: Intel Corporation AlderLake-S GT1 (rev 0c)"
    assert parse_lspci(igpu) == []


@pytest.mark.parametrize(
    ("name", "memory_gb", "expected"),
    [
        ("Intel(R) Arc(TM) A770 Graphics", 16, "intel-arc-a770-16gb"),
        ("DG2 [Arc A770]", 16, "intel-arc-a770-16gb"),
        ("Intel(R) Arc(TM) B580 Graphics", None, "intel-arc-b580"),
        ("Battlemage G21 [Arc B580]", None, "intel-arc-b580"),
    ],
)
def test_arc_names_map_to_their_rows(name: str, memory_gb: int | None, expected: str) -> None:
    memory = None if memory_gb is None else memory_gb * 1e9
    assert match_device(name, memory).id == expected


def test_a770_without_memory_is_no_match() -> None:
    # The 8 GB A770 reports the same names; the catalog lists only the 16 GB card.
    with pytest.raises(InputError) as caught:
        match_device("DG2 [Arc A770]")
    assert caught.value.field == "memory_gb" and "--memory-gb" in caught.value.problem
    with pytest.raises(InputError):
        match_device("Intel(R) Arc(TM) A770 Graphics", 8e9)


def _auto(tmp_path: Path, tool: str, recorded: str) -> subprocess.CompletedProcess[str]:
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / tool
    script.write_text(f"#!/bin/sh\nexec /bin/cat '{TOOLS / recorded}'\n")
    script.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{folder}{os.pathsep}{Path(sys.executable).parent}",
    }
    argv = [
        sys.executable,
        "-m",
        "servebound",
        "decode",
        "--hardware",
        "auto",
        "--model",
        "llama-2-7b-q4_0",
        "--json",
    ]
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False)


def test_hardware_auto_through_lspci_is_the_b580(tmp_path: Path) -> None:
    done = _auto(tmp_path, "lspci", "lspci-b580.txt")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hardware"]["id"] == "intel-arc-b580"


@pytest.mark.parametrize(
    ("tool", "recorded"),
    [("sycl-ls", "sycl-ls-a770-uhd770.txt"), ("xpu-smi", "xpu-smi-discovery-a770.txt")],
)
def test_hardware_auto_on_an_a770_asks_for_the_memory(tmp_path: Path, tool: str, recorded: str) -> None:
    done = _auto(tmp_path, tool, recorded)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "A770" in done.stderr and "--memory-gb" in done.stderr and "hardware match" in done.stderr
