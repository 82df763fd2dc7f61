"""Generate src/servebound/catalog/data/hardware.toml from the shared hardware.tsv.

    python scripts/tsv_to_hardware_toml.py [path/to/hardware.tsv] > src/servebound/catalog/data/hardware.toml

The TOML it writes is the source of truth at run time; this script records how it was made. It does
three things on top of a plain column copy:

* splits each row's ``sources`` cell (``mem/bw: ...; compute: ...; price: ...``) into one source per
  number (``sources.memory_gb``, ``sources.bandwidth_gb_per_s``, ``sources.compute`` or per mode,
  ``sources.price_usd``); an unlabelled cell backs every number of its row;
* adds the curation the TSV keeps in prose: which modes were halved from a sparse figure or derived
  by ratio, low-confidence flags, aliases, and notes from our own spot checks (``CURATION``);
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
    "nvidia-rtx-6000-ada": {},
    "nvidia-rtx-5090": {
        "sparse_halved": ["fp4", "fp8"],
        "aliases": ["5090"],
        "add_note": "Spot check: Linux Format (Jarred Walton) lists 32 GB, 28 Gb/s x 512-bit, 1,792 GB/s.",
    },
    "nvidia-rtx-5080": {"sparse_halved": ["fp4"], "derived": ["fp8", "bf16", "fp16"], "aliases": ["5080"]},
    "nvidia-rtx-4090": {
        "aliases": ["4090"],
        "add_note": "Spot check: waredb.com labels 330.3 as dense FP8 and 660.6 as sparse, i.e. the "
        "FP32-accumulate column; gigagpu.com gives 660.6 dense (FP16 accumulate), as here.",
    },
    "nvidia-rtx-4080": {"sparse_halved": ["fp8"], "aliases": ["4080"]},
    "nvidia-rtx-3090": {"derived": ["int8"], "aliases": ["3090"]},
    "nvidia-rtx-3060-12gb": {"aliases": ["3060"]},
    "nvidia-dgx-spark": {
        "sparse_halved": ["fp4"],
        "aliases": ["spark", "gb10"],
        "add_note": "Spot check: meterpreter.org's Hot Chips coverage quotes LPDDR5x at 9400 MT/s and "
        "'273-301 GB/s'; NVIDIA's spec and dgx-spark.warehack.ing give 273 GB/s, used here. BF16/FP16 are "
        "not published, so absent: the derivation's prefill example assumes 125 dense BF16 (FP4 / 4), "
        "which is below the ~213 measured and so cannot stand as a peak.",
    },
    "nvidia-jetson-agx-thor": {"sparse_halved": ["fp4", "fp8"], "aliases": ["jetson-thor"]},
    "amd-mi355x": {},
    "amd-mi350x": {"sparse_halved": ["fp4"], "derived": ALL_TENSOR},
    "amd-mi325x": {},
    "amd-mi300x": {
        "add_note": "Spot check: aiwiki.ai and jaredwatkins.com give 192 GB HBM3 at 5.3 TB/s, ~1.3 PF FP16 "
        "and ~2.6 PF FP8.",
    },
    "amd-ryzen-ai-max-plus-395-128gb": {"aliases": ["strix-halo", "ryzen-ai-max-395"]},
    "amd-radeon-rx-7900-xtx": {"aliases": ["7900-xtx"]},
    "amd-radeon-ai-pro-r9700": {"aliases": ["r9700"], "low_confidence": True},
    "apple-m3-max-96gb": {"low_confidence": True},
    "apple-m5-max-128gb": {
        "add_note": "Spot check: awesomeagents.ai and cputronic.com give 614 GB/s and up to 128 GB for the "
        "40-core GPU.",
    },
    "apple-m5-max-36gb": {"low_confidence": True},
    "intel-arc-b580": {"aliases": ["b580"]},
    "intel-gaudi-3": {"aliases": ["gaudi3"]},
    "google-tpu-v5e": {},
    "google-tpu-v6e": {"aliases": ["trillium"]},
    "google-tpu7x-ironwood": {"aliases": ["ironwood", "tpu-v7"], "low_confidence": True},
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
        "compute_tflops": {"fp32": 38.7},
        "price_usd": 4649,
        "sources": {
            "memory_gb": "https://servethehome.com/nvidia-rtx-a6000-48gb-gpu-drops-quadro-designation "
            "(NVIDIA spec table: 48 GB GDDR6 with ECC, 384-bit, 768 GB/s)",
            "bandwidth_gb_per_s": "https://servethehome.com/nvidia-rtx-a6000-48gb-gpu-drops-quadro-"
            "designation (768 GB/s); "
            f"{A6000_SPECS} (16 Gbps x 384-bit = 768.0 GB/s)",
            "fp32": f"{A6000_SPECS} (FP32 38.71 TFLOPS)",
            "price_usd": f"{A6000_SPECS} (launch price 4,649 USD)",
        },
        "notes": "Extra row (not in hardware.tsv), looked up for the thin workstation class. Ampere GA102, "
        "84 SMs. Tensor (BF16/FP16/INT8) peaks not captured from a citable page, so left empty; no FP8. "
        "Price is the launch price.",
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
    notes = row["notes"].strip()
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
    device["compute_tflops"] = compute
    sources = split_sources(row["sources"], present)
    for (row_id, key), (old, new) in SOURCE_FIXES.items():
        if row_id == row["id"]:
            if sources.get(key) != old:
                raise SystemExit(f"source fix for {row_id}.{key} no longer matches: {sources.get(key)!r}")
            sources[key] = new
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
