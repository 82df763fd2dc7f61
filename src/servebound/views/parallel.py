"""Serving on many devices at the edges: systems from what a user typed, ``--layout`` strings, the compute
roof per device, layout and plan results as the contract's JSON. The math is in ``core.layout`` and
``core.plan``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from servebound.core.advice import Note, Setting
from servebound.core.cost import usd_per_mtok_at_rate
from servebound.core.fields import ResultRecord, json_view
from servebound.core.hardware import Hardware
from servebound.core.layout import (
    DEFAULT_ACTIVATION_BYTES,
    Layout,
    LayoutResult,
    System,
    evaluate_layout,
    times_at,
)
from servebound.core.layout_search import search_layouts
from servebound.core.model import ModelAdapter
from servebound.core.plan import FleetPlan, ServedBatch, plan_fleet, served_batch, served_step
from servebound.core.prefill import prefill
from servebound.core.units import GB
from servebound.core.workload import DEFAULT_OVERHEAD_BYTES, Workload
from servebound.errors import InputError
from servebound.inputs.declared import DeclaredWorkload
from servebound.inputs.layout import (  # re-exported: the system and layout inputs, resolved there
    ResolvedSystem as ResolvedSystem,
)
from servebound.inputs.layout import SystemRef as SystemRef
from servebound.inputs.layout import compute_seconds_per_session_step as compute_seconds_per_session_step
from servebound.inputs.layout import parse_layout as parse_layout
from servebound.inputs.layout import resolve_system as resolve_system
from servebound.inputs.pricing import catalog_price
from servebound.inputs.records import PlanTraffic
from servebound.inputs.scenario import resolve_on_system, resolve_scenario
from servebound.inputs.workload import BY_NAME


def run_layout(
    ref: SystemRef,
    model: ModelAdapter,
    workload: Workload,
    layout: str | Layout,
    *,
    activation_bytes: float = DEFAULT_ACTIVATION_BYTES,
) -> tuple[ResolvedSystem, LayoutResult]:
    """One layout of a system: its gates, ceilings, per-device bytes and step times."""
    resolved = resolve_system(ref)
    system = resolved.system
    chosen = parse_layout(layout, system, model) if isinstance(layout, str) else layout
    _check_speculation(workload)
    c = compute_seconds_per_session_step(system.device, model, workload)
    return resolved, evaluate_layout(
        system, model, chosen, workload, compute_s_per_session_step=c, activation_bytes=activation_bytes
    )


def run_layouts(
    ref: SystemRef,
    model: ModelAdapter,
    workload: Workload,
    *,
    activation_bytes: float = DEFAULT_ACTIVATION_BYTES,
) -> tuple[ResolvedSystem, list[LayoutResult]]:
    """Every valid layout of a system, best first."""
    resolved = resolve_system(ref)
    _check_speculation(workload)
    system = resolved.system
    c = compute_seconds_per_session_step(system.device, model, workload)
    return resolved, search_layouts(
        system, model, workload, compute_s_per_session_step=c, activation_bytes=activation_bytes
    )


def layout_decode_ceiling(
    ref: SystemRef, model: ModelAdapter, layout: str, concurrency: int, workload: Workload
) -> tuple[float, float, str]:
    """Per-session and aggregate decode ceilings of ``layout`` with ``concurrency`` sessions in all:
    a micro-batch of ceil(concurrency / (dp pp)) per replica, each session at 1 / tau(b)."""
    resolved = resolve_system(ref)
    system = resolved.system
    chosen = parse_layout(layout, system, model)
    lanes = chosen.dp * chosen.pp
    batch = max(1, -(-concurrency // lanes))
    c = compute_seconds_per_session_step(system.device, model, workload)
    times = times_at(system, model, chosen, batch, workload, compute_s_per_session_step=c)
    return 1.0 / times.token_s, concurrency / times.token_s, chosen.label


def layout_cost_points(
    ref: SystemRef,
    model: ModelAdapter,
    workload: Workload,
    layout: str | Layout,
    usd_per_hour: float,
    batches: list[int] | None = None,
) -> tuple[LayoutResult, list[dict[str, Any]]]:
    """Cost per million output tokens over the micro-batch for one layout: the system's price per hour
    over the tokens a second of it emits, dp pp b / tau(b). ``batches`` default to a log grid up to b_mem
    plus b*; batches past b_mem are priced but marked ``fits_memory: false``."""
    resolved = resolve_system(ref)
    system = resolved.system
    chosen = parse_layout(layout, system, model) if isinstance(layout, str) else layout
    c = compute_seconds_per_session_step(system.device, model, workload)
    result = evaluate_layout(system, model, chosen, workload, compute_s_per_session_step=c)
    if batches is None:
        top = max(1, min(result.batch_mem or 1, 1 << 20))
        batches = sorted({1 << i for i in range(top.bit_length())} | {top, result.batch_star or top})
    points = []
    for b in batches:
        if b < 1:
            raise InputError("batches", f"every batch must be >= 1 (got {b})")
        t = times_at(system, model, chosen, b, workload, compute_s_per_session_step=c)
        tok_s = chosen.dp * chosen.pp * b / t.token_s
        points.append(
            {
                "batch": b,
                "sessions": chosen.dp * chosen.pp * b,
                "step_time_s": t.stage_s,
                "token_time_s": t.token_s,
                "tok_s": tok_s,
                "per_session_tok_s": 1.0 / t.token_s,
                "bound_by": t.bound_by.value,
                "communication_time_s": t.communication_s,
                "fits_memory": result.batch_mem is not None and b <= result.batch_mem,
                "usd_per_mtok_output": usd_per_mtok_at_rate(usd_per_hour, tok_s),
            }
        )
    return result, points


def _check_speculation(workload: Workload) -> None:
    if workload.speculation is not None:
        raise InputError(
            "draft", Note.of("parallel layouts do not model speculative decoding; drop ", Setting("draft"))
        )


def replica_prefill_hardware(system: System, layout: Layout) -> Hardware:
    """One replica as prefill sees a single prompt: its stages run one after another, so time is that of
    G devices (bandwidth and compute times G) while capacity is the whole replica's (G pp devices).
    Communication is not charged (an upper bound)."""
    device = system.device
    group = layout.group
    return replace(  # Hardware.scaled: each of the G pp devices holds its runtime overhead too
        device.scaled(group * layout.pp),
        id=f"{device.id}-replica-{layout.label}",
        name=f"{device.name} replica ({layout.label})",
        bandwidth_bytes_per_s=device.bandwidth_bytes_per_s * group,
        compute_flop_per_s={k: v * group for k, v in device.compute_flop_per_s.items()},
    )


@dataclass(frozen=True, repr=False)
class LayoutSearch(ResultRecord):
    """Every valid layout of a system for a model, best first (``servebound layout``)."""

    __repr_fields__ = ("best", "count")

    system: ResolvedSystem
    model: ModelAdapter
    workload: Workload
    layouts: tuple[LayoutResult, ...]

    @property
    def hardware(self) -> ResolvedSystem:
        return self.system

    @property
    def best(self) -> str:
        return self.layouts[0].layout.label

    @property
    def count(self) -> int:
        return len(self.layouts)


def search_system(ref: SystemRef, model: ModelAdapter, workload: Workload) -> LayoutSearch:
    """``run_layouts`` as a record (the workload resolved once against the system); none valid is an error."""
    resolved = resolve_system(ref)
    _, results = run_layouts(resolved, model, workload)
    if not results:
        raise InputError("layout", f"no valid layout of {resolved.id} for {model.id}")
    return LayoutSearch(resolved, model, workload, tuple(results))


def layouts_json(search: LayoutSearch) -> dict[str, Any]:
    """The ``servebound layout --json`` object."""
    return {
        "system": system_json(search.system),
        "model": search.model.id,
        "layouts": [layout_json(r) for r in search.layouts],
        "assumptions": layout_assumptions(search.workload, search.layouts[0], search.system),
    }


@dataclass(frozen=True, repr=False)
class PlanResult(ResultRecord):
    """A fleet plan with the system, the layout it serves with, and the workload it was sized for."""

    __repr_fields__ = ("layout_label", "separate_systems", "shared_systems")

    system: ResolvedSystem
    layout: LayoutResult
    workload: Workload
    prompt_tokens: int
    output_tokens: int
    fleet: FleetPlan
    price_source: str | None = None
    #: How the decode systems are filled: the plan's sessions run at this batch's speed, not at b*'s.
    served: ServedBatch | None = None

    @property
    def hardware(self) -> ResolvedSystem:
        return self.system

    @property
    def layout_label(self) -> str:
        return self.layout.layout.label

    @property
    def separate_systems(self) -> int:
        return self.fleet.separate_systems

    @property
    def shared_systems(self) -> int:
        return self.fleet.shared_systems


def run_plan(
    ref: SystemRef,
    model: ModelAdapter,
    *,
    prompt_tokens: int,
    output_tokens: int,
    floor_tok_s: float,
    users: float | None = None,
    requests_per_s: float | None = None,
    ttft_budget_s: float | None = None,
    usd_per_device_hour: float | None = None,
    overhead_bytes: float | None = None,
) -> PlanResult:
    """Size a fleet of ``ref`` systems for the traffic (see core.plan): contexts from the traffic (a session
    reserves L + G tokens and reads L + G/2 on average), the best layout under the floor, prefill of one
    prompt on one replica of that layout."""
    PlanTraffic(  # each value within its declared bounds, as the CLI and the API check them
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        users=users,
        requests_per_s=requests_per_s,
        floor_tok_s=floor_tok_s,
        ttft_budget_s=ttft_budget_s,
        usd_per_device_hour=usd_per_device_hour,
    )
    if (users is None) == (requests_per_s is None):
        raise InputError(
            "users",
            Note.of(
                "give exactly one of ",
                Setting("users", placeholder="N"),
                " or ",
                Setting("requests_per_s", placeholder="X"),
            ),
        )
    if overhead_bytes is not None:
        BY_NAME["overhead_gb"].check(overhead_bytes / GB)
    alloc = prompt_tokens + output_tokens
    base = DeclaredWorkload(
        Workload(
            overhead_bytes=DEFAULT_OVERHEAD_BYTES if overhead_bytes is None else overhead_bytes,
            alloc_context_tokens=alloc,
            read_context_tokens=prompt_tokens + output_tokens // 2,
            floor_tok_per_s=floor_tok_s,
        ),
        overhead_from_hardware=overhead_bytes is None,
    )
    resolved = resolve_system(ref)
    workload = resolve_on_system(base, resolved.system, model)
    _, results = run_layouts(resolved, model, workload)
    fits = [r for r in results if r.verdict.value == "floor_fit"]
    if not fits:
        closest = results[0].verdict.value if results else "no layout"
        raise InputError(
            "hardware",
            Note.of(
                f"no layout of {resolved.id} serves {model.id} at {floor_tok_s:g} tok/s per session with "
                f"{alloc:,} tokens reserved (closest: {closest}); lower ",
                Setting("floor"),
                ", shorten the traffic, or pick a bigger system",
            ),
        )
    best = fits[0]
    assert best.sessions is not None and best.per_session_tok_per_s is not None
    price_source = "the price per hour given" if usd_per_device_hour is not None else None
    if usd_per_device_hour is None:
        listed = catalog_price(resolved.id)
        if listed is not None and listed.rental_usd_per_hour is not None:
            usd_per_device_hour = listed.rental_usd_per_hour / resolved.system.count
            price_source = (
                f"catalog on-demand rental, {listed.rental_provider}, read {listed.rental_date}: "
                f"{listed.rental_source}"
            )
    replica = replica_prefill_hardware(resolved.system, best.layout)
    on_replica = resolve_scenario(base, hardware=replica, model=model).workload  # the replica's own pair
    pf = prefill(replica, model, prompt_tokens, workload=on_replica)
    c = compute_seconds_per_session_step(resolved.system.device, model, workload)
    traffic = {"users": users, "requests_per_s": requests_per_s}
    served = served_batch(resolved.system, model, best, workload, c, **traffic, output_tokens=output_tokens)
    fleet = plan_fleet(
        sessions_per_system=best.sessions,
        per_session_tok_per_s=served.per_session_tok_per_s,
        prefill_s=pf.time_s,
        prefill_parallel_prompts=best.layout.dp * best.layout.pp,
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        devices_per_system=resolved.system.count,
        users=users,
        requests_per_s=requests_per_s,
        ttft_budget_s=ttft_budget_s,
        usd_per_device_hour=usd_per_device_hour,
    )
    served_at = served_step(served, best.layout.dp * best.layout.pp, floor_tok_s)
    fleet = replace(fleet, steps=(*fleet.steps[:2], served_at, *fleet.steps[2:]))
    return PlanResult(resolved, best, workload, prompt_tokens, output_tokens, fleet, price_source, served)


# --------------------------------------------------------------------------------------------------
# JSON (the contract's names: _tok_s, _bytes, _s)
# --------------------------------------------------------------------------------------------------


def layout_json(result: LayoutResult) -> dict[str, Any]:
    """One layout: the fields ``servebound layout`` lists and ``decode --layout`` adds."""
    lay = result.layout
    times = result.times
    pd = result.per_device
    return {
        "layout": {
            **asdict(lay),
            "label": lay.label,
            "devices": result.devices,
            "idle_devices": result.idle_devices,
        },
        "verdict": result.verdict.value,
        "batch_mem": result.batch_mem,
        "batch_star": result.batch_star,
        "sessions": result.sessions,
        "single_session_tok_s": result.single_session_tok_per_s,
        "aggregate_tok_s": result.aggregate_tok_per_s,
        "per_session_tok_s": result.per_session_tok_per_s,
        "bound_by": None if times is None else times.bound_by.value,
        "step_time_s": None if times is None else times.stage_s,
        "token_time_s": None if times is None else times.token_s,
        "memory_time_s": None if times is None else times.memory_s,
        "compute_time_s": None if times is None else times.compute_s,
        "communication_time_s": None if times is None else times.communication_s,
        "all_reduce_time_s": None if times is None else times.all_reduce_s,
        "all_to_all_time_s": None if times is None else times.all_to_all_s,
        "pipeline_hop_time_s": None if times is None else times.hop_s,
        "per_device": {
            "capacity_bytes": pd.capacity_bytes,
            "overhead_bytes": pd.overhead_bytes,
            "weight_bytes": pd.weight_bytes,
            "kv_bytes": pd.kv_bytes,
            "kv_bytes_per_session": pd.kv_bytes_per_session,
            "free_bytes": pd.free_bytes,
        },
        "links": asdict(result.links),
        "weight_fetch_latency_s": result.weight_fetch_latency_s,
        "compute_charged": result.compute_charged,
    }


def system_json(resolved: ResolvedSystem) -> dict[str, Any]:
    """The system and its link, with the link's sources (or the ideal-bound statement)."""
    system = resolved.system
    link = system.interconnect
    return {
        "id": resolved.id,
        "name": resolved.name,
        "device": system.device.id,
        "devices": system.count,
        "interconnect": {
            "ideal": link.ideal,
            "scale_up_devices": link.scale_up_devices,
            "scale_up_gb_per_s": link.scale_up_bytes_per_s / GB,
            "scale_up_link": link.scale_up_link,
            "scale_out_gb_per_s": link.scale_out_bytes_per_s / GB,
            "scale_out_link": link.scale_out_link,
            "sources": resolved.link_sources,
        },
    }


def layout_assumptions(workload: Workload, result: LayoutResult, resolved: ResolvedSystem) -> dict[str, Any]:
    """Every input that moves a layout's ceilings."""
    link = resolved.system.interconnect
    return {
        "overhead_gb_per_device": result.per_device.overhead_bytes / GB,
        "overhead": "the system's O spread evenly over its devices",
        "overhead_source": workload.overhead_source,
        "alloc_context_tokens": workload.alloc_context_tokens,
        "read_context_tokens": workload.read_context_tokens,
        "floor_tok_s": workload.floor_tok_per_s,
        "expert_traffic": workload.expert_traffic.value,
        "activation_bytes": result.activation_bytes,
        "interconnect": "ideal upper bound: no link stated, communication free"
        if link.ideal
        else "stated link",
        "compute": "charged at one device's rates"
        if result.compute_charged
        else "not charged (only loosens)",
        "averages": "per-device bytes and times are the mean over devices (the busiest is no lighter)",
        "latency": "per-message link latency not charged (only lowers the ceiling further)",
        "pipeline": "pp micro-batches of b sessions in flight; a token passes every stage and hop in turn",
    }


def plan_json(plan: PlanResult) -> dict[str, Any]:
    fleet = plan.fleet
    return {
        "system": system_json(plan.system),
        "layout": layout_json(plan.layout),
        "prompt_tokens": plan.prompt_tokens,
        "output_tokens": plan.output_tokens,
        "request_rate_per_s": fleet.request_rate_per_s,
        "concurrent_sessions": fleet.concurrent_sessions,
        "served": None
        if plan.served is None
        else {
            "sessions_per_system": plan.served.sessions_per_system,
            "batch": plan.served.batch,
            "per_session_tok_s": plan.served.per_session_tok_per_s,
            "clears_floor": plan.served.clears_floor,
        },
        "output_tok_s": fleet.output_tok_per_s,
        "prefill_tok_s": fleet.prefill_tok_per_s,
        "ttft_s": fleet.ttft_s,
        "ttft_ok": fleet.ttft_ok,
        "pools": {
            "separate": {
                "prefill_systems": fleet.prefill_systems,
                "decode_systems": fleet.decode_systems,
                "systems": fleet.separate_systems,
                "devices": fleet.separate_systems * fleet.devices_per_system,
                "usd_per_hour": fleet.usd_per_hour_separate,
            },
            "shared": {
                "systems": fleet.shared_systems,
                "devices": fleet.shared_systems * fleet.devices_per_system,
                "usd_per_hour": fleet.usd_per_hour_shared,
                "usd_per_mtok_output": fleet.usd_per_mtok_output_shared,
            },
        },
        "steps": [{"name": s.quantity, "value": s.value, "formula": s.formula} for s in fleet.steps],
        "price_source": plan.price_source,
        "assumptions": {
            "alloc_context_tokens": plan.workload.alloc_context_tokens,
            "read_context_tokens": plan.workload.read_context_tokens,
            "floor_tok_s": plan.workload.floor_tok_per_s,
            "contexts": "a session reserves L + G tokens and reads L + G/2 on average",
            "prefill": "one prompt at a time per replica, one-shot, communication not charged",
            "counts": "lower bounds: ceilings, so a real fleet needs at least this many",
        },
    }


json_view(LayoutSearch, layouts_json)
json_view(PlanResult, plan_json)
