"""One accelerator as a vendor's tool reports it: the record every tool's parser returns
(``device_tools`` for NVIDIA, AMD and Apple, ``intel_tools`` for Intel)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReportedDevice:
    """One accelerator as a tool reports it: its name, memory in bytes (None when the tool gives none,
    as on unified-memory parts), Apple's GPU core count, and which tool said so."""

    name: str
    memory_bytes: int | None
    tool: str
    gpu_cores: int | None = None
