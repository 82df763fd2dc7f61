"""What this machine serves: for each catalog model, the weight format (and engine) it would run in, where
a session fits and clears the floor, best (largest) model first.

Every profile of every model (all weight formats) is evaluated at the workload given; per model the
format kept is the one with the most weight bytes that still clears the floor (more bits per weight is
the better copy of the same model), among the formats an engine runs on this hardware:

* llama.cpp's file types (q4_k_m, q8_0, f16, mxfp4_moe ...): llama.cpp, on every vendor (Ollama and
  LM Studio run the same files);
* MLX formats (mlx_4bit ...): mlx, on Apple silicon only;
* safetensors releases (bf16, fp8, nvfp4 ...): vllm on NVIDIA and AMD GPUs (nvfp4 only where the family
  multiplies FP4, per the engine table; MXFP4 experts run on older GPUs through vLLM's Marlin kernels),
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
from servebound.importers.hf.llama_cpp import LLAMA_CPP_MIXES
from servebound.inputs.declared import AnyWorkload
from servebound.inputs.scenario import resolve_scenario

#: safetensors formats mlx-lm loads as released (no conversion to another width).
_MLX_SAFETENSORS = frozenset({"bf16", "fp16"})


def engine_for(
    weight_format: str, vendor: str | None, hardware_id: str, engine: str | None = None
) -> str | None:
    """The engine that runs a catalog weight format on this hardware (see the module's rules), or None;
    with ``engine``, that engine where the engine table (``catalog.engines``: format classes per vendor) says
    it runs the format on this vendor's devices (a hardware file, vendor unknown: where it runs
    llama.cpp's files), else None."""
    from servebound.catalog.engines import device_family

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
    from servebound.catalog.engines import device_family, format_class, get_engine

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


#: The engines people run on a device class whose usual engine is known: llama.cpp (and Ollama and LM
#: Studio, which run its files) on GeForce and Radeon cards, llama.cpp or MLX on Apple silicon. Other
#: classes (datacenter parts, systems) keep every engine of the table.
USUAL_ENGINES: dict[tuple[str, str], tuple[str, ...]] = {
    ("consumer GPU", "nvidia"): ("llama.cpp",),
    ("consumer GPU", "amd"): ("llama.cpp",),
    ("unified-memory SoC", "apple"): ("llama.cpp", "mlx"),
}


def usual_engines(hardware_id: str) -> tuple[str, ...]:
    """The engines people run on this hardware's class (``USUAL_ENGINES``), or () where none is the
    usual one (a datacenter part, a system, a hardware file)."""
    from servebound.catalog.hardware import get_hardware
    from servebound.errors import InputError
    from servebound.inputs.resolve import CPU_ONLY_ID

    if hardware_id == CPU_ONLY_ID:  # this machine's CPU: llama.cpp's files run there
        return ("llama.cpp",)
    try:
        row = get_hardware(hardware_id)
    except InputError:
        return ()
    return USUAL_ENGINES.get((row.device_class, row.vendor.casefold()), ())


def said_engines(engines: tuple[str, ...]) -> str:
    """How a table names the engines its formats were kept for."""
    if not engines:
        return "any engine of the table"
    return " or ".join("llama.cpp (and Ollama, LM Studio)" if e == "llama.cpp" else e for e in engines)


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
    workload: AnyWorkload,
    *,
    engine: str | None = None,
    usual: tuple[str, ...] | None = None,
) -> tuple[list[FitRow], int]:
    """(rows, models considered): per model the heaviest format an engine runs here that clears the floor,
    largest model (total parameters) first; ``engine`` keeps only that engine's formats, ``usual`` (where
    no engine is named) only those of the engines people run on the device (by default
    ``usual_engines``: every surface asks the same question)."""
    if usual is None:
        usual = usual_engines(hardware.id) if engine is None else ()
    best: dict[str, FitRow] = {}
    bases: set[str] = set()
    tried: tuple[str | None, ...] = (engine,) if engine is not None else (usual or (None,))
    for profile in profiles:
        bases.add(profile.base_id)
        runs_on = next(
            (e for e in (engine_for(profile.weight_format, vendor, hardware.id, t) for t in tried) if e),
            None,
        )
        if runs_on is None:
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


def usual_formats(
    hardware: Hardware,
    vendor: str | None,
    profiles: list[CatalogModel],
    workload: AnyWorkload,
    usual: tuple[str, ...],
) -> list[CatalogModel]:
    """One profile per model for a ranking on a device whose usual engines are known: the heaviest format
    they run that clears the floor (``fit``'s choice, so rank and fit agree), else the lightest format
    they run (the nearest to fitting), else the release as published."""
    rows, _ = fit_models(hardware, vendor, profiles, workload, usual=usual)
    chosen = {row.profile.base_id: row.profile for row in rows}
    for profile in profiles:
        if profile.base_id in chosen:
            continue
        runs = any(engine_for(profile.weight_format, vendor, hardware.id, e) for e in usual)
        kept = chosen.get(f"~{profile.base_id}")
        if runs and (kept is None or profile.adapter.weights.resident < kept.adapter.weights.resident):
            chosen[f"~{profile.base_id}"] = profile
    out = []
    for profile in profiles:
        if profile.native:
            out.append(chosen.get(profile.base_id) or chosen.get(f"~{profile.base_id}") or profile)
    return out


def usual_profile_ids(
    hardware: Hardware, workload: AnyWorkload
) -> tuple[tuple[str, ...], frozenset[str]] | None:
    """(the usual engines, the profile per model ``usual_formats`` keeps) for a ranking of every model on
    this hardware, or None where its class has no usual engine (the releases are ranked as published).
    The CLI's rank, the API's and the site's call this one function, so they agree."""
    from servebound.catalog.hardware import get_hardware
    from servebound.catalog.models import list_models
    from servebound.inputs.resolve import CPU_ONLY_ID

    usual = usual_engines(hardware.id)
    if not usual:
        return None
    vendor = None if hardware.id == CPU_ONLY_ID else get_hardware(hardware.id).vendor
    return usual, frozenset(p.id for p in usual_formats(hardware, vendor, list_models(), workload, usual))
