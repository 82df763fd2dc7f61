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
from servebound.inputs.scenario import resolve_scenario

#: safetensors formats mlx-lm loads as released (no conversion to another width).
_MLX_SAFETENSORS = frozenset({"bf16", "fp16"})


def engine_for(weight_format: str, vendor: str | None, hardware_id: str) -> str | None:
    """The engine that runs a catalog weight format on this hardware (see the module's rules), or None."""
    from servebound.core.engines import device_family

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
        runs_on = engine_for(profile.weight_format, vendor, hardware.id)
        if runs_on is None or (engine is not None and runs_on != engine):
            continue
        scenario = resolve_scenario(workload, hardware=hardware, model=profile.adapter)
        result = decode(hardware, profile.adapter, scenario.workload)
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
