"""Generate src/servebound/catalog/data/hardware.toml from the shared hardware.tsv.

    python scripts/tsv_to_hardware_toml.py [path/to/hardware.tsv] > src/servebound/catalog/data/hardware.toml

The TOML it writes is the source of truth at run time; this script records how it was made. It does
three things on top of a plain column copy:

* splits each row's ``sources`` cell (``mem/bw: ...; compute: ...; price: ...``) into one source per
  number (``sources.memory_gb``, ``sources.bandwidth_gb_per_s``, ``sources.compute`` or per mode,
  ``sources.price_usd``); an unlabelled cell backs every number of its row;
* adds the curation the TSV keeps in prose: which modes were halved from a sparse figure or derived
  by ratio, low-confidence flags, aliases, and notes from our own spot checks (``CURATION``);
* fills compute cells the TSV leaves empty with rates we looked up, each with its own source
  (``ADDED_COMPUTE``); a TSV value is never overridden;
* appends rows looked up for thin classes (``EXTRA_DEVICES``) and the multi-device systems
  (``SYSTEMS``), whose numbers the loader computes as N times the member device.

The default input path is the shared reference folder next to the repository root.
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path
from typing import Any

import tomli_w

MODES = ("fp4", "fp8", "int8", "bf16", "fp16", "fp16_acc16", "fp32")
MODE_COLUMNS = {
    "fp4": "fp4_tflops",
    "fp8": "fp8_tflops",
    "int8": "int8_tops",
    "bf16": "bf16_tflops",
    "fp16": "fp16_tflops",
    "fp32": "fp32_tflops",
}
SCALAR_KEYS = ("memory_gb", "bandwidth_gb_per_s", "price_usd")

#: Words that may appear in a source label, and the numbers they vouch for.
LABEL_WORDS: dict[str, tuple[str, ...]] = {
    "mem": ("memory_gb",),
    "bw": ("bandwidth_gb_per_s",),
    "bandwidth": ("bandwidth_gb_per_s",),
    "price": ("price_usd",),
    "compute": ("compute",),
    "ai tops": ("compute",),
    "sparse tensor": ("compute",),
    "fp32": ("fp32",),
    "fp4": ("fp4",),
    "int8": ("int8",),
    "bf16": ("bf16",),
    "fp16": ("fp16",),
    "other": (),
}

APPLE_NOTE = (
    "Apple publishes no dense BF16/FP16 GPU matrix rate, so bf16 and fp16 are absent; Neural Engine "
    "TOPS are not a substitute (LLM runtimes run on the GPU), nor is an estimate from GPU core counts."
)
ALL_TENSOR = ["fp8", "int8", "bf16", "fp16"]

#: Per-row curation: sparse_halved / derived modes, flags, aliases and notes added by our spot checks.
CURATION: dict[str, dict[str, Any]] = {
    "nvidia-b200": {
        "sparse_halved": ALL_TENSOR,
        "add_note": "Spot check: glennklockwood.com HGX B200 (1000 W) table gives dense FP4 9000, FP8 4500, "
        "BF16 2250 and FP32 80; docs.vultr.com lists 179 GB, 8.0 TB/s, FP8 ~4.5 PF, FP4 ~9 PF.",
    },
    "nvidia-b300": {"sparse_halved": ALL_TENSOR},
    "nvidia-gb200": {
        "sparse_halved": ["fp4", *ALL_TENSOR],
        "aliases": ["gb200-gpu"],
        "add_note": "Spot check: glennklockwood.com's GB200 (1200 W) table lists FP32 90 vector, against 80 "
        "here from the NVL72 rack FP32 5760 TF / 72.",
    },
    "nvidia-gb300": {},
    "nvidia-h200-sxm": {"sparse_halved": ALL_TENSOR, "aliases": ["h200"]},
    "nvidia-h100-sxm": {
        "sparse_halved": ALL_TENSOR,
        "aliases": ["h100"],
        "add_note": "Spot check: the datasheet copy (hpctech) gives 3,350 GB/s and marks the tensor figures "
        "'* with sparsity'; glennklockwood.com lists dense matrix BF16 989.4 and FP8 1978.9.",
    },
    "nvidia-h100-pcie": {"sparse_halved": ALL_TENSOR},
    "nvidia-h20": {},
    "nvidia-h20-141gb": {"low_confidence": True},
    "nvidia-a100-80gb-sxm": {"aliases": ["a100"]},
    "nvidia-a100-40gb-sxm": {},
    "nvidia-l40s": {
        "add_note": "Spot check: NVIDIA's L40/L40S table (via mullet.se) lists FP8 733 | 1,466* and BF16 "
        "362.05 | 733* (dense | sparse), 864 GB/s.",
    },
    "nvidia-l4": {"sparse_halved": ALL_TENSOR},
    "nvidia-rtx-pro-6000-blackwell": {
        "sparse_halved": ["fp4"],
        "derived": ALL_TENSOR,
        "aliases": ["rtx-pro-6000"],
    },
    "nvidia-rtx-6000-ada": {
        "sparse_halved": ["fp8"],
        "derived": ["int8", "bf16", "fp16"],
        "note_drop": ["Tensor (FP8/BF16/INT8) peaks not captured in stored sources, so left empty."],
        "add_note": "Tensor rates added from NVIDIA's datasheet (copy quoted in atineoSE/coding-model-seeks-gpu): "
        "'Tensor performance 1457.0 TFLOPS', footnoted as effective FP8 TFLOPS with sparsity, halved to 728.5 "
        "dense FP8 (matches the ~728 estimate above). BF16/FP16 = FP8 / 2 = 364.2 and INT8 = FP8 = 728.5 are "
        "DERIVED by Ada's ratios (as on the 4090: INT8 660.6 = FP8 660.6 = 4 x FP32-accumulate FP16 165.2; "
        "as a pro card the FP32-accumulate rate is not halved, cf. L40S 733 / 362); VladislavDuma/gpu_specs "
        "lists RTX 6000 Ada BF16/FP16 364 / 728*, FP8 728 / 1457*, INT8 728 / 1457* (dense / sparse), "
        "agreeing.",
    },
    "nvidia-rtx-5090": {
        "sparse_halved": ["fp4", "fp8"],
        "aliases": ["5090"],
        "add_note": "Spot check: Linux Format (Jarred Walton) lists 32 GB, 28 Gb/s x 512-bit, 1,792 GB/s.",
    },
    "nvidia-rtx-5080": {
        "sparse_halved": ["fp4"],
        "derived": ["fp8", "int8", "bf16", "fp16"],
        "aliases": ["5080"],
        "note_drop": ["INT8 not sourced."],
        "add_note": "INT8 added as 450.2, DERIVED as equal to the FP8 rate, the RTX 5090's relation (INT8 838 "
        "= FP8 838.4 dense; VladislavDuma/gpu_specs lists 5090 FP8 838 / 1676* and INT8 838 / 1676*); no "
        "stored source quotes the 5080's INT8.",
    },
    "nvidia-rtx-4090": {
        "aliases": ["4090"],
        "add_note": "Spot check: waredb.com labels 330.3 as dense FP8 and 660.6 as sparse, i.e. the "
        "FP32-accumulate column; gigagpu.com gives 660.6 dense (FP16 accumulate), as here. Accumulate "
        "convention (the reference README's GeForce rule, applied to every GeForce row): fp8 holds the "
        "published dense FP8 rate, which is the FP16-accumulate one (660.6; FP32 accumulate 330.3), while "
        "bf16/fp16 hold the FP32-accumulate rate (165.2; FP16 accumulate 330.3) that BF16/FP16 GEMMs get. So "
        "fp8 = 4 x bf16 here, not 2 x: an FP8 GEMM that accumulates in FP32 (cuBLASLt, vLLM's CUTLASS "
        "kernels) tops out at 330.3, half the fp8 entry. INT8 660.6 is the dense INT8 rate with INT32 "
        "accumulate, not halved on GeForce.",
    },
    "nvidia-rtx-4080": {
        "sparse_halved": ["fp8"],
        "derived": ["int8"],
        "aliases": ["4080"],
        "note_drop": ["INT8 not sourced (Ada ratio would give = FP8)."],
        "add_note": "INT8 added as 389.9, DERIVED as equal to the dense FP8 (FP16-accumulate) rate, the Ada "
        "relation the RTX 4090 sources show (waredb.com: INT8 660.6 / 1321.2, FP8 660.6 / 1321.2 with FP16 "
        "accumulate; NVIDIA's L40S table: FP8 733, INT8 733); Tom's Hardware's table (via holynerdvana.com) "
        "gives the 4080's FP8 as 780 with sparsity. Accumulate convention as on the RTX 4090: fp8 is the "
        "FP16-accumulate rate, bf16/fp16 the FP32-accumulate one.",
    },
    "nvidia-rtx-3090": {"derived": ["int8"], "aliases": ["3090"]},
    "nvidia-rtx-3060-12gb": {
        "derived": ["int8", "bf16", "fp16"],
        "aliases": ["3060"],
        "note_drop": ["; tensor cells left empty (one blog claims ~65 FP16 tensor TFLOPS, unverified)"],
        "add_note": "Tensor rates added: hmc-tech.com lists the RTX 3060's peak AI performance as 407.6 TOPS "
        "INT4 with sparsity. With GA10x's ratios (the GA102 whitepaper's RTX 3090: INT4 = 2 x INT8 = 4 x FP16 "
        "with FP16 accumulate = 8 x FP16 with FP32 accumulate; sparsity doubles each), INT8 dense = 407.6 / 4 "
        "= 101.9 TOPS and BF16/FP16 with FP32 accumulate (the GeForce convention) = 407.6 / 16 = 25.47 "
        "TFLOPS, both DERIVED; a spec table in stillwater-sc/KPU-Simulator lists the 3060 at 102 INT8 TOPS "
        "(and the 3090 at 285, its whitepaper dense INT8), agreeing. Same figures from 28 SMs x 1777 MHz: "
        "x 2048 INT8 ops/clk = 101.9, x 512 FP32-accumulate FLOP/clk = 25.47. The ~65 TFLOPS blog figure "
        "matches neither and is not used. No FP8 on Ampere.",
    },
    "nvidia-dgx-spark": {
        "sparse_halved": ["fp4"],
        "aliases": ["spark", "gb10"],
        "add_note": "Spot check: meterpreter.org's Hot Chips coverage quotes LPDDR5x at 9400 MT/s and "
        "'273-301 GB/s'; NVIDIA's spec and dgx-spark.warehack.ing give 273 GB/s, used here. BF16/FP16 are "
        "not published, so absent: the derivation's prefill example assumes 125 dense BF16 (FP4 / 4), "
        "which is below the ~213 measured and so cannot stand as a peak. Re-checked: aiconfigurator's "
        "gb10.yaml (citing nvidia.com's DGX Spark page and docs.nvidia.com's hardware guide) still says "
        "'NVIDIA publishes only FP4 sparse', and marks its FP16/FP8/INT8 figures (~213/214/214) as "
        "empirical mmapeak measurements. Measured throughput is a floor on the peak, not the peak, so "
        "fp8, int8, bf16 and fp16 stay absent; a run charged at one of them gets no compute ceiling.",
    },
    "nvidia-jetson-agx-thor": {"sparse_halved": ["fp4", "fp8"], "aliases": ["jetson-thor"]},
    "amd-mi355x": {},
    "amd-mi350x": {"sparse_halved": ["fp4"], "derived": ALL_TENSOR},
    "amd-mi325x": {},
    "amd-mi300x": {
        "add_note": "Spot check: aiwiki.ai and jaredwatkins.com give 192 GB HBM3 at 5.3 TB/s, ~1.3 PF FP16 "
        "and ~2.6 PF FP8.",
    },
    "amd-ryzen-ai-max-plus-395-128gb": {
        "derived": ["fp32"],
        "aliases": ["strix-halo", "ryzen-ai-max-395"],
        "note_drop": ["Compute left empty: "],
        "add_note": "FP32 added as 29.7, DERIVED under the RDNA3 dual-issue convention of the Radeon rows "
        "(7900 XTX 61.4): 40 CUs x 64 lanes x 2 (dual issue) x 2 (FMA) x 2.9 GHz (techpowerup's 40 CU, "
        "2.9 GHz) = 29.7, the figure HF hardware-amd.ts gives for the chip; fpsbench.com lists 14.85 FP32 "
        "(single issue) and 29.70 FP16 for the Radeon 8060S. AMD publishes no GPU TFLOPS for it: its "
        "figures are the NPU's 50 TOPS and a 126 'total TOPS' summed over CPU, GPU and NPU (svethardware.cz "
        "coverage), and neither is a GPU rate: the NPU is a separate engine that LLM runtimes on this chip "
        "do not use for the GPU path, and the total is a marketing sum. A WMMA FP16 rate of 40 x 512 x 2.9 "
        "GHz = 59.4 (a Chinese blog quotes ~60) is not published by AMD and the sources disagree on FP16, "
        "so fp16, bf16 and int8 stay absent.",
    },
    "amd-radeon-rx-7900-xtx": {
        "aliases": ["7900-xtx"],
        "add_note": "Re-checked for BF16/INT8: RDNA3's WMMA instructions exist for FP16, BF16 and IU8 inputs "
        "at the same 16x16x16 shape (AMD GPUOpen's 'How to accelerate AI applications on RDNA 3 using "
        "WMMA'; the v_wmma_f32_16x16x16_bf16 and _iu8 intrinsics in ROCm composable_kernel), and llama.cpp's "
        "RDNA3 WMMA port notes INT8 support, but no stored AMD page states a BF16 or INT8 peak rate for the "
        "7900 XTX, so bf16 and int8 stay absent rather than copied from FP16. No FP8 on RDNA3.",
    },
    "amd-radeon-ai-pro-r9700": {"aliases": ["r9700"], "low_confidence": True},
    "apple-m3-max-96gb": {
        "low_confidence": True,
        "add_note": "FP32 left absent: this configuration has the binned 30-core GPU, and HF's 14.2 is the "
        "40-core figure; Apple publishes no FP32 rate for the binned part.",
    },
    "apple-m3-max-36gb": {
        "add_note": "FP32 left absent: this configuration has the binned 30-core GPU, and HF's 14.2 is the "
        "40-core figure; Apple publishes no FP32 rate for the binned part.",
    },
    "apple-m4-16gb": {
        "add_note": "FP32 4.6 added: the Mac mini base M4 has the same 10-core GPU as the 32GB row, and HF's "
        "'Apple M4' entry gives 4.6 TFLOPS for memory options 16, 24 and 32 GB alike (memory size does not "
        "change the GPU).",
    },
    "apple-m1-max-32gb": {
        "add_note": "FP32 10.4 added (HF's 'Apple M1 Max' entry, memory options 16-64 GB): it is the 32-core "
        "GPU's rate, as on the 64GB row; the 32GB M1 Max was also sold with the 24-core GPU, whose rate is "
        "lower (not published), so for that variant 10.4 is an upper bound.",
    },
    "apple-m2-ultra-64gb": {
        "add_note": "FP32 27.2 added (HF's 'Apple M2 Ultra' entry, memory options 64-192 GB): it is the "
        "76-core GPU's rate, as on the 192GB row; the 64GB M2 Ultra also came with the 60-core GPU, whose "
        "rate is lower (not published), so for that variant 27.2 is an upper bound.",
    },
    "apple-m3-ultra-256gb": {
        "add_note": "FP32 28.4 added (HF's 'Apple M3 Ultra' entry): it is the 80-core GPU's rate, as on the "
        "512GB row; 256GB is also sold with the 60-core GPU, whose rate is lower (not published), so for "
        "that variant 28.4 is an upper bound.",
    },
    "apple-m3-ultra-96gb": {
        "add_note": "FP32 left absent: 96GB comes only with the 60-core GPU, and HF's 28.4 is the 80-core "
        "figure.",
    },
    "apple-m4-pro-24gb": {
        "add_note": "FP32 left absent: the Mac mini base M4 Pro has the 16-core GPU, and HF's 9.2 is the "
        "20-core figure.",
    },
    "apple-m4-max-36gb": {
        "add_note": "FP32 left absent: 36GB comes only with the binned 32-core GPU, and HF's 18.4 is the "
        "40-core figure.",
    },
    "apple-m5-max-128gb": {
        "add_note": "Spot check: awesomeagents.ai and cputronic.com give 614 GB/s and up to 128 GB for the "
        "40-core GPU.",
    },
    "apple-m5-max-36gb": {
        "low_confidence": True,
        "add_note": "FP32 left absent: 36GB comes with the binned 32-core GPU, and HF's 22.8 is the 40-core "
        "figure.",
    },
    "intel-arc-b580": {"aliases": ["b580"]},
    "intel-gaudi-3": {"aliases": ["gaudi3"]},
    "google-tpu-v5e": {},
    "google-tpu-v6e": {"aliases": ["trillium"]},
    "google-tpu7x-ironwood": {"aliases": ["ironwood", "tpu-v7"], "low_confidence": True},
}

HMC_3060 = (
    "https://hmc-tech.com/gpu/nvidia-geforce-rtx-4060-vs-nvidia-geforce-rtx-3060 (RTX 3060: peak AI "
    "performance 407.6 TOPS INT4 Tensor Sparse)"
)
KPU_30_SERIES = (
    "github:stillwater-sc/KPU-Simulator docs/external-knowledge/rtx_30_series_specs_table.md (RTX 3060: "
    "INT8 102 TOPs; RTX 3090: 285)"
)
GPU_SPECS = "github:VladislavDuma/gpu_specs@103f341 README.md"
RTX_6000_ADA_DATASHEET = (
    "github:atineoSE/coding-model-seeks-gpu pipeline/pipeline/sources/rtx6000ada_specs.md (NVIDIA RTX 6000 "
    "Ada datasheet: 'Tensor performance 1457.0 TFLOPS', footnote 'Effective FP8 teraFLOPS (TFLOPS) using "
    "the new sparsity feature')"
)
HF_APPLE = "github:huggingface/huggingface.js@9a16ed5 packages/tasks/src/hardware-apple.ts"

#: Compute rates the TSV leaves empty, looked up by us: row id -> mode -> (value, source). The notes that
#: explain each (and sparse_halved / derived) live in CURATION; a value here never replaces a TSV value.
ADDED_COMPUTE: dict[str, dict[str, tuple[float, str]]] = {
    "nvidia-rtx-3060-12gb": {
        "int8": (101.9, f"{HMC_3060} / 4 (INT4 -> INT8, sparse -> dense); {KPU_30_SERIES}"),
        "bf16": (25.47, f"{HMC_3060} / 16 (GA10x ratios, FP32 accumulate); 28 SMs x 1777 MHz x 512"),
        "fp16": (25.47, f"{HMC_3060} / 16 (GA10x ratios, FP32 accumulate); 28 SMs x 1777 MHz x 512"),
    },
    "nvidia-rtx-4080": {
        "int8": (
            389.9,
            "= the row's dense FP8 389.9 (https://powergpu.com/nvidia-rtx-5080-vs-rtx-4080: 780 AI TOPS = "
            "FP8 sparse, halved); Ada INT8 = FP8 per https://waredb.com/processor/nvidia-geforce-rtx-4090 "
            "(INT8 660.6/1321.2, FP8 660.6/1321.2)",
        ),
    },
    "nvidia-rtx-5080": {
        "int8": (
            450.2,
            "= the row's derived dense FP8 450.2; RTX 5090 INT8 = FP8 per "
            f"https://analysis.castromedia.org/analysis/compute/entities/rtx-5090.html (838) and {GPU_SPECS} "
            "(5090 FP8 838 / 1676*, INT8 838 / 1676*)",
        ),
    },
    "nvidia-rtx-6000-ada": {
        "fp8": (728.5, f"{RTX_6000_ADA_DATASHEET} / 2; {GPU_SPECS} (RTX 6000 Ada FP8 728 / 1457*)"),
        "int8": (728.5, f"= FP8 (Ada ratio); {GPU_SPECS} (RTX 6000 Ada INT8 728 / 1457*)"),
        "bf16": (364.2, f"{RTX_6000_ADA_DATASHEET} / 4; {GPU_SPECS} (RTX 6000 Ada BF16 364 / 728*)"),
        "fp16": (364.2, f"{RTX_6000_ADA_DATASHEET} / 4; {GPU_SPECS} (RTX 6000 Ada FP16 364 / 728*)"),
    },
    "amd-ryzen-ai-max-plus-395-128gb": {
        "fp32": (
            29.7,
            "github:huggingface/huggingface.js@fe42e68 packages/tasks/src/hardware*.ts (29.7 TFLOPS); "
            "https://techpowerup.com/330548/amd-debuts-ryzen-ai-max-series-strix-halo-soc-up-to-16-zen-5-cores-"
            "massive-igpu (40 CU RDNA 3.5, up to 2.9 GHz): 40 x 64 x 2 x 2 x 2.9 GHz",
        ),
    },
    "apple-m4-16gb": {"fp32": (4.6, f"{HF_APPLE} ('Apple M4': tflops 4.6, memory [16, 24, 32])")},
    "apple-m1-max-32gb": {
        "fp32": (10.4, f"{HF_APPLE} ('Apple M1 Max': tflops 10.4, memory [16, 24, 32, 64])")
    },
    "apple-m2-ultra-64gb": {
        "fp32": (27.2, f"{HF_APPLE} ('Apple M2 Ultra': tflops 27.2, memory [64, 96, 128, 192])")
    },
    "apple-m3-ultra-256gb": {
        "fp32": (28.4, f"{HF_APPLE} ('Apple M3 Ultra': tflops 28.4, memory [96, 256, 512])")
    },
}

#: Source cells that name a page only by a short handle earlier in the row: spelled out in full.
SOURCE_FIXES: dict[tuple[str, str], tuple[str, str]] = {
    ("nvidia-rtx-5090", "price_usd"): (
        "codesota ($1,999 MSRP)",
        "https://www.codesota.com/hardware/rtx-5090 ($1,999 MSRP)",
    ),
    ("nvidia-b300", "fp32"): (
        "Glenn Klockwood (HGX)",
        "https://glennklockwood.com/garden/processors/B300 (HGX B300 FP32 / 8)",
    ),
}

A6000_SPECS = "https://sysrqmts.com/es/gpus/compare/nvidia-rtx-a6000-vs-nvidia-tesla-p40"
A6000_TENSOR = (
    "https://llmperf.net/categories/gpu/Nvidia-A6000-GPUs (citing Microway's Ampere comparison: FP16/BF16 "
    "154.8 TFLOPS dense, ~309.7 with structured sparsity; INT8 309.7 TOPS; INT4 619.3 TOPS); "
    "github:cli99/llm-analysis@b60b392 llm_analysis/gpu_configs/a6000-48gb.json (peak_fp16_TFLOPS 154.8, "
    "peak_i8_TFLOPS 309.6)"
)

#: Rows we looked up ourselves for classes the TSV leaves thin.
EXTRA_DEVICES: list[dict[str, Any]] = [
    {
        "id": "nvidia-rtx-a6000",
        "name": "NVIDIA RTX A6000 48GB",
        "vendor": "NVIDIA",
        "class": "workstation GPU",
        "year": 2020,
        "memory_gb": 48,
        "memory_type": "GDDR6 (ECC)",
        "bandwidth_gb_per_s": 768,
        "compute_tflops": {"int8": 309.7, "bf16": 154.8, "fp16": 154.8, "fp32": 38.7},
        "price_usd": 4649,
        "sources": {
            "memory_gb": "https://servethehome.com/nvidia-rtx-a6000-48gb-gpu-drops-quadro-designation "
            "(NVIDIA spec table: 48 GB GDDR6 with ECC, 384-bit, 768 GB/s)",
            "bandwidth_gb_per_s": "https://servethehome.com/nvidia-rtx-a6000-48gb-gpu-drops-quadro-"
            "designation (768 GB/s); "
            f"{A6000_SPECS} (16 Gbps x 384-bit = 768.0 GB/s)",
            "int8": A6000_TENSOR,
            "bf16": A6000_TENSOR,
            "fp16": A6000_TENSOR,
            "fp32": f"{A6000_SPECS} (FP32 38.71 TFLOPS)",
            "price_usd": f"{A6000_SPECS} (launch price 4,649 USD)",
        },
        "notes": "Extra row (not in hardware.tsv), looked up for the thin workstation class. Ampere GA102, "
        "84 SMs. Tensor peaks: NVIDIA's datasheet gives 'Tensor performance 309.7 TFLOPS' with sparsity; "
        "the dense FP16/BF16 rate is 154.8 (Microway's table via llmperf.net, and llm-analysis), with FP32 "
        "accumulate, not halved on this pro card (84 SMs x 1800 MHz x 1024 = 154.8); dense INT8 is 309.7 "
        "TOPS (llm-analysis: 309.6). No FP8 on Ampere. Price is the launch price.",
        "aliases": ["a6000"],
    },
    {
        "id": "apple-m5-pro-64gb",
        "name": "Apple M5 Pro (18-core CPU / 20-core GPU, 64GB)",
        "vendor": "Apple",
        "class": "unified-memory SoC",
        "year": 2026,
        "memory_gb": 64,
        "memory_type": "LPDDR5X unified",
        "bandwidth_gb_per_s": 307,
        "compute_tflops": {},
        "sources": {
            "memory_gb": "https://www.macrumors.com/2026/03/03/apple-unveils-macbook-pro-with-m5-pro-and-m5-max-"
            "chips-with-neural-accelerators/ (M5 Pro up to 64GB, 307GB/s); https://allyoucantech.com/?p=178375",
            "bandwidth_gb_per_s": "https://www.macrumors.com/2026/03/03/apple-unveils-macbook-pro-with-m5-pro-"
            "and-m5-max-chips-with-neural-accelerators/ (307GB/s); https://pepelac.news/en/posts/id30875-apple-"
            "m5-pro-and-m5-max-processors-unveiled-for-macbook-pro-laptops (up to 307 GB/s)",
        },
        "notes": "Extra row (not in hardware.tsv). Largest M5 Pro memory option. GPU Neural Accelerators: "
        "Apple gives only relative claims (>4x peak GPU AI compute vs M4 Pro), no absolute TFLOPS; FP32 "
        "not sourced. Price not captured.",
    },
]

# ==================================================================================================
# h11b: machines people own (issue 11, items 4 and 5). Every Apple M1-M4 chip and GPU-core variant,
# the consumer cards benchmark threads use, capacities as the device reports them, and the FP16
# accumulate mode. Merged into the tables above by merge_h11b() below; nothing above is edited.
# ==================================================================================================

HF_APPLE_FULL = f"{HF_APPLE} (full-GPU figures: M1 2.6, M1 Pro 5.2, M1 Max 10.4, M1 Ultra 21, M2 3.6, M2 Pro 6.8, M2 Max 13.49, M2 Ultra 27.2, M3 4.1, M3 Pro 7.4, M3 Max 14.2, M3 Ultra 28.4, M4 4.6, M4 Pro 9.2, M4 Max 18.4, M5 Max 22.8 TFLOPS)"
HMC_M3_MAX = (
    "https://hmc-tech.com/gpu/apple-8-core-m4-fl-vs-apple-30-core-m3-max (30-core M3 Max: 3840 shaders at "
    "1398 MHz, FP32 10.74 TFLOPS; read in the h11c audit) and https://hmc-tech.com/gpu/apple-32-core-m4-max-vs-"
    "apple-40-core-m3-max (40-core M3 Max: 5120 shaders at 1398 MHz, 14.32; 32-core M4 Max: 4096 shaders at 1678 "
    "MHz, 13.74; not opened in the h11c audit): one "
    "clock per die, so a binned GPU's rate is the full GPU's times its share of cores"
)
APPLE_MEMSIZE = (
    "Apple sells unified memory in binary units: macOS reports hw.memsize = N x 2^30 bytes for an 'N GB' "
    "Mac (for example 'hw.memsize: 137438953472' on 128 GB M3 Max, M4 Max and M5 Max machines and "
    "'hw.memsize: 8589934592' on an 8 GB M1, as printed by sysctl in public setup logs and test fixtures; h11c "
    "audit: both strings found by exact-string search of public repositories, no single repository path recorded)"
)
APPLE_NEWS = {
    "m1": "https://www.apple.com/newsroom/2020/11/apple-unleashes-m1/ (not opened in the h11c audit; 8-core GPU, up to 2.6 TFLOPS, unified "
    "memory up to 16GB); LPDDR4X-4266 on a 128-bit bus = 68.25 GB/s (AnandTech's M1 coverage, quoted in "
    "github:wenerme/wener notes/platform/apple/README.md and Apple-silicon lookup tables as 68.25; not opened in the "
    "h11c audit): the LPDDR4X peak, an upper bound; Apple publishes no M1 figure, and its M2's 100GB/s being '50 "
    "percent more than M1' (https://www.macrumors.com/2022/06/06/apple-announces-m2-chip-with-support-for-up-to-24gb-"
    "memory/, read) implies about 66.7",
    "m1-pro-max": "https://www.apple.com/gw/newsroom/2021/10/introducing-m1-pro-and-m1-max-the-most-powerful-chips-"
    "apple-has-ever-built (read in the h11c audit: M1 Pro up to 200GB/s and up to 32GB; M1 Max up to 400GB/s, "
    "up to 32-core GPU, up to 64GB); https://www.gizbot.com/computer/features/apple-m1-pro-apple-m1-max-explained-"
    "most-powerful-apple-silicon-077376.html (M1 Max sold with a 24-core and a 32-core GPU, 400GB/s); that the "
    "binned M1 Pro (14-core GPU) keeps the 200GB/s memory system is Apple's MacBook Pro (14-inch, 2021) tech "
    "specs (not opened in the h11c audit)",
    "m1-ultra": "https://www.apple.com/newsroom/2022/03/apple-unveils-m1-ultra-the-worlds-most-powerful-chip-for-a-"
    "personal-computer/ (up to 64-core GPU, 800GB/s, up to 128GB; Mac Studio 2022 sold with the 48-core GPU "
    "at 64GB, the same 800GB/s memory system; not opened in the h11c audit); https://www.notebookcheck.net/Apple-M1-"
    "Ultra-revealed-with-UltraFusion-architecture-a-20-core-CPU-and-up-to-a-64-core-GPU.607117.0.html (read: up to "
    "64-core GPU, 800 GB/s, 128 GB)",
    "m2": "https://www.apple.com/newsroom/2022/06/apple-unveils-m2-with-breakthrough-performance-and-capabilities/ "
    "(up to 10-core GPU, 100GB/s, up to 24GB; the 8-core-GPU M2 of the base MacBook Air shares the 100GB/s "
    "memory system; not opened in the h11c audit); https://www.macrumors.com/2022/06/06/apple-announces-m2-chip-with-"
    "support-for-up-to-24gb-memory/ (read: up to 10-core GPU, up to 24GB, 100GB/s); "
    "https://goodnewsapodcast.com/apples-m4-m4-pro-and-m4-max-compared-to-past-generations-and-to-each-other "
    "(Ars Technica's table, read in the h11c audit: M2 (high) 102.4GB/s, the exact LPDDR5 figure Apple rounds "
    "to 100; the row keeps Apple's 100, as the catalog's other Apple rows keep Apple's published figures, which "
    "puts this ceiling 2.4% low)",
    "m2-pro-max": "https://www.apple.com/newsroom/2023/01/apple-unveils-m2-pro-and-m2-max-next-generation-chips-for-"
    "next-level-workflows/ (M2 Pro: up to 19-core GPU, 200GB/s, up to 32GB; M2 Max: up to 38-core GPU, "
    "400GB/s, up to 96GB; the 16-core M2 Pro and 30-core M2 Max keep the same memory systems; not opened in the "
    "h11c audit); https://www.iphoneincanada.ca/mac/apple-unveils-m2-pro-and-m2-max-its-most-powerful-chips-yet/ "
    "(read: M2 Pro up to 19-core GPU, 200GB/s, up to 32GB; M2 Max up to 38-core GPU, 400GB/s, up to 96GB); "
    "https://www.macrumors.com/2023/10/31/apple-m3-pro-less-memory-bandwidth/ (read: the 30-core M2 Max had 400GB/s "
    "like the 38-core one); https://goodnewsapodcast.com/apples-m4-m4-pro-and-m4-max-compared-to-past-generations-"
    "and-to-each-other (Ars Technica's table, read: M2 Pro (high) 19 GPU cores, 204.8GB/s, which Apple rounds to "
    "200)",
    "m2-ultra": "https://www.apple.com/newsroom/2023/06/apple-introduces-m2-ultra/ (up to 76-core GPU, 800GB/s, up "
    "to 192GB; the 60-core configuration has the same memory system; not opened in the h11c audit); "
    "https://meterpreter.org/apple-unveils-m2-ultra-chip-134-billion-transistors-up-to-24-core-cpu76-core-gpu/ (read: "
    "60- or 76-core GPU, up to 192GB, up to 800GB/s)",
    "m3": "https://www.apple.com/newsroom/2023/10/apple-unveils-m3-m3-pro-and-m3-max-the-most-advanced-chips-for-a-"
    "personal-computer/ (M3: up to 10-core GPU, up to 24GB; M3 Pro: up to 18-core GPU, up to 36GB; M3 Max: "
    "up to 40-core GPU, 400GB/s, up to 128GB; not opened in the h11c audit); "
    "https://mactechnews.de/news/article/M3-Pro-und-M3-Max-Geringere-Speicherbandbreite-Aenderungen-bei-"
    "Performance-und-Grafik-Cores-183639.html (M3 100 GB/s, M3 Pro 150 GB/s for both GPU variants; not opened); "
    "https://goodnewsapodcast.com/apples-m4-m4-pro-and-m4-max-compared-to-past-generations-and-to-each-other "
    "(Ars Technica's table, read in the h11c audit: M3 Pro (high) 18 GPU cores, 153.6GB/s; M3 102.4GB/s; Apple "
    "rounds to 150 / 100, which the rows keep); https://www.macrumors.com/2023/10/31/apple-m3-pro-less-memory-"
    "bandwidth/ (read: Apple's specs give the M3 Pro 150GB/s; the 30-core M3 Max 300GB/s, the 40-core 400GB/s); "
    "https://gigazine.net/gsc_news/en/20231101-apple-m3-pro-memory-bandwidth (read: both M3 Pro GPU variants, 14 "
    "and 18 cores, at 150GB/s)",
    "m4": "https://goodnewsapodcast.com/apples-m4-m4-pro-and-m4-max-compared-to-past-generations-and-to-each-other "
    "(Ars Technica's table, read in the h11c audit: M4 (low) 8 GPU cores, 16/24GB, 120GB/s; M4 (high) 10 GPU "
    "cores, 120GB/s; M4 Pro (low) 16 and (high) 20 GPU cores, 24/48/64GB, 273GB/s)",
}
GDDR_GIB = (
    "GDDR devices and HBM stacks are built from binary-density DRAM (a '16 Gb' GDDR6/6X/7 device holds 2^34 "
    "bits = 2 GiB: Micron's 16Gb GDDR6 SGRAM brief, https://www.mouser.com/datasheet/2/671/Micron_08232024_"
    "gddr6_sgram_16gb_brief_1578719_348-3554756.pdf), so an 'N GB' card holds N x 2^30 bytes"
)
NVSMI = "nvidia-smi memory.total as the driver reports it"
#: h11c audit: captured nvidia-smi outputs (real serials/UUIDs) in one public repository, and NVIDIA's
#: aiconfigurator system files, opened and read for the capacities below.
GLS = "github:thamada/gls@e20f22d"
AIC = "github:ai-dynamo/aiconfigurator@095f58a aic-core/src/aiconfigurator_core/systems"
GIGAGPU_ADA = (
    "https://gigagpu.com/?p=34220 (RTX 4090 dense table: BF16/FP16 with FP32 accumulate 165.2, FP16 with FP16 "
    "accumulate 330.3, FP8 660.6, INT8 660.6 TOPS, FP32 82.6: per SM and clock an Ada GeForce does 512 FP16 FLOP "
    "with FP32 accumulate, 1024 with FP16 accumulate, 2048 FP8 and 2048 INT8)"
)
VLAD_SMI = f"{GPU_SPECS} (VRAM column in MiB as nvidia-smi reports it)"
TEKSPEK_30 = (
    "https://www.scan.co.uk/tekspek/gpu-graphics/nvidia-geforce-rtx-3060ti (spec table: RTX 3090 / 3080 / 3070 / "
    "3060 Ti / 2080 Ti: boost 1695 / 1710 / 1725 / 1665 / 1545 MHz, FP32 35,581 / 29,768 / 20,314 / 16,197 / "
    "13,448 GFLOPS, 24 / 10 / 8 / 8 / 11 GB, 936 / 760 / 448 / 448 / 616 GB/s)"
)
GA102_WP = (
    "GA10x GeForce SMs do 2048 dense INT8 OP/clk, 1024 FP16 tensor FLOP/clk with FP16 accumulate and 512 with FP32 "
    "accumulate: the catalog's RTX 3090 row (int8 284, fp16 71, fp16_acc16 142 at 82 SMs x 1695 MHz) and "
    f"{HMC_3060} (= 28 SMs x 1777 MHz x 2048 INT8 x 2 for INT4 x 2 for sparsity); NVIDIA's GA102 whitepaper "
    "Appendix A states the same per-SM rates (not opened in the h11c audit)"
)
ADA_WP = (
    f"{GIGAGPU_ADA}; NVIDIA's Ada whitepaper Appendix A gives the same RTX 4090 figures (not opened in the h11c "
    "audit)"
)
TURING_WP = (
    "https://www.scribd.com/presentation/728618207/Rtx-on-The-Nvidia-Turing-Gpu (NVIDIA's Turing presentation, "
    "read in the h11c audit: Turing tensor cores deliver 114 TFLOPS of FP16 and 228 TOPS of INT8 on the GeForce "
    "RTX 2080 Ti); http://forums1.anandtech.com/Show/Index/13282?all=False&cPage=5&page=6&slug=nvidia-turing-"
    "architecture-deep-dive (AnandTech: INT8 at twice the FP16 rate; FP16 mode without FP32 accumulator); the "
    "Turing whitepaper's Table 1 (Founders Edition 113.8 / 56.9 / 227.7, FP32 14.2) was not opened"
)
A100_WP = (
    "NVIDIA A100 whitepaper Table 1 (one FP16 tensor rate for FP16 and FP32 accumulate on A100 and V100; not "
    "opened in the h11c audit): fp16_acc16 equals the row's fp16, so it adds no headroom beyond the sourced fp16 "
    "(A100 312: github:astroC86/gpu-datasheet@01ede5f README.md, A100 datasheet row; "
    f"{AIC}/a100_sxm.yaml bfloat16_tc_flops 312 TFLOPS)"
)
H100_WP = (
    "NVIDIA H100 whitepaper (one FP16 tensor rate for FP16 and FP32 accumulate; not opened in the h11c audit): "
    f"equal to the row's dense fp16, so no headroom beyond it ({AIC}/h100_sxm.yaml bfloat16_tc_flops 989 TFLOPS, "
    "h100_pcie.yaml 756.5, h200_sxm.yaml 989)"
)
BLACKWELL_GEFORCE = (
    f"{GPU_SPECS} (RTX 5090 row, flagged there as preliminary: FP32 104.8, FP16 tensor 419 / 838*, FP8 and INT8 "
    "838 / 1676*, FP4 1676 / 3352*; its FP16 tensor column is the FP16-accumulate rate, as its RTX 4090 row's 330 "
    "is); https://pcpartdb.com/gpus/compare/nvidia-geforce-rtx-5090--vs--nvidia-geforce-rtx-4070-ti (RTX 5090: "
    "21,760 CUDA cores, boost 2,407 MHz, so 104.8 FP32 and 419 = 4 x FP32 at 170 SMs x 1024 FLOP/clk, Ada's "
    f"FP16-accumulate rate per SM, {GIGAGPU_ADA}); the RTX Blackwell whitepaper was not opened in the h11c audit"
)
NV_5070 = (
    "https://intopress.info/recherche/p/i/?a=normal&get=f_125&rid=67fc9c36be54b (a review's spec table, read in "
    "the h11c audit: RTX 5070 Ti 70 SMs, 8960 CUDA cores, boost 2452 MHz); "
    "github:CYBIRD-D/How-to-Choose-your-LLM-Model-for-translation@5237907 Nvidia_GPU_Specification.md (read: RTX "
    "5070 Ti 8960 CUDA cores, 16 GB, 896 GB/s); NVIDIA's RTX 5070 family page was not opened"
)
AMD_RDNA = (
    "RDNA convention of the 7900 XTX row: fp32 counts dual issue, fp16 is the WMMA/packed FP16 rate = 2 x fp32; "
    "no BF16/INT8 peak is stated by AMD for these cards, so those modes stay absent."
)


def apple(
    chip: str,
    gpu: int,
    full: int,
    mem: int,
    bw: float,
    full_tflops: float,
    news: str,
    year: int,
    mem_type: str,
    row_id: str | None = None,
) -> dict[str, Any]:
    """One Apple chip / GPU-core variant: capacity in bytes as macOS reports it, fp32 by core share."""
    slug = chip.lower().replace(" ", "-")
    tflops = round(full_tflops * gpu / full, 3)
    binned = gpu < full
    fp32_src = (
        HF_APPLE_FULL if not binned else f"{HF_APPLE_FULL} x {gpu}/{full} cores; cross-check {HMC_M3_MAX}"
    )
    note = (
        f"{chip} with the {gpu}-core GPU and {mem} GB (row added by h11b for the Apple variants benchmark "
        f"threads report). memory_gb = {mem} x 2^30 bytes, as macOS reports it; the label stays in the name. "
    )
    if binned:
        note += (
            f"FP32 {tflops:g} is DERIVED: the full {full}-core GPU's {full_tflops:g} (HF) x {gpu}/{full}; Apple "
            "publishes no rate for the binned part, but every variant of a die runs one GPU clock (hmc-tech "
            "lists the 30- and 40-core M3 Max both at 1398 MHz), so the rate scales with the cores."
        )
    else:
        note += f"FP32 {tflops:g} is the full {gpu}-core GPU's figure (HF hardware-apple.ts)."
    return {
        "id": row_id or f"apple-{slug}-{gpu}c-{mem}gb",
        "name": f"Apple {chip} ({gpu}-core GPU, {mem}GB)",
        "vendor": "Apple",
        "class": "unified-memory SoC",
        "year": year,
        "memory_gb": round(mem * 2**30 / 1e9, 3),
        "memory_label_gb": mem,
        "memory_type": mem_type,
        "bandwidth_gb_per_s": bw,
        "compute_tflops": {"fp32": tflops},
        "derived": ["fp32"] if binned else [],
        "sources": {
            "memory_gb": f"{APPLE_MEMSIZE}; {news}",
            "bandwidth_gb_per_s": news,
            "fp32": fp32_src,
        },
        "notes": note,
    }


H11B_APPLE: list[dict[str, Any]] = [
    apple("M1", 7, 8, 8, 68.25, 2.6, APPLE_NEWS["m1"], 2020, "LPDDR4X-4266 unified"),
    apple("M1", 8, 8, 16, 68.25, 2.6, APPLE_NEWS["m1"], 2020, "LPDDR4X-4266 unified"),
    apple("M1 Pro", 14, 16, 16, 200, 5.2, APPLE_NEWS["m1-pro-max"], 2021, "LPDDR5 unified"),
    apple("M1 Pro", 16, 16, 32, 200, 5.2, APPLE_NEWS["m1-pro-max"], 2021, "LPDDR5 unified"),
    apple("M1 Max", 24, 32, 32, 400, 10.4, APPLE_NEWS["m1-pro-max"], 2021, "LPDDR5 unified"),
    apple("M1 Ultra", 48, 64, 64, 800, 21, APPLE_NEWS["m1-ultra"], 2022, "LPDDR5 unified"),
    apple("M1 Ultra", 64, 64, 128, 800, 21, APPLE_NEWS["m1-ultra"], 2022, "LPDDR5 unified"),
    apple("M2", 8, 10, 8, 100, 3.6, APPLE_NEWS["m2"], 2022, "LPDDR5 unified"),
    apple("M2", 10, 10, 24, 100, 3.6, APPLE_NEWS["m2"], 2022, "LPDDR5 unified"),
    apple("M2 Pro", 16, 19, 16, 200, 6.8, APPLE_NEWS["m2-pro-max"], 2023, "LPDDR5 unified"),
    apple("M2 Pro", 19, 19, 32, 200, 6.8, APPLE_NEWS["m2-pro-max"], 2023, "LPDDR5 unified"),
    apple("M2 Max", 30, 38, 32, 400, 13.49, APPLE_NEWS["m2-pro-max"], 2023, "LPDDR5 unified"),
    apple("M2 Max", 38, 38, 96, 400, 13.49, APPLE_NEWS["m2-pro-max"], 2023, "LPDDR5 unified"),
    apple("M2 Ultra", 60, 76, 64, 800, 27.2, APPLE_NEWS["m2-ultra"], 2023, "LPDDR5-6400 unified"),
    apple("M3", 8, 10, 8, 100, 4.1, APPLE_NEWS["m3"], 2023, "LPDDR5 unified"),
    apple("M3", 10, 10, 24, 100, 4.1, APPLE_NEWS["m3"], 2023, "LPDDR5 unified"),
    apple("M3 Pro", 14, 18, 18, 150, 7.4, APPLE_NEWS["m3"], 2023, "LPDDR5 unified"),
    apple("M3 Pro", 18, 18, 36, 150, 7.4, APPLE_NEWS["m3"], 2023, "LPDDR5 unified"),
    apple("M4", 8, 10, 16, 120, 4.6, APPLE_NEWS["m4"], 2024, "LPDDR5X unified"),
    apple("M3 Max", 40, 40, 48, 400, 14.2, APPLE_NEWS["m3"], 2023, "LPDDR5-6400 unified"),
    apple("M4 Pro", 20, 20, 48, 273, 9.2, APPLE_NEWS["m4"], 2024, "LPDDR5X unified"),
]


def card(
    row_id: str,
    name: str,
    vendor: str,
    year: int,
    label_gb: int,
    mem_type: str,
    bw: float,
    rates: dict[str, float],
    sources: dict[str, str],
    notes: str,
    *,
    reported_mib: int | None = None,
    derived: tuple[str, ...] = (),
    sparse_halved: tuple[str, ...] = (),
    aliases: tuple[str, ...] = (),
    device_class: str = "consumer GPU",
) -> dict[str, Any]:
    """One discrete card: capacity in bytes as the device reports it (nvidia-smi MiB where sourced, else the
    label in GiB, the DRAM it is built from), the marketed label kept in the name."""
    if reported_mib is not None:
        memory_gb = round(reported_mib * 2**20 / 1e9, 3)
        capacity = f"{reported_mib} MiB reported ({sources.pop('memory_reported')})"
    else:
        memory_gb = round(label_gb * 2**30 / 1e9, 3)
        capacity = f"{label_gb} GiB: {GDDR_GIB}"
    row: dict[str, Any] = {
        "id": row_id,
        "name": name,
        "vendor": vendor,
        "class": device_class,
        "year": year,
        "memory_gb": memory_gb,
        "memory_label_gb": label_gb,
        "memory_type": mem_type,
        "bandwidth_gb_per_s": bw,
        "compute_tflops": rates,
        "sources": {
            "memory_gb": f"{capacity}; label {label_gb} GB: {sources['bandwidth_gb_per_s']}",
            **sources,
        },
        "notes": f"Row added by h11b for the cards benchmark threads use. memory_gb is the capacity in bytes "
        f"as the device reports it; the marketed {label_gb} GB stays in the name. {notes}",
        "derived": list(derived),
        "sparse_halved": list(sparse_halved),
    }
    if aliases:
        row["aliases"] = list(aliases)
    return row


#: Decimals a derived rate is rounded to: 8-bit and narrower modes to 0.1, 16-bit modes to 0.01.
RATE_DECIMALS = {"fp4": 1, "fp8": 1, "int8": 1, "bf16": 2, "fp16": 2, "fp16_acc16": 2}
#: Dense FLOP (OP for int8) per SM per clock of GA10x GeForce tensor cores (GA102 whitepaper), FP16 and
#: BF16 at FP32 accumulate; Ada adds FP8 at the INT8 rate.
AMPERE_PER_SM = {"int8": 2048, "bf16": 512, "fp16": 512, "fp16_acc16": 1024}
ADA_PER_SM = {"fp8": 2048, **AMPERE_PER_SM}
#: Blackwell GeForce dense tensor rates as multiples of the FP32 rate (the RTX 5090's published ratios).
BLACKWELL_FP32_RATIOS = {"fp4": 16, "fp8": 8, "int8": 8, "bf16": 2, "fp16": 2, "fp16_acc16": 4}


def scaled_rates(base: float, factors: dict[str, int]) -> dict[str, float]:
    """Each mode's rate = its factor x ``base``, rounded to the mode's RATE_DECIMALS."""
    return {mode: round(factor * base, RATE_DECIMALS[mode]) for mode, factor in factors.items()}


def ampere_geforce(sms: int, boost_mhz: int) -> dict[str, float]:
    """GA10x GeForce dense rates from SMs x boost clock and the whitepaper's per-SM rates."""
    return scaled_rates(sms * boost_mhz * 1e6 / 1e12, AMPERE_PER_SM)


#: Per architecture: dense FLOP per SM per clock by mode, the whitepaper they come from, and the modes a
#: row derives from them (its fp32 is the spec table's).
SM_ARCHS: dict[str, tuple[dict[str, int], str, tuple[str, ...]]] = {
    "ampere": (AMPERE_PER_SM, GA102_WP, ("int8", "bf16", "fp16", "fp16_acc16")),
    "ada": (ADA_PER_SM, ADA_WP, ("fp8", "int8", "bf16", "fp16", "fp16_acc16")),
}


def geforce_card(
    row_id: str,
    name: str,
    year: int,
    label_gb: int,
    mem_type: str,
    bw: float,
    clock: tuple[int, int, float],
    notes: str,
    *,
    arch: str,
    spec: tuple[str, str] | None = None,
    reported: tuple[int, str] | None = None,
    aliases: tuple[str, ...],
) -> dict[str, Any]:
    """An Ampere or Ada GeForce card: ``clock`` is (SMs, boost MHz, fp32 TFLOPS); tensor rates are SMs x
    boost x the architecture's per-SM rates. ``spec`` (a gpu_specs row and its dense tensor figures)
    sources the bandwidth and cross-checks the rates; without it TechSpek's table does. ``reported`` is
    the MiB the driver reports and where that was read."""
    per_sm, whitepaper, derived = SM_ARCHS[arch]
    sms, boost_mhz, fp32 = clock
    if spec is not None:
        bandwidth, cross_check = f"{GPU_SPECS} ({spec[0]})", f"{GPU_SPECS} ({spec[1]} dense)"
    else:
        bandwidth, cross_check = TEKSPEK_30, f"fp32 {TEKSPEK_30}"
    capacity = {"memory_reported": reported[1]} if reported else {}
    return card(
        row_id,
        name,
        "NVIDIA",
        year,
        label_gb,
        mem_type,
        bw,
        {**scaled_rates(sms * boost_mhz * 1e6 / 1e12, per_sm), "fp32": fp32},
        {
            **capacity,
            "bandwidth_gb_per_s": bandwidth,
            "compute": f"{sms} SMs x {boost_mhz} MHz x {whitepaper}; {cross_check}",
        },
        notes,
        reported_mib=reported[0] if reported else None,
        derived=derived,
        aliases=aliases,
    )


GEFORCE_ACC = (
    "Accumulate convention (the GeForce rule of the RTX 4090 row): bf16/fp16 hold the FP32-accumulate rate, "
    "fp16_acc16 the FP16-accumulate rate (twice it), which llama.cpp's CUDA backend uses for its FP16 cuBLAS "
    "GEMMs. Tensor rates are DERIVED from SMs x boost clock x the architecture whitepaper's per-SM rates."
)

NV_5070_FPS = (
    "https://fpsbench.com/compare/gpu/intel-iris-xe-max-graphics-vs-nvidia-geforce-rtx-5070 (read in the h11c "
    "audit: RTX 5070 6144 shading units, 48 SMs, boost 2512 MHz, 12 GB GDDR7 at 28 Gbps on 192 bits, 672.0 GB/s, "
    "FP32 30.87 TFLOPS)"
)
NV_5060TI = (
    "https://cputronic.com/gpu/compare/nvidia-geforce-rtx-5060-ti-16-gb-vs-nvidia-geforce-rtx-2060-super (read in "
    "the h11c audit: RTX 5060 Ti 16 GB, 4608 shading units, 144 tensor cores, boost 2572 MHz, GDDR7 on 128 bits, "
    "448.0 GB/s)"
)
BLACKWELL_RATIOS = (
    "Tensor modes DERIVED (h11c audit): NVIDIA's per-card 'AI TOPS' headlines were not opened, so every tensor rate "
    "is fp32 (cores x 2 x boost, from a read spec table) times the RTX 5090's ratios (FP16 with FP16 accumulate = "
    "4 x FP32, with FP32 accumulate 2 x, FP8 = INT8 = 8 x, FP4 = 16 x, dense), which are Ada's per-SM rates plus "
    "Blackwell's FP4."
)


def blackwell_geforce(fp32: float) -> dict[str, float]:
    """Blackwell GeForce dense tensor rates from the FP32 rate and the RTX 5090's published ratios."""
    return scaled_rates(fp32, BLACKWELL_FP32_RATIOS)


#: The tensor modes a Blackwell GeForce row derives from its fp32 rate.
BLACKWELL_TENSOR = ("fp4", "fp8", "int8", "bf16", "fp16", "fp16_acc16")


def blackwell_card(
    row_id: str,
    name: str,
    label_gb: int,
    bw: float,
    fp32: float,
    spec: str,
    fp32_words: str,
    die: str,
    *,
    derived: tuple[str, ...],
    aliases: tuple[str, ...],
) -> dict[str, Any]:
    """A 2025 Blackwell GeForce card on GDDR7: bandwidth from ``spec``, fp32 from the arithmetic
    ``fp32_words`` on it, tensor modes from fp32 and the RTX 5090's ratios."""
    return card(
        row_id,
        name,
        "NVIDIA",
        2025,
        label_gb,
        "GDDR7",
        bw,
        {**blackwell_geforce(fp32), "fp32": fp32},
        {
            "bandwidth_gb_per_s": spec,
            "compute": f"{fp32_words} ({spec}); tensor modes = fp32 x the RTX 5090's ratios "
            f"({BLACKWELL_GEFORCE})",
        },
        f"Blackwell {die}. {BLACKWELL_RATIOS} {GEFORCE_ACC.split(' Tensor rates')[0]}",
        derived=derived,
        aliases=aliases,
    )


H11B_CARDS: list[dict[str, Any]] = [
    card(
        "nvidia-rtx-2080-ti",
        "NVIDIA GeForce RTX 2080 Ti 11GB",
        "NVIDIA",
        2018,
        11,
        "GDDR6",
        616,
        {"int8": 227.7, "fp16": 56.9, "fp16_acc16": 113.8, "fp32": 14.2},
        {
            "bandwidth_gb_per_s": TEKSPEK_30,
            "compute": f"{TURING_WP}; fp32 {TEKSPEK_30} lists 13,448 at the 1545 MHz reference boost",
        },
        "Turing TU102, 68 SMs. fp16_acc16 113.8 and int8 227.7 are the Founders Edition figures NVIDIA's Turing "
        "presentation rounds to 114 / 228 (68 SMs x 1024 FLOP x 1635 MHz); partner cards boost higher still, so "
        "the higher clock is the ceiling. DERIVED (h11c audit): fp16 56.9 = half of it (GeForce FP32 accumulate, "
        "the convention of the other GeForce rows; the whitepaper that states it was not opened) and fp32 14.2 = "
        "4352 cores x 2 x the same 1635 MHz. No BF16 on Turing tensor cores.",
        derived=("fp16", "fp32"),
        aliases=("2080-ti",),
    ),
    geforce_card(
        "nvidia-rtx-3060-ti",
        "NVIDIA GeForce RTX 3060 Ti 8GB",
        2020,
        8,
        "GDDR6",
        448,
        (38, 1665, 16.2),
        f"Ampere GA104, 38 SMs. {GEFORCE_ACC}",
        arch="ampere",
        aliases=("3060-ti",),
    ),
    geforce_card(
        "nvidia-rtx-3070",
        "NVIDIA GeForce RTX 3070 8GB",
        2020,
        8,
        "GDDR6",
        448,
        (46, 1725, 20.31),
        f"Ampere GA104, 46 SMs (the GA102 whitepaper's Appendix lists the 3070 at 81.3 FP16-accumulate and 162.6 "
        f"INT8, the same figures; not opened in the h11c audit). {GEFORCE_ACC}",
        arch="ampere",
        reported=(
            8192,
            f"{GLS} gls/RTX3070_smi.py (captured nvidia-smi: 'NVIDIA GeForce RTX 3070 ... 0MiB / "
            "8192MiB' = 8 GiB)",
        ),
        aliases=("3070",),
    ),
    geforce_card(
        "nvidia-rtx-3080",
        "NVIDIA GeForce RTX 3080 10GB",
        2020,
        10,
        "GDDR6X",
        760,
        (68, 1710, 29.77),
        f"Ampere GA102, 68 SMs (119 / 59.5 / 238 by the per-SM rates). {GEFORCE_ACC}",
        arch="ampere",
        reported=(
            10240,
            f"{GLS} gls/RTX3080_smi.py (captured nvidia-smi: 'NVIDIA GeForce RTX 3080 ... 0MiB / "
            "10240MiB' = 10 GiB)",
        ),
        aliases=("3080",),
    ),
    card(
        "nvidia-rtx-3080-ti",
        "NVIDIA GeForce RTX 3080 Ti 12GB",
        "NVIDIA",
        2021,
        12,
        "GDDR6X",
        912,
        {**ampere_geforce(80, 1665), "fp32": 34.1},
        {
            "bandwidth_gb_per_s": "https://wccftech.com/nvidia-geforce-rtx-3080-ti-12-gb-gddr6x-10240-cuda-cores-"
            "april-launch-rumor/ (pre-launch report, read in the h11c audit: 12 GB GDDR6X, 19 Gbps, 384-bit = 912 "
            "GB/s, 80 SMs, 10240 CUDA cores); github:CYBIRD-D/How-to-Choose-your-LLM-Model-for-translation@5237907 "
            "Nvidia_GPU_Specification.md (read: RTX 3080 Ti 12GB, 10240 CUDA cores, 912 GB/s)",
            "compute": f"80 SMs x 1665 MHz x {GA102_WP}; fp32 = 10240 x 2 x 1665 MHz (the 1665 MHz boost is NVIDIA's "
            "3080 Ti spec, not read in a stored source by the h11c audit)",
        },
        f"Ampere GA102, 80 SMs. {GEFORCE_ACC}",
        derived=("int8", "bf16", "fp16", "fp16_acc16", "fp32"),
        aliases=("3080-ti",),
    ),
    geforce_card(
        "nvidia-rtx-4060-ti-16gb",
        "NVIDIA GeForce RTX 4060 Ti 16GB",
        2023,
        16,
        "GDDR6",
        288,
        (34, 2535, 22.06),
        f"Ada AD106, 34 SMs. Capacity cross-checked (h11c audit): {GLS} gls/RTX4060Ti_smi.py, captured nvidia-smi "
        f"'NVIDIA GeForce RTX 4060 Ti ... 0MiB / 16380MiB'. {GEFORCE_ACC}",
        arch="ada",
        spec=(
            "RTX 4060 Ti 16 Gb: 16380 MiB, 288 GB/s, FP32 22.06, FP16 tensor 88 / 177*, FP8 177 / 353*, "
            "INT8 177 / 353*",
            "88 / 177 / 177",
        ),
        reported=(16380, VLAD_SMI),
        aliases=("4060-ti-16gb",),
    ),
    geforce_card(
        "nvidia-rtx-4070-ti-super",
        "NVIDIA GeForce RTX 4070 Ti SUPER 16GB",
        2024,
        16,
        "GDDR6X",
        672,
        (66, 2610, 44.1),
        f"Ada AD103, 66 SMs. {GEFORCE_ACC}",
        arch="ada",
        spec=(
            "RTX 4070 Ti SUPER: 16376 MiB, 672 GB/s, FP32 44.10, FP16 tensor 176 / 352*, FP8 352 / 704*, "
            "INT8 352 / 704*",
            "176 / 352 / 352",
        ),
        reported=(16376, VLAD_SMI),
        aliases=("4070-ti-super",),
    ),
    geforce_card(
        "nvidia-rtx-4070-ti",
        "NVIDIA GeForce RTX 4070 Ti 12GB",
        2023,
        12,
        "GDDR6X",
        504,
        (60, 2610, 40.09),
        f"Ada AD104, 60 SMs. {GEFORCE_ACC}",
        arch="ada",
        spec=(
            "RTX 4070 Ti: 12282 MiB, 504 GB/s, FP32 40.09, FP16 tensor 160 / 320*, FP8 320 / 640*",
            "160 / 320",
        ),
        reported=(12282, VLAD_SMI),
        aliases=("4070-ti",),
    ),
    geforce_card(
        "nvidia-rtx-4080-super",
        "NVIDIA GeForce RTX 4080 SUPER 16GB",
        2024,
        16,
        "GDDR6X",
        736,
        (80, 2550, 52.22),
        f"Ada AD103, 80 SMs. {GEFORCE_ACC}",
        arch="ada",
        spec=(
            "RTX 4080 SUPER: 16376 MiB, 736 GB/s, FP32 52.22, FP16 tensor 209 / 418*, FP8 418 / 836*, "
            "INT8 418 / 836*",
            "209 / 418 / 418",
        ),
        reported=(16376, VLAD_SMI),
        aliases=("4080-super",),
    ),
    blackwell_card(
        "nvidia-rtx-5070-ti",
        "NVIDIA GeForce RTX 5070 Ti 16GB",
        16,
        896,
        43.94,
        NV_5070,
        "fp32 = 8960 cores x 2 x 2.452 GHz",
        "GB203, 70 SMs",
        derived=(*BLACKWELL_TENSOR, "fp32"),
        aliases=("5070-ti",),
    ),
    card(
        "nvidia-a10",
        "NVIDIA A10 24GB",
        "NVIDIA",
        2021,
        24,
        "GDDR6 (ECC)",
        600,
        {"int8": 250, "bf16": 125, "fp16": 125, "fp16_acc16": 125, "fp32": 31.2},
        {
            "memory_reported": f"{VLAD_SMI}; {GLS} gls/A10_smi.py (captured nvidia-smi: 'NVIDIA A10 ... 1MiB / "
            "23028MiB', ECC on)",
            "bandwidth_gb_per_s": "github:astroC86/gpu-datasheet@01ede5f README.md (A10: 24 GB, 600 GB/s, 125 TFLOPS FP16, "
            "250 TOPS INT8; links NVIDIA's A10 datasheet); " + f"{GPU_SPECS} (A10: 23028 MiB, 600 GB/s)",
            "compute": f"{GPU_SPECS} (A10: FP32 31.2, BF16/FP16 tensor 125 / 250*, INT8 250 / 500*); fp16_acc16 = "
            f"fp16 on datacenter Ampere ({A100_WP})",
        },
        "Ampere GA102 datacenter card (not a GeForce: FP32 accumulate at the full tensor rate). Capacity with ECC on, "
        "the datacenter default; with ECC off the driver reports more.",
        reported_mib=23028,
        device_class="datacenter GPU",
        aliases=("a10",),
    ),
    card(
        "amd-radeon-rx-7800-xt",
        "AMD Radeon RX 7800 XT 16GB",
        "AMD",
        2023,
        16,
        "GDDR6",
        624,
        {"fp16": 74.64, "fp32": 37.32},
        {
            "bandwidth_gb_per_s": "https://www.gpu-monkey.com/en/gpu-amd_radeon_rx_7800_xt (read in the h11c audit: 16 "
            "GB GDDR6, 19.5 Gbps, 256-bit, 624 GB/s)",
            "fp32": "https://cputronic.com/gpu/amd-radeon-rx-7800-xt (read in the h11c audit: boost 2430 MHz, 3840 "
            "shading units, theoretical 37.32 TFLOPS = 3840 x 2 x 2 (dual issue) x 2.43 GHz; gpu-monkey's 32.69 is "
            "at a lower clock)",
            "fp16": "= 2 x fp32 (RDNA3 packed/WMMA FP16 rate, as the 7900 XTX row's 122.8 = 2 x 61.4); "
            "https://cputronic.com/gpu/amd-radeon-rx-7800-xt",
        },
        f"RDNA3 Navi 32, 60 CUs. {AMD_RDNA}",
        derived=("fp16",),
        aliases=("7800-xt",),
    ),
    card(
        "amd-radeon-rx-7600-xt",
        "AMD Radeon RX 7600 XT 16GB",
        "AMD",
        2024,
        16,
        "GDDR6",
        288,
        {"fp16": 45.14, "fp32": 22.57},
        {
            "bandwidth_gb_per_s": "https://pcspecchart.com/pc_parts/gpu/10 (read in the h11c audit: RX 7600 XT 2048 "
            "cores, boost 2755 MHz, 16 GB GDDR6, 128-bit, 288 GB/s); https://www.itcreations.com/amd-gpu/amd-radeon-"
            "rx-7600-xt-gpu (16GB, 288 GB/s, 128-bit, 2048 stream processors)",
            "fp32": "2048 shading units x 2 (FMA) x 2 (RDNA3 dual issue) x 2.755 GHz = 22.57 (boost 2755 MHz from "
            "pcspecchart above; siliconcat's page cited before was not opened in the h11c audit)",
            "fp16": "= 2 x fp32 (RDNA3 convention of the 7900 XTX row; https://fpsbench.com/compare/gpu/amd-radeon-rx-"
            "7600-vs-intel-hd-graphics-p4600 lists the same Navi 33's FP16 as 2:1)",
        },
        f"RDNA3 Navi 33, 32 CUs, 16 GB on a 128-bit bus. {AMD_RDNA}",
        derived=("fp16", "fp32"),
        aliases=("7600-xt",),
    ),
    card(
        "amd-radeon-rx-6900-xt",
        "AMD Radeon RX 6900 XT 16GB",
        "AMD",
        2020,
        16,
        "GDDR6",
        512,
        {"fp16": 46.08, "fp32": 23.04},
        {
            "bandwidth_gb_per_s": "https://www.tomshardware.com/uk/news/nvidia-driver-geforce-rtx-3080-ti-ampere-gpu "
            "(spec table, read in the h11c audit: Radeon RX 6900 XT 5,120 SPs, boost 2,250 MHz, 16GB GDDR6, 16 Gbps, 256-bit, 512 GBps)",
            "fp32": "5120 SPs x 2 x 2.25 GHz = 23.04 (Tom's Hardware spec table above)",
            "fp16": "= 2 x fp32: RDNA2 packed FP16 (rapid packed math); no matrix units on RDNA2",
        },
        "RDNA2 Navi 21, 80 CUs. RDNA2 has no matrix cores: fp16 is the packed-math vector rate; no BF16/INT8 "
        "matrix rate.",
        derived=("fp16", "fp32"),
        aliases=("6900-xt",),
    ),
    card(
        "amd-radeon-vii",
        "AMD Radeon VII 16GB",
        "AMD",
        2019,
        16,
        "HBM2",
        1024,
        {"int8": 55.3, "fp16": 27.7, "fp32": 13.8},
        {
            "bandwidth_gb_per_s": "https://guru3d.com/review/amd-radeon-vii-16-gb-review/page-5 (read in the h11c "
            "audit: 16 GB HBM2, four "
            "stacks, 4096-bit, 1 TB/s; 60 CUs at 1800 MHz peak)",
            "compute": "https://guru3d.com/review/amd-radeon-vii-16-gb-review/page-5 (AMD's table: Peak FP32 13.8 "
            "TFLOPS, FP16 27.7, Int8 55.3 TOPS)",
        },
        "GCN5 Vega 20 (60 of 64 CUs). HBM2 label 16 GB = four 4 GiB stacks. Rates are vector (packed) rates: "
        "Vega 20 has no matrix cores.",
        aliases=("radeon-vii",),
    ),
    card(
        "intel-arc-a770-16gb",
        "Intel Arc A770 16GB",
        "Intel",
        2022,
        16,
        "GDDR6",
        560,
        {"fp32": 19.66},
        {
            "bandwidth_gb_per_s": "https://www.svethardware.cz/intel-zverejnil-oficialni-specifikace-grafickych-karet-"
            "arc/58344 (Intel's official A-series specifications, read in the h11c audit: Arc A770 32 Xe-cores, 512 XMX "
            "engines, 2100 MHz graphics clock, 256-bit, 560 GB/s, 16 GB on Intel's own card)",
            "fp32": "https://fpsbench.com/compare/gpu/intel-arc-a770-vs-nvidia-tesla-m40 (read in the h11c audit: "
            "4096 shading units, boost 2400 MHz, FP32 19.66 TFLOPS)",
        },
        "Alchemist ACM-G10, 32 Xe-cores. XMX (matrix) rates stay absent: the h11c audit searched stored pages, docs "
        "and code for Intel's A770 XMX peaks (INT8 / FP16 / BF16) and found the engine count (512 at 2100 MHz) but "
        "no per-engine rate or peak, so int8/fp16/bf16 are not guessed; prefill charged at them gets no compute "
        "ceiling. Intel's support article 000098346 (https://intel.com/content/www/us/en/support/articles/000098346/"
        "graphics.html, read) lists the XMX datatypes (FP16, BF16, INT8, INT4, INT2) but no rate; a tinygrad "
        "discussion (https://www.github.com/tinygrad/tinygrad/discussions/790) puts XMX FP16/BF16 at 8x FP32 "
        "(157.28 TFLOPS, i.e. 8 x 19.66 at 2.4 GHz though it says 2.1 GHz): a user's computation, not Intel's "
        "figure, so not used. The B580 row carries Battlemage's own rates.",
        aliases=("a770",),
    ),
]

H11B_CARDS += [
    blackwell_card(
        "nvidia-rtx-5070",
        "NVIDIA GeForce RTX 5070 12GB",
        12,
        672,
        30.87,
        NV_5070_FPS,
        "fp32 30.87 = 6144 x 2 x 2.512 GHz",
        "GB205, 48 SMs",
        derived=BLACKWELL_TENSOR,
        aliases=("5070",),
    ),
    blackwell_card(
        "nvidia-rtx-5060-ti-16gb",
        "NVIDIA GeForce RTX 5060 Ti 16GB",
        16,
        448,
        23.7,
        NV_5060TI,
        "fp32 23.70 = 4608 x 2 x 2.572 GHz",
        "GB206, 36 SMs",
        derived=(*BLACKWELL_TENSOR, "fp32"),
        aliases=("5060-ti-16gb",),
    ),
    card(
        "amd-radeon-rx-7900-xt",
        "AMD Radeon RX 7900 XT 20GB",
        "AMD",
        2022,
        20,
        "GDDR6",
        800,
        {"fp16": 103, "fp32": 51.5},
        {
            "bandwidth_gb_per_s": "https://www.guru3d.com/review/powercolor-radeon-rx-7900-xtx-hellhound-spectral-white-"
            "review/page-4/ (AMD's spec table, read in the h11c audit: RX 7900 XT 84 CUs, 5376 stream processors, 20 GB "
            "GDDR6, 320-bit, 20 Gbps, 800 GB/s, FP32 52 TFLOPs, 51.6 in the text)",
            "fp32": "84 CUs x 64 x 2 (dual issue) x 2 (FMA) x 2.394 GHz boost = 51.5 (https://cputronic.com/gpu/amd-"
            "radeon-rx-7900-xt, read: boost 2394 MHz, 51.48 TFLOPS; guru3d's table above: 51.6 / 52)",
            "fp16": "= 2 x fp32 (RDNA3 convention of the 7900 XTX row)",
        },
        f"RDNA3 Navi 31, 84 CUs. {AMD_RDNA}",
        derived=("fp16", "fp32"),
        aliases=("7900-xt",),
    ),
    card(
        "nvidia-a40",
        "NVIDIA A40 48GB",
        "NVIDIA",
        2020,
        48,
        "GDDR6 (ECC)",
        696,
        {"int8": 299.3, "bf16": 149.7, "fp16": 149.7, "fp16_acc16": 149.7, "fp32": 37.4},
        {
            "memory_reported": f"{GLS} gls/A40x10_smi.py (captured nvidia-smi: 'NVIDIA A40 ... 1MiB / 46068MiB', ECC "
            "on)",
            "bandwidth_gb_per_s": "github:astroC86/gpu-datasheet@01ede5f README.md (A40: 48 GB, 696 GB/s, 149.7 TFLOPS BF16 / "
            "FP16, 299.3 TOPS INT8; links https://images.nvidia.cn/content/Solutions/data-center/a40/nvidia-a40-"
            "datasheet.pdf)",
            "compute": "github:astroC86/gpu-datasheet@01ede5f README.md (A40 datasheet: BF16/FP16 tensor 149.7, INT8 299.3 "
            "dense); fp32 37.4 (the A40 datasheet's 'FP32 37.4 TFLOPS'); fp16_acc16 = fp16 on datacenter Ampere "
            f"({A100_WP})",
        },
        "Ampere GA102 datacenter card: FP32 accumulate at the full tensor rate. Capacity (h11c audit): 46068 MiB as "
        "nvidia-smi reports it with ECC on, the datacenter default (the 48 GiB label was used before; with ECC off "
        "the driver reports more). fp32 37.4 is the A40 datasheet's, linked from the README but not opened.",
        reported_mib=46068,
        device_class="datacenter GPU",
        aliases=("a40",),
    ),
    card(
        "nvidia-v100-sxm2-32gb",
        "NVIDIA Tesla V100 SXM2 32GB",
        "NVIDIA",
        2018,
        32,
        "HBM2",
        900,
        {"fp16": 125, "fp16_acc16": 125, "fp32": 15.7},
        {
            "bandwidth_gb_per_s": "NVIDIA's V100 SXM2 figure 900 GB/s (A100 whitepaper Table 1, not opened in the "
            f"h11c audit); cross-check {GLS} gls/V100_x8_smi.py (captured nvidia-smi -a of V100-SXM2: memory clock "
            "877 MHz; 877 MHz x 2 x 4096 bits = 898 GB/s)",
            "compute": f"125 FP16 tensor / 15.7 FP32 are NVIDIA's V100 SXM2 figures (A100 whitepaper Table 1, not "
            f"opened in the h11c audit); cross-check {GLS} gls/V100_x8_smi.py (Max Clocks SM 1530 MHz): 80 SMs x "
            "1530 MHz x 1024 FLOP (8 tensor cores x 64 FMA) = 125.3, 5120 cores x 2 x 1530 MHz = 15.67; "
            "fp16_acc16 = fp16 (one rate for both accumulates on datacenter parts)",
        },
        "Volta GV100, 80 SMs; four 8 GiB HBM2 stacks (the 16 GB V100-SXM2 reports 16384 MiB = 16 GiB: "
        f"{GLS} gls/V100_x8_smi.py). No BF16 or INT8 tensor mode on Volta.",
        device_class="datacenter GPU",
        aliases=("v100",),
    ),
    card(
        "nvidia-t4",
        "NVIDIA T4 16GB",
        "NVIDIA",
        2018,
        16,
        "GDDR6",
        320,
        {"int8": 130.25, "fp16": 65.13, "fp16_acc16": 65.13, "fp32": 8.14},
        {
            "bandwidth_gb_per_s": "https://sysrqmts.com/pt/gpus/compare/nvidia-rtx-a4000-vs-nvidia-tesla-t4 (read in "
            "the h11c audit: T4 16 GB GDDR6, 256 bit, 10 Gbps, 320.0 GB/s, boost 1590 MHz, FP32 8.141, FP16 65.13 "
            "(8:1))",
            "compute": "https://sysrqmts.com/pt/gpus/compare/nvidia-rtx-a4000-vs-nvidia-tesla-t4 (FP32 8.141, FP16 "
            "65.13 = 40 SMs x 1590 MHz x 1024); int8 130.25 = 2 x FP16 (Turing INT8 at twice the FP16 rate: "
            f"{TURING_WP}); hmc-tech's T4 page (65.13 with either accumulate, 130.25 INT8) was not opened in the "
            "h11c audit",
        },
        "Turing TU104 datacenter card, 40 SMs: both accumulates at one rate. No BF16 on Turing. Capacity: 16 GiB "
        "is the DRAM on the card; with ECC on (the T4 default) nvidia-smi reports less (15360 or 15109 MiB in "
        "public logs the h11c audit found without recording a repository path; a Colab T4's deviceQuery shows "
        "15095 MBytes: github:sylvia-ymlin/cuda-kernels-from-scratch README.md), so memory_gb is an upper bound.",
        derived=("int8",),
        device_class="datacenter GPU",
        aliases=("t4",),
    ),
]

H11B_SOCS: list[dict[str, Any]] = [
    {
        "id": "nvidia-jetson-agx-orin-64gb",
        "name": "NVIDIA Jetson AGX Orin 64GB",
        "vendor": "NVIDIA",
        "class": "unified-memory SoC",
        "year": 2022,
        "memory_gb": round(64 * 2**30 / 1e9, 3),
        "memory_label_gb": 64,
        "memory_type": "LPDDR5 unified (256-bit)",
        "bandwidth_gb_per_s": 204.8,
        "compute_tflops": {"int8": 85, "fp32": 5.3},
        "sparse_halved": ["int8"],
        "sources": {
            "memory_gb": "64 GiB (LPDDR5 built from binary-density dies); NVIDIA Jetson AGX Orin Series technical "
            "brief, as summarised at http://mzph.cn/web/30785.shtml (AGX Orin in 32GB and 64GB modules)",
            "bandwidth_gb_per_s": "NVIDIA Jetson AGX Orin 64GB module: 256-bit LPDDR5 at 6400 MT/s = 204.8 GB/s "
            "(module datasheet, not opened in the h11c audit); https://llmperf.net/categories/gpu/Nvidia-Jetson (page "
            "read, its table not in the stored excerpt)",
            "int8": "http://mzph.cn/web/30785.shtml (read in the h11c audit; technical brief: 64 third-generation "
            "tensor cores, 170 sparse "
            "TOPs INT8 on the GPU; the DLAs' 105 are separate) / 2",
            "fp32": "http://mzph.cn/web/30785.shtml (technical brief: 16 SMs, 2048 CUDA cores, 5.3 FP32 TFLOPs)",
        },
        "notes": "Row added by h11b: the Jetson the llama.cpp CUDA scoreboard reports. GPU only: the 275 'AI TOPS' "
        "headline adds the two DLAs, which LLM runtimes do not use. FP16/BF16 tensor rates stay absent (h11c "
        "audit): the technical brief's summary (mzph.cn, read) states only the GPU's 170 sparse INT8 TOPS and 5.3 "
        "FP32 TFLOPS, no stored page, doc or repository states an Orin FP16/BF16 tensor peak or its FP32-accumulate "
        "rate, and a rate is not derived from INT8 without one. The 204.8 GB/s (256-bit LPDDR5 at 6400 MT/s) is "
        "NVIDIA's module datasheet figure, not opened in the audit.",
        "aliases": ["agx-orin"],
    },
]

#: Existing rows: capacity in bytes as the device reports it (label in the name), with its source.
H11B_CAPACITY: dict[str, tuple[float, str]] = {
    "nvidia-h100-sxm": (
        85.521,
        f"81559 MiB ({NVSMI}: {GLS} gls/H100SXMx8_smi.py, captured 'NVIDIA H100 80GB "
        f"HBM3 ... 1MiB /  81559MiB'; {GPU_SPECS} lists the H100 PCIe at 81559 MiB too)",
    ),
    "nvidia-h100-pcie": (85.521, f"81559 MiB ({VLAD_SMI}: H100 PCIe 81559)"),
    "nvidia-h200-sxm": (
        150.756,
        f"143771 MiB ({NVSMI}: {GLS} gls/H200_smi.py, captured 'NVIDIA H200 ... 1MiB / 143771MiB', 700 W)",
    ),
    "nvidia-a100-80gb-sxm": (
        85.899,
        f"81920 MiB ({NVSMI}: {GLS} gls/A100SXMx4_smi.py, captured 'NVIDIA "
        "A100-SXM4-80GB ... 1MiB /  81920MiB')",
    ),
    "nvidia-a100-40gb-sxm": (
        42.950,
        "40960 MiB = 40 GiB (five 8 GiB HBM2 stacks; the 80 GB part reports "
        f"81920 MiB = 80 GiB, {GLS} gls/A100SXMx4_smi.py, this one half of it; public logs "
        "show 40960MiB for the A100-SXM4-40GB, found by the h11c audit without recording a "
        "repository path)",
    ),
    "nvidia-b300": (
        288.400,
        f"275040 MiB ({AIC}/b300_sxm.yaml: 'mem_capacity: 288400343040 # 275040MiB reported by nvidia-smi')",
    ),
    "nvidia-l40s": (
        48.305,
        f"46068 MiB ({GLS} gls/L40S_smi.py, captured 'NVIDIA L40S ... 1MiB /  46068MiB'; "
        f"{AIC}/l40s.yaml 'mem_capacity: 48305799168 # 46068 MiB'; ECC on)",
    ),
    "nvidia-l4": (
        24.153,
        f"23034 MiB ({GLS} gls/L4_smi.py, captured 'NVIDIA L4 ... 1MiB /  23034MiB'; "
        f"{VLAD_SMI}: L4 23034; ECC on)",
    ),
    "nvidia-rtx-6000-ada": (
        51.527,
        f"49140 MiB ({GLS} gls/RTX6000Ada_x8_smi.py, captured 'NVIDIA RTX 6000 Ada "
        f"Gene... 2MiB /  49140MiB', ECC off; {VLAD_SMI}: RTX 6000 Ada 49140)",
    ),
    "nvidia-rtx-5090": (
        34.191,
        f"32607 MiB ({GLS} gls/RTX5090_smi.py, captured 'NVIDIA GeForce RTX 5090 ... 2MiB "
        "/  32607MiB' and nvidia-smi -a 'FB Memory Usage Total : 32607 MiB'; h11c audit: corrected "
        f"from the 32752 MiB of {GPU_SPECS}, whose RTX 5090 row is flagged there as preliminary)",
    ),
    "nvidia-rtx-4090": (
        25.757,
        f"24564 MiB ({GLS} gls/RTX4090_smi.py, captured 'NVIDIA GeForce RTX 4090 ... 2MiB "
        f"/  24564MiB'; {VLAD_SMI}: RTX 4090 24564)",
    ),
    "nvidia-rtx-4080": (
        17.171,
        f"16376 MiB (the AD103 16 GB board as {VLAD_SMI} lists the RTX 4080 SUPER: "
        "16376; a public RTX 4080 nvidia-smi capture reads '2028MiB /  16376MiB', found by the "
        "h11c audit without recording a repository path; 16 GiB = 17.18e9 of DRAM)",
    ),
    "nvidia-rtx-5080": (17.180, f"16 GiB: {GDDR_GIB}"),
    "nvidia-rtx-3090": (
        25.770,
        f"24 GiB: {GDDR_GIB}; {GLS} gls/RTX3090_smi.py, captured 'NVIDIA GeForce RTX 3090 "
        "... 2MiB /  24576MiB' = 24 GiB",
    ),
    "nvidia-rtx-3060-12gb": (12.885, f"12 GiB: {GDDR_GIB}"),
    "nvidia-rtx-pro-6000-blackwell": (
        102.642,
        f"97887 MiB ({AIC}/rtx_pro_6000_server.yaml: 'mem_capacity: "
        "102641958912 # 97887 MiB reported by nvidia-smi'; h11c audit: corrected from "
        "96 GiB = 103.079e9, which the card does not report; public Workstation and "
        "Max-Q Edition nvidia-smi lines read 97887MiB as well)",
    ),
    "nvidia-rtx-a6000": (
        51.540,
        f"48 GiB: {GDDR_GIB}; with ECC on the driver reports 46068 MiB ({GLS} "
        "gls/RTX_A6000_x9_smi.py, captured 'NVIDIA RTX A6000 ... 1MiB /  46068MiB'), with ECC off "
        "about 48 GiB (the RTX 6000 Ada, ECC off, reports 49140 MiB), so 48 GiB is the upper bound",
    ),
    "amd-radeon-rx-7900-xtx": (25.770, f"24 GiB: {GDDR_GIB}"),
    "amd-radeon-ai-pro-r9700": (34.360, f"32 GiB: {GDDR_GIB}"),
    "intel-arc-b580": (12.885, f"12 GiB: {GDDR_GIB}"),
}
for _apple_id, _gib in (
    ("apple-m1-max-32gb", 32),
    ("apple-m1-max-64gb", 64),
    ("apple-m2-ultra-64gb", 64),
    ("apple-m2-ultra-192gb", 192),
    ("apple-m3-max-36gb", 36),
    ("apple-m3-max-96gb", 96),
    ("apple-m3-max-128gb", 128),
    ("apple-m3-ultra-96gb", 96),
    ("apple-m3-ultra-256gb", 256),
    ("apple-m3-ultra-512gb", 512),
    ("apple-m4-16gb", 16),
    ("apple-m4-32gb", 32),
    ("apple-m4-pro-24gb", 24),
    ("apple-m4-pro-64gb", 64),
    ("apple-m4-max-36gb", 36),
    ("apple-m4-max-48gb", 48),
    ("apple-m4-max-64gb", 64),
    ("apple-m4-max-128gb", 128),
    ("apple-m5-32gb", 32),
    ("apple-m5-max-128gb", 128),
    ("apple-m5-max-36gb", 36),
    ("apple-m5-pro-64gb", 64),
):
    H11B_CAPACITY[_apple_id] = (round(_gib * 2**30 / 1e9, 3), f"{_gib} x 2^30 bytes: {APPLE_MEMSIZE}")


def _binned(full_id: str, full: float, gpu: int, cores: int) -> tuple[float, str]:
    return (
        round(full * gpu / cores, 3),
        f"DERIVED: {HF_APPLE_FULL}: {full:g} for the {cores}-core GPU x {gpu}/{cores} cores; cross-check {HMC_M3_MAX}",
    )


#: Rates for existing rows the TSV leaves empty (merged into ADDED_COMPUTE): FP16 accumulate on NVIDIA rows,
#: binned Apple GPUs by core share.
H11B_ADDED_COMPUTE: dict[str, dict[str, tuple[float, str]]] = {
    "nvidia-rtx-4090": {"fp16_acc16": (330.3, ADA_WP)},
    "nvidia-rtx-4080": {
        "fp16_acc16": (
            194.9,
            f"= 2 x the row's FP32-accumulate 97.5 (the Ada GeForce ratio, "
            f"{ADA_WP}); the whitepaper's RTX 4080 column (194.9) was not opened",
        )
    },
    "nvidia-rtx-5090": {"fp16_acc16": (419.0, BLACKWELL_GEFORCE)},
    "nvidia-rtx-5080": {
        "fp16_acc16": (
            225.2,
            f"= 2 x the row's FP32-accumulate 112.6 (the RTX 5090's ratio, {BLACKWELL_GEFORCE})",
        )
    },
    "nvidia-rtx-3090": {"fp16_acc16": (142.0, f"{GA102_WP}")},
    "nvidia-rtx-3060-12gb": {
        "fp16_acc16": (50.94, f"2 x the row's 25.47 FP32-accumulate rate: {GA102_WP}; {HMC_3060} / 8")
    },
    "nvidia-a100-80gb-sxm": {"fp16_acc16": (312.0, A100_WP)},
    "nvidia-a100-40gb-sxm": {"fp16_acc16": (312.0, A100_WP)},
    "nvidia-h100-sxm": {"fp16_acc16": (989.0, H100_WP)},
    "nvidia-h100-pcie": {"fp16_acc16": (756.0, H100_WP)},
    "nvidia-h200-sxm": {"fp16_acc16": (989.0, H100_WP)},
    "nvidia-rtx-a6000": {
        "fp16_acc16": (
            154.8,
            f"{A6000_TENSOR}; pro Ampere runs FP32 accumulate at the full "
            "rate, so both accumulates are 154.8",
        )
    },
    "nvidia-rtx-6000-ada": {
        "fp16_acc16": (
            364.2,
            f"{RTX_6000_ADA_DATASHEET} / 4; pro Ada (like the L40S) runs both accumulates at one rate",
        )
    },
    "nvidia-l40s": {
        "fp16_acc16": (
            362.05,
            "NVIDIA's L40S table (the row's fp16 362.05): one FP16 tensor rate for "
            "both accumulates on this datacenter Ada part",
        )
    },
    "apple-m3-max-36gb": {"fp32": _binned("apple-m3-max-128gb", 14.2, 30, 40)},
    "apple-m3-max-96gb": {"fp32": _binned("apple-m3-max-128gb", 14.2, 30, 40)},
    "apple-m3-ultra-96gb": {"fp32": _binned("apple-m3-ultra-512gb", 28.4, 60, 80)},
    "apple-m4-pro-24gb": {"fp32": _binned("apple-m4-pro-64gb", 9.2, 16, 20)},
    "apple-m4-max-36gb": {"fp32": _binned("apple-m4-max-128gb", 18.4, 32, 40)},
    "apple-m5-max-36gb": {"fp32": _binned("apple-m5-max-128gb", 22.8, 32, 40)},
}

#: Curation for the rows above: which added modes are derived, and the notes that explain them.
H11B_CURATION: dict[str, dict[str, Any]] = {
    "nvidia-rtx-5080": {"derived": ["fp16_acc16"]},
    "nvidia-rtx-4080": {"derived": ["fp16_acc16"]},
    "nvidia-b200": {
        "add_note": "h11c audit: memory_gb stays at the 180 GB label. Public nvidia-smi logs show the B200 at 183359 "
        "MiB (192.27e9 bytes), but the audit found them only as excerpts without a repository path it could cite, "
        "so the reported bytes are not sourced; the label UNDERSTATES the capacity the device reports by about 6%, "
        "so a fit near the limit may be declared impossible when it is not.",
    },
    "nvidia-rtx-3060-12gb": {"derived": ["fp16_acc16"]},
    **{
        row_id: {
            "derived": ["fp32"],
            "add_note": f"h11b: FP32 {H11B_ADDED_COMPUTE[row_id]['fp32'][0]:g} now DERIVED by core share (one GPU "
            "clock per die; hmc-tech lists the 30- and 40-core M3 Max both at 1398 MHz), so the binned GPU has a "
            "rate of its own; the older note above explains why HF's figure alone is the full GPU's.",
        }
        for row_id in (
            "apple-m3-max-36gb",
            "apple-m3-max-96gb",
            "apple-m3-ultra-96gb",
            "apple-m4-pro-24gb",
            "apple-m4-max-36gb",
            "apple-m5-max-36gb",
        )
    },
    "nvidia-dgx-spark": {
        "add_note": "h11b re-check (issue 11): NVIDIA's DGX Spark datasheet and product page give only '1 PFLOP "
        "FP4 (sparse)' and 31 TFLOPS FP32; the CUDA programming guide's throughput tables give per-SM "
        "instruction rates, not tensor peaks, and NVIDIA publishes no GB10 boost clock to turn per-SM rates into "
        "a peak. A ratio from FP4 (FP8 250, FP16 125) sits below the ~213 TFLOP/s FP16 that mmapeak measured, so "
        "it is not a peak either. bf16, fp16, fp16_acc16, fp8 and int8 stay absent; prefill charged at them gets "
        "no compute ceiling.",
    },
    "amd-ryzen-ai-max-plus-395-128gb": {
        "add_note": "h11b re-check (issue 11): still no AMD-published GPU matrix rate for the Radeon 8060S; fp16, "
        "bf16 and int8 stay absent. Capacity: 128 GB of LPDDR5X, of which the BIOS assigns up to 96 GB to the "
        "GPU; the row keeps the label, the runtime split is an overhead.",
    },
}


def _with_label(device: dict[str, Any], label: float) -> dict[str, Any]:
    """The row with memory_label_gb (the marketed capacity) placed right after memory_gb."""
    out: dict[str, Any] = {}
    for key, value in device.items():
        out[key] = value
        if key == "memory_gb":
            out["memory_label_gb"] = label
    return out


def merge_h11b() -> None:
    """Fold the h11b tables into the converter's tables (called once from main)."""
    for row_id, modes in H11B_ADDED_COMPUTE.items():
        target = ADDED_COMPUTE.setdefault(row_id, {})
        for mode, value in modes.items():
            if mode in target:
                raise SystemExit(f"{row_id}.{mode} is added twice")
            target[mode] = value
    for row_id, extra in H11B_CURATION.items():
        cur = CURATION.setdefault(row_id, {})
        for key in ("derived", "sparse_halved"):
            if extra.get(key):
                cur[key] = [*cur.get(key, []), *extra[key]]
        if extra.get("add_note"):
            cur["add_note"] = (
                f"{cur['add_note']} {extra['add_note']}" if cur.get("add_note") else extra["add_note"]
            )


merge_h11b()


#: Multi-device systems: (id, member, count, name, class, notes). Numbers are N x the member's.
SYSTEMS: list[dict[str, Any]] = [
    {"member": "nvidia-rtx-3090", "count": 2, "name": "2x NVIDIA GeForce RTX 3090 24GB"},
    {"member": "nvidia-rtx-3090", "count": 4, "name": "4x NVIDIA GeForce RTX 3090 24GB"},
    {"member": "nvidia-rtx-4090", "count": 2, "name": "2x NVIDIA GeForce RTX 4090 24GB"},
    {"member": "nvidia-rtx-5090", "count": 2, "name": "2x NVIDIA GeForce RTX 5090 32GB"},
    {"member": "nvidia-rtx-5090", "count": 4, "name": "4x NVIDIA GeForce RTX 5090 32GB"},
    {"member": "nvidia-rtx-pro-6000-blackwell", "count": 4, "name": "4x NVIDIA RTX PRO 6000 Blackwell 96GB"},
    {"member": "nvidia-dgx-spark", "count": 2, "name": "2x NVIDIA DGX Spark (linked over 200GbE)"},
    {"member": "nvidia-a100-80gb-sxm", "count": 8, "name": "8x NVIDIA A100 80GB SXM4 (HGX A100)"},
    {"member": "nvidia-h100-sxm", "count": 8, "name": "8x NVIDIA H100 SXM5 80GB (HGX H100)"},
    {"member": "nvidia-h200-sxm", "count": 8, "name": "8x NVIDIA H200 SXM (HGX H200)"},
    {"member": "nvidia-b200", "count": 8, "name": "8x NVIDIA B200 (HGX B200)"},
    {"member": "nvidia-b300", "count": 8, "name": "8x NVIDIA B300 (HGX B300)"},
    {"member": "amd-mi300x", "count": 8, "name": "8x AMD Instinct MI300X"},
    {"member": "amd-mi325x", "count": 8, "name": "8x AMD Instinct MI325X"},
    {"member": "amd-mi355x", "count": 8, "name": "8x AMD Instinct MI355X"},
]

PCIE_NOTE = (
    "Consumer cards talk over PCIe (no NVLink on 40/50 series), so real tensor-parallel scaling falls "
    "well short of this ideal sum."
)
SYSTEM_NOTES = {
    "nvidia-dgx-spark": "The two units share no memory; they talk over ConnectX-7 200GbE, so real scaling "
    "falls far short of this ideal sum.",
    "nvidia-rtx-3090": "RTX 3090 pairs can use an NVLink bridge (112.5 GB/s); otherwise PCIe. " + PCIE_NOTE,
    "nvidia-rtx-4090": PCIE_NOTE,
    "nvidia-rtx-5090": PCIE_NOTE,
    "nvidia-rtx-pro-6000-blackwell": "RTX PRO 6000 Workstation cards talk over PCIe.",
}

RACKS: list[dict[str, Any]] = [
    {
        "id": "nvidia-gb200-nvl72",
        "member": "nvidia-gb200",
        "count": 72,
        "class": "rack-scale system",
        "aliases": ["gb200-nvl72", "nvl72"],
        "from_tsv": "nvidia-gb200-nvl72",
    },
    {
        "id": "nvidia-gb300-nvl72",
        "member": "nvidia-gb300",
        "count": 72,
        "name": "NVIDIA GB300 NVL72 (rack, 72 Blackwell Ultra GPUs + 36 Grace)",
        "class": "rack-scale system",
        "aliases": ["gb300-nvl72"],
        "notes": "72 x the per-GPU GB300 row (288 GB label): 20,736 GB and 576,000 GB/s. NVIDIA's rack "
        "figure is '20 TB' of HBM at 576 TB/s (glennklockwood.com), about 3.5% below 72 x 288, so the rack's "
        "vendor total is not recorded as a quoted cross-check. HBM only; Grace LPDDR5X not included.",
    },
]


# --- h14: runtime overhead per row ------------------------------------------------------------------
# O is what the machine keeps from the model: on unified memory the OS's share, on a discrete card the
# runtime's context and workspace. Each row gets O by its class, with the reasoning as its source.

#: vLLM, the usual server on datacenter cards, takes --gpu-memory-utilization 0.9 by default: 10 % of
#: the card is left to the CUDA context, CUDA graphs and the activation peak (8 GB of an 80 GB card,
#: where the derivation's 8 GB comes from).
VLLM_RESERVE = 0.10
VLLM_SOURCE = (
    "10 % of memory: vLLM's default --gpu-memory-utilization 0.9 leaves it to the CUDA context, CUDA "
    "graphs and the activation peak (https://huggingface.co/neuralmagic/Mistral-7B-Instruct-v0.3-GPTQ-4bit/"
    "discussions/1: 'It will use 90% of the total GPU memory by default'; "
    "https://docs.hivenet.com/tutorials/more-guides/advanced-vllm-settings: GPU memory fraction default 0.9)"
)
#: A consumer or workstation card runs llama.cpp and its kin: the CUDA/ROCm context (a few hundred MB)
#: plus the compute buffer (105 MiB at 512 tokens on an RTX 4080, llamafile #552; 672 MiB at 4,096
#: tokens with pipeline parallelism on an RTX 4070 Ti, llama.cpp #6122): about 1 GB.
DISCRETE_RUNTIME_GB = 1.0
DISCRETE_SOURCE = (
    "1 GB: the CUDA/ROCm context (a few hundred MB) plus llama.cpp's compute buffer (105 MiB at 512 "
    "tokens on an RTX 4080, github.com/mozilla-ai/llamafile/pull/552; 672 MiB at 4,096 tokens on an RTX "
    "4070 Ti, github.com/ggml-org/llama.cpp/pull/6122); a card that also drives a display keeps a few "
    "hundred MB more (pass --overhead-gb)"
)


#: macOS lets the GPU wire at most recommendedMaxWorkingSetSize of unified memory by default: ggml's
#: Metal logs show 22906.50 MB on 32 GB machines (2/3), 51539.61 MB on a 64 GB M2 Max and 103079.22 MB
#: on 128 GB (3/4). The OS's share is the rest.
def apple_share(memory_gb: float) -> tuple[float, str]:
    usable = 2 / 3 if memory_gb * 1e9 / 2**30 <= 36.01 else 3 / 4  # the rule is in GiB: 36 GiB = 38.65 GB
    overhead = round(memory_gb * (1 - usable), 1)
    return overhead, (
        f"{overhead:g} GB, the OS's share: macOS lets the GPU wire {'2/3' if usable < 0.7 else '3/4'} of "
        "unified memory by default (ggml_metal_init's recommendedMaxWorkingSetSize: 22906.50 MB on 32 GB "
        "Macs, 51539.61 MB on a 64 GB M2 Max, 103079.22 MB on 128 GB; 2/3 up to 36 GB, 3/4 above); "
        "raising iogpu.wired_limit_mb frees more (pass --overhead-gb)"
    )


UNIFIED_OS_GB = 8.0
UNIFIED_OS_SOURCE = (
    "8 GB, the OS's share of unified memory: a Linux desktop (DGX OS, JetPack, a Strix Halo install) and "
    "the runtime share the pool, and no runtime publishes a reserve for it; the derivation's 8 GB is kept"
)


def runtime_overhead(device: dict[str, Any]) -> tuple[float, str]:
    """O for one device row, and why."""
    memory, cls = float(device["memory_gb"]), device["class"]
    if cls == "unified-memory SoC":
        if device["vendor"] == "Apple":
            return apple_share(memory)
        return UNIFIED_OS_GB, UNIFIED_OS_SOURCE
    if cls in ("consumer GPU", "workstation GPU"):
        return DISCRETE_RUNTIME_GB, DISCRETE_SOURCE
    return round(memory * VLLM_RESERVE, 1), f"{round(memory * VLLM_RESERVE, 1):g} GB = " + VLLM_SOURCE


def with_runtime_overhead(device: dict[str, Any]) -> dict[str, Any]:
    overhead, why = runtime_overhead(device)
    out: dict[str, Any] = {}
    for key, value in device.items():
        if key == "provenance":
            out["runtime_overhead_gb"] = overhead
        out[key] = value
    out["sources"] = {**device["sources"], "runtime_overhead_gb": why}
    return out


# --- end h14 -----------------------------------------------------------------------------------------


def split_outside_parens(text: str, sep: str = "; ") -> list[str]:
    """Split on ``sep`` only where no parenthesis is open."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
            i = start
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


_LABEL = re.compile(r"^([A-Za-z0-9/ .+'\-]+?): (?!//)")


def label_keys(label: str) -> set[str]:
    keys: set[str] = set()
    for word in label.lower().split("/"):
        word = word.strip()
        head = word if word in LABEL_WORDS else word.split(" ")[0]
        if head not in LABEL_WORDS:
            raise SystemExit(f"unknown source label word {word!r} in {label!r}")
        keys.update(LABEL_WORDS[head])
    return keys


def split_sources(cell: str, present: list[str]) -> dict[str, str]:
    """One source string per number present in the row (keys: SCALAR_KEYS and modes, or 'compute')."""
    segments: list[tuple[set[str] | None, str]] = []
    current: set[str] | None = None
    for part in split_outside_parens(cell):
        match = _LABEL.match(part)
        if match and not match.group(1).lower().startswith(("http", "github")):
            current = label_keys(match.group(1))
            part = part[match.end() :]
        segments.append((current, part))
    unlabelled = [text for keys, text in segments if keys is None]
    everything = [text for _, text in segments]

    def pick(key: str) -> str:
        own = [text for keys, text in segments if keys is not None and key in keys]
        if not own and key in MODES:
            own = [text for keys, text in segments if keys is not None and "compute" in keys]
        return "; ".join(own or unlabelled or everything)

    out = {key: pick(key) for key in present}
    modes = [m for m in present if m in MODES]
    if modes and len({out[m] for m in modes}) == 1:
        shared = out[modes[0]]
        for m in modes:
            del out[m]
        out["compute"] = shared
    return out


def number(cell: str) -> int | float | None:
    cell = cell.strip()
    if not cell:
        return None
    value = float(cell)
    return int(value) if value.is_integer() else value


def device_from_row(row: dict[str, str]) -> dict[str, Any]:
    cur = CURATION.get(row["id"], {})
    compute = {mode: number(row[col]) for mode, col in MODE_COLUMNS.items()}
    compute = {m: v for m, v in compute.items() if v is not None}
    scalars = {k: number(row[k]) for k in SCALAR_KEYS}
    present = [k for k, v in scalars.items() if v is not None] + list(compute)
    added = ADDED_COMPUTE.get(row["id"], {})
    for mode in added:
        if mode in compute:
            raise SystemExit(f"{row['id']}.{mode}: the TSV now gives {compute[mode]}; drop the added value")
    notes = row["notes"].strip()
    for stale in cur.get("note_drop", []):
        if stale not in notes:
            raise SystemExit(f"{row['id']}: note_drop text no longer in the TSV note: {stale!r}")
        notes = notes.replace(stale, "").replace("  ", " ").strip()
    if cur.get("add_note"):
        notes = f"{notes} {cur['add_note']}"
    if row["vendor"] == "Apple":
        notes = f"{notes} {APPLE_NOTE}"
    device: dict[str, Any] = {
        "id": row["id"],
        "name": row["name"],
        "vendor": row["vendor"],
        "class": row["class"],
    }
    if row["year"].strip():
        device["year"] = int(row["year"])
    device["memory_gb"] = scalars["memory_gb"]
    device["memory_type"] = row["memory_type"]
    device["bandwidth_gb_per_s"] = scalars["bandwidth_gb_per_s"]
    if scalars["price_usd"] is not None:
        device["price_usd"] = scalars["price_usd"]
    device["provenance"] = "peak"
    for key in ("sparse_halved", "derived", "aliases"):
        if cur.get(key):
            device[key] = list(cur[key])
    if cur.get("low_confidence"):
        device["low_confidence"] = True
    device["notes"] = notes
    rates = {**compute, **{mode: value for mode, (value, _) in added.items()}}
    device["compute_tflops"] = {mode: rates[mode] for mode in MODES if mode in rates}
    sources = split_sources(row["sources"], present)
    if row["id"] in H11B_CAPACITY:
        reported, why = H11B_CAPACITY[row["id"]]
        label = device["memory_gb"]
        device["memory_gb"] = reported
        device = _with_label(device, label)
        sources["memory_gb"] = f"{why}; label {label:g} GB: {sources['memory_gb']}"
        device["notes"] = (
            f"{device['notes']} Capacity (h11b): memory_gb {reported:g} is the bytes the device reports "
            f"({why.split(' (')[0].split(':')[0]}), not the {label:g} GB label, which the name keeps."
        )
    for (row_id, key), (old, new) in SOURCE_FIXES.items():
        if row_id == row["id"]:
            if sources.get(key) != old:
                raise SystemExit(f"source fix for {row_id}.{key} no longer matches: {sources.get(key)!r}")
            sources[key] = new
    if added:
        shared = sources.pop("compute", None)
        if shared is not None:
            sources.update({mode: shared for mode in compute})
        sources.update({mode: source for mode, (_, source) in added.items()})
        sources = {k: sources[k] for k in [*SCALAR_KEYS, *MODES] if k in sources}
    device["sources"] = sources
    return device


def extra_device(spec: dict[str, Any]) -> dict[str, Any]:
    skip = ("compute_tflops", "sources", "notes", "aliases")
    device = {k: v for k, v in spec.items() if k not in skip and v != []}
    device["provenance"] = "peak"
    if spec.get("aliases"):
        device["aliases"] = spec["aliases"]
    notes = spec["notes"]
    if spec["vendor"] == "Apple":
        notes = f"{notes} {APPLE_NOTE}"
    device["notes"] = notes
    device["compute_tflops"] = spec["compute_tflops"]
    device["sources"] = spec["sources"]
    return device


def system_entries(rows_by_id: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for spec in SYSTEMS:
        member, count = spec["member"], spec["count"]
        notes = (
            f"{count} identical {member} under ideal tensor/expert parallelism: capacity, bandwidth and "
            "compute are the member's times the count; interconnect traffic is not modeled."
        )
        if member in SYSTEM_NOTES:
            notes = f"{notes} {SYSTEM_NOTES[member]}"
        out.append(
            {
                "id": f"{count}x-{member}",
                "name": spec["name"],
                "class": "multi-device system",
                "member": member,
                "count": count,
                "notes": notes,
            }
        )
    for spec in RACKS:
        entry: dict[str, Any] = {
            "id": spec["id"],
            "class": spec["class"],
            "member": spec["member"],
            "count": spec["count"],
            "aliases": spec["aliases"],
        }
        tsv = rows_by_id.get(spec.get("from_tsv", ""))
        if tsv is not None:
            entry["name"] = tsv["name"]
            entry["year"] = int(tsv["year"])
            entry["notes"] = (
                f"{spec['count']} x the per-GPU {spec['member']} row; [quoted] keeps NVIDIA's rack totals "
                f"as a cross-check (the lint requires them within 1% of the sum). {tsv['notes']}"
            )
            quoted: dict[str, Any] = {
                "memory_gb": number(tsv["memory_gb"]),
                "bandwidth_gb_per_s": number(tsv["bandwidth_gb_per_s"]),
                "compute_tflops": {
                    m: number(tsv[c]) for m, c in MODE_COLUMNS.items() if number(tsv[c]) is not None
                },
                "sparse_halved": ["fp4", *ALL_TENSOR],
                "source": tsv["sources"],
            }
            entry["quoted"] = quoted
        else:
            entry["name"] = spec["name"]
            entry["notes"] = spec["notes"]
        out.append(entry)
    return out


# --- h9: prices (on-demand rental per device-hour, board power) ------------------------------------
# One [price] table per device that has a sourced figure: the on-demand rental price in USD per device-
# hour with the provider, the date the price was read and its source; the board power in W with its
# source. The purchase price stays the row's price_usd. A system multiplies its member's figures.
LAMBDA_PRICES = (
    "github:api-evangelist/lambda-labs@1929382 plans/lambda-labs-plans-pricing.yml (transcribed from "
    "https://lambda.ai/instances, read 2026-09-20; per GPU per hour, on-demand)"
)
HYPERSTACK_PRICES = (
    "github:api-evangelist/nexgen-cloud@0fa0509 plans/nexgen-cloud-plans-pricing.yml (transcribed from "
    "https://www.hyperstack.cloud/gpu-pricing, read 2026-08-26; On-Demand per GPU per hour)"
)
OPENRELAY_PRICES = (
    "github:api-evangelist/openrelay plans/openrelay-plans-pricing.yml (transcribed from "
    "https://openrelay.inc/gpu-pricing-calculator, read 2026-09-20; per GPU-hour)"
)
DIGITALOCEAN_PRICES = (
    "https://huggingface.co/datasets/tokenwatt/gpu-cloud-prices (DigitalOcean API list price, sku "
    "gpu-mi300x1-192gb, collected 2026-10-07)"
)
POWER_TABLE = "github:canncupiscent/dc-liquid-cooling-calculator Hardware_spec.md (TDP/TBP in W)"
A100_POWER = (
    "github:quattor/template-library-standard hardware/card/gpu/nvidia/tesla_a100_80gb-sxm.pan (TDP 400 W)"
)


def _rental(usd: float, provider: str, date: str, source: str) -> dict[str, Any]:
    return {
        "rental_usd_per_hour": usd,
        "rental_provider": provider,
        "rental_date": date,
        "rental_source": source,
    }


def _power(watts: int, source: str) -> dict[str, Any]:
    return {"board_power_w": watts, "board_power_source": source}


PRICES: dict[str, dict[str, Any]] = {
    "nvidia-b200": {
        **_rental(6.99, "Lambda (1x B200 SXM6)", "2026-09-20", LAMBDA_PRICES),
        **_power(1000, f"{POWER_TABLE}: B200 (Air Cooled) 1000"),
    },
    "nvidia-b300": {**_rental(7.40, "Hyperstack", "2026-08-26", HYPERSTACK_PRICES)},
    "nvidia-h200-sxm": {
        **_rental(3.99, "Hyperstack (H200 SXM)", "2026-08-26", HYPERSTACK_PRICES),
        **_power(700, f"{POWER_TABLE}: H200 (SXM) 700"),
    },
    "nvidia-h100-sxm": {
        **_rental(4.29, "Lambda (1x H100 SXM)", "2026-09-20", LAMBDA_PRICES),
        **_power(700, f"{POWER_TABLE}: H100 (SXM5) 700"),
    },
    "nvidia-h100-pcie": {
        **_rental(3.29, "Lambda (1x H100 PCIe)", "2026-09-20", LAMBDA_PRICES),
        **_power(350, f"{POWER_TABLE}: H100 (PCIe) 350"),
    },
    "nvidia-a100-80gb-sxm": {
        **_rental(2.79, "Lambda (8x A100 SXM 80 GB, per GPU)", "2026-09-20", LAMBDA_PRICES),
        **_power(400, A100_POWER),
    },
    "nvidia-a100-40gb-sxm": {
        **_rental(1.99, "Lambda (8x A100 SXM 40 GB, per GPU)", "2026-09-20", LAMBDA_PRICES)
    },
    "nvidia-l40s": {**_power(350, f"{POWER_TABLE}: L40S 350")},
    "nvidia-l4": {**_power(72, f"{POWER_TABLE}: L4 72")},
    "nvidia-rtx-a6000": {**_rental(1.09, "Lambda (4x A6000, per GPU)", "2026-09-20", LAMBDA_PRICES)},
    "nvidia-a10": {**_rental(1.29, "Lambda (1x A10)", "2026-09-20", LAMBDA_PRICES)},
    "nvidia-rtx-4090": {**_rental(0.29, "OpenRelay", "2026-09-20", OPENRELAY_PRICES)},
    "nvidia-rtx-3090": {**_rental(0.18, "OpenRelay", "2026-09-20", OPENRELAY_PRICES)},
    "amd-mi300x": {
        **_rental(2.59, "DigitalOcean", "2026-10-07", DIGITALOCEAN_PRICES),
        **_power(750, f"{POWER_TABLE}: Instinct MI300X 750"),
    },
    "amd-mi325x": {**_power(750, f"{POWER_TABLE}: Instinct MI325X 750")},
    "amd-mi350x": {**_power(1000, f"{POWER_TABLE}: Instinct MI350X 1000")},
    "amd-mi355x": {**_power(1400, f"{POWER_TABLE}: Instinct MI355X 1400")},
    "intel-gaudi-3": {**_power(900, f"{POWER_TABLE}: Gaudi 3 (HL-325L) 900")},
}


def apply_prices(devices: list[dict[str, Any]]) -> None:
    """Attach each device's [price] table (h9's block); an id no longer in the catalog is an error."""
    ids = {d["id"] for d in devices}
    for device_id in PRICES:
        if device_id not in ids:
            raise SystemExit(f"PRICES names '{device_id}', which is not a catalog device")
    for device in devices:
        price = PRICES.get(device["id"])
        if price:
            device["price"] = dict(price)


# --- end h9 ------------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------------------
# h10: interconnect of multi-device systems (issue 10). Per-device GB/s EACH WAY (a vendor's
# "bidirectional" figure halved), the scale-up domain size, and scale-out per device. Systems not
# listed here carry no link: parallel layouts treat them as the ideal upper bound and say so.
# --------------------------------------------------------------------------------------------------

_NVLINK4 = (
    "https://petronellatech.com/hardware/h100-h200-nvlink-cluster-scaling/ (NVLink 4: 18 links x 25 GB/s "
    "each way = 900 GB/s bidirectional per GPU); https://www.dynasys.com.hk/blog/introducing-nvidia-hgx-h100-"
    "an-accelerated-server-platform-for-ai-and-high-performance-computing/ (HGX H100: 4 NVSwitch, any GPU to "
    "any other at 900 GB/s bidirectional)"
)
_NVLINK3 = (
    "https://www.nvidia.com/de-de/data-center/nvlink/ (A100: 12 third-generation NVLinks, 600 GB/s total); "
    "https://petronellatech.com/hardware/h100-h200-nvlink-cluster-scaling/ (NVLink 3: 12 links x 50 GB/s "
    "bidirectional)"
)
_NVLINK5 = (
    "https://alpha-one-index.github.io/ai-infra-index/specs/networking-interconnects.html (NVLink 5.0: "
    "18 links x 100 GB/s bidirectional = 1,800 GB/s per GPU); https://flashgenius.net/guides/ai-server-"
    "systems-amp-platform-design-ncp-aii-guide (DGX B200 NVLink/GPU 1.8 TB/s)"
)
_NVL72 = (
    "https://docs.nvidia.com/enterprise-reference-architectures/nvl72-ai-factory/latest/components.html "
    "(9 NVSwitch trays, non-blocking P2P between all 72 GPUs, 130 TB/s aggregate = 1.8 TB/s per GPU "
    "bidirectional); " + _NVLINK5
)
_CX7_400 = (
    "https://www.easymanua.ls/nvidia/dgx-h100/manual?p=19 (DGX H100: eight ConnectX-7 ports, one per GPU); "
    "https://ubytelink.com/blog/what-is-nvidia-h100-interconnect-a-technical-deep-dive.html (ConnectX-7 "
    "400 Gbps) -> 400 Gb/s = 50 GB/s each way per GPU"
)
_CX8_800 = (
    "https://docs.nvidia.com/enterprise-reference-architectures/nvl72-ai-factory/latest/components.html "
    "(GB300 compute tray: 4 Blackwell Ultra GPUs, 4 ConnectX-8); https://wccftech.com/nvidia-connectx-8-"
    "supernic-designed-for-blackwell-systems-pcie-g6-800gbe-speed/amp (ConnectX-8: 800 Gb/s) -> 100 GB/s "
    "each way per GPU"
)
_IF_MI300 = (
    "https://www.wheelersnetwork.com/2024/01/ (MI300X: seven Infinity Fabric links, 128 GB/s "
    "bidirectional each: 896 GB/s bidirectional, 448 GB/s each way per GPU, direct mesh of 8)"
)
_AMD_400 = (
    "https://github.com/MicrosoftDocs/azure-docs/blob/main/articles/virtual-machines/sizes/gpu-accelerated/"
    "nd-mi300x-v5-series.md (ND MI300X v5: 8 MI300X, InfiniBand 8x400 Gigabit NDR) -> 50 GB/s each way "
    "per GPU"
)
_PCIE4 = (
    "https://dev.to/jovan_chan_9500711396d4e6/multi-gpu-for-local-"
    "ai-in-2026-nvlink-vs-pcie-and-when-a-second-card-actually-helps-1egf (PCIe 4.0 x16: 64 GB/s "
    "bidirectional = 32 GB/s each way; no NVLink on 40/50-series GeForce)"
)
_PCIE5 = (
    "https://dev.to/jovan_chan_9500711396d4e6/multi-gpu-for-local-"
    "ai-in-2026-nvlink-vs-pcie-and-when-a-second-card-actually-helps-1egf (PCIe 5.0 x16: 128 GB/s "
    "bidirectional = 64 GB/s each way); https://yourcareergpt.com/dual-4090-nvlink-ai-dilemma/ (PCIe "
    "Gen 5.0 x16: 63 GB/s)"
)
_TB5 = (
    "https://vuink.com/post/ratnqtrg-d-dpbz/ai/you-can-turn-a-cluster-of-macs-into-an-ai-supercomputer-in-"
    "macos-tahoe-262-191500778-d-dhtml (macOS 26.2 clustering over Thunderbolt 5 at up to 80 Gb/s); "
    "https://archive.is/latest/https://www.jeffgeerling.com/blog/2025/15-tb-vram-on-mac-studio-rdma-over-"
    "thunderbolt-5 (four Mac Studio M3 Ultra, RDMA over Thunderbolt 5) -> 10 GB/s each way per cable"
)
_SPARK = (
    "https://build.nvidia.com/spark/connect-two-sparks/stacked-sparks.md (two DGX Spark joined by one QSFP "
    "cable: 200GbE direct connection over ConnectX-7); https://build.nvidia.com/spark/connect-multiple-"
    "sparks/cable-devices (one cable; a second does not increase performance) -> 25 GB/s each way"
)


#: One link of a system: GB/s each way per device, what the link is, and the source of the rate.
Link = tuple[float, str, str]


def _link(devices: int, up: Link, out: Link) -> dict[str, Any]:
    """A system's interconnect: ``devices`` in the scale-up domain on the ``up`` link, ``out`` beyond it."""
    return {
        "scale_up_devices": devices,
        "scale_up_gb_per_s": up[0],
        "scale_up_link": up[1],
        "scale_out_gb_per_s": out[0],
        "scale_out_link": out[1],
        "sources": {"scale_up_gb_per_s": up[2], "scale_out_gb_per_s": out[2]},
    }


_ONE_HOST = "none beyond this host (the domain is the whole system)"


def _one_host(devices: int, up: Link) -> dict[str, Any]:
    """A system that is one host: its scale-out is the scale-up link, nothing leaves the box."""
    return _link(devices, up, (up[0], _ONE_HOST, up[2]))


_NVSWITCH_4: Link = (450, "NVLink 4 via NVSwitch (18 links x 25 GB/s each way)", _NVLINK4)
_NVSWITCH_5: Link = (900, "NVLink 5 via NVSwitch (18 links x 50 GB/s each way)", _NVLINK5)
_NVL72_TRAYS: Link = (900, "NVLink 5 via 9 NVSwitch trays (18 links x 50 GB/s each way)", _NVL72)
_XGMI_MI300: Link = (448, "Infinity Fabric (XGMI) direct mesh, 7 links x 64 GB/s each way", _IF_MI300)
_CX7: Link = (50, "ConnectX-7 400 Gb/s per GPU", _CX7_400)
_CX8: Link = (100, "ConnectX-8 800 Gb/s per GPU", _CX8_800)
_AMD_NIC: Link = (50, "400 Gb/s NIC per GPU", _AMD_400)
_PCIE4_40_SERIES: Link = (32, "PCIe 4.0 x16 (no NVLink on 40-series)", _PCIE4)
_PCIE5_50_SERIES: Link = (64, "PCIe 5.0 x16 (no NVLink on 50-series)", _PCIE5)

#: Interconnect per system id. Consumer and Apple systems are one domain: their scale-out equals the
#: scale-up link (nothing leaves the box). Rates are upper bounds: two consumer cards often run x8/x8
#: and without peer-to-peer (through host memory), which only lowers the ceiling further.
INTERCONNECTS: dict[str, dict[str, Any]] = {
    "8x-nvidia-a100-80gb-sxm": _link(
        8,
        (300, "NVLink 3 via NVSwitch (12 links x 25 GB/s each way)", _NVLINK3),
        (
            25,
            "ConnectX-6 HDR 200 Gb/s per GPU",
            "https://alpha-one-index.github.io/ai-infra-index/specs/networking-interconnects.html "
            "(A100 clusters: ConnectX-6 HDR 200G) -> 25 GB/s each way per GPU",
        ),
    ),
    "8x-nvidia-h100-sxm": _link(8, _NVSWITCH_4, _CX7),
    "8x-nvidia-h200-sxm": _link(8, _NVSWITCH_4, _CX7),
    "8x-nvidia-b200": _link(
        8,
        _NVSWITCH_5,
        (
            50,
            "ConnectX-7 400 Gb/s per GPU",
            "https://raw.githubusercontent.com/mlcommons/inference_results_v6.0/main/closed/Nebius/systems/"
            "nebius_b200_n1.json (8x B200 node: 8x ConnectX-7 IB NDR 400Gb/s) -> 50 GB/s each way per GPU",
        ),
    ),
    "8x-nvidia-b300": _link(8, _NVSWITCH_5, _CX8),
    "nvidia-gb200-nvl72": _link(
        72,
        _NVL72_TRAYS,
        (
            50,
            "ConnectX-7 400 Gb/s per GPU",
            "https://raw.githubusercontent.com/mlcommons/inference_results_v6.1/main/closed/Crusoe/systems/"
            "GB200-NVL72_GB200-186GB_aarch64x16_Dynamo.json (each 4-GPU node: 4x ConnectX-7) -> 400 Gb/s = "
            "50 GB/s each way per GPU",
        ),
    ),
    "nvidia-gb300-nvl72": _link(72, _NVL72_TRAYS, _CX8),
    "8x-amd-mi300x": _link(8, _XGMI_MI300, _AMD_NIC),
    "8x-amd-mi325x": _link(
        8,
        (_XGMI_MI300[0], _XGMI_MI300[1], _IF_MI300 + "; MI325X keeps the MI300X platform's fabric"),
        (_AMD_NIC[0], _AMD_NIC[1], _AMD_400 + " (same 8-GPU platform)"),
    ),
    "8x-amd-mi355x": _link(
        8,
        (
            537.6,
            "Infinity Fabric (XGMI) direct mesh, 7 links x 76.8 GB/s each way",
            "https://humeconsulting.co/amd-mi355x-strong-node-level-inference-but-not-yet-rack-scale "
            "(Infinity Fabric/XGMI ~153 GB/s bidirectional per link) -> 7 x 153.6 / 2 = 537.6 GB/s each way",
        ),
        (
            50,
            "Pollara 400 Gb/s NIC per GPU",
            "https://rocm.docs.amd.com/en/latest/how-to/rocm-for-ai/inference/benchmark-docker/sglang-mori-"
            "distributed.html (8x MI355X per node, 8x Pollara 400 AI NICs, 1:1 GPU to NIC) -> 50 GB/s each "
            "way",
        ),
    ),
    "2x-nvidia-h100-sxm": _link(
        2, (450, "NVLink 4 via NVSwitch (2 GPUs of an 8-GPU HGX board)", _NVLINK4), _CX7
    ),
    "4x-nvidia-h100-sxm": _link(
        4, (450, "NVLink 4 via NVSwitch (4 GPUs of an 8-GPU HGX board)", _NVLINK4), _CX7
    ),
    "4x-nvidia-rtx-4090": _one_host(4, _PCIE4_40_SERIES),
    "2x-nvidia-rtx-3090": _one_host(
        2, (32, "PCIe 4.0 x16 (an NVLink bridge, 112.5 GB/s, is an option not assumed)", _PCIE4)
    ),
    "4x-nvidia-rtx-3090": _one_host(4, (32, "PCIe 4.0 x16", _PCIE4)),
    "2x-nvidia-rtx-4090": _one_host(2, _PCIE4_40_SERIES),
    "2x-nvidia-rtx-5090": _one_host(2, _PCIE5_50_SERIES),
    "4x-nvidia-rtx-5090": _one_host(4, _PCIE5_50_SERIES),
    "4x-nvidia-rtx-pro-6000-blackwell": _one_host(4, (64, "PCIe 5.0 x16", _PCIE5)),
    "2x-nvidia-dgx-spark": _link(
        2, (25, "ConnectX-7 200GbE, one QSFP cable", _SPARK), (25, "the same ConnectX-7 link", _SPARK)
    ),
    "2x-apple-m3-ultra-512gb": _link(
        2,
        (10, "Thunderbolt 5 (80 Gb/s), RDMA in macOS 26.2", _TB5),
        (10, "the same Thunderbolt 5 cable", _TB5),
    ),
    "4x-apple-m3-ultra-512gb": _link(
        4,
        (30, "Thunderbolt 5 full mesh (3 cables per Mac x 10 GB/s each way)", _TB5),
        (30, "the same Thunderbolt 5 mesh", _TB5),
    ),
}

#: Systems added for issue 10 (Mac Studio clusters); numbers are N x the member's.
H10_SYSTEMS: list[dict[str, Any]] = [
    {
        "member": "nvidia-h100-sxm",
        "count": 2,
        "name": "2x NVIDIA H100 SXM5 80GB (2 GPUs of an HGX H100 board)",
    },
    {
        "member": "nvidia-h100-sxm",
        "count": 4,
        "name": "4x NVIDIA H100 SXM5 80GB (4 GPUs of an HGX H100 board)",
    },
    {"member": "nvidia-rtx-4090", "count": 4, "name": "4x NVIDIA GeForce RTX 4090 24GB"},
    {"member": "apple-m3-ultra-512gb", "count": 2, "name": "2x Mac Studio M3 Ultra 512GB (Thunderbolt 5)"},
    {"member": "apple-m3-ultra-512gb", "count": 4, "name": "4x Mac Studio M3 Ultra 512GB (Thunderbolt 5)"},
]
SYSTEMS += H10_SYSTEMS
SYSTEM_NOTES["apple-m3-ultra-512gb"] = (
    "Mac Studios share no memory; they talk over Thunderbolt 5 (RDMA from macOS 26.2)."
)


def with_interconnect(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Attach each system's stated link, and say in its notes whether layouts charge communication."""
    for entry in entries:
        link = INTERCONNECTS.get(entry["id"])
        if link is None:
            entry["notes"] = (
                f"{entry['notes']} No link is stated: parallel layouts treat communication as free (the ideal "
                "upper bound)."
            )
            continue
        entry["interconnect"] = link
        entry["notes"] = entry["notes"].replace(
            "interconnect traffic is not modeled.",
            "the aggregate rows are the ideal sum; parallel layouts (`servebound layout`) charge the link.",
        )
    return entries


def main(argv: list[str]) -> int:
    tsv_path = Path(argv[1]) if len(argv) > 1 else Path("..") / "shared" / "reference" / "hardware.tsv"
    with tsv_path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    rows_by_id = {row["id"]: row for row in rows}
    devices = [device_from_row(r) for r in rows if r["class"] != "rack-scale system"]
    devices += [extra_device(spec) for spec in EXTRA_DEVICES]
    devices += [extra_device(spec) for spec in [*H11B_APPLE, *H11B_CARDS, *H11B_SOCS]]
    apply_prices(devices)
    devices = [with_runtime_overhead(d) for d in devices]
    document = {"device": devices, "system": with_interconnect(system_entries(rows_by_id))}
    header = (
        "# servebound hardware catalog: one [[device]] per device or memory configuration, one [[system]]\n"
        "# per group of identical devices. Generated by scripts/tsv_to_hardware_toml.py from the shared\n"
        "# hardware.tsv (conventions in its README: decimal GB and GB/s, dense TFLOPS, sparse-only figures\n"
        "# halved and listed in sparse_halved, ratio-derived figures listed in derived). Every number has a\n"
        "# source under [device.sources]; `servebound catalog lint` checks it.\n\n"
    )
    sys.stdout.write(header + tomli_w.dumps(document))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
