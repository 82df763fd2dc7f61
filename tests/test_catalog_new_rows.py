"""The rows added for issue 21, each against the spec sheet its sources quote.

Spec figures (dense unless marked):
- NVIDIA L40 (NVIDIA's L40/L40S table): 48 GB GDDR6 ECC, 864 GB/s, FP32 90.5, BF16/FP16 181.05
  (362.1 sparse), FP8 and INT8 362 (724 sparse), 300 W.
- RTX 4090 D (hmc-tech.com): 114 SMs at 2520 MHz, 1008 GB/s, FP32 73.54, FP16 147.09 with FP32
  accumulate and 294.18 with FP16 accumulate, FP8 294.18 with FP32 accumulate, INT8 588.35.
- RTX 3090 Ti (a spec table): 84 SMs at 1860 MHz, 24 GB, 1008 GB/s, FP32 40.0; tensor rates derived
  from the GA10x per-SM rates.
- AMD Instinct (AMD's table via AnandTech): MI210 FP16/INT8 181, FP32 22.6, 1.6 TB/s, 64 GB; MI100
  FP16/INT8 184.6, BF16 92.3, FP32 23.1, 1.23 TB/s, 32 GB; MI50 FP16 26.5, FP32 13.3, 1.02 TB/s, 16 GB.
- RX 9070 XT (AMD via multiplayer.it, purepc.pl): 64 CUs at 2970 MHz, FP32 48.7, 16 GB at 640 GB/s.
- Radeon PRO W7900 (itcreations.com; HF's table): 48 GB GDDR6, 864 GB/s, FP16 122.6.
- RTX PRO 6000 Blackwell Max-Q (topcpu.net: the three editions share 96 GB GDDR7 at 1792 GB/s; NVIDIA's
  Max-Q datasheet: 3511 AI TOPS, FP4 with sparsity, so 1755.5 dense; 110 TFLOPS FP32; 300 W).
- RTX PRO 6000 Blackwell Server Edition (aiconfigurator's system file): 97887 MiB, 1.792 TB/s, 2430 MHz
  max SM clock, BF16 467.8, FP8/INT8 935.6, FP4 1871.2; eight per node on PCIe Gen5 x16 (64 GB/s).
"""

from __future__ import annotations

import pytest

from servebound.catalog.hardware import get_hardware

#: id -> (memory_gb, bandwidth_gb_per_s, {mode: TFLOPS}) as the spec sheets state them.
SPEC_SHEETS: dict[str, tuple[float, float, dict[str, float]]] = {
    "nvidia-l40": (48, 864, {"fp8": 362, "int8": 362, "bf16": 181.05, "fp16": 181.05, "fp32": 90.5}),
    "nvidia-rtx-4090-d": (
        24 * 2**30 / 1e9,
        1008,
        {"fp8": 294.18, "int8": 588.35, "bf16": 147.09, "fp16_acc16": 294.18, "fp32": 73.54},
    ),
    "nvidia-rtx-3090-ti": (24 * 2**30 / 1e9, 1008, {"fp32": 40.0}),
    "amd-mi210": (64, 3.2 * 4096 / 8, {"fp16": 181, "int8": 181, "fp32": 22.6}),
    "amd-mi100": (32, 2.4 * 4096 / 8, {"fp16": 184.6, "int8": 184.6, "bf16": 92.3, "fp32": 23.1}),
    "amd-mi50-16gb": (16, 2.0 * 4096 / 8, {"fp16": 26.5, "fp32": 13.3}),
    "amd-radeon-rx-9070-xt": (16 * 2**30 / 1e9, 20 * 256 / 8, {"fp16": 97.32, "fp32": 48.7}),
    "amd-radeon-pro-w7900": (48 * 2**30 / 1e9, 864, {"fp16": 122.6}),
    "nvidia-rtx-pro-6000-blackwell-server": (
        97887 * 2**20 / 1e9,
        1792,
        {"fp4": 1871.2, "fp8": 935.6, "int8": 935.6, "bf16": 467.8},
    ),
    "nvidia-rtx-pro-6000-blackwell-max-q": (97887 * 2**20 / 1e9, 1792, {"fp4": 3511 / 2, "fp32": 110}),
}


@pytest.mark.parametrize("row", sorted(SPEC_SHEETS))
def test_new_row_is_its_spec_sheet(row: str) -> None:
    memory, bandwidth, rates = SPEC_SHEETS[row]
    entry = get_hardware(row)
    assert entry.memory_gb == pytest.approx(memory, abs=0.001)
    assert entry.bandwidth_gb_per_s == pytest.approx(bandwidth)
    for mode, rate in rates.items():
        assert entry.compute_tflops[mode] == pytest.approx(rate, abs=0.06), mode
    for key in ("memory_gb", "bandwidth_gb_per_s", *entry.compute_tflops):
        assert entry.source_for(key), key
    assert "issue 21" in entry.notes


def test_derived_rates_are_sms_times_clock_times_the_per_sm_rate() -> None:
    ti = get_hardware("nvidia-rtx-3090-ti").compute_tflops
    sm_clock = 84 * 1.86e9 / 1e12
    assert ti["int8"] == pytest.approx(sm_clock * 2048, abs=0.05)
    assert ti["bf16"] == ti["fp16"] == pytest.approx(sm_clock * 512, abs=0.01)
    assert ti["fp16_acc16"] == pytest.approx(sm_clock * 1024, abs=0.01)
    server = get_hardware("nvidia-rtx-pro-6000-blackwell-server")
    assert server.compute_tflops["fp32"] == pytest.approx(188 * 128 * 2 * 2.43e9 / 1e12, abs=0.01)
    assert {"fp4", "fp8", "bf16", "fp32"} <= set(server.derived)
    assert get_hardware("amd-radeon-pro-w7900").derived == ("fp32",)


def test_rates_no_source_states_stay_absent() -> None:
    # RDNA 4's AI TOPS are not pinned to dense by any stored source; the MI210's BF16 is not stated.
    assert set(get_hardware("amd-radeon-rx-9070-xt").compute_tflops) == {"fp16", "fp32"}
    assert "bf16" not in get_hardware("amd-mi210").compute_tflops
    assert "fp16_acc16" not in get_hardware("nvidia-l40").compute_tflops


def test_max_q_rates_are_its_own_datasheet_not_the_workstation_editions() -> None:
    """The 300 W card's rates come from its own datasheet (3511 AI TOPS, 110 TFLOPS FP32), below the 600 W
    Workstation Edition's 4000 and 125; its other tensor modes follow from FP4 by Blackwell's 4:2:1."""
    max_q = get_hardware("rtx-pro-6000-max-q")
    workstation = get_hardware("rtx-pro-6000")
    rates = max_q.compute_tflops
    assert rates["fp4"] < workstation.compute_tflops["fp4"]
    assert rates["fp32"] < workstation.compute_tflops["fp32"]
    assert rates["fp8"] == rates["int8"] == rates["fp4"] / 2
    assert rates["bf16"] == rates["fp16"] == rates["fp4"] / 4
    assert set(max_q.derived) == {"fp8", "int8", "bf16", "fp16"}
    assert max_q.sparse_halved == ("fp4",)
    assert "fp16_acc16" not in rates


def test_eight_server_editions_on_pcie() -> None:
    system = get_hardware("8x-nvidia-rtx-pro-6000-blackwell-server")
    assert system.system is not None and system.system.count == 8
    link = system.system.interconnect
    assert link is not None
    assert link.scale_up_devices == 8 and link.scale_up_bytes_per_s == 64e9
    assert system.bandwidth_gb_per_s == 8 * 1792
