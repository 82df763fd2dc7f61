"""Layouts and fleet plans as each surface writes them: the contract's JSON of `servebound layout` and
`servebound plan` (and /api/layout, /api/plan), a system's row and a layout's assumptions. The records
and their numbers come from ``questions.layout`` and ``questions.plan``."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from servebound.core.fields import json_view
from servebound.core.layout import LayoutResult
from servebound.core.units import GB
from servebound.core.workload import Workload

if TYPE_CHECKING:  # a decode renders a system's answer without loading the layout search or the plan
    from servebound.inputs.layout import ResolvedSystem
    from servebound.questions.layout import LayoutSearch
    from servebound.questions.plan import PlanResult


def layouts_json(search: LayoutSearch) -> dict[str, Any]:
    """The ``servebound layout --json`` object."""
    return {
        "system": system_json(search.system),
        "model": search.model.id,
        "layouts": [layout_json(r) for r in search.layouts],
        "assumptions": layout_assumptions(search.workload, search.layouts[0], search.system),
    }


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
        "single_session_tok_s": result.single_session_tok_s,
        "aggregate_tok_s": result.aggregate_tok_s,
        "per_session_tok_s": result.per_session_tok_s,
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
        "floor_tok_s": workload.floor_tok_s,
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
            "per_session_tok_s": plan.served.per_session_tok_s,
            "clears_floor": plan.served.clears_floor,
        },
        "output_tok_s": fleet.output_tok_s,
        "prefill_tok_s": fleet.prefill_tok_s,
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
            "floor_tok_s": plan.workload.floor_tok_s,
            "contexts": "a session reserves L + G tokens and reads L + G/2 on average",
            "prefill": "one prompt at a time per replica, one-shot, communication not charged",
            "counts": "lower bounds: ceilings, so a real fleet needs at least this many",
        },
    }


# by name: a decode on a system renders its layout without importing the search or the plan
json_view("servebound.questions.layout.LayoutSearch", layouts_json)
json_view("servebound.questions.plan.PlanResult", plan_json)
