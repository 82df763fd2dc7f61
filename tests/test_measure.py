"""Machine measurement: detection parsers, STREAM-style bandwidth, matmul rates, the hardware file.

Measurements run for real with small arrays and short samples; the assertions are sanity bounds
(positive, finite, below a ceiling no machine reaches, kernels consistent with each other), never
timings.
"""

from __future__ import annotations

import itertools
import math
import tomllib
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servebound.core.hardware import ARITHMETIC_MODES
from servebound.errors import InputError
from servebound.inputs.files import load_hardware_file
from servebound.measure.bandwidth import (
    BandwidthMeasurement,
    KernelBandwidth,
    _slices,
    default_cpu_array_bytes,
    measure_cpu_bandwidth,
    spread_fraction,
)
from servebound.measure.detect import (
    detect_gpus,
    detect_machine,
    last_level_cache_bytes,
    parse_cache_size,
    parse_cpuinfo,
)
from servebound.measure.hardware_file import hardware_file, round_significant, slug, write_hardware_file
from servebound.measure.machine import Measurement, _torch_available, measure_machine
from servebound.measure.matmul import (
    MatmulMeasurement,
    MatmulRate,
    choose_n,
    matmul_flops,
    measure_numpy_matmul,
    measure_torch_matmul,
)

MiB = 2**20
SMALL_ARRAY_BYTES = 8 * MiB
#: No CPU reaches 1 PFLOP/s in fp32, and no memory system 100 TB/s: a figure above is a timing bug.
CPU_FLOP_CEILING = 1e15
BANDWIDTH_CEILING_BYTES_PER_S = 100e12


# --- detection ---------------------------------------------------------------------------------

# Two sockets, two cores each, two hardware threads per core: 8 logical CPUs, 4 physical cores.
X86_CPUINFO = "\n\n".join(
    f"processor\t: {cpu}\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\n"
    f"model name\t: Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz\n"
    f"physical id\t: {cpu // 4}\ncore id\t\t: {(cpu // 2) % 2}\ncpu cores\t: 2\n"
    for cpu in range(8)
)

# An Arm kernel: no model name, no core ids; the board is named by "Hardware".
ARM_CPUINFO = (
    "\n\n".join(f"processor\t: {cpu}\nBogoMIPS\t: 108.00\nCPU part\t: 0xd08\n" for cpu in range(4))
    + "\n\nHardware\t: BCM2835\nRevision\t: c03111\n"
)


def test_parse_cpuinfo_counts_sockets_cores_and_threads() -> None:
    assert parse_cpuinfo(X86_CPUINFO) == ("Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz", 4, 8)


def test_parse_cpuinfo_without_core_ids_leaves_physical_cores_unknown() -> None:
    assert parse_cpuinfo(ARM_CPUINFO) == ("BCM2835", None, 4)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("32768K", 32 * MiB), ("2M", 2 * MiB), ("48K", 48 * 1024), ("512", 512), ("1G", 2**30)],
)
def test_parse_cache_size(text: str, expected: int) -> None:
    assert parse_cache_size(text) == expected


def test_parse_cache_size_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="not a cache size"):
        parse_cache_size("lots")


def test_last_level_cache_sums_distinct_caches_at_the_top_level() -> None:
    # Two CCDs of 4 CPUs, each with one 32 MiB L3 that /sys lists once per CPU: 64 MiB in all.
    rows = [(3, "32768K", "0-3")] * 4 + [(3, "32768K", "4-7")] * 4
    rows += [(2, "1024K", str(cpu)) for cpu in range(8)]
    assert last_level_cache_bytes(rows) == 64 * MiB
    assert last_level_cache_bytes([]) is None


def test_detect_machine_reports_this_machine() -> None:
    machine = detect_machine()
    assert machine.cpu_model_name
    assert machine.cpu_logical_cores >= 1
    assert machine.usable_cpus >= 1
    if machine.cpu_physical_cores is not None:
        assert 1 <= machine.cpu_physical_cores <= machine.cpu_logical_cores
    assert machine.system_memory_bytes > 2**20
    assert machine.device_names[-1] == machine.cpu_model_name
    assert machine.unified_memory == (machine.apple_chip_name is not None)


def test_gpus_are_found_without_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The vendor tool on PATH (here a script printing nvidia-smi's recorded output) is the source,
    # as for --hardware auto; torch plays no part in finding the GPU.
    recorded = Path(__file__).parent / "data" / "device_tools" / "nvidia-smi-rtx4090.csv"
    script = tmp_path / "nvidia-smi"
    script.write_text(f"#!/bin/sh\nexec /bin/cat '{recorded}'\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    (gpu,) = detect_gpus()
    assert (gpu.backend, gpu.name, gpu.torch_device, gpu.tool) == (
        "cuda",
        "NVIDIA GeForce RTX 4090",
        "cuda:0",
        "nvidia-smi",
    )
    assert gpu.memory_bytes == 24564 * 2**20
    assert detect_machine().gpus == (gpu,)
    assert detect_machine().device_names[0] == "NVIDIA GeForce RTX 4090"


def test_no_tool_means_no_gpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert detect_gpus() == ()


@pytest.mark.skipif(_torch_available(), reason="checks the path without torch")
def test_measuring_a_detected_gpu_without_torch_names_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = Path(__file__).parent / "data" / "device_tools" / "nvidia-smi-rtx4090.csv"
    script = tmp_path / "nvidia-smi"
    script.write_text(f"#!/bin/sh\nexec /bin/cat '{recorded}'\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(InputError) as caught:
        measure_machine("cuda:0", "quick")
    assert caught.value.field == "device" and "torch" in caught.value.problem


# --- bandwidth ---------------------------------------------------------------------------------


def test_default_array_size_follows_cache_and_memory() -> None:
    # 32 MiB L3: 4 x 32 MiB = 128 MiB is below the 512 MiB floor, so 512 MiB.
    assert default_cpu_array_bytes(32 * MiB, 64 * 2**30) == 512 * MiB
    # 256 MiB of L3 (a large server): 4 x 256 MiB = 1 GiB.
    assert default_cpu_array_bytes(256 * MiB, 64 * 2**30) == 2**30
    # Only 1.2 GB free: three arrays may take half of it, so 1.2e9 // 6 = 2e8 bytes each.
    assert default_cpu_array_bytes(None, 1_200_000_000) == 200_000_000
    assert default_cpu_array_bytes(None, 0) == 2**16


@given(st.integers(1, 10**6), st.integers(1, 64))
def test_slices_cover_the_array_on_page_boundaries(length: int, parts: int) -> None:
    pieces = _slices(length, parts)
    assert 1 <= len(pieces) <= parts
    assert pieces[0].start == 0 and pieces[-1].stop == length
    for left, right in itertools.pairwise(pieces):
        assert left.stop == right.start and left.stop % 512 == 0


def test_spread_is_best_minus_worst_over_best() -> None:
    # (50 - 40) / 50 = 0.2
    assert spread_fraction([40.0, 50.0, 45.0]) == pytest.approx(0.2)
    assert spread_fraction([7.0]) == 0.0


def _check_kernel(kernel: KernelBandwidth, runs: int) -> None:
    assert len(kernel.rates_bytes_per_s) == runs
    assert all(0 < rate < BANDWIDTH_CEILING_BYTES_PER_S for rate in kernel.rates_bytes_per_s)
    assert kernel.best_bytes_per_s >= kernel.median_bytes_per_s > 0
    assert 0 <= kernel.spread_fraction < 1


def test_cpu_bandwidth_small_arrays() -> None:
    seen: list[tuple[str, float]] = []
    result = measure_cpu_bandwidth(
        array_bytes=SMALL_ARRAY_BYTES, threads=2, runs=3, progress=lambda label, f: seen.append((label, f))
    )
    assert result.device == "cpu" and result.threads == 2 and result.dtype == "float64"
    _check_kernel(result.copy, 3)
    _check_kernel(result.triad, 3)
    assert (result.copy.arrays, result.copy.array_bytes) == (2, SMALL_ARRAY_BYTES)
    assert (result.triad.arrays, result.triad.array_bytes) == (3, SMALL_ARRAY_BYTES)
    # The reported best is the faster kernel's best run. (How closely copy and triad agree is a
    # property of the machine and its load, not of the code: no timing ratio is asserted here.)
    assert result.best is max((result.copy, result.triad), key=lambda k: k.best_bytes_per_s)
    assert result.copy.best_bytes_per_s == max(result.copy.rates_bytes_per_s)
    fractions = [fraction for _, fraction in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0


# --- matmul ------------------------------------------------------------------------------------


def test_matmul_flops_and_size_choice() -> None:
    # 3 x 3 by 3 x 3: 9 outputs, each 3 multiplies and 3 adds = 54 FLOP.
    assert matmul_flops(3) == 54
    # 1e11 FLOP/s for 0.1 s: n = (1e10 / 2)^(1/3) = 1709.97, rounded down to 1536.
    assert choose_n(1e11, 0.1, 256, 8192) == 1536
    assert choose_n(1e11, 0.1, 256, 1024) == 1024
    assert choose_n(1e3, 0.1, 256, 8192) == 256


def test_numpy_matmul_measures_fp32_and_names_what_it_cannot() -> None:
    result = measure_numpy_matmul(runs=2, call_s=0.01, max_n=512)
    fp32 = result.rate("fp32")
    assert fp32 is not None and 256 <= fp32.n <= 512
    assert all(0 < rate < CPU_FLOP_CEILING for rate in fp32.rates_flop_per_s)
    assert 0 <= fp32.spread_fraction < 1
    assert result.rate("bf16") is None
    assert {"bf16", "fp16", "int8"} <= set(result.unavailable)
    assert "torch" in result.unavailable["bf16"]


def test_torch_cpu_matmul_when_torch_is_installed() -> None:
    pytest.importorskip("torch")
    result = measure_torch_matmul("cpu", modes=("fp32", "bf16"), runs=2, call_s=0.01, max_n=512)
    assert {rate.mode for rate in result.rates} | set(result.unavailable) == {"fp32", "bf16"}
    assert all(0 < rate.best_flop_per_s < CPU_FLOP_CEILING for rate in result.rates)


# --- the whole measurement and its hardware file ----------------------------------------------


def test_measure_machine_quick_round_trips_through_toml(tmp_path: Path) -> None:
    result = measure_machine("cpu", "quick", array_bytes=SMALL_ARRAY_BYTES)
    assert result.device == "cpu" and result.preset == "quick"
    assert result.memory_bytes == result.machine.system_memory_bytes
    written = write_hardware_file(result, tmp_path / "box.toml", measured_on=date(2026, 3, 1))
    document = tomllib.loads((tmp_path / "box.toml").read_text())
    assert document == written.document
    for key in ("id", "name", "memory_gb", "bandwidth_gb_per_s", "compute_tflops"):
        assert key in document
    assert document["provenance"] == "measured" and document["measured_on"] == "2026-03-01"
    assert document["measurement"]["bandwidth_kernel"] in document["method"]
    assert set(document["compute_tflops"]) <= set(ARITHMETIC_MODES)
    assert "fp32" in document["compute_tflops"]
    for value in (
        document["memory_gb"],
        document["bandwidth_gb_per_s"],
        *document["compute_tflops"].values(),
    ):
        assert math.isfinite(value) and value > 0
    # The [measurement] table is flat: scalars only.
    assert all(isinstance(value, str | int | float) for value in document["measurement"].values())
    loaded = load_hardware_file(tmp_path / "box.toml")
    assert loaded == written.hardware
    assert loaded.provenance == "measured"
    assert loaded.bandwidth_bytes_per_s == pytest.approx(document["bandwidth_gb_per_s"] * 1e9)
    assert loaded.memory_bytes == pytest.approx(document["memory_gb"] * 1e9)
    with pytest.raises(InputError, match="already exists"):
        write_hardware_file(result, tmp_path / "box.toml")


def _hand_measurement() -> Measurement:
    bandwidth = BandwidthMeasurement(
        device="cpu",
        backend="numpy",
        threads=4,
        dtype="float64",
        copy=KernelBandwidth("copy", 2**29, 2, (40e9, 50e9)),
        triad=KernelBandwidth("triad", 2**29, 3, (45e9, 60e9, 48e9)),
    )
    matmul = MatmulMeasurement(
        device="cpu",
        backend="numpy",
        rates=(MatmulRate("fp32", "float32", 2048, (2.0e11, 2.5e11)),),
        unavailable={"bf16": "numpy has no bf16 type"},
    )
    return Measurement(
        machine=detect_machine(include_gpus=False),
        device="cpu",
        device_name="Example CPU 9000",
        memory_bytes=128 * 10**9,
        bandwidth=bandwidth,
        matmul=matmul,
        preset="default",
        elapsed_s=12.3456,
    )


def test_hardware_file_worked_example() -> None:
    written = hardware_file(_hand_measurement(), measured_on=date(2026, 1, 2))
    document = tomllib.loads(written.text)
    assert document["id"] == "example-cpu-9000-measured"
    assert document["memory_gb"] == 128.0  # 128e9 bytes / 1e9
    # Triad's best 60e9 B/s beats copy's 50e9: R = 60 GB/s, from triad.
    assert document["bandwidth_gb_per_s"] == 60.0
    assert document["measurement"]["bandwidth_kernel"] == "triad"
    assert document["measurement"]["triad_spread"] == 0.25  # (60 - 45) / 60
    assert document["measurement"]["copy_spread"] == 0.2  # (50 - 40) / 50
    assert document["measurement"]["triad_median_gb_per_s"] == 48.0
    assert document["compute_tflops"] == {"fp32": 0.25}  # 2.5e11 FLOP/s
    assert document["measurement"]["fp32_spread"] == 0.2  # (2.5 - 2.0) / 2.5
    assert document["measurement"]["fp32_median_tflops"] == 0.225  # median of 0.2 and 0.25
    assert document["measurement"]["fp32_matrix_n"] == 2048
    assert document["measurement"]["bf16_unavailable"] == "numpy has no bf16 type"
    assert document["measured_on"] == "2026-01-02"
    assert "triad" in document["method"] and "best of 3" in document["method"]
    assert written.hardware.compute_rate("fp32") == pytest.approx(2.5e11)
    assert written.hardware.memory_bytes == pytest.approx(128e9)


@pytest.mark.parametrize(
    ("field", "kwargs"), [("preset", {"preset": "slow"}), ("device", {"device": "tpu:7"})]
)
def test_bad_choices_name_the_field(field: str, kwargs: dict[str, str]) -> None:
    with pytest.raises(InputError) as raised:
        measure_machine(**kwargs)
    assert raised.value.field == field


@given(st.floats(1e-12, 1e15))
def test_round_significant_keeps_four_figures(value: float) -> None:
    assert abs(round_significant(value) - value) <= 5e-4 * value


def test_slug() -> None:
    assert slug("NVIDIA H200 (measured)") == "nvidia-h200-measured"
    assert slug("Apple M3 Max") == "apple-m3-max"
    assert slug("???") == "machine"


def test_quick_preset_bounds_its_arrays() -> None:
    """Issue 14: `measure --quick` peaked at 3.7 GB on a large-cache server (three 4 x LLC arrays)."""
    from servebound.measure.machine import PRESETS, QUICK_CPU_ARRAY_CAP_BYTES, preset_cpu_array_bytes

    big_cache, plenty = 256 * 2**20, 512 * 2**30
    assert preset_cpu_array_bytes(PRESETS["quick"], big_cache, plenty) == QUICK_CPU_ARRAY_CAP_BYTES
    assert 3 * QUICK_CPU_ARRAY_CAP_BYTES < 0.85e9
    # the default preset still sizes past the cache, and neither takes over a sixth of free memory each
    assert preset_cpu_array_bytes(PRESETS["default"], big_cache, plenty) == 4 * big_cache
    assert preset_cpu_array_bytes(PRESETS["quick"], None, 300 * 2**20) == 50 * 2**20
