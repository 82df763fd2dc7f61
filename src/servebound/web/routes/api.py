"""The JSON API: decode and prefill ceilings, the catalogs, rankings and validation.

The decode and prefill objects carry the same fields as ``servebound decode --json`` and
``servebound prefill --json``; every 4xx answers the one error shape (``servebound.web.app.errors``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import Depends, Query, Request, Response
from fastapi.dependencies.utils import get_flat_params
from fastapi.routing import APIRoute

from servebound.catalog.hardware_names import HARDWARE_CLASSES
from servebound.catalog.search import MAX_LIMIT, search
from servebound.core.hardware import ARITHMETIC_MODES
from servebound.core.units import GB
from servebound.core.workload import DEFAULT_FLOOR_TOK_PER_S
from servebound.errors import InputError
from servebound.inputs.declare import TOKENS_SPELLING, record_inputs, token_count, unknown
from servebound.inputs.files import model_to_mapping
from servebound.inputs.layout import resolve_system
from servebound.inputs.pricing import price_json
from servebound.inputs.records import PlanTraffic
from servebound.inputs.workload import BY_NAME, Group, Input, inputs_of
from servebound.questions.decode import decode_answer
from servebound.questions.layout import run_layout, search_system
from servebound.questions.plan import run_plan
from servebound.questions.prefill import prefill_answer
from servebound.questions.rank import check_hardware_group
from servebound.runs.validation import validation_json
from servebound.views.layout_view import layout_assumptions, layout_json, layouts_json, plan_json, system_json
from servebound.views.report import decode_json, hardware_json, prefill_json
from servebound.web.app.errors import ERRORS, answers
from servebound.web.app.query import workload_query
from servebound.web.app.responses import StrictJSONResponse
from servebound.web.app.state import Web, heavy_route
from servebound.web.pages.records import (
    HardwareFilters,
    ModelFilters,
    rank_rows_for_hardware,
    rank_rows_for_model,
)
from servebound.web.pages.site import SiteHardware, SiteModel
from servebound.web.routes import Routes


class StrictRoute(APIRoute):
    """A JSON API route that refuses what it does not declare: an unknown query parameter (400 naming it,
    with the close match) and a repeated one (400: no last-wins)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        known = {f.alias for f in get_flat_params(self.dependant)}

        async def strict(request: Request) -> Response:
            seen: set[str] = set()
            for key, _ in request.query_params.multi_items():
                if key not in known:
                    raise unknown(key, known)
                if key in seen:
                    raise InputError(key, "given more than once; give it once")
                seen.add(key)
            return await handler(request)

        return strict


routes = Routes(route_class=StrictRoute, response_class=StrictJSONResponse)

HardwareQ = Annotated[str, Query(description="hardware id")]
ModelQ = Annotated[str, Query(description="model id")]


def query_parameter(spec: Input) -> inspect.Parameter:
    """A declared input as a query parameter. Its bounds and choices are in the OpenAPI schema; the
    declaration checks them (``WorkloadInputs``), so the API says what the CLI says. A number is text
    parsed by ``Input.parse`` (``32k``, ``32,000``): its schema is the number with its bounds, or a
    string of the grammar's pattern."""
    schema: dict[str, Any] = {}
    if spec.minimum is not None:
        schema["exclusiveMinimum" if spec.exclusive_minimum else "minimum"] = spec.minimum
    top = spec.site_maximum if spec.site_maximum is not None else spec.maximum
    if top is not None:
        schema["maximum"] = top
    if spec.choices:
        schema["enum"] = list(spec.choices)
    if spec.words:
        schema["description"] = f"{spec.description} (a number or {', '.join(spec.words)})"
    if spec.kind in (int, float):
        number = {"type": "integer" if spec.kind is int else "number", **schema}
        number.pop("description", None)
        text = {"type": "string", "pattern": spec.pattern}
        words = [{"type": "string", "enum": list(spec.words)}] if spec.words else []
        schema["anyOf"] = [number, text, *words, {"type": "null"}]
    kind: Any = bool if spec.kind is bool else str | None
    query = Query(description=spec.description, max_length=spec.max_length, json_schema_extra=schema or None)
    default = spec.default if spec.kind is bool else None
    return inspect.Parameter(
        spec.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[kind, query]
    )


def declared_query(record: type, name: str, description: str = "") -> Any:
    """The Query of a record's declared field (``inputs.records``): its bounds as the OpenAPI's minimum
    and maximum, the same the record checks on every surface."""
    spec = next(s for s in record_inputs(record) if s.name == name)
    low: dict[str, Any] = {}
    if spec.minimum is not None:
        low = {"gt" if spec.exclusive_minimum else "ge": spec.minimum}
    return Query(**low, le=spec.maximum, allow_inf_nan=False, description=description or spec.description)


def inputs_dependency(*groups: Group, without: tuple[str, ...] = ()) -> Any:
    """A dependency taking the declared inputs of ``groups`` as query parameters, typed once, and
    giving them back as a dict of the values given (a value beyond a bound is a 400 naming it)."""
    specs = inputs_of(*groups, without=without)

    def given(**values: Any) -> dict[str, Any]:
        out = {}
        for spec in specs:
            value = values[spec.name]
            if isinstance(value, str) and spec.kind is not str:
                value = spec.parse(value, site=True)
            out[spec.name] = spec.check(value, site=True)
        return out

    given.__signature__ = inspect.Signature([query_parameter(s) for s in specs])  # type: ignore[attr-defined]
    return Depends(given)


#: The workload of /api/cost (``--overhead-gb`` .. ``--kv-precision``, ``--memory-only``).
WorkloadParams = Annotated[dict[str, Any], inputs_dependency("context", "serving", "workload", "roof")]
ContextParams = Annotated[dict[str, Any], inputs_dependency("context", "serving")]
DecodeParams = Annotated[
    dict[str, Any], inputs_dependency("context", "serving", "workload", "roof", "decode", "layout")
]
PrefillParams = Annotated[
    dict[str, Any], inputs_dependency("context", "serving", "workload", "prefill", "layout")
]


#: Single declared inputs as query parameters (text in the one grammar; ``workload_query`` parses it).
def _declared_query(name: str) -> Any:
    """The declared input ``name``'s Query: its description and schema (``query_parameter``)."""
    return query_parameter(BY_NAME[name]).annotation.__metadata__[0]


AllocQ = Annotated[str | None, _declared_query("alloc_context")]
LayoutQ = Annotated[str | None, _declared_query("layout")]
ReadQ = Annotated[str | None, _declared_query("read_context")]
OverheadQ = Annotated[str | None, _declared_query("overhead_gb")]


@routes.get("/api/decode", tags=["ceilings"], responses=answers("decode"), response_model=None)
def api_decode(
    web: Web,
    hardware: Annotated[str, Query(description="hardware id (see /api/hardware)")],
    model: Annotated[str, Query(description="model id (see /api/models)")],
    params: DecodeParams,
    range: Annotated[
        bool, Query(description="also context_range: ceilings over every read context 0..the model's limit")
    ] = False,
) -> dict[str, Any]:
    """The decode ceilings: the same object as `servebound decode --json` (with the same workload
    parameters as its flags, and `--range` as range=true)."""
    hw, m = web.get_hw(hardware), web.get_model(model)
    query = workload_query(params)

    draft_model = web.get_model(query.draft).adapter if query.draft else None
    # the row, not its record: a system answers at its layout (the best valid one, or layout=)
    scenario = query.scenario(hw, web.scenario_model(model, m), draft_model, layout=params["layout"])
    return decode_json(*decode_answer(scenario, context_range=range))


@routes.get("/api/prefill", tags=["ceilings"], responses=answers("prefill"), response_model=None)
@heavy_route
def api_prefill(
    web: Web,
    hardware: HardwareQ,
    model: ModelQ,
    params: PrefillParams,
    include_range: Annotated[bool, Query(alias="range", description="add the prompt-length range")] = False,
) -> dict[str, Any]:
    """The prefill ceiling: the same object as `servebound prefill --json` (with `range` when asked)."""
    hw, m = web.get_hw(hardware), web.get_model(model)
    prompt, batch = params["prompt"], params["batch"] or 1
    query = workload_query({**params, "batch": None})
    # the row, not its record: a system prefills at its layout (the best valid one, or layout=)
    scenario = query.scenario(hw, web.scenario_model(model, m), layout=params["layout"])
    adapter = scenario.model
    if adapter.prefill is None:
        raise InputError("model", f"model '{m.id}' has no prefill fields, so no prefill ceiling")
    result, rng = prefill_answer(
        scenario,
        prompt,
        batch=batch,
        prompt_range=include_range,
        chunk_tokens=params["chunk"],
        ttft_budget_s=params["ttft_budget"],
        linear_mode=params["linear_mode"],
        attention_mode=params["attention_mode"],
    )
    return prefill_json(result, rng)


def _system(web: Any, hardware: str) -> Any:
    return resolve_system(web.get_hw(hardware))


@routes.get("/api/layout", tags=["ceilings"], responses=answers("layout"), response_model=None)
@heavy_route
def api_layout(
    web: Web,
    hardware: Annotated[str, Query(description="system id (a device is a system of one)")],
    model: ModelQ,
    params: Annotated[dict[str, Any], inputs_dependency("context", "serving", "workload", "roof", "layout")],
) -> dict[str, Any]:
    """Parallel layouts of a system for a model: every valid one, best first (`servebound layout --json`),
    or with layout= the one (`servebound decode --layout ... --json`'s layout fields)."""
    resolved = _system(web, hardware)
    query = workload_query(params)
    m = web.get_model(model)
    scenario = query.scenario(web.get_hw(hardware).hardware, m.adapter)
    adapter = scenario.model
    workload = scenario.workload  # the system's pooled row: the same O and contexts
    if params["layout"] is None:
        return layouts_json(search_system(resolved, adapter, workload))
    _, result = run_layout(resolved, adapter, workload, params["layout"])
    return {
        **layout_json(result),
        "system": system_json(resolved),
        "model": m.id,
        "assumptions": layout_assumptions(workload, result, resolved),
    }


@routes.get("/api/plan", tags=["ceilings"], responses=answers("plan"), response_model=None)
@heavy_route
def api_plan(
    web: Web,
    hardware: Annotated[str, Query(description="system id")],
    model: ModelQ,
    prompt: Annotated[str, Query(description=f"L: prompt tokens per request. {TOKENS_SPELLING}")],
    output_tokens: Annotated[str, Query(description=f"G: output tokens per request. {TOKENS_SPELLING}")],
    users: Annotated[float | None, declared_query(PlanTraffic, "users")] = None,
    requests_per_s: Annotated[float | None, declared_query(PlanTraffic, "requests_per_s")] = None,
    floor: Annotated[float, declared_query(PlanTraffic, "floor_tok_s")] = DEFAULT_FLOOR_TOK_PER_S,
    ttft_budget: Annotated[float | None, declared_query(PlanTraffic, "ttft_budget_s")] = None,
    usd_per_hour: Annotated[float | None, declared_query(PlanTraffic, "usd_per_device_hour")] = None,
    overhead_gb: OverheadQ = None,
    kv_precision: Annotated[str | None, Query(description=BY_NAME["kv_precision"].description)] = None,
) -> dict[str, Any]:
    """Fleet sizing: `servebound plan --json` (systems and devices for separate and shared pools, every
    step of the arithmetic)."""
    resolved = _system(web, hardware)
    m = web.get_model(model)
    overhead = None if overhead_gb is None else BY_NAME["overhead_gb"].parse(overhead_gb, site=True)
    plan = run_plan(
        resolved,
        workload_query(kv_precision=kv_precision).scenario(resolved.system.device, m.adapter).model,
        prompt_tokens=token_count("prompt", "L: prompt tokens per request", prompt, site=True),
        output_tokens=token_count("output_tokens", "G: output tokens per request", output_tokens, site=True),
        floor_tok_s=floor,
        users=users,
        requests_per_s=requests_per_s,
        ttft_budget_s=ttft_budget,
        usd_per_device_hour=usd_per_hour,
        overhead_bytes=None if overhead is None else overhead * GB,
    )
    return plan_json(plan)


@routes.get("/api/hardware", tags=["catalog"], responses=ERRORS)
def api_hardware_list(
    web: Web,
    vendor: Annotated[str | None, Query()] = None,
    min_memory_gb: Annotated[float | None, Query(allow_inf_nan=False)] = None,
) -> dict[str, Any]:
    """Every hardware row (optionally filtered), in the contract's hardware-file units."""
    f = HardwareFilters(vendor=vendor or None, min_memory_gb=min_memory_gb)
    rows = [_hardware_json(h) for h in web.site.hardware if f.keep(h)]
    return {"count": len(rows), "hardware": rows, "license": "CC BY 4.0"}


@routes.get("/api/hardware/{hardware_id}", tags=["catalog"], responses=ERRORS)
def api_hardware_one(web: Web, hardware_id: str) -> dict[str, Any]:
    """One hardware row with its sources."""
    return _hardware_json(web.get_hw(hardware_id), full=True)


@routes.get("/api/models", tags=["catalog"], responses=ERRORS)
def api_models_list(
    web: Web,
    family: Annotated[str | None, Query()] = None,
    fits: Annotated[str | None, Query(description="only models that fit on this hardware id")] = None,
) -> dict[str, Any]:
    """Every model profile (optionally filtered), with its adapter quantities."""
    fits_hw = web.get_hw(fits) if fits else None
    rows = [_model_json(m) for m, _ in ModelFilters(family=family).select(web.site.models, fits_hw)]
    return {"count": len(rows), "models": rows, "license": "CC BY 4.0"}


@routes.get("/api/models/{model_id}", tags=["catalog"], responses=ERRORS)
def api_models_one(web: Web, model_id: str) -> dict[str, Any]:
    """One model profile with its audit."""
    return _model_json(web.get_model(model_id), full=True)


@routes.get("/api/search", tags=["catalog"], responses=ERRORS)
def api_search(
    web: Web,
    q: Annotated[
        str, Query(description="words of a model or machine: 'qwen3 30b q4', 'llama3.3:70b', 'rtx 4090'")
    ],
    kind: Annotated[str | None, Query(description="model or hardware")] = None,
    limit: Annotated[int, Query(description="at most this many hits (1 to 500)")] = 20,
) -> dict[str, Any]:
    """Models and hardware rows the words name, best first: the hits of `servebound search --json`
    that this site shows."""
    if not 1 <= limit <= MAX_LIMIT:
        raise InputError("limit", f"{limit} is out of range; give 1 to {MAX_LIMIT}")
    shown = {*web.site.models_by_id, *web.site.hardware_by_id}
    hits = [h for h in search(q, kind=kind, limit=MAX_LIMIT) if h.id in shown]
    rows = [hit.as_dict() for hit in hits[:limit]]
    return {"query": q, "count": len(rows), "hits": rows, "license": "CC BY 4.0"}


@routes.get("/api/validation", tags=["validation"], responses=ERRORS)
def api_validation(web: Web) -> dict[str, Any]:
    """Published runs against their ceilings: the same object as `servebound validate --json`
    (total, at_or_below, the efficiency distribution by engine, hardware family and phase, every run)."""
    return validation_json(web.site.validation())


@routes.get("/api/rank", tags=["ceilings"], responses=ERRORS)
@heavy_route
def api_rank(
    web: Web,
    params: ContextParams,
    hardware: Annotated[str | None, Query(description="rank every model on this hardware")] = None,
    model: Annotated[str | None, Query(description="rank every hardware row for this model")] = None,
    all_formats: Annotated[
        bool, Query(description="with hardware=: every weight format, not only each model's native one")
    ] = False,
    unsupported: Annotated[
        bool, Query(description="also list weight formats the device cannot run (format_support unsupported)")
    ] = False,
    hardware_group: Annotated[
        str | None,
        Query(
            description="with model=: only machines of this class (`rank --class`): "
            + ", ".join(HARDWARE_CLASSES)
        ),
    ] = None,
) -> dict[str, Any]:
    """Which models fit on a machine and how fast, or which machines serve a model best.

    The rows are `servebound rank --json`'s (each with its machine's class, devices, price per hour and
    USD per million output tokens at b*); like the CLI, hardware= ranks the formats the device's
    usual engine runs (the releases where its class has none) unless all_formats=true."""
    if (hardware is None) == (model is None):
        raise InputError("hardware", "give exactly one of hardware= or model=")
    if all_formats and model is not None:
        raise InputError("all_formats", "applies to hardware= (it adds every weight format of each model)")
    check_hardware_group(hardware_group)
    if hardware_group is not None and hardware is not None:
        raise InputError("hardware_group", "applies to model= (it keeps the machines of one class)")
    query = workload_query(params)
    workload = query.workload()
    if hardware is not None:
        hw = web.get_hw(hardware)
        rows = rank_rows_for_hardware(
            web.site, hw, workload, native_only=not all_formats, runnable_only=not unsupported
        )
        return {"hardware": {"id": hw.id, "name": hw.name}, "rows": [r.json for r in rows]}
    assert model is not None
    m = web.get_model(model)
    rows = rank_rows_for_model(
        web.site, m, workload, runnable_only=not unsupported, hardware_group=hardware_group
    )
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
        # Others' words stay out of machine endpoints: each quoted passage becomes its attribution and link.
        out["sources"] = h.machine_sources
        out["notes"] = h.machine_notes
        out["sparse_halved"] = list(h.sparse_halved)
        out["modes"] = [m for m in ARITHMETIC_MODES if m in h.hardware.compute_flop_per_s]
        out["price"] = price_json(h.row_price)
    return out


def _model_json(m: SiteModel, *, full: bool = False) -> dict[str, Any]:
    a = m.adapter
    # The contract's model form, from the one function that writes it (servebound.inputs.files).
    mapping = model_to_mapping(a)
    out: dict[str, Any] = {
        "id": m.id,
        "name": m.name,
        "family": m.family,
        "family_name": m.family_name,
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
            # Others' words stay out of machine endpoints: the card's attribution and link, not its quote.
            "published_source": m.machine_source.get("published counts"),
            "total_params_difference": m.total_params_difference,
            "active_params_difference": m.active_params_difference,
            "checkpoint_bytes": m.checkpoint_bytes,
            "source": m.machine_source,
            "facts": dict(m.facts),
            "steps": [{"quantity": q, "value": v, "formula": f} for q, v, f in m.steps],
        }
    return out
