"""Detection: the vendor tools' recorded outputs parsed, the names they report matched to catalog rows
(exact names, memory as the tie-break), `--hardware auto` end to end through a tool on PATH, and
`servebound hardware match`."""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path

import pytest

from servebound.catalog.hardware import get_hardware
from servebound.errors import InputError
from servebound.measure.device_match import apple_rows, fold, known_names, match_device
from servebound.measure.device_tools import (
    parse_amd_smi_json,
    parse_meminfo,
    parse_nvidia_smi_csv,
    parse_rocm_smi_json,
    parse_system_profiler_json,
)
from tests.conftest import servebound_process

DATA = Path(__file__).parent / "data"
TOOLS = DATA / "device_tools"
MIB = 2**20


def _names() -> list[dict[str, str]]:
    with (DATA / "device_names.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("row", _names(), ids=lambda r: f"{r['reported']}-{r['memory_gb']}-{r['gpu_cores']}")
def test_reported_names_map_to_their_rows(row: dict[str, str]) -> None:
    memory = float(row["memory_gb"]) * 1e9 if row["memory_gb"] else None
    cores = int(row["gpu_cores"]) if row["gpu_cores"] else None
    assert match_device(row["reported"], memory, cores).id == row["expected"]


def test_every_table_row_names_a_catalog_device() -> None:
    for name, rows in known_names().items():
        assert rows, name
        for row_id in rows:
            assert get_hardware(row_id).system is None
    for row_id, (chip, cores) in apple_rows().items():
        assert get_hardware(row_id).vendor == "Apple" and chip.startswith("Apple M") and cores > 0


@pytest.mark.parametrize(
    ("name", "memory_gb", "cores", "field"),
    [
        ("NVIDIA H100", None, None, "name"),  # not a reported name: no nearest spelling
        ("H100 80GB", None, None, "name"),
        ("NVIDIA GeForce RTX 3060", 8.59, None, "memory_gb"),  # the 8 GB card is not catalogued
        ("NVIDIA H20", None, None, "memory_gb"),  # two rows, no memory to pick one
        ("Apple M3 Max", None, None, "hardware"),
        ("Apple M3 Max", 68.72, 40, "memory_gb"),  # M3 Max 40-core 64 GB: no row
        ("Apple M3 Max", 51.54, 38, "gpu_cores"),
        ("", None, None, "name"),
        ("NVIDIA GeForce RTX 4090", -1, None, "memory_gb"),
    ],
)
def test_no_match_is_an_error_naming_the_field(
    name: str, memory_gb: float | None, cores: int | None, field: str
) -> None:
    with pytest.raises(InputError) as caught:
        match_device(name, None if memory_gb is None else memory_gb * 1e9, cores)
    assert caught.value.field == field


def test_fold_is_case_whitespace_and_marks_only() -> None:
    assert fold("Intel(R) Arc(TM)  A770 Graphics") == fold("intel arc a770 graphics")
    assert fold("NVIDIA GeForce RTX 4090") != fold("NVIDIA GeForce RTX 4090 D")


def test_nvidia_smi_csv() -> None:
    devices = parse_nvidia_smi_csv((TOOLS / "nvidia-smi-h100-x8.csv").read_text())
    assert len(devices) == 8
    assert devices[0].name == "NVIDIA H100 80GB HBM3" and devices[0].memory_bytes == 81559 * MIB
    (gb10,) = parse_nvidia_smi_csv((TOOLS / "nvidia-smi-gb10.csv").read_text())
    assert gb10.name == "NVIDIA GB10" and gb10.memory_bytes is None
    (plain,) = parse_nvidia_smi_csv("NVIDIA GeForce RTX 4090, 24564\n")  # noheader,nounits
    assert plain.memory_bytes == 24564 * MIB


def test_amd_smi_both_layouts() -> None:
    for name in ("amd-smi-mi300x.json", "amd-smi-mi300x-gpu-data.json"):
        (device,) = parse_amd_smi_json((TOOLS / name).read_text())
        assert device.name == "AMD Instinct MI300X" and device.memory_bytes == 196592 * MIB
        assert match_device(device.name, device.memory_bytes).id == "amd-mi300x"


def test_rocm_smi() -> None:
    (device,) = parse_rocm_smi_json((TOOLS / "rocm-smi-7900xtx.json").read_text())
    assert device.name == "Radeon RX 7900 XTX" and device.memory_bytes == 25753026560
    assert match_device(device.name, device.memory_bytes).id == "amd-radeon-rx-7900-xtx"


def test_system_profiler_m3_max_40c_48gb() -> None:
    (device,) = parse_system_profiler_json((TOOLS / "system-profiler-m3-max-40c-48gb.json").read_text())
    assert (device.name, device.gpu_cores, device.memory_bytes) == ("Apple M3 Max", 40, 48 * 2**30)
    assert match_device(device.name, device.memory_bytes, device.gpu_cores).id == "apple-m3-max-40c-48gb"


def test_meminfo() -> None:
    assert parse_meminfo((TOOLS / "meminfo-dgx-spark.txt").read_text()) == 125437028 * 1024
    assert parse_meminfo("nothing here") is None


def _fake_tool(folder: Path, tool: str, recorded: Path) -> dict[str, str]:
    """A PATH holding only ``tool``, a script that prints a recorded output (as the real tool would)."""
    folder.mkdir(exist_ok=True)
    script = folder / tool
    script.write_text(f"#!/bin/sh\nexec /bin/cat '{recorded}'\n")
    script.chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{folder}{os.pathsep}{Path(sys.executable).parent}",
    }


@pytest.mark.parametrize(
    ("tool", "recorded", "expected"),
    [
        ("nvidia-smi", "nvidia-smi-rtx4090.csv", "nvidia-rtx-4090"),
        ("nvidia-smi", "nvidia-smi-h100-x8.csv", "8x-nvidia-h100-sxm"),
        ("nvidia-smi", "nvidia-smi-gb10.csv", "nvidia-dgx-spark"),
        ("amd-smi", "amd-smi-mi300x.json", "amd-mi300x"),
        ("rocm-smi", "rocm-smi-7900xtx.json", "amd-radeon-rx-7900-xtx"),
    ],
)
def test_hardware_auto_through_the_tool_on_path(
    tmp_path: Path, tool: str, recorded: str, expected: str
) -> None:
    env = _fake_tool(tmp_path / "bin", tool, TOOLS / recorded)
    auto = servebound_process("decode", "--hardware", "auto", "--model", "llama-2-7b-q4_0", "--json", env=env)
    named = servebound_process(
        "decode", "--hardware", expected, "--model", "llama-2-7b-q4_0", "--json", env=env
    )
    assert auto.returncode == named.returncode == 0, auto.stderr
    assert json.loads(auto.stdout) == json.loads(named.stdout)


def test_hardware_auto_without_any_tool_answers_for_the_cpu(tmp_path: Path) -> None:
    """No GPU tool answers: this machine's CPU and system RAM (tests/test_cpu_only.py covers the rows)."""
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    done = servebound_process("decode", "--hardware", "auto", "--model", "llama-2-7b-q4_0", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hardware"]["id"] == "this-machine-cpu"


def test_hardware_auto_with_different_gpus_is_refused(tmp_path: Path) -> None:
    env = _fake_tool(tmp_path / "bin", "nvidia-smi", TOOLS / "nvidia-smi-mixed.csv")
    done = servebound_process(
        "prefill", "--hardware", "auto", "--model", "llama-2-7b-q4_0", "--prompt", "512", env=env
    )
    assert done.returncode == 2 and "different GPUs" in done.stderr


def test_hardware_match_cli() -> None:
    done = servebound_process(
        "hardware", "match", "Apple M3 Max", "--gpu-cores", "40", "--memory-gb", "48", "--json"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["id"] == "apple-m3-max-40c-48gb"
    refused = servebound_process("hardware", "match", "NVIDIA H100")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
