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

MODES = ("fp4", "fp8", "int8", "bf16", "fp16", "fp32")
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
    device = {k: v for k, v in spec.items() if k not in ("compute_tflops", "sources", "notes", "aliases")}
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


def main(argv: list[str]) -> int:
    tsv_path = Path(argv[1]) if len(argv) > 1 else Path("..") / "shared" / "reference" / "hardware.tsv"
    with tsv_path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    rows_by_id = {row["id"]: row for row in rows}
    devices = [device_from_row(r) for r in rows if r["class"] != "rack-scale system"]
    devices += [extra_device(spec) for spec in EXTRA_DEVICES]
    document = {"device": devices, "system": system_entries(rows_by_id)}
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
