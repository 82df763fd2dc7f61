"""The hardware catalog: sources, units, systems, lookups and the lint, on the shipped file and on
deliberately broken ones."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servebound.catalog.hardware import CatalogHardware, get_hardware, list_hardware, load_hardware_catalog
from servebound.catalog.hardware_file import load_hardware_catalog_file
from servebound.catalog.hardware_names import DEVICE_CLASSES, SLUG_PATTERN
from servebound.catalog.lint import BF16_HALF_RATE, CLASS_RANGES, lint_hardware_catalog
from servebound.core.hardware import ARITHMETIC_MODES
from servebound.errors import InputError

REPO = Path(__file__).resolve().parents[1]
SHARED_TSV = REPO.parent / "shared" / "reference" / "hardware.tsv"
CATALOG = load_hardware_catalog()
DEVICES = [entry for entry in CATALOG if not entry.is_system]
SYSTEMS = [entry for entry in CATALOG if entry.is_system]
CATALOG_TOML = REPO / "src" / "servebound" / "catalog" / "data" / "hardware.toml"


def lint_edited(tmp_path: Path, old: str, new: str) -> list[str]:
    """The linter's problems in the shipped hardware catalog with ``old`` replaced once by ``new``."""
    text = CATALOG_TOML.read_text("utf-8")
    broken = text.replace(old, new, 1)
    assert broken != text
    path = tmp_path / "hardware.toml"
    path.write_text(broken, "utf-8")
    return lint_hardware_catalog(path)


def by_id(entry_id: str) -> CatalogHardware:
    return CATALOG.by_id[entry_id]


# ------------------------------------------------------------------------------------------------
# The shipped catalog
# ------------------------------------------------------------------------------------------------


def test_packaged_file_is_read_through_importlib_resources_and_cached() -> None:
    assert resources.files("servebound.catalog").joinpath("data", "hardware.toml").is_file()
    assert load_hardware_catalog() is load_hardware_catalog()


def test_catalog_is_large_and_covers_every_class() -> None:
    assert len(DEVICES) >= 100
    classes = {entry.device_class for entry in DEVICES}
    assert set(DEVICE_CLASSES) - {"CPU"} <= classes
    ids = {entry.id for entry in DEVICES}
    # Unified-memory machines the derivation compares, by chip and memory configuration.
    assert {"nvidia-dgx-spark", "amd-ryzen-ai-max-plus-395-128gb", "apple-m5-max-128gb"} <= ids
    assert {"apple-m4-max-36gb", "apple-m4-max-128gb", "apple-m3-ultra-512gb"} <= ids


def test_shipped_catalog_lints_clean() -> None:
    assert lint_hardware_catalog() == []


@pytest.mark.parametrize("entry", DEVICES, ids=lambda e: e.id)
def test_every_number_has_a_source(entry: CatalogHardware) -> None:
    keys = ["memory_gb", "bandwidth_gb_per_s", *entry.compute_tflops]
    if entry.price_usd is not None:
        keys.append("price_usd")
    for key in keys:
        source = entry.source_for(key)
        assert source and source.strip(), f"{entry.id}.{key} has no source"
    # The core record carries the sources of the numbers the math uses.
    for key in ("memory_gb", "bandwidth_gb_per_s", *entry.compute_tflops):
        assert entry.hardware.sources[key] == entry.source_for(key)


@pytest.mark.parametrize("entry", DEVICES, ids=lambda e: e.id)
def test_units_are_consistent(entry: CatalogHardware) -> None:
    (mem_lo, mem_hi), (bw_lo, bw_hi) = CLASS_RANGES[entry.device_class]
    assert mem_lo <= entry.memory_gb <= mem_hi
    assert bw_lo <= entry.bandwidth_gb_per_s <= bw_hi
    rates = entry.compute_tflops
    assert set(rates) <= set(ARITHMETIC_MODES)
    assert all(0.05 <= value <= 30_000 for value in rates.values())
    if "fp8" in rates and "bf16" in rates:
        assert rates["fp8"] >= rates["bf16"]
    if "fp4" in rates and "fp8" in rates:
        assert rates["fp4"] >= rates["fp8"]
    if "fp16" in rates and "bf16" in rates:
        # One tensor rate for both, except CDNA 1's half-rate bf16 (MI100: 184.6 / 92.3).
        ratio = 2 if f"device '{entry.id}'" in BF16_HALF_RATE else 1
        assert rates["fp16"] == pytest.approx(ratio * rates["bf16"], rel=0.005), entry.id
    assert set(entry.sparse_halved) <= set(rates)
    assert set(entry.derived) <= set(rates)
    assert entry.hardware.provenance == "peak"


def test_ids_and_aliases_are_unique_slugs() -> None:
    ids = CATALOG.ids()
    assert len(ids) == len(set(ids))
    assert all(SLUG_PATTERN.match(entry_id) for entry_id in ids)
    aliases = [alias for entry in CATALOG for alias in entry.aliases]
    assert len(aliases) == len(set(aliases))
    assert not set(aliases) & set(ids)


def test_conversion_to_core_units_h100_sxm() -> None:
    h100 = get_hardware("nvidia-h100-sxm")
    # NVIDIA: 80 GB HBM3 at 3.35 TB/s (not the 3072 GB/s some calculators use); BF16 1,979* sparse -> 989.
    # Capacity as the device reports it: nvidia-smi's 81559 MiB, more than the 80 GB label.
    assert (h100.memory_gb, h100.bandwidth_gb_per_s) == (85.521, 3350)
    assert h100.hardware.memory_bytes == pytest.approx(81559 * 2**20, rel=1e-5)
    assert h100.memory_label_gb == 80
    assert h100.hardware.bandwidth_bytes_per_s == 3350 * 1e9
    assert h100.hardware.compute_rate("bf16") == 989 * 1e12
    assert h100.hardware.compute_rate("fp8") == 1979 * 1e12
    assert h100.hardware.compute_rate("fp4") is None  # Hopper has no FP4
    assert set(h100.sparse_halved) == {"fp8", "int8", "bf16", "fp16"}
    # D = C R = 85.521e9 B * 3.35e12 B/s = 2.865e23 B^2/s
    assert h100.hardware.memory_power_bytes2_per_s == pytest.approx(85.521e9 * 3.35e12)
    assert get_hardware("h100").id == "nvidia-h100-sxm"


def test_the_derivations_two_machines() -> None:
    spark = get_hardware("nvidia-dgx-spark")
    m5_max = get_hardware("apple-m5-max-128gb")
    assert (spark.memory_gb, spark.bandwidth_gb_per_s) == (128, 273)
    # The catalog holds what macOS reports (128 x 2^30 bytes); the derivation's worked example uses the
    # 128 GB label: D = 128 * 273 = 34,944 and 128 * 614 = 78,592 GB^2/s.
    assert (m5_max.memory_gb, m5_max.bandwidth_gb_per_s) == (137.439, 614)
    assert spark.memory_gb * spark.bandwidth_gb_per_s == 34_944
    assert 128 * m5_max.bandwidth_gb_per_s == 78_592
    # NVIDIA quotes 1 PFLOP FP4 with sparsity: halved to 500 dense.
    assert spark.compute_tflops["fp4"] == 500
    assert spark.sparse_halved == ("fp4",)


def test_rtx_5090_and_the_geforce_accumulate_convention() -> None:
    rtx = get_hardware("nvidia-rtx-5090")
    # 32607 MiB as a captured nvidia-smi reports it (not the 32752 of a table that flags its 5090 row preliminary)
    assert (rtx.memory_gb, rtx.bandwidth_gb_per_s) == (round(32607 * 2**20 / 1e9, 3), 1792)
    assert "gls/RTX5090_smi.py" in rtx.sources["memory_gb"]
    # FP16 accumulate, the mode llama.cpp's cuBLAS path uses, runs at twice the FP32-accumulate rate.
    assert rtx.compute_tflops["fp16_acc16"] == 2 * rtx.compute_tflops["fp16"]
    # bf16 holds the FP32-accumulate dense rate, 209.5 = 838 sparse FP16-accumulate / 2 / 2.
    assert rtx.compute_tflops["bf16"] == 209.5
    assert rtx.compute_tflops["fp8"] == 2 * rtx.compute_tflops["bf16"]  # FP32 accumulate, as bf16


def test_rtx_3060_tensor_rates_from_the_int4_sparse_figure() -> None:
    rtx = get_hardware("nvidia-rtx-3060-12gb")
    # hmc-tech: 407.6 TOPS INT4 with sparsity. GA10x: INT4 = 2 x INT8, sparse = 2 x dense, so
    # INT8 dense = 407.6 / 4 = 101.9; FP16 (FP32 accumulate) = INT8 / 4 = 25.475 -> 25.47.
    assert rtx.compute_tflops["int8"] == pytest.approx(407.6 / 4)
    assert rtx.compute_tflops["bf16"] == rtx.compute_tflops["fp16"] == pytest.approx(407.6 / 16, abs=0.01)
    # The same from the chip: 28 SMs x 1.777 GHz x 2048 INT8 ops/clk = 101.9e12.
    assert rtx.hardware.compute_rate("int8") == pytest.approx(28 * 1.777e9 * 2048, rel=0.001)
    assert rtx.compute_tflops["fp32"] == 12.74
    assert {"int8", "bf16", "fp16"} <= set(rtx.derived)
    assert "fp8" not in rtx.compute_tflops  # Ampere has no FP8


def test_workstation_tensor_rates() -> None:
    ada = get_hardware("nvidia-rtx-6000-ada")
    # Datasheet: 1,457 TFLOPS FP8 with sparsity -> 728.5 dense; BF16 = FP8 / 2 (pro card, no halving).
    assert ada.compute_tflops["fp8"] == 1457 / 2
    assert ada.compute_tflops["int8"] == 728.5
    assert ada.compute_tflops["bf16"] == ada.compute_tflops["fp16"] == pytest.approx(1457 / 4, abs=0.1)
    assert ada.sparse_halved == ("fp8",)
    a6000 = get_hardware("nvidia-rtx-a6000")
    # Datasheet 309.7 TFLOPS tensor with sparsity; dense FP16/BF16 = 84 SMs x 1.8 GHz x 1024 = 154.8.
    assert a6000.compute_tflops["bf16"] == pytest.approx(84 * 1.8e9 * 1024 / 1e12, abs=0.05)
    assert a6000.compute_tflops["int8"] == pytest.approx(2 * 154.85, abs=0.05)
    assert a6000.source_for("int8") and "llm-analysis" in str(a6000.source_for("int8"))


def test_geforce_int8_rates_and_the_accumulate_convention() -> None:
    rtx4090 = get_hardware("nvidia-rtx-4090")
    # fp8 is FP8 with FP32 accumulate (what FP8 GEMMs in serving engines get), as bf16/fp16 are:
    # 330.3 = 2 x 165.15 (Ada whitepaper; waredb.com's dense FP8 330.30). NVIDIA's headline 660.6 is
    # FP16 accumulate, which INT8 (INT32 accumulate) matches on GeForce.
    assert rtx4090.compute_tflops["fp8"] == 330.3
    assert rtx4090.compute_tflops["fp8"] == pytest.approx(2 * rtx4090.compute_tflops["bf16"], rel=0.001)
    assert "660.6" in rtx4090.notes and "FP32 accumulate" in rtx4090.notes
    assert rtx4090.compute_tflops["int8"] == 660.6
    # RTX 5090: the whitepaper's f8 x f8 -> f32 spec is 419, its f16-accumulate 838.
    rtx5090 = get_hardware("nvidia-rtx-5090")
    assert rtx5090.compute_tflops["fp8"] == 419 and rtx5090.compute_tflops["int8"] == 838
    assert "fp8" not in rtx5090.sparse_halved
    # Ada and Blackwell GeForce: INT8 = dense FP8 with FP16 accumulate = 2 x the fp8 entry.
    assert get_hardware("nvidia-rtx-4080").compute_tflops["int8"] == 389.9
    assert get_hardware("nvidia-rtx-5080").compute_tflops["int8"] == 450.2


@pytest.mark.parametrize("entry", [e for e in DEVICES if "fp8" in e.compute_tflops], ids=lambda e: e.id)
def test_fp8_is_the_fp32_accumulate_rate_on_every_row(entry: CatalogHardware) -> None:
    rates = entry.compute_tflops
    # One convention: fp8 at most twice bf16 (never the 4 x of a GeForce FP16-accumulate headline).
    if "bf16" in rates:
        assert rates["fp8"] <= 2.05 * rates["bf16"], entry.id
    if entry.device_class == "consumer GPU" and "fp16_acc16" in rates:
        assert rates["fp8"] == pytest.approx(rates["fp16_acc16"], abs=0.06)


def test_lint_refuses_an_fp16_accumulate_fp8_figure(tmp_path: Path) -> None:
    problems = lint_edited(tmp_path, "fp8 = 330.3\n", "fp8 = 660.6\n")
    assert any("nvidia-rtx-4090" in p and "fp8 (660.6) is more than twice bf16" in p for p in problems)


def test_geforce_rows_of_every_architecture_have_int8() -> None:
    for ref in (
        "nvidia-rtx-3060-12gb",
        "nvidia-rtx-3090",
        "nvidia-rtx-4080",
        "nvidia-rtx-4090",
        "nvidia-rtx-5080",
    ):
        assert "int8" in get_hardware(ref).compute_tflops, ref


def test_gb10_dense_rates_are_derived_as_the_derivation_derives_them() -> None:
    spark = get_hardware("nvidia-dgx-spark")
    # NVIDIA publishes only the FP4 sparse figure (1 PFLOP); the derivation's prefill example takes
    # 500 TFLOP/s dense FP4 and 125 TFLOP/s dense BF16 from it.
    assert spark.compute_tflops["fp4"] == 500
    assert spark.compute_tflops["bf16"] == 125
    assert (spark.compute_tflops["fp8"], spark.compute_tflops["int8"], spark.compute_tflops["fp16"]) == (
        250,
        250,
        125,
    )
    assert set(spark.derived) == {"fp8", "int8", "bf16", "fp16"}
    for mode in spark.derived:
        source = spark.source_for(mode) or ""
        assert source.startswith(f"derived: {mode} = 1/") and "x fp4" in source
        assert "1 PFLOP FP4 w/ sparsity" in source  # the source of the figure it is derived from
    assert spark.hardware.compute_rate("fp16_acc16") is None  # never derived nor borrowed
    assert "measured" in spark.notes.lower() and "not published peaks" in spark.notes


def test_every_row_with_only_sparse_or_fp4_figures_carries_derived_dense_rates() -> None:
    # A row whose low-precision figures (fp4, fp8, int8) are all it has besides fp32 gets dense bf16
    # and fp16 derived from them, each marked derived with its rule (the source names the rule).
    for row in list_hardware(include_systems=False):
        rates = set(row.compute_tflops)
        if rates & {"fp4", "fp8", "int8"}:
            assert {"bf16", "fp16"} & rates, row.id
    for ref in ("nvidia-dgx-spark", "nvidia-jetson-agx-thor", "nvidia-jetson-agx-orin-64gb"):
        row = get_hardware(ref)
        assert {"bf16", "fp16"} <= set(row.derived), ref
        assert all((row.source_for(mode) or "").startswith("derived: ") for mode in row.derived), ref
    assert get_hardware("agx-orin").compute_tflops["bf16"] == 85 / 2
    thor = get_hardware("nvidia-jetson-agx-thor")
    assert thor.compute_tflops["bf16"] == pytest.approx(1035 / 4)
    assert thor.compute_tflops["int8"] == thor.compute_tflops["fp8"]


def test_lint_checks_a_derived_rate_against_its_rule(tmp_path: Path) -> None:
    rates = "fp4 = 500\nfp8 = 250\nint8 = 250\nbf16 = "
    problems = lint_edited(tmp_path, rates + "125", rates + "200")
    assert any("nvidia-dgx-spark" in p and "as derived_from.bf16 states" in p for p in problems)


def test_unpublished_rates_stay_absent_and_say_why() -> None:
    xtx = get_hardware("amd-radeon-rx-7900-xtx")
    assert set(xtx.compute_tflops) == {"fp16", "fp32"}
    assert "bf16 and int8 stay absent" in xtx.notes
    halo = get_hardware("strix-halo")
    # FP32 dual issue: 40 CUs x 64 lanes x 2 x 2 x 2.9 GHz = 29.7 TFLOPS; nothing else is published.
    assert halo.compute_tflops == {"fp32": pytest.approx(40 * 64 * 2 * 2 * 2.9e9 / 1e12, abs=0.05)}
    assert "NPU" in halo.notes and "neither is a GPU rate" in halo.notes


@pytest.mark.parametrize(
    ("row", "same_gpu_row"),
    [
        ("apple-m4-16gb", "apple-m4-32gb"),  # 10-core GPU in both
        ("apple-m1-max-32gb", "apple-m1-max-64gb"),  # 32-core GPU
        ("apple-m2-ultra-64gb", "apple-m2-ultra-192gb"),  # 76-core GPU
        ("apple-m3-ultra-256gb", "apple-m3-ultra-512gb"),  # 80-core GPU
        ("apple-m4-max-48gb", "apple-m4-max-128gb"),  # 40-core GPU
    ],
)
def test_apple_rows_of_one_gpu_share_its_fp32_rate(row: str, same_gpu_row: str) -> None:
    assert get_hardware(row).compute_tflops["fp32"] == get_hardware(same_gpu_row).compute_tflops["fp32"]


@pytest.mark.parametrize(
    "row",
    [
        "apple-m3-max-36gb",
        "apple-m3-max-96gb",
        "apple-m3-ultra-96gb",
        "apple-m4-pro-24gb",
        "apple-m4-max-36gb",
    ],
)
def test_apple_binned_gpus_do_not_borrow_the_full_gpus_rate(row: str) -> None:
    entry = get_hardware(row)
    # Their own rate: the full GPU's scaled by the share of cores (one clock per die), marked derived.
    full = {
        "apple-m3-max": (14.2, 30 / 40),
        "apple-m3-ultra": (28.4, 60 / 80),
        "apple-m4-pro": (9.2, 16 / 20),
    }
    full |= {"apple-m4-max": (18.4, 32 / 40)}
    rate, share = full[row.rsplit("-", 1)[0]]
    assert entry.compute_tflops["fp32"] == pytest.approx(rate * share, abs=0.001)
    assert "fp32" in entry.derived and "FP32 left absent" in entry.notes


@pytest.mark.parametrize("entry", [e for e in DEVICES if e.vendor == "Apple"], ids=lambda e: e.id)
def test_apple_rows_leave_matrix_rates_absent(entry: CatalogHardware) -> None:
    assert not {"bf16", "fp16", "fp8", "int8", "fp4"} & set(entry.compute_tflops)
    assert "Neural Engine" in entry.notes
    assert entry.device_class == "unified-memory SoC"


#: TSV values the catalog corrects on purpose: (row, mode) -> the catalog's value. Each correction is
#: explained in the row's notes.
TSV_CORRECTIONS: dict[tuple[str, str], float] = {
    # The TSV's GeForce fp8 is NVIDIA's FP16-accumulate headline; the catalog's fp8 is FP32 accumulate.
    ("nvidia-rtx-5090", "fp8"): 419.0,
    ("nvidia-rtx-5080", "fp8"): 225.2,
    ("nvidia-rtx-4090", "fp8"): 330.3,
    ("nvidia-rtx-4080", "fp8"): 194.9,
}


def tsv_rows() -> list[dict[str, str]]:
    with SHARED_TSV.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@pytest.mark.skipif(
    not SHARED_TSV.is_file(), reason="the shared reference folder is not next to the repository"
)
def test_catalog_matches_the_shared_tsv() -> None:
    columns = {"fp4": "fp4_tflops", "fp8": "fp8_tflops", "int8": "int8_tops"}
    columns |= {mode: f"{mode}_tflops" for mode in ("bf16", "fp16", "fp32")}
    for row in tsv_rows():
        entry = by_id(row["id"])
        assert entry.bandwidth_gb_per_s == pytest.approx(float(row["bandwidth_gb_per_s"]))
        # Rows whose capacity is restated as the bytes the device reports keep the TSV's figure as
        # their label and hold at least it, never less.
        if entry.memory_label_gb is None:
            assert entry.memory_gb == pytest.approx(float(row["memory_gb"]), rel=0.001)
        else:
            assert entry.memory_label_gb == pytest.approx(float(row["memory_gb"]), rel=0.001)
            assert entry.memory_gb >= float(row["memory_gb"])
        for mode, column in columns.items():
            if (row["id"], mode) in TSV_CORRECTIONS:
                assert entry.compute_tflops.get(mode) == TSV_CORRECTIONS[row["id"], mode]
            elif row[column]:
                # A TSV value is kept unless it is a listed correction.
                assert entry.compute_tflops.get(mode) == pytest.approx(float(row[column]))


@pytest.mark.skipif(
    not SHARED_TSV.is_file(), reason="the shared reference folder is not next to the repository"
)
def test_converter_prints_a_row_the_schema_accepts(tmp_path: Path) -> None:
    script = REPO / "scripts" / "tsv_to_hardware_toml.py"
    result = subprocess.run(
        [sys.executable, str(script), str(SHARED_TSV), "nvidia-l4"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    path = tmp_path / "one.toml"
    path.write_text(result.stdout, encoding="utf-8")
    (row,) = load_hardware_catalog_file(path)
    assert row.id == "nvidia-l4" and row.bandwidth_gb_per_s == 300
    assert row.compute_tflops["fp8"] == 242.5 and row.sources["fp8"]
    unknown = subprocess.run(
        [sys.executable, str(script), str(SHARED_TSV), "nvidia-h999"], capture_output=True, text=True
    )
    assert unknown.returncode == 2 and "nvidia-h999" in unknown.stderr


# ------------------------------------------------------------------------------------------------
# Systems
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("system", SYSTEMS, ids=lambda e: e.id)
def test_systems_equal_n_times_the_device(system: CatalogHardware) -> None:
    assert system.system is not None
    member = by_id(system.system.member_id)
    n = system.system.count
    assert system.hardware.memory_bytes == pytest.approx(n * member.hardware.memory_bytes)
    assert system.hardware.bandwidth_bytes_per_s == pytest.approx(n * member.hardware.bandwidth_bytes_per_s)
    assert set(system.compute_tflops) == set(member.compute_tflops)
    for mode, rate in member.compute_tflops.items():
        assert system.compute_tflops[mode] == pytest.approx(n * rate)
    assert system.hardware.id == system.id
    assert get_hardware(system.id) is system


def test_declared_systems_include_the_common_boxes() -> None:
    ids = {entry.id for entry in SYSTEMS}
    assert {"2x-nvidia-rtx-3090", "4x-nvidia-rtx-5090", "8x-nvidia-h100-sxm", "8x-nvidia-b200"} <= ids
    h100x8 = get_hardware("8x-nvidia-h100-sxm")
    # 8 x 85.521 GB (81559 MiB each) = 684.168 GB; 8 x 3,350 = 26,800 GB/s; 8 x 989 = 7,912 dense BF16.
    assert h100x8.memory_gb == pytest.approx(8 * 85.521)
    assert h100x8.bandwidth_gb_per_s == 26_800
    assert h100x8.memory_label_gb == 640
    assert h100x8.compute_tflops["bf16"] == pytest.approx(7_912)
    assert h100x8.device_class == "multi-device system"


def test_nvl72_rack_is_72_gb200_and_agrees_with_nvidias_totals() -> None:
    rack = get_hardware("nvidia-gb200-nvl72")
    assert rack.system is not None and (rack.system.member_id, rack.system.count) == ("nvidia-gb200", 72)
    # 72 x 186 GB = 13,392 GB (NVIDIA: 13.4 TB); 72 x 8,000 = 576,000 GB/s (NVIDIA: 576 TB/s).
    assert rack.memory_gb == pytest.approx(13_392)
    assert rack.bandwidth_gb_per_s == pytest.approx(576_000)
    # FP4 1,440 PF sparse / 2 = 720,000 dense TFLOPS = 72 x 10,000.
    assert rack.compute_tflops["fp4"] == pytest.approx(720_000)
    assert rack.device_class == "rack-scale system"
    assert get_hardware("nvl72") is rack


def test_nxid_resolves_for_any_device() -> None:
    trio = get_hardware("3x-amd-mi300x")
    # 3 x 192 GB = 576 GB; 3 x 5,300 = 15,900 GB/s.
    assert (trio.memory_gb, trio.bandwidth_gb_per_s) == (576, 15_900)
    assert trio.system is not None and trio.system.count == 3
    assert trio.id == trio.hardware.id == "3x-amd-mi300x"
    # Price scales with the devices (host not included): 3 x $15,000.
    assert trio.price_usd == 45_000
    single = get_hardware("1x-nvidia-l4")
    assert single.hardware.memory_bytes == get_hardware("nvidia-l4").hardware.memory_bytes
    assert get_hardware("2X-H100").id == "2x-nvidia-h100-sxm"  # aliases work inside NxID, any case


@settings(max_examples=60, deadline=None)
@given(device=st.sampled_from(DEVICES), count=st.integers(min_value=1, max_value=1024))
def test_nxid_sums_every_resource(device: CatalogHardware, count: int) -> None:
    system = get_hardware(f"{count}x-{device.id}")
    assert system.hardware.memory_bytes == pytest.approx(count * device.hardware.memory_bytes)
    assert system.hardware.bandwidth_bytes_per_s == pytest.approx(
        count * device.hardware.bandwidth_bytes_per_s
    )
    for mode, rate in device.hardware.compute_flop_per_s.items():
        assert system.hardware.compute_flop_per_s[mode] == pytest.approx(count * rate)


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("0x-amd-mi300x", "out of range; use 1 to 1024"),
        ("1025x-amd-mi300x", "out of range; use 1 to 1024"),
        ("3xamd-mi300x", "did you mean '3x-amd-mi300x'?"),
        ("2x-8x-nvidia-h100-sxm", "multiply its device instead: '16x-nvidia-h100-sxm'"),
        ("2x-nvidia-gb200-nvl72", "multiply its device instead: '144x-nvidia-gb200'"),
        ("4x-nvidia-h100-sx", "did you mean 'nvidia-h100-sxm'"),
    ],
)
def test_nxid_errors_name_the_fix(ref: str, expected: str) -> None:
    with pytest.raises(InputError) as caught:
        get_hardware(ref)
    assert caught.value.field == "hardware"
    assert expected in caught.value.problem


# ------------------------------------------------------------------------------------------------
# Lookup and listing
# ------------------------------------------------------------------------------------------------


def test_mistyped_id_gets_fuzzy_suggestions() -> None:
    with pytest.raises(InputError) as caught:
        get_hardware("nvidia-h100-sx")
    message = str(caught.value)
    assert message.startswith(
        "hardware: 'nvidia-h100-sx' is not in the catalog; did you mean 'nvidia-h100-sxm'"
    )
    assert message.endswith("`servebound hardware list` shows all")


def test_nonsense_id_gets_no_bad_suggestions() -> None:
    with pytest.raises(InputError) as caught:
        get_hardware("xyz")
    assert caught.value.problem == "'xyz' is not in the catalog; `servebound hardware list` shows all"


def test_lookup_forms() -> None:
    assert get_hardware("  NVIDIA-RTX-5090 ").id == "nvidia-rtx-5090"
    assert get_hardware("rtx 5090").id == "nvidia-rtx-5090"  # vendor-free alias, space as hyphen
    assert get_hardware("dgx_spark").id == "nvidia-dgx-spark"
    assert get_hardware("strix-halo").id == "amd-ryzen-ai-max-plus-395-128gb"


def test_list_filters() -> None:
    apple = list_hardware(vendor="apple")
    assert apple and all(entry.vendor == "Apple" for entry in apple)
    consumer = list_hardware(cls="consumer-gpu")
    assert {"nvidia-rtx-5090", "nvidia-rtx-3090"} <= {e.id for e in consumer}
    assert all(entry.device_class == "consumer GPU" for entry in consumer)
    big = list_hardware(min_memory_gb=500, include_systems=False)
    assert {e.id for e in big} == {"apple-m3-ultra-512gb"}
    cheap_fp4 = list_hardware(mode="fp4", max_price_usd=5_000)
    assert {"nvidia-rtx-5090", "nvidia-dgx-spark"} <= {e.id for e in cheap_fp4}
    assert all(e.price_usd is not None and e.price_usd <= 5_000 for e in cheap_fp4)
    with pytest.raises(InputError, match="is not a hardware class"):
        list_hardware(cls="mainframe")
    with pytest.raises(InputError, match="is not an arithmetic mode"):
        list_hardware(mode="fp64")


# ------------------------------------------------------------------------------------------------
# Broken catalogs
# ------------------------------------------------------------------------------------------------

GOOD_DEVICE = """
[[device]]
id = "acme-one"
name = "Acme One"
vendor = "Acme"
class = "consumer GPU"
year = 2024
memory_gb = 24
memory_type = "GDDR6"
bandwidth_gb_per_s = 1000
notes = ""
[device.compute_tflops]
bf16 = 100
fp16 = 100
[device.sources]
memory_gb = "https://example.org/one"
bandwidth_gb_per_s = "https://example.org/one"
compute = "https://example.org/one"
"""

BROKEN = (
    GOOD_DEVICE
    + """
[[device]]
id = "acme-one"
name = "Acme One again"
vendor = "Acme"
class = "consumer GPU"
memory_gb = 24
memory_type = "GDDR6"
bandwidth_gb_per_s = 1000
[device.sources]
memory_gb = "https://example.org/again"
bandwidth_gb_per_s = "https://example.org/again"

[[device]]
id = "Acme Two"
name = "Acme Two"
vendor = "Acme"
class = "datacenter GPU"
memory_gb = 80
memory_type = "HBM3"
bandwidth_gb_per_s = 3.35
price_usd = 30000
sparse_halved = ["fp4"]
[device.compute_tflops]
fp8 = 500
bf16 = 989
fp16 = 1979
fp32 = 67e12
[device.sources]
memory_gb = "https://example.org/two"
bandwidth_gb_per_s = " "

[[system]]
id = "4x-acme-one"
name = "Four"
member = "acme-one"
count = 2

[[system]]
id = "acme-rack"
name = "Rack"
class = "rack-scale system"
member = "acme-one"
count = 10
[system.quoted]
memory_gb = 300
"""
)


def test_lint_finds_every_problem_in_a_broken_catalog(tmp_path: Path) -> None:
    path = tmp_path / "hardware.toml"
    path.write_text(BROKEN, encoding="utf-8")
    problems = lint_hardware_catalog(path)
    expected = [
        "device 'acme-one': id 'acme-one' is already used by device 'acme-one'",
        "device 'Acme Two': id 'Acme Two' is not a slug",
        "device 'Acme Two': bandwidth_gb_per_s has no source",
        "device 'Acme Two': price_usd has no source",
        "device 'Acme Two': compute_tflops.fp8 has no source (add sources.fp8 or sources.compute)",
        "device 'Acme Two': bandwidth_gb_per_s 3.35 is outside 250-12000 GB/s",
        "device 'Acme Two': compute_tflops.fp32 6.7e+13 is outside 0.05-30000",
        "device 'Acme Two': compute_tflops.fp8 (500) is below compute_tflops.bf16 (989)",
        "device 'Acme Two': compute_tflops.fp16 (1979) differs from bf16 (989)",
        "device 'Acme Two': sparse_halved names 'fp4' but compute_tflops.fp4 is not given",
        "device 'Acme Two': sparse_halved is set but notes do not explain it",
        "system '4x-acme-one': an NxID id must be '2x-acme-one'",
        "system 'acme-rack': quoted.memory_gb 300 differs from 10 x 24 = 240",
        "system 'acme-rack': quoted totals have no source",
    ]
    for wanted in expected:
        assert any(problem.startswith(wanted) for problem in problems), (wanted, problems)
    # The good first row contributes nothing but its duplicate.
    assert not [p for p in problems if p.startswith("device 'acme-one'") and "already used" not in p]


def test_lint_reports_schema_errors_and_bad_toml(tmp_path: Path) -> None:
    path = tmp_path / "hardware.toml"
    path.write_text(GOOD_DEVICE.replace('notes = ""', 'notes = ""\nbandwith_gb_per_s = 1'), encoding="utf-8")
    assert lint_hardware_catalog(path) == [
        "device 'acme-one': bandwith_gb_per_s: Extra inputs are not permitted"
    ]
    path.write_text("[[device]\n", encoding="utf-8")
    (problem,) = lint_hardware_catalog(path)
    assert "is not valid TOML" in problem


def test_loader_accepts_a_path_and_rejects_broken_files(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text(GOOD_DEVICE, encoding="utf-8")
    catalog = load_hardware_catalog_file(good)
    assert catalog.ids() == ["acme-one"]
    assert get_hardware("2x-acme-one", catalog).memory_gb == 48
    assert get_hardware("one", catalog).id == "acme-one"  # vendor-free alias
    assert lint_hardware_catalog(good) == []

    broken = tmp_path / "broken.toml"
    broken.write_text(BROKEN, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_hardware_catalog_file(broken)
    assert "already used" in caught.value.problem and "is not a slug" in caught.value.problem

    extra = tmp_path / "extra.toml"
    extra.write_text(GOOD_DEVICE.replace('notes = ""', 'notes = ""\ncolour = "red"'), encoding="utf-8")
    with pytest.raises(InputError, match=r"device 'acme-one'\.colour: Extra inputs are not permitted"):
        load_hardware_catalog_file(extra)


# ------------------------------------------------------------------------------------------------
# Machines people own (issue 11): Apple variants, consumer cards, capacity bytes, FP16 accumulate
# ------------------------------------------------------------------------------------------------

#: Every Apple M1-M4 chip with each GPU-core variant it shipped with (binned ones included).
APPLE_VARIANTS = {
    ("M1", 7),
    ("M1", 8),
    ("M1 Pro", 14),
    ("M1 Pro", 16),
    ("M1 Max", 24),
    ("M1 Max", 32),
    ("M1 Ultra", 48),
    ("M1 Ultra", 64),
    ("M2", 8),
    ("M2", 10),
    ("M2 Pro", 16),
    ("M2 Pro", 19),
    ("M2 Max", 30),
    ("M2 Max", 38),
    ("M2 Ultra", 60),
    ("M2 Ultra", 76),
    ("M3", 8),
    ("M3", 10),
    ("M3 Pro", 14),
    ("M3 Pro", 18),
    ("M3 Max", 30),
    ("M3 Max", 40),
    ("M3 Ultra", 60),
    ("M3 Ultra", 80),
    ("M4", 8),
    ("M4", 10),
    ("M4 Pro", 16),
    ("M4 Pro", 20),
    ("M4 Max", 32),
    ("M4 Max", 40),
}


#: Rows from the shared TSV whose names do not spell the GPU (their notes do).
_UNNAMED_GPU = {"apple-m1-max-32gb": ("M1 Max", 32), "apple-m4-pro-24gb": ("M4 Pro", 16)}


def _apple_variant(entry: CatalogHardware) -> tuple[str, int] | None:
    chip = re.match(r"Apple (M\d(?: Pro| Max| Ultra)?)\b", entry.name)
    cores = re.search(r"(\d+)-core GPU", entry.name)
    if chip is None or cores is None:
        return _UNNAMED_GPU.get(entry.id)
    return chip.group(1), int(cores.group(1))


def test_every_apple_chip_and_gpu_variant_has_a_row() -> None:
    found = {_apple_variant(e) for e in DEVICES if e.vendor == "Apple"}
    assert found >= APPLE_VARIANTS, sorted(APPLE_VARIANTS - found)


@pytest.mark.parametrize(
    ("row", "cores", "full_cores", "full_rate"),
    [
        ("apple-m1-7c-8gb", 7, 8, 2.6),
        ("apple-m1-pro-14c-16gb", 14, 16, 5.2),
        ("apple-m1-max-24c-32gb", 24, 32, 10.4),
        ("apple-m2-pro-16c-16gb", 16, 19, 6.8),
        ("apple-m2-max-30c-32gb", 30, 38, 13.49),
        ("apple-m2-ultra-60c-64gb", 60, 76, 27.2),
        ("apple-m3-pro-14c-18gb", 14, 18, 7.4),
        ("apple-m4-8c-16gb", 8, 10, 4.6),
    ],
)
def test_binned_apple_variants_scale_the_full_gpu_by_cores(
    row: str, cores: int, full_cores: int, full_rate: float
) -> None:
    entry = get_hardware(row)
    assert entry.compute_tflops["fp32"] == pytest.approx(full_rate * cores / full_cores, abs=0.001)
    assert entry.derived == ("fp32",)
    assert "x 2^30 bytes" in entry.notes


def test_an_unsourced_reported_capacity_falls_back_to_the_label_and_says_so() -> None:
    # The B200's 183359 MiB was seen only in excerpts without a citable repository path: the row keeps its label
    # and its note says the label understates what the device reports.
    b200 = get_hardware("nvidia-b200")
    assert b200.memory_gb == 180 and b200.memory_label_gb is None
    assert "UNDERSTATES" in b200.notes and "183359" in b200.notes


@pytest.mark.parametrize(
    ("row", "mib"),
    [("nvidia-rtx-pro-6000-blackwell", 97887), ("nvidia-a40", 46068), ("nvidia-rtx-3070", 8192)],
)
def test_audited_capacities_are_the_mib_a_read_source_shows(row: str, mib: int) -> None:
    entry = get_hardware(row)
    assert entry.memory_gb == round(mib * 2**20 / 1e9, 3)
    assert str(mib) in entry.sources["memory_gb"]


def test_rows_without_a_readable_rate_stay_without_one() -> None:
    # Arc A770 XMX peaks: no readable source and no figure to derive them from, so no number (never a
    # guess). Jetson AGX Orin's FP16/BF16 have no readable source either, but its sparse INT8 figure
    # gives them by Ampere's ratio: derived, and marked so.
    rates = get_hardware("intel-arc-a770-16gb").compute_tflops
    assert not {"int8", "fp16", "bf16"} & set(rates), rates
    orin = get_hardware("nvidia-jetson-agx-orin-64gb")
    assert set(orin.derived) == {"fp16", "bf16"}


def test_the_cards_benchmark_threads_use_are_in_the_catalog() -> None:
    wanted = {
        "nvidia-rtx-2080-ti",
        "nvidia-rtx-3060-ti",
        "nvidia-rtx-3070",
        "nvidia-rtx-3080-ti",
        "nvidia-rtx-4060-ti-16gb",
        "nvidia-rtx-4070-ti-super",
        "nvidia-rtx-5070-ti",
        "amd-radeon-rx-7800-xt",
        "amd-radeon-rx-7600-xt",
        "amd-radeon-rx-6900-xt",
        "amd-radeon-vii",
        "intel-arc-a770-16gb",
        "intel-arc-b580",
    }
    assert wanted <= {e.id for e in DEVICES}


@pytest.mark.parametrize(
    ("row", "label_gb"),
    [
        ("nvidia-rtx-4080", 16),  # the example: a "16 GB" card holds about 17.18e9 bytes
        ("nvidia-rtx-3090", 24),
        ("nvidia-rtx-3070", 8),
        ("amd-radeon-rx-7800-xt", 16),
        ("apple-m4-max-128gb", 128),
        ("nvidia-h200-sxm", 141),
        ("nvidia-b300", 288),
    ],
)
def test_capacity_is_the_bytes_the_device_reports_not_the_label(row: str, label_gb: int) -> None:
    entry = get_hardware(row)
    assert entry.memory_label_gb == label_gb  # the marketed figure is kept beside the bytes
    # Never below the label (a ceiling must not understate capacity); GDDR/LPDDR within 0.2% of GiB.
    assert entry.memory_gb > label_gb
    if "HBM" not in entry.memory_type:
        assert entry.memory_gb == pytest.approx(label_gb * 2**30 / 1e9, rel=0.002)
    assert "2^30" in entry.sources["memory_gb"] or "MiB" in entry.sources["memory_gb"]


@pytest.mark.parametrize(
    "row",
    [
        e.id
        for e in DEVICES
        if e.vendor == "NVIDIA" and e.device_class == "consumer GPU" and "fp16" in e.compute_tflops
    ],
)
def test_geforce_rows_carry_both_accumulate_modes(row: str) -> None:
    rates = get_hardware(row).compute_tflops
    # GeForce: FP16 tensor math with FP16 accumulate at twice the FP32-accumulate rate.
    assert rates["fp16_acc16"] == pytest.approx(2 * rates["fp16"], rel=0.002)


def test_fp16_accumulate_is_a_mode_of_its_own() -> None:
    assert "fp16_acc16" in ARITHMETIC_MODES
    a100 = get_hardware("nvidia-a100-80gb-sxm").hardware
    assert a100.compute_rate("fp16_acc16") == a100.compute_rate("fp16")  # datacenter: one rate
    spark = get_hardware("nvidia-dgx-spark").hardware
    assert spark.compute_rate("fp16_acc16") is None  # never borrowed from another mode


def test_lint_checks_the_fp16_accumulate_rate(tmp_path: Path) -> None:
    problems = lint_edited(tmp_path, "fp16_acc16 = 330.3", "fp16_acc16 = 1321.2")
    assert any("nvidia-rtx-4090" in p and "more than twice fp16" in p for p in problems)


def test_mi50_32gb_is_the_16gb_die_with_twice_the_memory() -> None:
    small, large = get_hardware("amd-mi50-16gb"), get_hardware("mi50-32gb")
    assert (large.id, large.memory_gb, small.memory_gb) == ("amd-mi50-32gb", 32, 16)
    assert large.bandwidth_gb_per_s == small.bandwidth_gb_per_s == 1024
    assert large.compute_tflops == small.compute_tflops == {"fp16": 26.5, "fp32": 13.3}
    assert "16 or 32 GB" in (large.source_for("memory_gb") or "")


def test_lint_asks_for_derived_dense_rates_beside_only_fp4_figures(tmp_path: Path) -> None:
    text = CATALOG_TOML.read_text("utf-8")
    start = text.index('id = "nvidia-jetson-agx-thor"')
    end = text.index("[[device]]", start)
    block = text[start:end]
    cut = block.replace("bf16 = 258.75\nfp16 = 258.75\n", "").replace('    "bf16",\n    "fp16",\n', "")
    cut = (
        cut.split("[device.derived_from]")[0]
        + '[device.derived_from]\nint8 = { of = "fp4", ratio = 0.5, rule = "r" }\n\n'
    )
    path = tmp_path / "hardware.toml"
    path.write_text(text[:start] + cut + text[end:], "utf-8")
    problems = lint_hardware_catalog(path)
    assert any("nvidia-jetson-agx-thor" in p and "derive dense bf16/fp16" in p for p in problems), problems
