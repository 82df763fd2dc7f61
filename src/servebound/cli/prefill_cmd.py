"""`servebound prefill`: prefill ceilings and the wait for the first token."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

import typer

from servebound.api import load_hardware, load_model
from servebound.cli.common import (
    HardwareOpt,
    JsonOpt,
    ModelOpt,
    WorkloadFlags,
    app,
    with_workload_flags,
)
from servebound.cli.output import console, line, new_table, print_json, render_assumptions, strong
from servebound.core.hardware import ARITHMETIC_MODES
from servebound.core.layout import per_device_bytes, prefill_communication
from servebound.core.model import ModelAdapter
from servebound.core.prefill import PrefillRange, PrefillResult, prefill, prefill_range
from servebound.core.workload import Workload
from servebound.errors import InputError
from servebound.parallel import parse_layout, replica_prefill_hardware, resolve_system, system_json
from servebound.report import (
    NOTHING_FITS,
    PREFILL_VERDICT_TEXT,
    fmt_rate,
    prefill_assumptions,
    prefill_json,
    range_json,
)


def layout_prefill_json(
    hardware: str,
    mdl: ModelAdapter,
    workload: Workload,
    layout: str,
    prompt: int,
    batch: int,
    chunk: int | None,
) -> dict[str, Any]:
    """Prefill on one replica of a layout: the replica's stages in turn (compute and memory of G devices),
    plus the link time of the tokens' all-reduces, dispatches and hops. The ceiling is b L / (t_pf + t_link)
    when the link cannot overlap the math, so it only lowers the single-device-style ceiling."""
    resolved = resolve_system(hardware)
    system = resolved.system
    chosen = parse_layout(layout, system, mdl)
    pf = prefill(
        replica_prefill_hardware(system, chosen),
        mdl,
        prompt,
        workload=workload,
        batch=batch,
        chunk_tokens=chunk,
    )
    link = prefill_communication(system, mdl, chosen, batch * prompt, workload)
    time_s = max(pf.time_s, link.all_reduce_s + link.all_to_all_s) + link.hop_s
    out = prefill_json(pf)
    bound = "communication" if link.all_reduce_s + link.all_to_all_s > pf.time_s else out["bound_by"]
    per_device = per_device_bytes(system, mdl, chosen, batch, workload)
    out.update(
        {
            "system": system_json(resolved),
            "layout": {
                "tp": chosen.tp,
                "ep": chosen.ep,
                "pp": chosen.pp,
                "dp": chosen.dp,
                "label": chosen.label,
            },
            "time_s": time_s,
            "tok_s": batch * prompt / time_s,
            "bound_by": bound,
            "communication_time_s": link.communication_s,
            "all_reduce_time_s": link.all_reduce_s,
            "all_to_all_time_s": link.all_to_all_s,
            "pipeline_hop_time_s": link.hop_s,
            "per_device": {
                "capacity_bytes": per_device.capacity_bytes,
                "overhead_bytes": per_device.overhead_bytes,
                "weight_bytes": per_device.weight_bytes,
                "kv_bytes": per_device.kv_bytes,
                "free_bytes": per_device.free_bytes,
            },
        }
    )
    if pf.verdict.value in NOTHING_FITS:  # no replica holds a session: no wait, as prefill --json says
        out.update({"time_s": None, "tok_s": None, "bound_by": None})
    return out


def _parse_batch(text: str) -> int | str:
    if text == "max":
        return "max"
    try:
        value = int(text)
    except ValueError:
        raise InputError("batch", f"give a whole number >= 1 or 'max' (got {text!r})") from None
    if value < 1:
        raise InputError("batch", f"must be >= 1 or 'max' (got {value})")
    return value


@app.command("prefill")
@with_workload_flags
def prefill_command(
    hardware: HardwareOpt,
    model: ModelOpt,
    prompt: Annotated[
        int | None, typer.Option("--prompt", help="L: prompt tokens per request (optional with --range).")
    ] = None,
    chunk: Annotated[
        int | None, typer.Option("--chunk", help="c: chunk width; omitted = one-shot (c = L), the ceiling.")
    ] = None,
    batch: Annotated[str, typer.Option("--batch", help="b: prompts per batch, or 'max' to search.")] = "1",
    linear_mode: Annotated[
        str | None,
        typer.Option("--linear-mode", help="Arithmetic mode of the linear layers (compute_tflops key)."),
    ] = None,
    attention_mode: Annotated[
        str | None,
        typer.Option("--attention-mode", help="Arithmetic mode of attention (compute_tflops key)."),
    ] = None,
    ttft_budget: Annotated[
        float | None, typer.Option("--ttft-budget", help="tau*: seconds the batch may take to prefill.")
    ] = None,
    range_: Annotated[
        bool,
        typer.Option("--range", help="Also report T_pf,lo and T_pf,hi over every prompt length that fits."),
    ] = False,
    flags: WorkloadFlags = WorkloadFlags(),
    layout: Annotated[
        str | None,
        typer.Option(
            "--layout", help="Parallel layout on a system, e.g. tp=8 (one replica prefills; link charged)."
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Prefill ceilings: memory and compute rooflines, the modeled prefill time, which side binds."""
    from servebound.runs.band import band_for, expected_text

    mdl = load_model(model, kv_precision=flags.kv_precision)
    if layout is not None:
        if range_ or batch == "max":
            raise InputError("layout", "--layout evaluates one prompt setting: drop --range and --batch max")
        if prompt is None:
            raise InputError("prompt", "give --prompt L")
        work = flags.workload().for_model(mdl)
        out = layout_prefill_json(hardware, mdl, work, layout, prompt, int(_parse_batch(batch)), chunk)
        if json_out:
            print_json(out)
        else:
            console.print(
                line(
                    strong(mdl.name),
                    f" on {out['system']['name']}, {out['layout']['label']}: "
                    f"{out['tok_s']:,.0f} tok/s prefill ceiling, {out['time_s'] * 1e3:,.2f} ms for "
                    f"{out['batch']} x {out['prompt_tokens']:,} tokens (bound by {out['bound_by']}); "
                    f"communication {out['communication_time_s'] * 1e3:,.3f} ms",
                )
            )
        return
    hw = load_hardware(hardware)
    workload = flags.workload()
    if ttft_budget is not None and not ttft_budget > 0:
        raise InputError("ttft_budget", f"must be a positive number of seconds (got {ttft_budget})")
    if chunk is not None and chunk < 1:
        raise InputError("chunk", f"must be a whole number of tokens >= 1 (got {chunk})")
    for field, mode in (("linear_mode", linear_mode), ("attention_mode", attention_mode)):
        if mode is not None and mode not in ARITHMETIC_MODES:
            raise InputError(
                field, f"unknown arithmetic mode {mode!r}; use one of {', '.join(ARITHMETIC_MODES)}"
            )
    if prompt is None and not range_:
        raise InputError("prompt", "give --prompt L (or --range for every prompt length)")
    search = _parse_batch(batch)
    rng = None
    if range_:
        rng = prefill_range(
            hw,
            mdl,
            workload=workload,
            batch=1 if search == "max" else int(search),
            linear_mode=linear_mode,
            attention_mode=attention_mode,
        )
    if prompt is None:
        assert rng is not None
        if json_out:
            print_json({"range": range_json(rng)})
        else:
            render_range(rng)
        return
    result = prefill(
        hw,
        mdl,
        prompt,
        workload=workload,
        batch="max" if search == "max" else int(search),
        chunk_tokens=chunk,
        ttft_budget_s=ttft_budget,
        linear_mode=linear_mode,
        attention_mode=attention_mode,
    )
    engine = workload.engine
    result = replace(result, expected=band_for(result.tok_per_s, engine, hw.id, "prefill"))
    if json_out:
        print_json(prefill_json(result, rng))
        return
    render_prefill(result)
    console.print(expected_text(result.expected, engine))
    if rng is not None:
        render_range(rng)


def render_prefill(r: PrefillResult) -> None:
    """The human report, in the derivation's terms."""
    policy = (
        " (policy ceiling: a one-shot implementation may exceed it)" if r.chunk_mode.value == "policy" else ""
    )
    console.print(
        line(
            strong(r.model.name),
            " on ",
            strong(r.hardware.name),
            f", prompt {r.prompt_tokens:,} tokens, "
            f"batch {r.batch:,}, chunk {r.chunk_tokens:,}{policy}: {PREFILL_VERDICT_TEXT[r.verdict.value]}",
        )
    )
    table = new_table("quantity", "value", "how", right=("value",))
    table.add_row(
        "bytes per prompt token", f"{r.bytes_per_token:,.1f} B", "Q_pf / (b L): sweep + reread + KV write"
    )
    table.add_row(
        "FLOPs per prompt token", f"{r.flops_per_token / 1e9:,.3f} GFLOP", "(A_linear + A_attention) / (b L)"
    )
    if r.verdict.value in NOTHING_FITS:
        table.add_row("modeled prefill time", "none", "nothing fits in memory, so nothing runs")
        console.print(table)
        render_assumptions(prefill_assumptions(r))
        return
    table.add_row("memory ceiling", fmt_rate(r.memory_tok_per_s), "b L / (Q_pf / R)")
    compute = (
        fmt_rate(r.compute_tok_per_s)
        if r.compute_tok_per_s is not None
        else f"unavailable (no rate for {', '.join(r.assumptions.missing_modes)})"
    )
    table.add_row("compute ceiling", compute, "b L / (A_lin/F_lin + A_attn/F_attn)")
    if r.compute_note:
        table.add_row("compute rates", r.compute_note, "the row lacks a mode's rate")
    if r.offload is not None:
        dev_s, host_s = r.offload.step_time_split_s
        table.add_row(
            "host weights moved",
            f"{host_s:,.4f} s",
            f"{r.offload.mode}: {r.offload.host_bytes_per_token * r.batch * r.prompt_tokens / 1e9:,.2f} GB over "
            f"min(link, host) per chunk; device memory {dev_s:,.4f} s",
        )
    table.add_row("combined ceiling", fmt_rate(r.tok_per_s), f"bound by {r.bound_by.value}")
    if r.format_support.value != "native":
        table.add_row("weight format", r.format_support.value, r.format_support_why[:120])
    table.add_row("modeled prefill time", f"{r.time_s:,.4f} s", "t_pf,min for the whole batch")
    if r.crossover_tokens is not None:
        table.add_row("crossover S*", f"{r.crossover_tokens:,.0f} tokens", "sweep time = linear math time")
    if r.crossover_with_attention_tokens is not None:
        table.add_row(
            "roofline crossing",
            f"{r.crossover_with_attention_tokens:,.0f} tokens",
            "memory time = compute time, attention included",
        )
    if r.ttft_budget_s is not None:
        table.add_row("TTFT budget", f"{r.ttft_budget_s:g} s", "met" if r.ttft_ok else "not met")
    console.print(table)
    render_assumptions(prefill_assumptions(r))


def render_range(rng: PrefillRange) -> None:
    if rng.lo_tok_per_s is None or rng.hi_tok_per_s is None:
        console.print(f"range: no prompt length fits ({rng.verdict.value})")
        return
    console.print(
        f"range over L = 1..{rng.max_prompt_tokens:,} (limited by {rng.limited_by.value}), batch {rng.batch}: "
        f"lo {fmt_rate(rng.lo_tok_per_s)} at L = {rng.lo_prompt_tokens:,} ({rng.lo_bound_by}), "
        f"hi {fmt_rate(rng.hi_tok_per_s)} at L = {rng.hi_prompt_tokens:,} ({rng.hi_bound_by})"
    )
