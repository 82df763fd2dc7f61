"""`servebound layout`: the parallel layouts of a system for a model, best first; one layout's ceilings,
its cost points and the replica a prompt is prefilled on. Systems and ``--layout`` strings resolve in
``inputs.layout``; the math is ``core.layout``'s; the JSON is ``views.layout_view``'s."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from servebound.core.advice import Note, Setting
from servebound.core.cost import usd_per_mtok_at_rate
from servebound.core.fields import ResultRecord
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
from servebound.core.workload import Workload
from servebound.errors import InputError
from servebound.inputs.declared import DeclaredWorkload
from servebound.inputs.layout import (
    ResolvedSystem,
    SystemRef,
    compute_seconds_per_session_step,
    parse_layout,
    resolve_system,
)
from servebound.inputs.scenario import resolve_scenario
from servebound.inputs.workload import WorkloadInputs


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


def layout(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    workload: Workload | DeclaredWorkload | WorkloadInputs | None = None,
    *,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> LayoutSearch:
    """Every valid parallel layout of a system for a model, best first, as ``servebound layout``."""
    scenario = resolve_scenario(
        workload, hardware=hardware, model=model, kv_precision=kv_precision, **workload_keywords
    )
    return search_system(hardware, scenario.model, scenario.workload)
