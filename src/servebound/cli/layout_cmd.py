"""`servebound layout` (every parallel layout of a system, ranked) and `servebound plan` (fleet sizing)."""

from __future__ import annotations

from dataclasses import asdict

from servebound.cli.common import (
    HARDWARE,
    JSON,
    MODEL,
    WorkloadFlags,
    command,
    declared,
    flags,
    option,
)
from servebound.cli.output import (
    console,
    line,
    new_table,
    print_json,
    render_assumptions,
    steps_table,
    strong,
)
from servebound.core.layout import LayoutResult
from servebound.core.units import GB
from servebound.errors import InputError
from servebound.inputs.layout import ResolvedSystem
from servebound.inputs.records import PlanTraffic
from servebound.inputs.scenario import resolve_scenario
from servebound.questions.layout import layout as layout_search
from servebound.questions.plan import run_plan
from servebound.views.layout_view import layout_assumptions, plan_json
from servebound.views.report import fmt_gb, fmt_rate


def _ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e3:,.3f} ms"


def _plan_value(value: float) -> str:
    """A plan step's value: whole numbers (systems, devices, sessions) with no decimals."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4g}"


def render_link(resolved: ResolvedSystem) -> None:
    system = resolved.system
    link = system.interconnect
    console.print(line(strong(resolved.name), f": {system.count} x {system.device.name}"))
    if link.ideal:
        console.print("  link: none stated; the ideal upper bound (communication free)")
        return
    console.print(
        f"  scale-up: {link.scale_up_devices} devices per domain, {link.scale_up_bytes_per_s / GB:g} GB/s each way "
        f"per device ({link.scale_up_link})"
    )
    console.print(
        f"  scale-out: {link.scale_out_bytes_per_s / GB:g} GB/s each way per device ({link.scale_out_link})"
    )


def render_layout_rows(results: list[LayoutResult], limit: int | None = None) -> None:
    table = new_table(
        "layout",
        "verdict",
        "b*",
        "sessions",
        "aggregate",
        "per session",
        "bound by",
        "weights/dev",
        "KV/dev",
        "free/dev",
        "comm/step",
        left=("layout", "verdict", "bound by"),
    )
    for r in results[:limit]:
        t = r.times
        table.add_row(
            r.layout.label,
            r.verdict.value,
            "n/a" if r.batch_star is None else f"{r.batch_star:,}",
            "n/a" if r.sessions is None else f"{r.sessions:,}",
            fmt_rate(r.aggregate_tok_s),
            fmt_rate(r.per_session_tok_s),
            "n/a" if t is None else t.bound_by.value,
            fmt_gb(r.per_device.weight_bytes),
            fmt_gb(r.per_device.kv_bytes),
            fmt_gb(r.per_device.free_bytes),
            _ms(None if t is None else t.communication_s),
        )
    console.print(table)


@command(
    "layout",
    HARDWARE,
    MODEL,
    flags("flags", WorkloadFlags),
    option("top", int, None, "Show only the best N layouts (text output).", "--top"),
    JSON,
    examples=(
        "servebound layout -H 8x-nvidia-h100-sxm -m llama-3.1-70b --top 5",
        "servebound layout -H 8x-nvidia-h100-sxm -m llama-3.1-8b --json",
    ),
)
def layout_command(hardware: str, model: str, flags: WorkloadFlags, top: int | None, json_out: bool) -> None:
    if top is not None and top < 1:
        raise InputError("top", f"must be at least 1 (got {top})")
    search = layout_search(hardware, model, flags)
    mdl = search.model
    if json_out:
        print_json(search.to_dict())
        return
    render_link(search.system)
    best = search.layouts[0]
    console.print(
        line(
            f"{search.count} layouts for ",
            strong(mdl.name),
            f"; best: {best.layout.label} ({best.verdict.value})",
        )
    )
    render_layout_rows(list(search.layouts), top)
    render_assumptions(layout_assumptions(search.workload, best, search.system))


@command(
    "plan",
    HARDWARE,
    MODEL,
    flags("traffic", PlanTraffic),
    declared("overhead_gb"),
    declared("kv_precision"),
    JSON,
    examples=(
        "servebound plan -H 8x-nvidia-h100-sxm -m llama-3.1-70b --prompt 2000 --output-tokens 500 --users 1000",
        "servebound plan -H nvidia-h100-sxm -m llama-3.1-8b --prompt 1000 --output-tokens 200 "
        "--requests-per-s 50 --json",
    ),
)
def plan_command(
    hardware: str,
    model: str,
    traffic: PlanTraffic,
    overhead_gb: float | None,
    kv_precision: str | None,
    json_out: bool,
) -> None:
    mdl = resolve_scenario(hardware=hardware, model=model, kv_precision=kv_precision).model
    plan = run_plan(
        hardware,
        mdl,
        **asdict(traffic),
        # the layout model spreads one O over the system's devices: the rows' unless --overhead-gb says
        overhead_bytes=None if overhead_gb is None else overhead_gb * GB,
    )
    if json_out:
        print_json(plan_json(plan))
        return
    render_link(plan.system)
    lay = plan.layout
    console.print(
        f"serving layout: {lay.layout.label}: {lay.sessions:,} sessions at "
        f"{fmt_rate(lay.per_session_tok_s)} each ({fmt_rate(lay.aggregate_tok_s)} per system)"
    )
    served = plan.served
    if served is not None:
        console.print(
            f"serving {served.sessions_per_system:,.4g} sessions per system (micro-batch {served.batch:,}) at "
            f"{fmt_rate(served.per_session_tok_s)} each"
            + ("" if served.clears_floor else f": BELOW the floor of {plan.workload.floor_tok_s:g} tok/s")
        )
    fleet = plan.fleet
    console.print(steps_table(fleet.steps, "how", first="step", value=_plan_value))
    per = fleet.devices_per_system

    def pool(systems: int) -> str:
        devices = systems * per
        return f"{systems:,} system{'s' * (systems != 1)} ({devices:,} device{'s' * (devices != 1)})"

    console.print(
        f"separate pools: {pool(fleet.separate_systems)}; shared pool: {pool(fleet.shared_systems)}"
    )
