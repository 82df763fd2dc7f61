"""A machine without a GPU: detected from the OS's reports (recorded outputs for Linux and macOS) and
answered from its CPU and system RAM, by a catalog host row of its platform or a stated estimate."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from servebound.catalog.hosts import get_host
from servebound.inputs.resolve import CPU_ONLY_ID
from servebound.measure.detect import (
    ESTIMATE_HOST,
    cpu_only_hardware,
    host_machine_linux,
    host_machine_macos,
    host_row_for,
    parse_dmidecode_memory,
)
from servebound.measure.device_match import match_device
from tests.conftest import process_json

TOOLS = Path(__file__).parent / "data" / "device_tools"


def read(name: str) -> str:
    return (TOOLS / name).read_text()


def test_a_two_socket_epyc_server_is_its_platform_row_times_its_sockets() -> None:
    machine = host_machine_linux(read("meminfo-epyc-9654-2s.txt"), read("lscpu-epyc-9654-2s.txt"), None, None)
    assert machine.cpu_model_name == "AMD EPYC 9654 96-Core Processor" and machine.sockets == 2
    assert machine.memory_bytes == 1584889764 * 1024
    assert host_row_for(machine)[0] == "epyc-9004-ddr5-4800-12ch"
    hw = cpu_only_hardware(machine)
    # 12 channels x 8 B x 4800 MT/s = 460.8 GB/s per socket, two sockets
    assert hw.bandwidth_bytes_per_s == pytest.approx(2 * 460.8e9)
    assert hw.memory_bytes == machine.memory_bytes and hw.id == CPU_ONLY_ID


def test_an_unnamed_cpu_is_a_stated_estimate_or_the_channels_the_os_reports() -> None:
    machine = host_machine_linux(read("meminfo-ci-kvm-epyc.txt"), read("lscpu-ci-kvm-epyc.txt"), None, None)
    row, why = host_row_for(machine)
    assert row == ESTIMATE_HOST and "an estimate" in why
    hw = cpu_only_hardware(machine)
    assert hw.bandwidth_bytes_per_s == get_host(ESTIMATE_HOST).bandwidth_bytes_per_s
    assert "an estimate" in hw.sources["bandwidth_gb_per_s"]
    # the same machine where dmidecode reports two DDR5 DIMMs at 6000 MT/s: 2 x 8 B x 6000 MT/s
    assert parse_dmidecode_memory(read("dmidecode-memory-desktop-ddr5.txt")) == (2, 6000)
    told = host_machine_linux(
        read("meminfo-ci-kvm-epyc.txt"),
        read("lscpu-ci-kvm-epyc.txt"),
        None,
        read("dmidecode-memory-desktop-ddr5.txt"),
    )
    assert cpu_only_hardware(told).bandwidth_bytes_per_s == pytest.approx(96.0e9)
    assert "dmidecode" in cpu_only_hardware(told).sources["bandwidth_gb_per_s"]


def test_cpu_name_from_cpuinfo_when_lscpu_is_missing() -> None:
    cpuinfo = "processor\t: 0\nmodel name\t: AMD Ryzen 9 7950X 16-Core Processor\n\n"
    machine = host_machine_linux(read("meminfo-dgx-spark.txt"), None, cpuinfo, None)
    assert host_row_for(machine)[0] == "desktop-ddr5-5600-2ch"


def test_macos_by_chip_and_memory() -> None:
    mac = host_machine_macos(read("sysctl-m4-max-128gb.txt"))
    assert mac.apple_chip_name == "Apple M4 Max" and mac.memory_bytes == 128 * 2**30
    assert match_device(mac.apple_chip_name, mac.memory_bytes).id == "apple-m4-max-128gb"
    intel = host_machine_macos(read("sysctl-intel-mac-16gb.txt"))
    assert intel.apple_chip_name is None and host_row_for(intel)[0] == ESTIMATE_HOST
    assert cpu_only_hardware(intel).memory_bytes == 16 * 2**30


def _no_gpu_path(tmp_path: Path) -> dict[str, str]:
    """The environment with no vendor tool on PATH: an empty folder, then Python's own."""
    folder = tmp_path / "bin"
    folder.mkdir()
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{Path(sys.executable).parent}"}


def test_fit_on_a_machine_without_a_gpu_lists_models(tmp_path: Path) -> None:
    """No vendor tool on PATH (as on this CI machine): fit answers from the CPU and system RAM."""
    env = _no_gpu_path(tmp_path)
    out = process_json("fit", env=env)
    assert out["hardware"]["id"] == CPU_ONLY_ID and out["models"]
    assert all(row["engine"] == "llama.cpp" for row in out["models"])
    assert "bandwidth_gb_per_s" in out["hardware_sources"]


def test_rank_on_a_machine_without_a_gpu_agrees_with_fit(tmp_path: Path) -> None:
    env = _no_gpu_path(tmp_path)
    ranked = process_json("rank", "-H", "auto", env=env)
    assert ranked["engines"] == ["llama.cpp"]
    serving = {row["model"]["id"] for row in ranked["rows"] if row["verdict"] == "floor_fit"}
    assert serving == {row["profile"] for row in process_json("fit", env=env)["models"]}
