"""`servebound cost`: cost per million tokens over batch, priced from the catalog or the flags."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
from servebound.inputs.pricing import OwnedInputs, Pricing
from servebound.inputs.records import MAX_USD_PER_HOUR, MIN_USD_PER_HOUR
from servebound.inputs.scenario import resolve_scenario
from servebound.inputs.workload import MAX_EDGE_TOKENS
from servebound.questions.cost import DEFAULT_COST_PROMPT_TOKENS, CostReport, cost_answer, parse_batches
from servebound.views.cost_view import cost_json, cost_notes, cost_summary

if TYPE_CHECKING:
    from servebound.questions.system_cost import LayoutCost


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
        "Parallel layout on a system, e.g. tp=8 (dp fills it): the link charged. Default: the layout decode answers at.",
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
    scenario = resolve_scenario(flags, hardware=hardware, model=model, layout=layout)
    hw, mdl = scenario.hardware, scenario.model
    report = cost_answer(
        scenario,
        hardware,
        usd_per_hour=usd_per_hour,
        pricing=pricing,
        owned=owned,
        batches=parse_batches(batches),
        prompt_tokens=prompt,
    )
    if not isinstance(report, CostReport):  # a system: the layout it answers at
        render_layout_cost(report, json_out)
        return
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


def render_layout_cost(cost: LayoutCost, json_out: bool) -> None:
    """Cost over the micro-batch of the layout a system answers at: the system's price per hour over
    the tokens a second of it emits (dp pp b / tau(b)), with the layout's own fields."""
    out = cost.to_dict()
    if json_out:
        print_json(out)
        return
    price = cost.price
    at = f", {cost.label}, at {price.usd_per_hour:,.4g} USD/h ({price.basis})"
    console.print(on(cost.model.name, cost.hardware.name, at))
    rows = [
        (
            f"{p['batch']:,}{'' if p['fits_memory'] else ' (does not fit)'}",
            f"{p['sessions']:,}",
            _ms(p["token_time_s"]),
            *_priced(p),
        )
        for p in cost.points
    ]
    print_table(("micro-batch", "sessions", "token time", *_PRICED), rows, left=())
    console.print(f"- layout: {cost.label} ({cost.choice.why})")
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
