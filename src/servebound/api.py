"""The Python API: typed entry points a notebook can call in a loop. The CLI is a thin layer on top."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from servebound.core.decode import DecodeResult
from servebound.core.decode import decode as _decode
from servebound.core.engines import get_engine, kv_format_for
from servebound.core.experts import ExpertTraffic
from servebound.core.formats import FORMATS, KV_FORMATS
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.offload import offload_spec
from servebound.core.units import GB
from servebound.core.workload import (
    DEFAULT_ALLOC_CONTEXT_TOKENS,
    DEFAULT_FLOOR_TOK_PER_S,
    DEFAULT_OVERHEAD_BYTES,
    DEFAULT_READ_CONTEXT_TOKENS,
    KVAllocation,
    Speculation,
    Workload,
)
from servebound.errors import InputError
from servebound.resolve import resolve_hardware, resolve_model

if TYPE_CHECKING:  # imported on use: `servebound decode` loads none of them
    from servebound.core.prefill import PrefillResult
    from servebound.cost_report import CostReport
    from servebound.parallel import LayoutSearch, PlanResult


def load_hardware(ref: str | Hardware) -> Hardware:
    """A hardware file path (TOML/JSON), a catalog id, or an ``NxID`` system; records pass through."""
    return ref if isinstance(ref, Hardware) else resolve_hardware(ref)


def load_model(ref: str | ModelAdapter, *, kv_precision: str | None = None) -> ModelAdapter:
    """A model file path or a catalog id; optionally re-expressed at another KV cache precision."""
    model = ref if isinstance(ref, ModelAdapter) else resolve_model(ref)
    return with_kv_precision(model, kv_precision) if kv_precision else model


def with_kv_precision(model: ModelAdapter, precision: str) -> ModelAdapter:
    """The model's attention cache at another element width (recurrent state keeps its own). An
    engine's own spelling (``f16``, ``fp8_e4m3``, ``q5_1``, ``auto`` ...) is read through the engine table."""
    spelled = kv_format_for(precision) if precision not in KV_FORMATS else None
    if spelled == "model":
        return model
    layout = KV_FORMATS.get(precision) or (FORMATS.get(spelled) if spelled else None)
    if layout is None:
        raise InputError(
            "kv_precision",
            f"unknown precision {precision!r}; use one of {', '.join(KV_FORMATS)} or an engine's spelling "
            "(vLLM auto|fp8|fp8_e4m3|fp8_e5m2, llama.cpp f16|q8_0|q4_0|q4_1|q5_0|q5_1|iq4_nl)",
        )
    if model.kv_bytes_per_element is None:
        raise InputError(
            "kv_precision",
            f"model {model.id!r} does not say its KV element width ([kv] precision); "
            "set it in the model file to rescale the cache",
        )
    factor = layout.bytes_per_element / model.kv_bytes_per_element
    return model.with_kv_scale(factor, layout.name)


#: Edge bounds far beyond any real machine or workload: past them the arithmetic would overflow, so a
#: value there is a typo, and an error says so.
MAX_EDGE_GB = 1e9
MAX_EDGE_TOKENS = 10**9
MAX_EDGE_TOK_S = 1e9


def _finite(
    field: str, value: float, *, minimum: float = 0.0, strict: bool = False, maximum: float | None = None
) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise InputError(field, f"must be a finite number (got {value!r})")
    if value < minimum or (strict and value <= minimum):
        raise InputError(field, f"must be {'>' if strict else '>='} {minimum:g} (got {value:g})")
    if maximum is not None and value > maximum:
        raise InputError(field, f"{value:g} is beyond any real setting; at most {maximum:g}")
    return float(value)


def _allocation(
    kv_allocation: str | KVAllocation | None, engine: str | None, overhead_gb: float | None
) -> tuple[KVAllocation, tuple[str, float, str] | None]:
    """The cache allocation (the engine's, which a conflicting --kv-allocation may not contradict) and
    the engine's overhead convention where O was left to it."""
    try:
        asked = None if kv_allocation is None else KVAllocation(kv_allocation)
    except ValueError:
        raise InputError("kv_allocation", f"use 'reserved' or 'paged' (got {kv_allocation!r})") from None
    if engine is None:
        return asked or KVAllocation.RESERVED, None
    spec = get_engine(engine)
    allocation = KVAllocation(spec.kv_allocation)
    if asked is not None and asked is not allocation:
        raise InputError(
            "kv_allocation",
            f"{asked.value} conflicts with --engine {engine}, whose cache is {allocation.value} "
            f"({spec.kv_allocation_source}); drop one of them",
        )
    if overhead_gb is None and spec.memory_fraction is not None and spec.overhead != "row":
        return allocation, (spec.overhead, spec.memory_fraction, spec.overhead_source)
    return allocation, None


def make_workload(
    *,
    overhead_gb: float | None = None,
    alloc_context: int | None = None,
    read_context: int | None = None,
    floor_tok_s: float = DEFAULT_FLOOR_TOK_PER_S,
    batch: int | None = None,
    expert_traffic: str | ExpertTraffic = ExpertTraffic.EXPECTED,
    draft: ModelAdapter | None = None,
    draft_tokens: int | None = None,
    acceptance: float | None = None,
    tokens_per_step: float | None = None,
    memory_only: bool = False,
    kv_allocation: str | KVAllocation | None = None,
    engine: str | None = None,
    cpu_moe: bool = False,
    n_cpu_moe: int | None = None,
    gpu_layers: int | None = None,
    host: str | None = None,
    host_memory_gb: float | None = None,
    host_bandwidth_gb_per_s: float | None = None,
    host_link_gb_per_s: float | None = None,
) -> Workload:
    """A validated Workload from edge units (GB, tokens, tok/s). Every bad value is an InputError.

    ``kv_allocation``: ``reserved`` (the default: each session holds K_alloc(L_alloc)) or ``paged``
    (each holds what it has read, K_alloc(L_read)). ``engine``: one of the engine table's ids
    (``llama.cpp`` ... ``trt-llm``); it sets the allocation (a conflicting ``kv_allocation`` is an
    error) and, with ``overhead_gb`` None, its own runtime-overhead convention. ``cpu_moe``,
    ``n_cpu_moe``, ``gpu_layers`` put weights in host RAM (``core.offload``), with the host's memory
    from ``host`` (a host row) or ``host_memory_gb`` and ``host_bandwidth_gb_per_s``.

    Contexts left as None take the derivation's defaults (L_alloc = 100,000, L_read = 32,000), capped
    per model at its context limit when the model is shorter; contexts given are used as given.
    ``overhead_gb`` None takes the hardware row's runtime overhead, or 8 GB where it states none.
    """
    defaults = alloc_context is None and read_context is None
    if alloc_context is None:
        alloc_context = DEFAULT_ALLOC_CONTEXT_TOKENS
    if read_context is None:
        read_context = min(DEFAULT_READ_CONTEXT_TOKENS, alloc_context)
    if overhead_gb is not None:
        _finite("overhead_gb", overhead_gb, maximum=MAX_EDGE_GB)
    # L_read may be 0 (a fresh session's first step reads no cache; --range starts there); L_alloc may not.
    for field, value, least in (("alloc_context", alloc_context, 1), ("read_context", read_context, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise InputError(field, f"must be a whole number of tokens >= {least} (got {value!r})")
        if value > MAX_EDGE_TOKENS:
            raise InputError(field, f"{value} tokens is beyond any model; at most {MAX_EDGE_TOKENS:,}")
    if read_context > alloc_context:
        raise InputError(
            "read_context",
            f"{read_context} exceeds alloc_context {alloc_context}: a session cannot read more than it reserves",
        )
    _finite("floor", floor_tok_s, maximum=MAX_EDGE_TOK_S)
    if batch is not None and (not isinstance(batch, int) or isinstance(batch, bool) or batch < 1):
        raise InputError("batch", f"must be a whole number >= 1 (got {batch!r})")
    try:
        mode = ExpertTraffic(expert_traffic)
    except ValueError:
        raise InputError("expert_traffic", f"use 'expected' or 'minimum' (got {expert_traffic!r})") from None
    allocation, engine_overhead = _allocation(kv_allocation, engine, overhead_gb)
    speculation = None
    if draft is not None:
        if draft_tokens is None or draft_tokens < 1:
            raise InputError("draft_tokens", "speculative decoding needs --draft-tokens >= 1")
        if (acceptance is None) == (tokens_per_step is None):
            raise InputError(
                "acceptance", "give exactly one of --acceptance (alpha) or --tokens-per-step (rho)"
            )
        if acceptance is not None:
            _finite("acceptance", acceptance)
            if acceptance > 1:
                raise InputError("acceptance", f"is a probability in [0, 1] (got {acceptance:g})")
            rho = Speculation.rho_from_acceptance(acceptance, draft_tokens)
        else:
            assert tokens_per_step is not None
            rho = _finite("tokens_per_step", tokens_per_step)
            if not 1 <= rho <= draft_tokens + 1:
                raise InputError(
                    "tokens_per_step",
                    f"rho must lie in [1, draft_tokens + 1 = {draft_tokens + 1}] (got {rho:g})",
                )
        speculation = Speculation(
            draft=draft, draft_tokens=draft_tokens, tokens_per_step=rho, acceptance=acceptance
        )
    elif draft_tokens is not None or acceptance is not None or tokens_per_step is not None:
        raise InputError(
            "draft", "--draft-tokens, --acceptance and --tokens-per-step need a draft model (--draft)"
        )
    return Workload(
        overhead_bytes=DEFAULT_OVERHEAD_BYTES if overhead_gb is None else overhead_gb * GB,
        overhead_from_hardware=overhead_gb is None,
        overhead_source=None if overhead_gb is None else f"given: {overhead_gb:g} GB",
        alloc_context_tokens=alloc_context,
        read_context_tokens=read_context,
        floor_tok_per_s=floor_tok_s,
        forced_batch=batch,
        expert_traffic=mode,
        speculation=speculation,
        fit_contexts_to_model=defaults,
        memory_only=memory_only,
        kv_allocation=allocation,
        engine=engine,
        engine_overhead=engine_overhead,
        offload=offload_spec(
            cpu_moe=cpu_moe,
            n_cpu_moe=n_cpu_moe,
            gpu_layers=gpu_layers,
            host=host,
            host_memory_gb=host_memory_gb,
            host_bandwidth_gb_per_s=host_bandwidth_gb_per_s,
            host_link_gb_per_s=host_link_gb_per_s,
        ),
    )


def default_workload() -> Workload:
    """The workload of "the default answer for this pair": what every surface computes with when nothing
    is asked (the CLI without workload flags, a pair page without a query, the hardware and model pages'
    tables, ``/models?fits=``, rank): the hardware row's runtime overhead (8 GB where it states none) and
    the derivation's contexts capped at the model's context limit. The one place that default is built.
    """
    return make_workload()


def _workload(workload: object, keywords: dict[str, Any]) -> Workload:
    """A Workload record, or one built from ``make_workload``'s keywords (not both); anything else is an
    InputError naming ``workload`` and the fix."""
    if "floor" in keywords:  # the CLI's and the API's name for r* (make_workload's is floor_tok_s)
        if "floor_tok_s" in keywords:
            raise InputError("floor", "give floor or floor_tok_s, not both")
        keywords = {("floor_tok_s" if k == "floor" else k): v for k, v in keywords.items()}
    if workload is None:
        return make_workload(**keywords) if keywords else default_workload()
    if not isinstance(workload, Workload):
        kind = type(workload).__name__
        raise InputError(
            "workload",
            f"must be a Workload (servebound.make_workload(...)) or given as keywords, not a {kind}; "
            + ("call decode(hw, model, **that_dict)" if isinstance(workload, dict) else "see make_workload"),
        )
    if keywords:
        raise InputError("workload", f"give a Workload or keywords ({', '.join(sorted(keywords))}), not both")
    return workload


def _pair(
    hardware: str | Hardware, model: str | ModelAdapter, kv_precision: str | None
) -> tuple[Hardware, ModelAdapter]:
    return load_hardware(hardware), load_model(model, kv_precision=kv_precision)


def decode(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    workload: Workload | None = None,
    *,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> DecodeResult:
    """Decode ceilings for a hardware and model (records, file paths or catalog ids), as ``servebound
    decode``: under ``workload``, or one built from ``make_workload``'s keywords
    (``decode("nvidia-rtx-4090", "qwen3-8b", read_context=8000)``), or the default answer for the pair."""
    hw, mdl = _pair(hardware, model, kv_precision)
    return _decode(hw, mdl, _workload(workload, workload_keywords))


def prefill(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    prompt_tokens: int,
    workload: Workload | None = None,
    *,
    batch: int | Literal["max"] = 1,
    chunk_tokens: int | None = None,
    ttft_budget_s: float | None = None,
    linear_mode: str | None = None,
    attention_mode: str | None = None,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> PrefillResult:
    """Prefill ceilings, as ``servebound prefill``: records or ids, the workload as a record or keywords
    (the default answer for the pair without either). The core's keywords (batch, chunk, budget, modes)
    as in :func:`servebound.core.prefill.prefill`."""
    from servebound.core.prefill import prefill as _prefill

    hw, mdl = _pair(hardware, model, kv_precision)
    return _prefill(
        hw,
        mdl,
        prompt_tokens,
        workload=_workload(workload, workload_keywords),
        batch=batch,
        chunk_tokens=chunk_tokens,
        ttft_budget_s=ttft_budget_s,
        linear_mode=linear_mode,
        attention_mode=attention_mode,
    )


def cost(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    workload: Workload | None = None,
    *,
    usd_per_hour: float | None = None,
    pricing: str = "auto",
    batches: list[int] | None = None,
    prompt_tokens: int | None = None,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> CostReport:
    """The cost curve over batch, as ``servebound cost`` (priced from the catalog row, or
    ``usd_per_hour`` for the whole system; ``pricing`` auto, rental or owned)."""
    from servebound.cost_report import DEFAULT_COST_PROMPT_TOKENS, cost_report
    from servebound.pricing import catalog_price, resolve_price

    hw, mdl = _pair(hardware, model, kv_precision)
    price = resolve_price(hw, catalog_price(hardware), usd_per_hour=usd_per_hour, pricing=pricing)
    prompt = DEFAULT_COST_PROMPT_TOKENS if prompt_tokens is None else prompt_tokens
    work = _workload(workload, workload_keywords)
    return cost_report(hw, mdl, work, price, batches=batches, prompt_tokens=prompt)


def layout(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    workload: Workload | None = None,
    *,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> LayoutSearch:
    """Every valid parallel layout of a system for a model, best first, as ``servebound layout``."""
    from servebound.parallel import search_system

    mdl = load_model(model, kv_precision=kv_precision)
    return search_system(hardware, mdl, _workload(workload, workload_keywords))


def plan(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    *,
    prompt_tokens: int,
    output_tokens: int,
    users: float | None = None,
    requests_per_s: float | None = None,
    floor_tok_s: float = DEFAULT_FLOOR_TOK_PER_S,
    ttft_budget_s: float | None = None,
    usd_per_device_hour: float | None = None,
    overhead_gb: float | None = None,
    kv_precision: str | None = None,
) -> PlanResult:
    """The fleet a stated traffic needs, as ``servebound plan`` (exactly one of ``users`` and
    ``requests_per_s``)."""
    from servebound.parallel import run_plan

    if overhead_gb is not None:
        _finite("overhead_gb", overhead_gb, maximum=MAX_EDGE_GB)
    return run_plan(
        hardware,
        load_model(model, kv_precision=kv_precision),
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        floor_tok_s=floor_tok_s,
        users=users,
        requests_per_s=requests_per_s,
        ttft_budget_s=ttft_budget_s,
        usd_per_device_hour=usd_per_device_hour,
        overhead_bytes=None if overhead_gb is None else overhead_gb * GB,
    )
