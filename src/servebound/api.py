"""The Python API: typed entry points a notebook can call in a loop. The CLI is a thin layer on top.

Each entry point is an edge: it resolves the workload once against the pair it names (a system's
layouts against the system) and hands the core the resolved workload, which the core never resolves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from servebound.core.advice import Note, Setting
from servebound.core.decode import DecodeResult
from servebound.core.decode import decode as _decode
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.units import GB
from servebound.core.workload import DEFAULT_FLOOR_TOK_PER_S, Workload
from servebound.errors import InputError
from servebound.inputs.declared import DeclaredWorkload
from servebound.inputs.scenario import (
    Scenario,
    default_workload,
    load_hardware,
    load_model,
    make_workload,
    resolve_scenario,
    with_kv_precision,
)
from servebound.inputs.workload import BY_NAME, WorkloadInputs
from servebound.views import report as _report  # noqa: F401 (registers the results' JSON views)

if TYPE_CHECKING:  # imported on use: `servebound decode` loads none of them
    from servebound.catalog.hardware import CatalogHardware
    from servebound.catalog.models import CatalogModel
    from servebound.catalog.search import SearchHit
    from servebound.core.decode_range import DecodeContextRange
    from servebound.core.prefill import PrefillRange, PrefillResult
    from servebound.inputs.pricing import OwnedInputs
    from servebound.views.cost_report import CostReport
    from servebound.views.parallel import LayoutSearch, PlanResult


def models(
    words: str | None = None,
    *,
    family: str | None = None,
    format: str | None = None,
    min_params: float | None = None,
    max_params: float | None = None,
    moe: bool | None = None,
    all_formats: bool = False,
) -> list[CatalogModel]:
    """Catalog model profiles matching every filter given, in catalog order: ``words`` as
    ``search()`` reads them, ``family`` (``qwen3``, ``llama``), ``format`` (a weight format:
    ``q4_k_m``, ``fp8``, ``mlx_4bit``), sizes in parameters, ``moe``. Native formats only unless
    ``all_formats`` or ``format`` is given. Each profile passes to ``decode`` and the others as is."""
    from servebound.catalog.models import CATALOG_FORMATS, list_models

    if format is not None and format not in CATALOG_FORMATS:
        raise InputError(
            "format", f"{format!r} is not a catalog format; use one of {', '.join(CATALOG_FORMATS)}"
        )
    native_only = not all_formats and format is None and words is None
    rows = list_models(
        family=family, min_params=min_params, max_params=max_params, native_only=native_only, moe=moe
    )
    if format is not None:
        rows = [m for m in rows if m.weight_format == format]
    if words is not None:
        from servebound.catalog.search import MAX_LIMIT
        from servebound.catalog.search import search as find

        found = {hit.id for hit in find(words, kind="model", limit=MAX_LIMIT)}
        rows = [m for m in rows if m.id in found]
    return rows


def hardware(
    words: str | None = None,
    *,
    vendor: str | None = None,
    cls: str | None = None,
    min_memory_gb: float | None = None,
    max_memory_gb: float | None = None,
    max_price_usd: float | None = None,
    systems: bool = True,
) -> list[CatalogHardware]:
    """Catalog hardware rows matching every filter given, in catalog order: ``words`` as ``search()``
    reads them, ``vendor`` (NVIDIA, Apple ...), ``cls`` (``consumer GPU``, ``unified-memory SoC`` ...),
    memory in GB, price in USD, ``systems`` (multi-device rows). Each row passes to ``decode`` as is."""
    from servebound.catalog.hardware import list_hardware

    rows = list_hardware(
        vendor=vendor,
        cls=cls,
        min_memory_gb=min_memory_gb,
        max_price_usd=max_price_usd,
        include_systems=systems,
    )
    if max_memory_gb is not None:
        rows = [h for h in rows if h.memory_gb <= max_memory_gb]
    if words is not None:
        from servebound.catalog.search import MAX_LIMIT
        from servebound.catalog.search import search as find

        found = {hit.id for hit in find(words, kind="hardware", limit=MAX_LIMIT)}
        rows = [h for h in rows if h.id in found]
    return rows


def search(words: str, *, kind: str | None = None, limit: int = 20) -> list[SearchHit]:
    """Models and hardware the words name, best first, as `servebound search` and /api/search answer:
    ``search("qwen3 30b q4")``, ``search("dgx spark", kind="hardware")``."""
    from servebound.catalog.search import search as find

    return find(words, kind=kind, limit=limit)


def decode(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    workload: Workload | DeclaredWorkload | WorkloadInputs | None = None,
    *,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> DecodeResult:
    """Decode ceilings for a hardware and model (records, file paths or catalog ids), as ``servebound
    decode``: under ``workload`` (a Workload or the declared inputs), or one built from
    ``make_workload``'s keywords (``decode("nvidia-rtx-4090", "qwen3-8b", read_context=8000)``), or the
    default answer for the pair. ``kv_precision`` re-expresses the target's and the draft's caches."""
    scenario = resolve_scenario(
        workload, hardware=hardware, model=model, kv_precision=kv_precision, **workload_keywords
    )
    return decode_answer(scenario)[0]


def prefill(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    prompt_tokens: int,
    workload: Workload | DeclaredWorkload | WorkloadInputs | None = None,
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
    given = {
        "prompt": prompt_tokens,
        "batch": batch,
        "chunk": chunk_tokens,
        "ttft_budget": ttft_budget_s,
        "linear_mode": linear_mode,
        "attention_mode": attention_mode,
    }
    for name, value in given.items():  # the declared bounds, as the CLI and the API check them
        BY_NAME[name].check(value)
    scenario = resolve_scenario(
        workload, hardware=hardware, model=model, kv_precision=kv_precision, **workload_keywords
    )
    result, _ = prefill_answer(
        scenario,
        prompt_tokens,
        batch=batch,
        chunk_tokens=chunk_tokens,
        ttft_budget_s=ttft_budget_s,
        linear_mode=linear_mode,
        attention_mode=attention_mode,
    )
    assert result is not None  # a prompt was given
    return result


def decode_answer(
    scenario: Scenario, *, context_range: bool = False
) -> tuple[DecodeResult, DecodeContextRange | None]:
    """What `servebound decode`, ``decode()`` and /api/decode answer for a scenario, computed once for
    all: the decode ceilings (with the engine's band) and, with ``context_range``, the ceilings over
    every read context."""
    result = _decode(scenario.hardware, scenario.model, scenario.workload)
    if result.workload.engine is not None:
        from servebound.runs.band import with_band  # the runs are read only where an engine is named

        result = with_band(result)
    if not context_range:
        return result, None
    from servebound.core.decode_range import decode_context_range  # only where --range asks for it

    return result, decode_context_range(scenario.hardware, scenario.model, scenario.workload)


def prefill_answer(
    scenario: Scenario,
    prompt_tokens: int | None,
    *,
    batch: int | Literal["max"] = 1,
    prompt_range: bool = False,
    chunk_tokens: int | None = None,
    ttft_budget_s: float | None = None,
    linear_mode: str | None = None,
    attention_mode: str | None = None,
) -> tuple[PrefillResult | None, PrefillRange | None]:
    """What `servebound prefill`, ``prefill()`` and /api/prefill answer for a scenario, computed once
    for all: the ceiling at ``prompt_tokens`` (with the engine's band) and, with ``prompt_range``, the
    range over every prompt length (of one sequence where ``batch`` is max); at least one is asked."""
    from servebound.core.prefill import prefill as _prefill
    from servebound.core.prefill import prefill_range

    if prompt_tokens is None and not prompt_range:
        raise InputError(
            "prompt",
            Note.of(
                "give ",
                Setting("prompt", placeholder="L"),
                " (or ",
                Setting("range", True),
                " for every prompt length)",
            ),
        )
    hw, mdl, work = scenario.hardware, scenario.model, scenario.workload
    modes = {"linear_mode": linear_mode, "attention_mode": attention_mode}
    rng = None
    if prompt_range:
        rng = prefill_range(hw, mdl, workload=work, batch=1 if batch == "max" else batch, **modes)
    if prompt_tokens is None:
        return None, rng
    result = _prefill(
        hw,
        mdl,
        prompt_tokens,
        workload=work,
        batch=batch,
        chunk_tokens=chunk_tokens,
        ttft_budget_s=ttft_budget_s,
        **modes,
    )
    if result.workload.engine is not None:
        from servebound.runs.band import with_band

        result = with_band(result)
    return result, rng


def cost(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    workload: Workload | DeclaredWorkload | WorkloadInputs | None = None,
    *,
    usd_per_hour: float | None = None,
    pricing: str = "auto",
    owned: OwnedInputs | None = None,
    batches: list[int] | None = None,
    prompt_tokens: int | None = None,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> CostReport:
    """The cost curve over batch, as ``servebound cost`` (priced from the catalog row, or
    ``usd_per_hour`` for the whole system; ``pricing`` auto, rental or owned)."""
    scenario = resolve_scenario(
        workload, hardware=hardware, model=model, kv_precision=kv_precision, **workload_keywords
    )
    return cost_answer(
        scenario,
        hardware,
        usd_per_hour=usd_per_hour,
        pricing=pricing,
        owned=owned,
        batches=batches,
        prompt_tokens=prompt_tokens,
    )


def cost_answer(
    scenario: Scenario,
    price_ref: str | Hardware,
    *,
    usd_per_hour: float | None = None,
    pricing: str = "auto",
    owned: OwnedInputs | None = None,
    batches: list[int] | None = None,
    prompt_tokens: int | None = None,
) -> CostReport:
    """What `servebound cost` and ``cost()`` answer for a scenario: priced from ``price_ref``'s catalog
    row (or ``usd_per_hour``)."""
    from servebound.inputs.pricing import catalog_price, resolve_price
    from servebound.views.cost_report import DEFAULT_COST_PROMPT_TOKENS, cost_report

    hw = scenario.hardware
    price = resolve_price(
        hw, catalog_price(price_ref), usd_per_hour=usd_per_hour, pricing=pricing, owned=owned
    )
    prompt = DEFAULT_COST_PROMPT_TOKENS if prompt_tokens is None else prompt_tokens
    return cost_report(hw, scenario.model, scenario.workload, price, batches=batches, prompt_tokens=prompt)


def layout(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    workload: Workload | DeclaredWorkload | WorkloadInputs | None = None,
    *,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> LayoutSearch:
    """Every valid parallel layout of a system for a model, best first, as ``servebound layout``."""
    from servebound.views.parallel import search_system

    scenario = resolve_scenario(
        workload, hardware=hardware, model=model, kv_precision=kv_precision, **workload_keywords
    )
    return search_system(hardware, scenario.model, scenario.workload)


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
    from servebound.views.parallel import run_plan

    BY_NAME["overhead_gb"].check(overhead_gb)
    return run_plan(
        hardware,
        resolve_scenario(hardware=hardware, model=model, kv_precision=kv_precision).model,
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        floor_tok_s=floor_tok_s,
        users=users,
        requests_per_s=requests_per_s,
        ttft_budget_s=ttft_budget_s,
        usd_per_device_hour=usd_per_device_hour,
        overhead_bytes=None if overhead_gb is None else overhead_gb * GB,
    )


__all__ = [
    "Scenario",
    "cost",
    "cost_answer",
    "decode",
    "decode_answer",
    "default_workload",
    "layout",
    "load_hardware",
    "load_model",
    "make_workload",
    "plan",
    "prefill",
    "prefill_answer",
    "resolve_scenario",
    "with_kv_precision",
]
