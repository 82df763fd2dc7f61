"""The JSON API: decode and prefill ceilings, the catalogs, rankings and validation.

The decode and prefill objects carry the same fields as ``servebound decode --json`` and
``servebound prefill --json``; every 4xx answers the one error shape (``servebound.web.errors``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query

from servebound.core.hardware import ARITHMETIC_MODES, ArithmeticMode
from servebound.core.prefill import prefill, prefill_range
from servebound.core.units import GB
from servebound.core.workload import MAX_BATCH
from servebound.errors import InputError
from servebound.files import model_to_mapping
from servebound.pricing import price_json
from servebound.report import decode_json, hardware_json, prefill_json, range_json
from servebound.runs.validation import validation_json
from servebound.web.errors import ERRORS
from servebound.web.pages import HardwareFilters, ModelFilters, rank_rows_for_hardware, rank_rows_for_model
from servebound.web.query import MAX_SITE_CONTEXT_TOKENS, workload_query
from servebound.web.responses import StrictJSONResponse
from servebound.web.site import SiteHardware, SiteModel
from servebound.web.state import Web, heavy_route

router = APIRouter(default_response_class=StrictJSONResponse)

CTX = MAX_SITE_CONTEXT_TOKENS
OverheadQ = Annotated[
    float | None,
    Query(
        ge=0,
        allow_inf_nan=False,
        description="O: runtime overhead in GB (the hardware row's; 8 where it states none)",
    ),
]
AllocQ = Annotated[
    int | None, Query(ge=1, le=CTX, description="L_alloc: tokens reserved per session (100,000)")
]
ReadQ = Annotated[
    int | None, Query(ge=0, le=CTX, description="L_read: tokens read per step, <= L_alloc (32,000)")
]
FloorQ = Annotated[float | None, Query(ge=0, allow_inf_nan=False, description="r*: tok/s per session (20)")]
HardwareQ = Annotated[str, Query(description="hardware id")]
ModelQ = Annotated[str, Query(description="model id")]
TrafficParam = Annotated[
    Literal["expected", "minimum"], Query(description="expected: m(n); minimum: k experts")
]
AllocationParam = Annotated[
    Literal["reserved", "paged"] | None,
    Query(description="reserved: each session holds K_alloc(L_alloc); paged: K_alloc(L_read) (reserved)"),
]

EngineParam = Annotated[
    Literal["llama.cpp", "ollama", "lm-studio", "mlx", "vllm", "sglang", "trt-llm"] | None,
    Query(description="serving engine: sets the cache allocation and the overhead convention"),
]


def workload_params(
    overhead_gb: OverheadQ = None,
    alloc_context: AllocQ = None,
    read_context: ReadQ = None,
    floor: FloorQ = None,
    expert_traffic: TrafficParam = "expected",
    kv_allocation: AllocationParam = None,
    engine: EngineParam = None,
    cpu_moe: Annotated[bool, Query(description="offload: every routed expert in host RAM")] = False,
    n_cpu_moe: Annotated[
        int | None, Query(ge=0, description="offload: experts of N MoE layers in host RAM")
    ] = None,
    gpu_layers: Annotated[int | None, Query(ge=0, description="offload: N layers on the device")] = None,
    host: Annotated[str | None, Query(description="offload: a host memory row id")] = None,
    host_memory_gb: Annotated[
        float | None, Query(gt=0, allow_inf_nan=False, description="offload: host RAM, GB")
    ] = None,
    host_bandwidth_gb_per_s: Annotated[
        float | None, Query(gt=0, allow_inf_nan=False, description="offload: host memory bandwidth, GB/s")
    ] = None,
    host_link_gb_per_s: Annotated[
        float | None, Query(gt=0, allow_inf_nan=False, description="offload: host-to-device link, GB/s (63)")
    ] = None,
) -> dict[str, Any]:
    """The workload query parameters every ceiling endpoint takes, typed once (a dependency)."""
    return {
        "overhead_gb": overhead_gb,
        "alloc_context": alloc_context,
        "read_context": read_context,
        "floor": floor,
        "expert_traffic": expert_traffic,
        "kv_allocation": kv_allocation,
        "engine": engine,
        "cpu_moe": cpu_moe or None,
        "n_cpu_moe": n_cpu_moe,
        "gpu_layers": gpu_layers,
        "host": host,
        "host_memory_gb": host_memory_gb,
        "host_bandwidth_gb_per_s": host_bandwidth_gb_per_s,
        "host_link_gb_per_s": host_link_gb_per_s,
    }


WorkloadParams = Annotated[dict[str, Any], Depends(workload_params)]


@router.get("/api/decode", tags=["ceilings"], responses=ERRORS)
def api_decode(
    web: Web,
    hardware: Annotated[str, Query(description="hardware id (see /api/hardware)")],
    model: Annotated[str, Query(description="model id (see /api/models)")],
    params: WorkloadParams,
    batch: Annotated[
        int | None, Query(ge=1, le=MAX_BATCH, description="force the batch to B sessions")
    ] = None,
    draft: Annotated[str | None, Query(description="speculative decoding: the draft model id")] = None,
    draft_tokens: Annotated[
        int | None, Query(ge=1, le=64, description="gamma: tokens drafted per step")
    ] = None,
    acceptance: Annotated[
        float | None, Query(ge=0, le=1, allow_inf_nan=False, description="alpha: per-token acceptance")
    ] = None,
    tokens_per_step: Annotated[
        float | None, Query(ge=1, allow_inf_nan=False, description="rho, given directly (<= gamma + 1)")
    ] = None,
    range: Annotated[
        bool, Query(description="also context_range: ceilings over every read context 0..the model's limit")
    ] = False,
) -> dict[str, Any]:
    """The decode ceilings: the same object as `servebound decode --json` (with the same --draft flags,
    and `--range` as range=true)."""
    hw, m = web.get_hw(hardware), web.get_model(model)
    query = workload_query(
        **params,
        batch=batch,
        draft=draft,
        draft_tokens=draft_tokens,
        acceptance=acceptance,
        tokens_per_step=tokens_per_step,
    )
    from servebound.api import decode
    from servebound.core.decode_range import decode_context_range
    from servebound.report import context_range_json

    draft_model = web.get_model(query.draft).adapter if query.draft else None
    workload = query.workload(draft_model)
    out = decode_json(decode(hw.hardware, m.adapter, workload))
    if range:
        out["context_range"] = context_range_json(decode_context_range(hw.hardware, m.adapter, workload))
    return out


@router.get("/api/prefill", tags=["ceilings"], responses=ERRORS)
@heavy_route
def api_prefill(
    web: Web,
    hardware: HardwareQ,
    model: ModelQ,
    params: WorkloadParams,
    prompt: Annotated[
        int | None,
        Query(ge=1, le=CTX, description="L: prompt tokens, <= alloc_context (optional with range)"),
    ] = None,
    chunk: Annotated[int | None, Query(ge=1, description="chunk tokens (default: one shot)")] = None,
    batch: Annotated[str, Query(pattern=r"^(max|[0-9]{1,10})$", description="B, or max")] = "1",
    linear_mode: Annotated[ArithmeticMode | None, Query()] = None,
    attention_mode: Annotated[ArithmeticMode | None, Query()] = None,
    ttft_budget: Annotated[
        float | None, Query(gt=0, allow_inf_nan=False, description="TTFT budget in seconds")
    ] = None,
    include_range: Annotated[bool, Query(alias="range", description="add the prompt-length range")] = False,
) -> dict[str, Any]:
    """The prefill ceiling: the same object as `servebound prefill --json` (with `range` when asked)."""
    hw, m = web.get_hw(hardware), web.get_model(model)
    query = workload_query(**params, prompt=prompt)
    workload = query.workload()
    if m.adapter.prefill is None:
        raise InputError("model", f"model '{m.id}' has no prefill fields, so no prefill ceiling")
    size: int | Literal["max"] = "max" if batch == "max" else int(batch)
    if size != "max" and size < 1:
        raise InputError("batch", f"must be >= 1 or 'max' (got {batch})")
    if prompt is None and not include_range:
        raise InputError("prompt", "give prompt= (or range=true for every prompt length)")
    result = None  # without prompt=, the range alone (as `servebound prefill --range` without --prompt)
    if prompt is not None:
        result = prefill(
            hw.hardware,
            m.adapter,
            prompt,
            workload=workload,
            batch=size,
            chunk_tokens=chunk,
            ttft_budget_s=ttft_budget,
            linear_mode=linear_mode,
            attention_mode=attention_mode,
        )
    rng = None
    if include_range:
        rng = prefill_range(
            hw.hardware,
            m.adapter,
            workload=workload,
            batch=1 if size == "max" else size,
            linear_mode=linear_mode,
            attention_mode=attention_mode,
        )
    if result is None:
        assert rng is not None  # no prompt= passes the checks above only with range=true
        return {"range": range_json(rng)}
    return prefill_json(result, rng)


def _system(web: Any, hardware: str) -> Any:
    from servebound.core.system import Interconnect, System
    from servebound.parallel import ResolvedSystem

    hw = web.get_hw(hardware)
    system = hw.parallel or System(hw.hardware, 1, Interconnect.ideal_for(1))
    return ResolvedSystem(hw.id, hw.name, system, dict(hw.link_sources))


@router.get("/api/layout", tags=["ceilings"], responses=ERRORS)
def api_layout(
    web: Web,
    hardware: Annotated[str, Query(description="system id (a device is a system of one)")],
    model: ModelQ,
    params: WorkloadParams,
    layout: Annotated[
        str | None, Query(max_length=64, description="tp=T,ep=E,pp=P[,dp=D]: one layout (omit: every layout)")
    ] = None,
) -> dict[str, Any]:
    """Parallel layouts of a system for a model: every valid one, best first (`servebound layout --json`),
    or with layout= the one (`servebound decode --layout ... --json`'s layout fields)."""
    from servebound.parallel import layout_assumptions, layout_json, run_layout, run_layouts, system_json

    resolved = _system(web, hardware)
    m = web.get_model(model)
    workload = workload_query(**params).workload().for_model(m.adapter)
    if layout is not None:
        _, result = run_layout(resolved, m.adapter, workload, layout)
        return {
            **layout_json(result),
            "system": system_json(resolved),
            "model": m.id,
            "assumptions": layout_assumptions(workload, result, resolved),
        }
    _, results = run_layouts(resolved, m.adapter, workload)
    if not results:
        raise InputError("layout", f"no valid layout of {resolved.id} for {m.id}")
    return {
        "system": system_json(resolved),
        "model": m.id,
        "layouts": [layout_json(r) for r in results],
        "assumptions": layout_assumptions(workload, results[0], resolved),
    }


@router.get("/api/plan", tags=["ceilings"], responses=ERRORS)
def api_plan(
    web: Web,
    hardware: Annotated[str, Query(description="system id")],
    model: ModelQ,
    prompt: Annotated[int, Query(ge=1, le=CTX, description="L: prompt tokens per request")],
    output_tokens: Annotated[int, Query(ge=1, le=CTX, description="G: output tokens per request")],
    users: Annotated[float | None, Query(gt=0, le=1e9, allow_inf_nan=False, description="N users")] = None,
    requests_per_s: Annotated[
        float | None, Query(gt=0, le=1e9, allow_inf_nan=False, description="lambda: requests per second")
    ] = None,
    floor: Annotated[
        float, Query(gt=0, le=1e6, allow_inf_nan=False, description="r*: tok/s per session")
    ] = 20.0,
    ttft_budget: Annotated[float | None, Query(gt=0, allow_inf_nan=False, description="seconds")] = None,
    usd_per_hour: Annotated[
        float | None, Query(ge=0, allow_inf_nan=False, description="price of one device-hour")
    ] = None,
    overhead_gb: OverheadQ = None,
) -> dict[str, Any]:
    """Fleet sizing: `servebound plan --json` (systems and devices for separate and shared pools, every
    step of the arithmetic)."""
    from servebound.parallel import plan_json, run_plan

    resolved = _system(web, hardware)
    m = web.get_model(model)
    plan = run_plan(
        resolved,
        m.adapter,
        prompt_tokens=prompt,
        output_tokens=output_tokens,
        floor_tok_s=floor,
        users=users,
        requests_per_s=requests_per_s,
        ttft_budget_s=ttft_budget,
        usd_per_device_hour=usd_per_hour,
        overhead_bytes=None if overhead_gb is None else overhead_gb * GB,
    )
    return plan_json(plan)


@router.get("/api/hardware", tags=["catalog"], responses=ERRORS)
def api_hardware_list(
    web: Web,
    vendor: Annotated[str | None, Query()] = None,
    min_memory_gb: Annotated[float | None, Query(allow_inf_nan=False)] = None,
) -> dict[str, Any]:
    """Every hardware row (optionally filtered), in the contract's hardware-file units."""
    f = HardwareFilters(vendor=vendor or None, min_memory_gb=min_memory_gb)
    rows = [_hardware_json(h) for h in web.site.hardware if f.keep(h)]
    return {"count": len(rows), "hardware": rows, "license": "CC BY 4.0"}


@router.get("/api/hardware/{hardware_id}", tags=["catalog"], responses=ERRORS)
def api_hardware_one(web: Web, hardware_id: str) -> dict[str, Any]:
    """One hardware row with its sources."""
    return _hardware_json(web.get_hw(hardware_id), full=True)


@router.get("/api/models", tags=["catalog"], responses=ERRORS)
def api_models_list(
    web: Web,
    family: Annotated[str | None, Query()] = None,
    fits: Annotated[str | None, Query(description="only models that fit on this hardware id")] = None,
) -> dict[str, Any]:
    """Every model profile (optionally filtered), with its adapter quantities."""
    fits_hw = web.get_hw(fits) if fits else None
    rows = [_model_json(m) for m, _ in ModelFilters(family=family).select(web.site.models, fits_hw)]
    return {"count": len(rows), "models": rows, "license": "CC BY 4.0"}


@router.get("/api/models/{model_id}", tags=["catalog"], responses=ERRORS)
def api_models_one(web: Web, model_id: str) -> dict[str, Any]:
    """One model profile with its audit."""
    return _model_json(web.get_model(model_id), full=True)


@router.get("/api/validation", tags=["validation"], responses=ERRORS)
def api_validation(web: Web) -> dict[str, Any]:
    """Published runs against their ceilings: the same object as `servebound validate --json`
    (total, at_or_below, the efficiency distribution by engine, hardware family and phase, every run)."""
    return validation_json(web.site.validation())


@router.get("/api/rank", tags=["ceilings"], responses=ERRORS)
@heavy_route
def api_rank(
    web: Web,
    params: WorkloadParams,
    hardware: Annotated[str | None, Query(description="rank every model on this hardware")] = None,
    model: Annotated[str | None, Query(description="rank every hardware row for this model")] = None,
    all_formats: Annotated[
        bool, Query(description="with hardware=: every weight format, not only each model's native one")
    ] = False,
    unsupported: Annotated[
        bool, Query(description="also list weight formats the device cannot run (format_support unsupported)")
    ] = False,
) -> dict[str, Any]:
    """Which models fit on a machine and how fast, or which machines serve a model best.

    The rows are `servebound rank --json`'s; like the CLI, hardware= ranks native formats unless
    all_formats=true."""
    if (hardware is None) == (model is None):
        raise InputError("hardware", "give exactly one of hardware= or model=")
    query = workload_query(**params)
    workload = query.workload()
    if hardware is not None:
        hw = web.get_hw(hardware)
        rows = rank_rows_for_hardware(
            web.site, hw, workload, native_only=not all_formats, runnable_only=not unsupported
        )
        return {"hardware": {"id": hw.id, "name": hw.name}, "rows": [r.json for r in rows]}
    assert model is not None
    m = web.get_model(model)
    rows = rank_rows_for_model(web.site, m, workload, runnable_only=not unsupported)
    return {"model": {"id": m.id, "name": m.name}, "rows": [r.json for r in rows]}


def _hardware_json(h: SiteHardware, *, full: bool = False) -> dict[str, Any]:
    out = {
        **hardware_json(h.hardware),
        "vendor": h.vendor,
        "class": h.device_class,
        "year": h.year,
        "memory_type": h.memory_type,
        "price_usd": h.price_usd,
        "system": h.system_label,
    }
    if full:
        out["sources"] = dict(h.sources)
        out["notes"] = h.notes
        out["sparse_halved"] = list(h.sparse_halved)
        out["modes"] = [m for m in ARITHMETIC_MODES if m in h.hardware.compute_flop_per_s]
        out["price"] = price_json(h.row_price)
    return out


def _model_json(m: SiteModel, *, full: bool = False) -> dict[str, Any]:
    a = m.adapter
    # The contract's model form, from the one function that writes it (servebound.files).
    mapping = model_to_mapping(a)
    out: dict[str, Any] = {
        "id": m.id,
        "name": m.name,
        "family": m.family,
        "total_params": m.total_params,
        "active_params": m.active_params,
        "resident_gb": a.weights.resident / GB,
        "weights": mapping["weights"],
        "experts": mapping.get("experts"),
        "kv": mapping["kv"],
        "context_limit": a.context_limit_tokens,
    }
    if full:
        out["prefill"] = mapping.get("prefill")
        out["audit"] = {
            "published_total_params": m.published_total_params,
            "published_active_params": m.published_active_params,
            "published_source": m.published_source,
            "total_params_difference": m.total_params_difference,
            "active_params_difference": m.active_params_difference,
            "checkpoint_bytes": m.checkpoint_bytes,
            "source": dict(m.source),
            "facts": dict(m.facts),
            "steps": [{"quantity": q, "value": v, "formula": f} for q, v, f in m.steps],
        }
    return out
