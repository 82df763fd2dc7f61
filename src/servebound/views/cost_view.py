"""The cost answer as each surface writes it: the contract's `servebound cost --json` object (one device
or a system's layout), its notes and the findings in sentences. The records and their numbers come
from ``questions.cost`` and ``questions.system_cost``."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from servebound.core.advice import Note
from servebound.core.fields import json_view
from servebound.core.units import GB
from servebound.questions.cost import CostReport
from servebound.questions.system_cost import LayoutCost
from servebound.views.layout_view import layout_assumptions, layout_json, system_json
from servebound.views.notes import decode_notes, notes_json
from servebound.views.report import hardware_json, workload_assumptions


def cost_notes(report: CostReport) -> list[Note]:
    """The cost report's notes, then decode's: records each surface spells its own way."""
    return [*(Note((text,)) for text in report.notes), *decode_notes(report.decode)]


def cost_json(report: CostReport) -> dict[str, Any]:
    """The contract's `servebound cost --json` object, plus our own extra fields."""
    r = report
    points: list[dict[str, Any]] = []
    curve = r.curve
    if curve is not None:
        steps = curve.steps
        compute = steps.compute_time_s
        for i, b in enumerate(steps.batch):
            bound = "compute" if compute is not None and compute[i] > steps.memory_time_s[i] else "memory"
            points.append(
                {
                    "batch": int(b),
                    "step_time_s": float(steps.step_time_s[i]),
                    "tok_s": float(steps.tok_s[i]),
                    "per_session_tok_s": float(steps.per_session_tok_s[i]),
                    "bound_by": bound,
                    "usd_per_mtok_output": float(curve.usd_per_mtok_output[i]),
                    # a batch past b_mem is priced as asked, marked: its sessions' caches do not fit
                    "fits_in_memory": r.decode.batch_mem is not None and int(b) <= r.decode.batch_mem,
                }
            )
    assumptions = workload_assumptions(
        r.workload, hardware=r.hardware, model=r.model, compute=r.decode.compute
    )
    assumptions.update(r.price.assumptions)
    assumptions["prompt_tokens"] = r.prompt_tokens
    assumptions["input_pricing"] = (
        "prefill ceiling at the prompt length, largest fitting batch, one-shot: p t_pf / (b L)"
    )
    assumptions["cost_per_token"] = "p t(b) / (b rho): a step costs the same whatever the batch"
    d = r.decode
    return {
        "hardware": hardware_json(r.hardware),
        "model": {"id": r.model.id, "name": r.model.name},
        "verdict": d.verdict.value,
        "points": points,
        "balance_batch": d.balance_batch,
        "batch_star": d.batch_star,
        "batch_mem": d.batch_mem,
        "usd_per_hour": r.price.usd_per_hour,
        "price_basis": r.price.basis,
        "price_source": r.price.source,
        "prompt_tokens": r.prompt_tokens,
        "usd_per_mtok_input": r.usd_per_mtok_input,
        "input_tok_s": None if r.prefill is None else r.prefill.tok_s,
        "input_note": r.input_note,
        "trade": None if r.trade is None else asdict(r.trade),
        "cost_floor": None
        if curve is None
        else {
            "usd_per_mtok": curve.floor_usd_per_mtok,
            "kv_s_per_token": curve.floor_kv_s_per_token,
            "compute_s_per_token": curve.floor_compute_s_per_token,
        },
        "latency_floor": None
        if curve is None
        else {
            "step_time_s": curve.latency_floor_s,
            "per_session_tok_s": 1.0 / curve.latency_floor_s if curve.latency_floor_s > 0 else None,
        },
        **notes_json(cost_notes(r)),
        "assumptions": assumptions,
    }


def fmt_money(value: float) -> str:
    """A USD figure: four significant digits below 1,000, whole dollars above."""
    return f"{value:,.4g}" if value < 1000 else f"{value:,.0f}"


def cost_summary(data: dict[str, Any]) -> list[str]:
    """The cost curve's findings as sentences, from its JSON object (``cost_json``): the CLI prints them
    as a list under its table, the pair page under its figures (one wording for both)."""
    lines = [
        f"b* = {data['batch_star'] or '-'}, balance batch = {data['balance_batch'] or 'none within b_mem'}, "
        f"b_mem = {data['batch_mem'] or '-'}."
    ]
    if data["usd_per_mtok_input"] is not None:
        lines.append(
            f"Input tokens: {fmt_money(data['usd_per_mtok_input'])} USD per million at the prefill ceiling for "
            f"{data['prompt_tokens']:,}-token prompts ({data['input_tok_s']:,.0f} tok/s)."
        )
    if data["input_note"]:
        lines.append(f"Input: {data['input_note']}.")
    if data["trade"]:
        t = data["trade"]
        lines.append(
            f"Fast against slow: batch {t['fast_batch']} runs {t['speed_ratio']:,.2f}x faster per session than "
            f"b* = {t['slow_batch']:,}, for {t['price_ratio']:,.2f}x the price per token."
        )
    if data["cost_floor"]:
        lines.append(
            f"Cost floor: {fmt_money(data['cost_floor']['usd_per_mtok'])} USD per million tokens (the KV read and "
            "compute of each token, which no batch amortizes)."
        )
    if data["latency_floor"]:
        lines.append(
            f"Latency floor: {data['latency_floor']['step_time_s'] * 1e3:,.3f} ms per step (the weight fetch "
            "W_batch(1) / R): no price buys a faster step on this row."
        )
    return lines


def layout_cost_json(cost: LayoutCost) -> dict[str, Any]:
    """``servebound cost --json`` on a system: the layout's fields, its priced points, the price."""
    out = layout_json(cost.result)
    out["layout"] = {**out["layout"], "source": cost.choice.source, "why": cost.choice.why}
    return {
        **out,
        "system": system_json(cost.choice.system),
        "points": list(cost.points),
        "usd_per_hour": cost.price.usd_per_hour,
        "price_source": cost.price.source,
        "price_basis": cost.price.basis,
        "assumptions": {
            "overhead_gb": cost.workload.overhead_bytes / GB,
            **layout_assumptions(cost.workload, cost.result, cost.choice.system),
            "layout": f"{cost.choice.label}: {cost.choice.why}",
        },
    }


json_view(CostReport, cost_json)
json_view(LayoutCost, layout_cost_json)
