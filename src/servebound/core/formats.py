"""Storage formats and their effective bytes per element, derived from each format's block layout.

A block format stores ``block`` elements in ``block_bytes`` bytes: scales first, then packed values.
Bytes per element = block_bytes / block; bits per weight = 8 * that.
"""

from __future__ import annotations

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


#: Cache element formats a runtime can store K and V in (llama.cpp's cache types included).
KV_FORMATS: dict[str, BlockLayout] = {
    layout.name: layout
    for layout in (
        BlockLayout("fp32", 1, 0, 4, "IEEE binary32"),
        BlockLayout("fp16", 1, 0, 2, "IEEE binary16"),
        BlockLayout("bf16", 1, 0, 2, "bfloat16"),
        BlockLayout("fp8", 1, 0, 1, "E4M3 or E5M2, per-tensor scale ignored"),
        BlockLayout("q8_0", 32, 2, 32, "fp16 scale + 32 int8"),
        BlockLayout("q4_0", 32, 2, 16, "fp16 scale + 32 nibbles"),
    )
}


def kv_bytes_per_element(precision: str) -> float:
    """Bytes per cached element for a KV precision name; KeyError when unknown."""
    return KV_FORMATS[precision].bytes_per_element
