"""What this machine serves: for each catalog model, the weight format (and engine) it would run in, where
a session fits and clears the floor, best (largest) model first.

Every profile of every model (all weight formats) is evaluated at the workload given; per model the
format kept is the one with the most weight bytes that still clears the floor (more bits per weight is
the better copy of the same model), among the formats an engine runs on this hardware:

* llama.cpp's file types (q4_k_m, q8_0, f16, mxfp4_moe ...): llama.cpp, on every vendor (Ollama and
  LM Studio run the same files);
* MLX formats (mlx_4bit ...): mlx, on Apple silicon only;
* safetensors releases (bf16, fp8, nvfp4 ...): vllm on NVIDIA and AMD GPUs (nvfp4 only where the family
  multiplies FP4, per ``core.engines``; MXFP4 experts run on older GPUs through vLLM's Marlin kernels),
  mlx for bf16/fp16 on Apple silicon; none on other hardware.

With an engine named (``fit --engine E``), the formats that engine runs on the device's vendor, per the
engine table (``catalog/data/engines.toml``: Ollama and LM Studio run llama.cpp's files, LM Studio also
MLX on Apple; SGLang and TensorRT-LLM the safetensors releases on their vendors).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from servebound.catalog.models import CatalogModel
from servebound.core.decode import DecodeResult, Verdict, decode
from servebound.core.hardware import Hardware
from servebound.core.workload import Workload
from servebound.importers.hf.llama_cpp import LLAMA_CPP_MIXES

#: safetensors formats mlx-lm loads as released (no conversion to another width).
_MLX_SAFETENSORS = frozenset({"bf16", "fp16"})


def engine_for(
    weight_format: str, vendor: str | None, hardware_id: str, engine: str | None = None
) -> str | None:
    """The engine that runs a catalog weight format on this hardware (see the module's rules), or None;
    with ``engine``, that engine where the engine table (``core.engines``: format classes per vendor) says
    it runs the format on this vendor's devices (a hardware file, vendor unknown: where it runs
    llama.cpp's files), else None."""
    from servebound.core.engines import device_family

    if engine is not None:
        return engine if _engine_runs(engine, weight_format, vendor, hardware_id) else None
    vendor = (vendor or "").casefold()
    if weight_format in LLAMA_CPP_MIXES:
        return "llama.cpp"
    if weight_format.startswith("mlx_"):
        return "mlx" if vendor == "apple" else None
    if vendor == "apple":
        return "mlx" if weight_format in _MLX_SAFETENSORS else None
    if vendor in ("nvidia", "amd"):
        if weight_format == "nvfp4":
            family = device_family(hardware_id)
            return "vllm" if family is not None and "fp4" in family.hardware_modes else None
        return "vllm"
    return None


def _engine_runs(engine: str, weight_format: str, vendor: str | None, hardware_id: str) -> bool:
    """Whether the engine table says ``engine`` runs this weight format on this vendor's devices (NVFP4
    releases, as without an engine: only where the device family multiplies FP4)."""
    from servebound.core.engines import device_family, format_class, get_engine

    cls = format_class(weight_format)
    if cls is None:
        return False
    if cls == "fp4":
        family = device_family(hardware_id)
        if family is None or "fp4" not in family.hardware_modes:
            return False
    runs_on = get_engine(engine).formats.get(cls, ())
    if vendor is None:  # a hardware file: llama.cpp's files are assumed to run on it
        return cls == "gguf" and bool(runs_on)
    return vendor.casefold() in runs_on


@dataclass(frozen=True)
class FitRow:
    """One model this machine serves at the floor, in the format and engine it would use."""

    profile: CatalogModel
    engine: str
    decode: DecodeResult


def fit_models(
    hardware: Hardware,
    vendor: str | None,
    profiles: Iterable[CatalogModel],
    workload: Workload,
    *,
    engine: str | None = None,
) -> tuple[list[FitRow], int]:
    """(rows, models considered): per model the heaviest format an engine runs here that clears the floor,
    largest model (total parameters) first; ``engine`` keeps only that engine's formats."""
    best: dict[str, FitRow] = {}
    bases: set[str] = set()
    for profile in profiles:
        bases.add(profile.base_id)
        runs_on = engine_for(profile.weight_format, vendor, hardware.id, engine)
        if runs_on is None:
            continue
        result = decode(hardware, profile.adapter, workload.resolve(hardware, profile.adapter))
        if result.verdict is not Verdict.FLOOR_FIT:
            continue
        kept = best.get(profile.base_id)
        heavier = kept is None or profile.adapter.weights.resident > kept.profile.adapter.weights.resident
        if heavier:
            best[profile.base_id] = FitRow(profile, runs_on, result)
    rows = sorted(
        best.values(),
        key=lambda r: (-(r.profile.total_params or 0.0), -(r.decode.single_session_tok_per_s or 0.0)),
    )
    return rows, len(bases)


def fit_row_json(row: FitRow, expected: dict[str, Any] | None) -> dict[str, Any]:
    """One row of `servebound fit --json`."""
    d = row.decode
    return {
        "model": {"id": row.profile.base_id, "name": row.profile.name},
        "profile": row.profile.id,
        "weight_format": row.profile.weight_format,
        "engine": row.engine,
        "total_params": row.profile.total_params,
        "resident_gb": row.profile.adapter.weights.resident / 1e9,
        "single_session_tok_s": d.single_session_tok_per_s,
        "aggregate_tok_s": d.aggregate_tok_per_s,
        "batch_star": d.batch_star,
        "expected": expected,
    }
