"""Storage formats and their effective bytes per element, derived from each format's block layout.

One table, :data:`FORMATS`, holds every layout the project knows, weights and caches alike, written as
gguf-py writes ggml's (``Q4_0: (32, 2 + 16)``): ``block`` elements stored in ``scale_bytes`` of scales
(and minimums, biases, high bits) plus ``value_bytes`` of packed values. Bytes per element =
(scale_bytes + value_bytes) / block; bits per weight = 8 x that. Nothing else in the tree restates a
layout: the weight formats and the cache formats are selections from this table by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class BlockLayout:
    """``block`` elements stored as ``scale_bytes`` of scales plus ``value_bytes`` of packed values."""

    name: str
    block: int
    scale_bytes: int
    value_bytes: int
    note: str = ""

    @property
    def block_bytes(self) -> int:
        return self.scale_bytes + self.value_bytes

    @property
    def bytes_per_element(self) -> float:
        return self.block_bytes / self.block

    @property
    def bits_per_element(self) -> float:
        return 8.0 * self.bytes_per_element


#: Every storage layout: name -> BlockLayout(name, block, scale bytes, value bytes, what they hold).
#: ggml's types (q*, iq*) match gguf-py's GGML_QUANT_SIZES byte for byte (a test checks it).
FORMATS: dict[str, BlockLayout] = {
    layout.name: layout
    for layout in (
        BlockLayout("fp32", 1, 0, 4, "IEEE binary32"),
        BlockLayout("fp16", 1, 0, 2, "IEEE binary16"),
        BlockLayout("bf16", 1, 0, 2, "bfloat16"),
        BlockLayout("fp8", 1, 0, 1, "E4M3 or E5M2, per-tensor or per-channel scale ignored"),
        BlockLayout(
            "fp8_block",
            128 * 128,
            4,
            128 * 128,
            "E4M3 with one float32 scale per 128 x 128 block (weight_block_size [128, 128])",
        ),
        BlockLayout(
            "nvfp4", 16, 1, 8, "one E4M3 scale + 16 FP4 (E2M1) values; per-tensor FP32 scale ignored"
        ),
        BlockLayout("mxfp4", 32, 1, 16, "one E8M0 scale + 32 FP4 (E2M1) values"),
        BlockLayout(
            "int4_g32",
            32,
            2,
            16,
            "compressed-tensors pack-quantized: 32 symmetric int4 values + one bf16 scale per group of 32",
        ),
        BlockLayout("q8_0", 32, 2, 32, "fp16 scale + 32 int8"),
        BlockLayout("q4_0", 32, 2, 16, "fp16 scale + 32 nibbles"),
        BlockLayout("q4_1", 32, 2 + 2, 16, "fp16 scale + fp16 min + 32 nibbles"),
        BlockLayout("q5_0", 32, 2 + 4, 16, "fp16 scale + 32 high bits; 32 low nibbles"),
        BlockLayout("q5_1", 32, 2 + 2 + 4, 16, "fp16 scale + fp16 min + 32 high bits; 32 low nibbles"),
        BlockLayout("iq4_nl", 32, 2, 16, "fp16 scale + 32 nibbles indexing a non-linear table"),
        BlockLayout(
            "q2_k",
            256,
            16 + 2 + 2,
            64,
            "16 B of 4-bit sub-block scales/mins + fp16 d + fp16 dmin; 2-bit values",
        ),
        BlockLayout(
            "q3_k", 256, 32 + 12 + 2, 64, "32 B high bits + 12 B of 6-bit scales + fp16 d; 2-bit low values"
        ),
        BlockLayout("q4_k", 256, 2 + 2 + 12, 128, "fp16 d + fp16 dmin + 12 B of 6-bit sub-block scales/mins"),
        BlockLayout(
            "q5_k",
            256,
            2 + 2 + 12,
            128 + 32,
            "fp16 d + fp16 dmin + 12 B of 6-bit sub-block scales/mins; 128 B low nibbles + 32 B high bits",
        ),
        BlockLayout(
            "q6_k", 256, 2 + 16, 128 + 64, "fp16 d + 16 int8 sub-block scales; 128 B low + 64 B high bits"
        ),
        BlockLayout(
            "iq4_xs", 256, 2 + 2 + 4, 128, "fp16 d + 2 B high and 4 B low bits of 6-bit sub-block scales"
        ),
        BlockLayout(
            "mlx_4bit", 64, 2 + 2, 32, "MLX affine: bf16 scale + bf16 bias per 64; 64 x 4-bit values"
        ),
        BlockLayout(
            "mlx_6bit", 64, 2 + 2, 48, "MLX affine: bf16 scale + bf16 bias per 64; 64 x 6-bit values"
        ),
        BlockLayout(
            "mlx_5bit", 64, 2 + 2, 40, "MLX affine: bf16 scale + bf16 bias per 64; 64 x 5-bit values"
        ),
        BlockLayout(
            "mlx_8bit", 64, 2 + 2, 64, "MLX affine: bf16 scale + bf16 bias per 64; 64 x 8-bit values"
        ),
        BlockLayout(
            "mlx_8bit_g32",
            32,
            2 + 2,
            32,
            "MLX affine, group size 32 (mlx-lm --q-group-size 32): bf16 scale + bias per 32; 32 x 8-bit",
        ),
        BlockLayout(
            "mlx_4bit_g32", 32, 2 + 2, 16, "MLX affine, group size 32: bf16 scale + bias per 32; 32 x 4-bit"
        ),
        BlockLayout(
            "mlx_5bit_g32", 32, 2 + 2, 20, "MLX affine, group size 32: bf16 scale + bias per 32; 32 x 5-bit"
        ),
        BlockLayout(
            "mlx_6bit_g32", 32, 2 + 2, 24, "MLX affine, group size 32: bf16 scale + bias per 32; 32 x 6-bit"
        ),
    )
}

#: Cache element formats a runtime can store K and V in (llama.cpp's cache types included).
KV_FORMATS: dict[str, BlockLayout] = {
    name: FORMATS[name] for name in ("fp32", "fp16", "bf16", "fp8", "q8_0", "q4_0")
}


def kv_bytes_per_element(precision: str) -> float:
    """Bytes per cached element for a KV precision name; KeyError when unknown."""
    return KV_FORMATS[precision].bytes_per_element


def format_words(value: str) -> str:
    """A weight or cache format id as people write it: ``q4_k_m`` Q4_K_M, ``fp8`` FP8, ``mlx_4bit`` MLX
    4-bit, ``fp8_block`` FP8 with block scales, ``bf16_mxfp4_experts`` BF16, experts in MXFP4,
    ``q4_0_qat`` Q4_0, quantization-aware trained."""
    if m := re.fullmatch(r"(fp|bf)(\d+)_acc(\d+)", value):  # an arithmetic mode: fp16_acc16
        return f"{m.group(1).upper()}{m.group(2)} with FP{m.group(3)} accumulate"
    if m := re.fullmatch(r"mlx_(\d+)bit(?:_g(\d+))?", value):
        return f"MLX {m.group(1)}-bit" + (f", groups of {m.group(2)}" if m.group(2) else "")
    if m := re.fullmatch(r"([a-z0-9]+)_([a-z0-9_]+?)_experts", value):
        return f"{format_words(m.group(1))}, experts in {format_words(m.group(2))}"
    if m := re.fullmatch(r"([a-z0-9]+)_g(\d+)", value):
        return f"{format_words(m.group(1))} (groups of {m.group(2)})"
    for tail, said in (
        ("_block", " with block scales"),
        ("_qat", ", quantization-aware trained"),
        ("_moe", " experts"),
    ):
        if value.endswith(tail):
            return format_words(value.removesuffix(tail)) + said
    return value.upper()
