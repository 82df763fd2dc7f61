"""`servebound decode`: the decode ceilings report."""

from __future__ import annotations

from typing import TYPE_CHECKING

from servebound.cli.common import HARDWARE, JSON, MODEL, command, option, workload
from servebound.cli.output import console, on, print_json, print_table, render_assumptions
from servebound.core.decode import DecodeResult
from servebound.core.model import ModelAdapter
from servebound.core.units import GB
from servebound.inputs.scenario import resolve_scenario
from servebound.inputs.workload import WorkloadInputs
from servebound.questions.decode import decode_answer
from servebound.runs.band import expected_text
from servebound.views.notes import VERDICT_TEXT, decode_notes, verdict_said
from servebound.views.report import decode_json, fmt_gb, fmt_int, fmt_rate, workload_assumptions

if TYPE_CHECKING:
    from servebound.core.decode_range import DecodeContextRange
    from servebound.inputs.layout import LayoutChoice

RANGE = option(
    "range_",
    bool,
    False,
    "Also report the single-session ceiling and the b* aggregate over every read context from 0 to the "
    "model's limit.",
    "--range",
)


@command(
    "decode",
    HARDWARE,
    MODEL,
    workload("context", "serving", "workload", "roof", "decode", "layout"),
    RANGE,
    JSON,
    examples=(
        "servebound decode -H nvidia-rtx-4090 -m qwen3-8b",
        "servebound decode -H nvidia-dgx-spark -m qwen3.6-35b-a3b-nvfp4 --alloc-context 32000 --json",
    ),
)
def decode_command(hardware: str, model: str, flags: WorkloadInputs, range_: bool, json_out: bool) -> None:
    scenario = resolve_scenario(flags, hardware=hardware, model=model)
    result, rng = decode_answer(scenario, context_range=range_)
    if json_out:
        print_json(decode_json(result, rng))
        return
    render_decode(result)

    console.print(expected_text(result.expected, result.expected_from, result.expected_aggregate).terminal)
    if rng is not None:
        render_context_range(rng)


def render_context_range(rng: DecodeContextRange) -> None:
    """The range's two ends, one line each."""
    short, long_ = rng.at_shortest, rng.at_longest
    if short is None or long_ is None or rng.max_read_context_tokens is None or rng.limited_by is None:
        console.print(f"context range: no read context fits ({VERDICT_TEXT[rng.verdict.value]})")
        return
    top = rng.max_read_context_tokens
    console.print(
        f"context range L_read = 0..{top:,} (limited by {rng.limited_by.value}; each L reserves "
        f"max(L_alloc, L)):"
    )
    console.print(
        f"  single session: {fmt_rate(short.single_session_tok_s)} at 0, "
        f"{fmt_rate(long_.single_session_tok_s)} at {top:,}"
    )
    edge = rng.at_floor_edge
    if edge is None or rng.floor_read_context_tokens is None:
        console.print("  aggregate at b*: no batch clears the floor at any read context")
        return
    tail = "" if rng.floor_read_context_tokens == top else "; no batch clears the floor beyond it"
    console.print(
        f"  aggregate at b*: {fmt_rate(short.aggregate_tok_s)} (b* {fmt_int(short.batch_star)}) at 0, "
        f"{fmt_rate(edge.aggregate_tok_s)} (b* {fmt_int(edge.batch_star)}) at "
        f"{rng.floor_read_context_tokens:,}{tail}"
    )


def render_decode(result: DecodeResult) -> None:
    """The human report: the gates, the ceilings, the notes, the assumptions."""
    r = result
    hw = r.hardware
    choice = getattr(r, "layout", None)  # a system answers at a layout (questions.system_decode)
    at = "" if choice is None else f" at {choice.label}"
    console.print(on(r.model.name, hw.name, f"{at}: {verdict_said(r)}"))
    w, cache, flops, step = r.workload, _cache(r.model), r.decode_flops_per_token, r.step_time_s
    rows = [
        ("capacity C", fmt_gb(hw.memory_bytes), hw.provenance),
        ("bandwidth R", f"{hw.bandwidth_bytes_per_s / GB:,.1f} GB/s", hw.provenance),
        ("W_resident", fmt_gb(r.resident_bytes), "weights held in memory"),
        ("W_active", fmt_gb(r.weight_active_bytes), "W_batch(1) at minimum expert traffic"),
        ("resident margin", fmt_gb(r.resident_margin_bytes), "C - W_resident - O"),
        ("K_alloc", fmt_gb(r.kv_alloc_bytes), f"per session at {w.alloc_context_tokens:,} tokens, {cache}"),
        ("K_read", fmt_gb(r.kv_read_bytes), f"per token at {w.read_context_tokens:,} tokens, {cache}"),
        ("b_mem", fmt_int(r.batch_mem) + (" (cap)" if r.batch_mem_capped else ""), "floor(margin / K_alloc)"),
        ("b_rate", fmt_int(r.batch_rate), "floor((R/r* - W_active) / K_read), necessary"),
        ("b*", fmt_int(r.batch_star), f"limited by {r.batch_limited_by.value}" if r.batch_limited_by else ""),
        ("single session", fmt_rate(r.single_session_tok_s), "R / (W_batch(1) + K_read)"),
        ("aggregate at b*", fmt_rate(r.aggregate_tok_s), "b* rho / t(b*): t = max(t_mem, t_cmp)"),
        (
            "FLOPs per token",
            "-" if flops is None else f"{flops / 1e9:,.2f} GFLOP",
            "2 P_lin,active + a_attn(1, L_read)",
        ),
        ("compute at b*", fmt_rate(r.compute_tok_s_at_star), "b* rho / t_cmp(b*)"),
        ("balance batch", fmt_int(r.balance_batch), "smallest b with t_cmp(b) >= t_mem(b)"),
        (
            "step time t(b*)",
            "-" if step is None else f"{step * 1e3:,.3f} ms",
            f"bound by {r.bound_by.value}" if r.bound_by else "",
        ),
        ("per session at b*", fmt_rate(r.per_session_tok_s), f"floor r* = {w.floor_tok_s:g}"),
        ("memory-power", fmt_rate(r.memory_power_tok_s), "D/(K_alloc W_active) (1 - (W_res+O)/C)"),
        ("large-memory limit", fmt_rate(r.large_memory_limit_tok_s), "D/(K_alloc W_active)"),
    ]
    if (f := r.forced) is not None:
        fits = "" if f.fits_memory else ", does not fit"
        how = (
            f"{fmt_rate(f.per_session_tok_s)}/session, {'clears' if f.clears_floor else 'below'} floor{fits}"
        )
        rows.append((f"forced batch {f.batch:,}", fmt_rate(f.aggregate_tok_s), how))
    if choice is not None:
        rows[:0] = _layout_rows(choice)
    print_table(("quantity", "value", "how"), rows, right=("value",))
    for note in decode_notes(r):
        console.print(f"- {note.terminal}")
    if choice is not None:
        render_assumptions(decode_json(r)["assumptions"])
        return
    render_assumptions(workload_assumptions(r.workload, hardware=hw, model=r.model, compute=r.compute))


def _layout_rows(choice: LayoutChoice) -> list[tuple[str, str, str]]:
    """The layout a system answers at, its per-device bytes and its link time, above decode's rows."""
    r, system = choice.result, choice.system.system
    pd, times = r.per_device, r.times
    link = "-" if times is None else f"{times.communication_s * 1e3:,.3f} ms"
    return [
        ("layout", choice.label, choice.why),
        ("devices", f"{r.devices:,} of {system.count:,}", f"{system.device.name} each"),
        ("weights per device", fmt_gb(pd.weight_bytes), "W / (tp pp), experts / (G pp)"),
        ("free per device", fmt_gb(pd.free_bytes), "at the micro-batch b*"),
        ("link per step", link, "all-reduce + all-to-all + stage hops"),
    ]


def _cache(model: ModelAdapter) -> str:
    """The cache's element format, where the K rows are printed: the same pair at another precision
    gives another K and another answer, so the report says which one it used."""
    if model.kv_precision:
        width = f", {model.kv_bytes_per_element:g} B/element" if model.kv_bytes_per_element else ""
        return f"{model.kv_precision} cache{width}"
    return "cache precision not stated"
