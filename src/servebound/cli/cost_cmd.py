"""`servebound cost`: cost per million tokens over batch, priced from the catalog or the flags."""

from __future__ import annotations

from typing import Any

from servebound.api import cost_answer, resolve_scenario
from servebound.cli.common import (
    HARDWARE,
    JSON,
    MODEL,
    WorkloadFlags,
    command,
    flags,
    option,
)
from servebound.cli.output import console, on, print_json, print_table, render_assumptions
from servebound.core.model import ModelAdapter
from servebound.core.workload import Workload
from servebound.inputs.pricing import OwnedInputs, Pricing, ResolvedPrice, catalog_price, resolve_price
from servebound.inputs.records import MAX_USD_PER_HOUR, MIN_USD_PER_HOUR
from servebound.inputs.workload import MAX_EDGE_TOKENS
from servebound.views.cost_report import (
    DEFAULT_COST_PROMPT_TOKENS,
    cost_json,
    cost_notes,
    cost_summary,
    parse_batches,
)


@command(
    "cost",
    HARDWARE,
    MODEL,
    flags("flags", WorkloadFlags),
    option(
        "usd_per_hour",
        float,
        None,
        "Price of the whole system per hour; overrides the catalog's.",
        "--usd-per-hour",
        minimum=MIN_USD_PER_HOUR,
        maximum=MAX_USD_PER_HOUR,
        unit="USD/h",
    ),
    option(
        "pricing",
        str,
        Pricing.AUTO.value,
        "auto (rental if the row has one, else owned), rental or owned.",
        "--pricing",
        choices=tuple(p.value for p in Pricing),
    ),
    flags("owned", OwnedInputs),
    option(
        "batches",
        str,
        None,
        "Batches to price, e.g. 1,8,64 [default: log grid to b_mem, b*, balance].",
        "--batches",
    ),
    option(
        "prompt",
        int,
        DEFAULT_COST_PROMPT_TOKENS,
        "Prompt length whose input tokens are priced (prefill ceiling).",
        "--prompt",
        unit="tokens",
        minimum=1,
        maximum=MAX_EDGE_TOKENS,
    ),
    option(
        "layout",
        str,
        None,
        "Parallel layout on a system, e.g. tp=8 (dp fills it): the link charged.",
        "--layout",
    ),
    JSON,
    examples=(
        "servebound cost -H nvidia-h100-sxm -m llama-3.1-8b",
        "servebound cost -H nvidia-rtx-4090 -m qwen3-8b --usd-per-hour 0.5 --batches 1,8,32 --json",
    ),
)
def cost_command(
    hardware: str,
    model: str,
    flags: WorkloadFlags,
    usd_per_hour: float | None,
    pricing: str,
    owned: OwnedInputs,
    batches: str | None,
    prompt: int,
    layout: str | None,
    json_out: bool,
) -> None:
    scenario = resolve_scenario(flags, hardware=hardware, model=model)
    hw, mdl = scenario.hardware, scenario.model
    if layout is not None:
        price = resolve_price(
            hw, catalog_price(hardware), usd_per_hour=usd_per_hour, pricing=Pricing(pricing), owned=owned
        )
        cost_layout(hardware, mdl, scenario.workload, layout, price, parse_batches(batches), json_out)
        return
    report = cost_answer(
        scenario,
        hardware,
        usd_per_hour=usd_per_hour,
        pricing=pricing,
        owned=owned,
        batches=parse_batches(batches),
        prompt_tokens=prompt,
    )
    price = report.price
    out = cost_json(report)
    if json_out:
        print_json(out)
        return
    console.print(on(mdl.name, hw.name, f" at {price.usd_per_hour:,.4g} USD/h ({price.basis})"))
    rows = [(_batch(p), _ms(p["step_time_s"]), *_priced(p)) for p in out["points"]]
    print_table(("batch", "step time", *_PRICED), rows, left=())
    lines = cost_summary(out)
    lines.append(f"Price: {out['price_source']}.")
    for bullet in [*lines, *(note.terminal for note in cost_notes(report))]:
        console.print(f"- {bullet}")
    render_assumptions(out["assumptions"])


def _batch(point: dict[str, Any]) -> str:
    """A priced batch, marked where its sessions do not fit in memory."""
    return f"{point['batch']:,}" + ("" if point["fits_in_memory"] else " (does not fit)")


def cost_layout(
    hardware: str,
    mdl: ModelAdapter,
    workload: Workload,
    layout: str,
    price: ResolvedPrice,
    batches: list[int] | None,
    json_out: bool,
) -> None:
    """Cost over the micro-batch of one parallel layout: the system's price per hour over the tokens a
    second of it emits (dp pp b / tau(b)), with the layout's own fields."""
    from servebound.views.parallel import (
        layout_assumptions,
        layout_cost_points,
        layout_json,
        resolve_system,
        system_json,
    )

    resolved = resolve_system(hardware)
    result, points = layout_cost_points(resolved, mdl, workload, layout, price.usd_per_hour, batches)
    out = {
        **layout_json(result),
        "system": system_json(resolved),
        "points": points,
        "usd_per_hour": price.usd_per_hour,
        "price_source": price.source,
        "price_basis": price.basis,
        "assumptions": layout_assumptions(workload, result, resolved),
    }
    if json_out:
        print_json(out)
        return
    at = f", {result.layout.label}, at {price.usd_per_hour:,.4g} USD/h ({price.basis})"
    console.print(on(mdl.name, resolved.name, at))
    rows = [
        (
            f"{p['batch']:,}{'' if p['fits_memory'] else ' (does not fit)'}",
            f"{p['sessions']:,}",
            _ms(p["token_time_s"]),
            *_priced(p),
        )
        for p in points
    ]
    print_table(("micro-batch", "sessions", "token time", *_PRICED), rows, left=())
    console.print(f"- price: {price.source}")
    render_assumptions(out["assumptions"])


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.3f} ms"


#: The columns every priced point ends with (``_priced``).
_PRICED = ("aggregate", "per session", "bound by", "USD / M output tok")


def _priced(p: dict[str, Any]) -> tuple[str, ...]:
    return (
        f"{p['tok_s']:,.0f} tok/s",
        f"{p['per_session_tok_s']:,.1f} tok/s",
        p["bound_by"],
        f"{p['usd_per_mtok_output']:,.4g}",
    )
