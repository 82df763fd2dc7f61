"""The JSON API for cost and economics: /api/cost (the same object as ``servebound cost --json``) and
/api/economics/* (each quantity as the ``servebound economics`` subcommand of the same name prints it
with ``--json``). Every 4xx answers the one error shape (``servebound.web.app.errors``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Query

from servebound.core.cost import DEFAULT_AMORTIZATION_YEARS, DEFAULT_USD_PER_KWH, DEFAULT_UTILIZATION
from servebound.core.hardware import ArithmeticMode
from servebound.inputs.declare import TOKENS_SPELLING, token_count
from servebound.inputs.pricing import OwnedInputs, resolve_price
from servebound.inputs.records import MAX_USD_PER_HOUR, MIN_USD_PER_HOUR
from servebound.questions.cost import DEFAULT_COST_PROMPT_TOKENS, cost_report, parse_batches
from servebound.questions.economics import (
    balance,
    breakpoint_of,
    cache_tier,
    drain_of,
    lecture,
    price_ratio,
    training,
    trains_of,
)
from servebound.questions.system_cost import layout_cost
from servebound.views.cost_view import cost_json
from servebound.web.app.errors import ERRORS, answers
from servebound.web.app.query import MAX_SITE_CONTEXT_TOKENS, workload_query
from servebound.web.app.responses import StrictJSONResponse
from servebound.web.app.state import Web, heavy_route
from servebound.web.routes import Routes
from servebound.web.routes.api import (
    AllocQ,
    HardwareQ,
    LayoutQ,
    ModelQ,
    ReadQ,
    StrictRoute,
    WorkloadParams,
    declared_query,
)

routes = Routes(route_class=StrictRoute, response_class=StrictJSONResponse)

PositiveQ = Annotated[float | None, Query(gt=0, allow_inf_nan=False)]


def _quantities(items: list[Any]) -> dict[str, Any]:
    return {"quantities": [item.json() for item in items]}


@routes.get("/api/cost", tags=["cost"], responses=answers("cost"), response_model=None)
@heavy_route
def api_cost(
    web: Web,
    hardware: HardwareQ,
    model: ModelQ,
    params: WorkloadParams,
    usd_per_hour: Annotated[
        float | None,
        Query(
            ge=MIN_USD_PER_HOUR,
            le=MAX_USD_PER_HOUR,
            allow_inf_nan=False,
            description="system price per hour (override)",
        ),
    ] = None,
    pricing: Annotated[Literal["auto", "rental", "owned"], Query()] = "auto",
    purchase_usd: Annotated[float | None, declared_query(OwnedInputs, "purchase_usd")] = None,
    amortization_years: Annotated[
        float, declared_query(OwnedInputs, "amortization_years")
    ] = DEFAULT_AMORTIZATION_YEARS,
    utilization: Annotated[float, declared_query(OwnedInputs, "utilization")] = DEFAULT_UTILIZATION,
    power_w: Annotated[float | None, declared_query(OwnedInputs, "power_w")] = None,
    usd_per_kwh: Annotated[float, declared_query(OwnedInputs, "usd_per_kwh")] = DEFAULT_USD_PER_KWH,
    batches: Annotated[str | None, Query(max_length=2000, description="e.g. 1,8,64")] = None,
    prompt: Annotated[
        str, Query(description=f"prompt tokens priced (<= {MAX_SITE_CONTEXT_TOKENS:,}). {TOKENS_SPELLING}")
    ] = str(DEFAULT_COST_PROMPT_TOKENS),
    layout: LayoutQ = None,
) -> dict[str, Any]:
    """The cost curve over batch: the same object as `servebound cost --json`."""
    hw, m = web.get_hw(hardware), web.get_model(model)
    query = workload_query(**params)
    scenario = query.scenario(hw, m.adapter, layout=layout)  # the row: a system prices its layout's tokens
    price = resolve_price(
        hw.hardware,
        hw.row_price,
        usd_per_hour=usd_per_hour,
        pricing=pricing,
        owned=OwnedInputs(purchase_usd, amortization_years, utilization, power_w, usd_per_kwh),
    )
    if scenario.layout is not None:
        cost = layout_cost(scenario.layout, scenario.model, scenario.workload, price, parse_batches(batches))
        return cost.to_dict()
    report = cost_report(
        hw.hardware,
        scenario.model,
        scenario.workload,
        price,
        batches=parse_batches(batches),
        prompt_tokens=token_count("prompt", "prompt tokens priced", prompt, site=True),
    )
    return cost_json(report)


@routes.get("/api/economics/lecture", tags=["economics"], responses=ERRORS)
def api_lecture(web: Web, hardware: str = "nvidia-b200") -> dict[str, Any]:
    """The lecture's numbers recomputed (`servebound economics lecture --json`)."""
    return _quantities(lecture(web.get_hw(hardware).hardware))


@routes.get("/api/economics/balance", tags=["economics"], responses=ERRORS)
def api_balance(
    web: Web,
    hardware: str,
    bytes_per_weight: Annotated[float, Query(gt=0, le=8, allow_inf_nan=False)] = 0.5,
    model: str | None = None,
    read_context: ReadQ = None,
    alloc_context: AllocQ = None,
) -> dict[str, Any]:
    """F e_w / 2R per mode, and a model's balance batch (`servebound economics balance --json`)."""
    hw = web.get_hw(hardware)
    m = web.get_model(model) if model else None
    query = workload_query(read_context=read_context, alloc_context=alloc_context)
    return _quantities(
        balance(hw.hardware, bytes_per_weight, model=m.adapter if m else None, workload=query.workload())
    )


@routes.get("/api/economics/drain", tags=["economics"], responses=ERRORS)
def api_drain(
    web: Web, hardware: str | None = None, capacity_gb: PositiveQ = None, bandwidth_gb_per_s: PositiveQ = None
) -> dict[str, Any]:
    """C / R (`servebound economics drain --json`)."""
    hw = web.get_hw(hardware).hardware if hardware is not None else None
    return _quantities([drain_of(hw, capacity_gb, bandwidth_gb_per_s)])


@routes.get("/api/economics/trains", tags=["economics"], responses=ERRORS)
def api_trains(
    batch: Annotated[float, Query(gt=0, le=1e12, allow_inf_nan=False)],
    steps_per_s: PositiveQ = None,
    interval_ms: PositiveQ = None,
) -> dict[str, Any]:
    """b / tau and 2 tau (`servebound economics trains --json`)."""
    return _quantities(trains_of(batch, steps_per_s, interval_ms))


@routes.get("/api/economics/breakpoint", tags=["economics"], responses=ERRORS)
def api_breakpoint(
    web: Web,
    active_params: Annotated[float, Query(gt=0, le=1e15, allow_inf_nan=False)],
    breakpoint_tokens: Annotated[float, Query(gt=0, le=1e12, allow_inf_nan=False)],
    hardware: str | None = None,
    mode: ArithmeticMode = "fp8",
    tflops: PositiveQ = None,
    bandwidth_gb_per_s: PositiveQ = None,
) -> dict[str, Any]:
    """KV bytes per token from a surcharge breakpoint (`servebound economics breakpoint --json`)."""
    hw = web.get_hw(hardware).hardware if hardware is not None else None
    shown = breakpoint_of(active_params, breakpoint_tokens, hw, mode, tflops, bandwidth_gb_per_s)
    return _quantities([shown])


@routes.get("/api/economics/price-ratio", tags=["economics"], responses=ERRORS)
def api_price_ratio(
    output_usd: Annotated[float, Query(gt=0, allow_inf_nan=False)],
    input_usd: Annotated[float, Query(gt=0, allow_inf_nan=False)],
) -> dict[str, Any]:
    """Output/input price ratio (`servebound economics price-ratio --json`)."""
    return _quantities([price_ratio(output_usd, input_usd)])


@routes.get("/api/economics/cache-tier", tags=["economics"], responses=ERRORS)
def api_cache_tier(hold_s: Annotated[float, Query(gt=0, le=1e10, allow_inf_nan=False)]) -> dict[str, Any]:
    """The memory tier for a cache hold time (`servebound economics cache-tier --json`)."""
    return _quantities(cache_tier(hold_s))


@routes.get("/api/economics/training", tags=["economics"], responses=ERRORS)
def api_training(
    traffic_tok_s: Annotated[float, Query(gt=0, le=1e15, allow_inf_nan=False)],
    life_days: Annotated[float, Query(gt=0, le=1e5, allow_inf_nan=False)],
    active_params: Annotated[float, Query(gt=0, le=1e15, allow_inf_nan=False)],
    rl_flops: Annotated[float, Query(ge=2, le=6, allow_inf_nan=False)] = 4.0,
    rl_efficiency: Annotated[float, Query(gt=0, le=1, allow_inf_nan=False)] = 0.3,
) -> dict[str, Any]:
    """Equal-cost training (`servebound economics training --json`)."""
    return _quantities(
        training(
            traffic_tok_s,
            life_days,
            active_params,
            rl_flops_per_param_token=rl_flops,
            rl_efficiency=rl_efficiency,
        )
    )
