"""`servebound plan`: the fleet a stated traffic needs, sized on a system at its best layout under the
floor (the math is ``core.plan``'s)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from servebound.core.advice import Note, Setting
from servebound.core.fields import ResultRecord
from servebound.core.hardware import Hardware
from servebound.core.layout import LayoutResult
from servebound.core.model import ModelAdapter
from servebound.core.plan import FleetPlan, ServedBatch, plan_fleet, served_batch, served_step
from servebound.core.prefill import prefill
from servebound.core.units import GB
from servebound.core.workload import DEFAULT_FLOOR_TOK_PER_S, DEFAULT_OVERHEAD_BYTES, Workload
from servebound.errors import InputError
from servebound.inputs.declared import DeclaredWorkload
from servebound.inputs.layout import (
    ResolvedSystem,
    SystemRef,
    compute_seconds_per_session_step,
    resolve_system,
)
from servebound.inputs.pricing import catalog_price
from servebound.inputs.records import PlanTraffic
from servebound.inputs.scenario import resolve_on_system, resolve_scenario
from servebound.inputs.workload import BY_NAME
from servebound.questions.layout import replica_prefill_hardware, run_layouts


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
            floor_tok_s=floor_tok_s,
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
    assert best.sessions is not None and best.per_session_tok_s is not None
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
        per_session_tok_s=served.per_session_tok_s,
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
